import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { CLI_ROOT, REPO_ROOT, RUNS_AS_NOBODY } from '../run-cli.ts';
import { expectSafe, runCli, tempDir, type HostileResult, type OnFinished } from './harness.ts';
import { serveKube } from './kube-server.ts';

/**
 * The third hostile round's repros (../shared/reviews/hostile-round-3.md), each run on the built
 * command as the review ran it: every run exits 0, 1 or 2 (never 70), bounded in time and memory,
 * with no secret and no raw control character in its output.
 */

const APP = join(REPO_ROOT, 'apps', 'app-serving');
const MODELS = join(REPO_ROOT, 'models');
const GUARD = { killAfterMs: 240_000 };

/** A stack file in a temporary folder: an example stack's text, edited. */
function stack(onFinished: OnFinished, base: 'cloud' | 'current' | 'kind', edit: (text: string) => string = (t) => t, name = 'h'): { dir: string; file: string } {
  const dir = tempDir(onFinished);
  const file = join(dir, `Pulumi.${name}.yaml`);
  writeFileSync(file, edit(readFileSync(join(APP, `Pulumi.${base}.yaml`), 'utf8')));
  return { dir, file };
}
const args = (file: string) => ['--stack', file, '--models-dir', MODELS];
const SECURE = '\n    secure: v1:cGxhY2Vob2xkZXI=:cGxhY2Vob2xkZXIgY2lwaGVydGV4dA==\n';

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void, onFinished: OnFinished): Promise<string> {
  const server = createServer((req, res) => {
    res.on('error', () => undefined);
    req.resume();
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onFinished(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function endless(res: ServerResponse, piece: () => string): void {
  let open = true;
  res.on('close', () => (open = false));
  const go = () => {
    while (open && res.write(piece()));
    if (open) res.once('drain', go);
  };
  go();
}

/** Runs the built command as the user nobody (a file of mode 000 stops nobody, not root). */
function runAsNobody(argv: readonly string[], home: string): Promise<HostileResult> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('runuser', ['-u', 'nobody', '--', process.execPath, join(CLI_ROOT, 'bin', 'app-serving.js'), ...argv], {
      cwd: home,
      env: { PATH: process.env.PATH, HOME: home, APP_SERVING_CODE_CACHE: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => (clearTimeout(killer), resolve({ code, signal, stdout, stderr, ms: performance.now() - started, peakBytes: null })));
  });
}

describe.concurrent('M3: render and diff of a stack whose Prometheus needs authentication', { timeout: 600_000 }, () => {
  it('render prints the credentials Secret and TriggerAuthentication with [secret]; diff against the open Prometheus works', async ({ onTestFinished }) => {
    const open = stack(onTestFinished, 'cloud', (t) => t, 'open');
    const authed = stack(onTestFinished, 'cloud', (t) => `${t.replace('    address: http://prometheus-operated.monitoring.svc:9090\n', '    address: http://prometheus-operated.monitoring.svc:9090\n    auth: bearer\n')}  app-serving:prometheusCredentials:${SECURE}`);
    const render = await runCli(['render', ...args(authed.file)], GUARD);
    expectSafe(render, 'render', { codes: [0], secrets: ['cGxhY2Vob2xkZXIgY2lwaGVydGV4dA'] });
    expect(render.stdout).toMatch(/kind: TriggerAuthentication/);
    expect(render.stdout).toMatch(/bearerToken/);
    const diff = await runCli(['diff', '--base-stack', open.file, '--base-models-dir', MODELS, ...args(authed.file)], GUARD);
    expectSafe(diff, 'diff', { codes: [0] });
    expect(diff.stdout).toMatch(/TriggerAuthentication/);
  });
});

describe.concurrent('M4, m17: local charts that are not what they seem', { timeout: 600_000 }, () => {
  /** The 2026-08 example with charts.routerGateway.chart at `path` (made by `make` in the stack's folder). */
  const withChart = (onFinished: OnFinished, make: (dir: string) => string) => {
    const s = stack(onFinished, 'current');
    const path = make(s.dir);
    writeFileSync(s.file, readFileSync(s.file, 'utf8').replace('config:\n', `config:\n  app-serving:charts:\n    routerGateway:\n      chart: ${path}\n`));
    return s;
  };
  const folder = (dir: string, make: (chartYaml: string) => void) => {
    mkdirSync(join(dir, 'chart'));
    make(join(dir, 'chart', 'Chart.yaml'));
    return './chart';
  };
  const CASES: Record<string, [(dir: string) => string, RegExp]> = {
    'Chart.yaml a FIFO': [(dir) => folder(dir, (f) => execFileSync('mkfifo', [f])), /charts\.routerGateway\.chart: .*chart\/Chart\.yaml is not a regular file \(a FIFO\): give the path of a file/],
    'Chart.yaml a link to /dev/zero': [(dir) => folder(dir, (f) => symlinkSync('/dev/zero', f)), /chart\/Chart\.yaml is not a regular file \(a device\)/],
    'Chart.yaml a folder': [(dir) => folder(dir, (f) => mkdirSync(f)), /chart\/Chart\.yaml is not a regular file \(a folder\)/],
    'Chart.yaml a link to /proc/self/mem': [(dir) => folder(dir, (f) => symlinkSync('/proc/self/mem', f)), /chart\/Chart\.yaml is a file of \/proc, not a file on disk/],
    'a link loop': [(dir) => (symlinkSync(join(dir, 'b'), join(dir, 'a')), symlinkSync(join(dir, 'a'), join(dir, 'b')), './a'), /\/a cannot be read \(ELOOP: a loop of symbolic links\)/],
    'a package whose only Chart.yaml is absolute': [
      (dir) => {
        const header = Buffer.alloc(512);
        const data = Buffer.from('apiVersion: v2\nname: llm-d-router-gateway\nversion: v0.10.0\n');
        header.write('/etc/Chart.yaml', 0);
        header.write('0000644\0', 100);
        header.write(`${data.length.toString(8).padStart(11, '0')}\0`, 124);
        header.write('00000000000\0', 136);
        header.write('0', 156);
        header.write('ustar\0', 257);
        header.write('00', 263);
        header.fill(0x20, 148, 156);
        let sum = 0;
        for (const b of header) sum += b;
        header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
        writeFileSync(join(dir, 'abs.tgz'), gzipSync(Buffer.concat([header, data, Buffer.alloc(512 - data.length), Buffer.alloc(1024)])));
        return './abs.tgz';
      },
      /abs\.tgz is not a chart package: it holds no <chart>\/Chart\.yaml/,
    ],
  };
  for (const [name, [make, message]] of Object.entries(CASES)) {
    it(`${name}: validate and plan exit 1 at charts.routerGateway.chart, at once, in bounded memory`, async ({ onTestFinished }) => {
      const s = withChart(onTestFinished, make);
      for (const command of ['validate', 'plan']) {
        const result = await runCli([command, ...args(s.file)], { killAfterMs: 120_000 });
        expectSafe(result, `${command}: ${name}`, { codes: [1], maxPeakBytes: 300 * 1024 * 1024 });
        expect(result.stdout).toMatch(message);
      }
    });
  }

  it.skipIf(!RUNS_AS_NOBODY)('as a user who cannot read them: a Chart.yaml or a package of mode 000 says "permission denied" (it was exit 70, or "not gzip-compressed")', async ({ onTestFinished }) => {
    for (const kind of ['folder', 'package'] as const) {
      const s = withChart(onTestFinished, (dir) => {
        if (kind === 'folder') return folder(dir, (f) => (writeFileSync(f, 'name: x\n'), chmodSync(f, 0o000)));
        writeFileSync(join(dir, 'locked.tgz'), 'x');
        chmodSync(join(dir, 'locked.tgz'), 0o000);
        return './locked.tgz';
      });
      chmodSync(s.dir, 0o755);
      chmodSync(s.file, 0o644);
      const result = await runAsNobody(['validate', ...args(s.file)], s.dir);
      expectSafe(result, `nobody, ${kind}`, { codes: [1] });
      expect(result.stdout).toMatch(/cannot be read \(EACCES: permission denied\)/);
    }
  });
});

describe.concurrent('M5: preflight against a hostile Prometheus', { timeout: 600_000 }, () => {
  const BOMB = gzipSync(Buffer.alloc(1024 * 1024 * 1024), { level: 9 });
  const CASES: Record<string, [(req: IncomingMessage, res: ServerResponse) => void, RegExp]> = {
    'a 1 GiB gzip bomb': [(_req, res) => (res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }), res.end(BOMB)), /answered in content-encoding gzip though none was asked for: not read/],
    'an endless body': [(_req, res) => (res.writeHead(200, { 'content-type': 'application/json' }), endless(res, () => 'v'.repeat(65536))), /answered more than 1 MiB: not read on/],
  };
  for (const [name, [handler, message]] of Object.entries(CASES)) {
    it(`${name}: refused unread, said of Prometheus, within --deadline, in bounded memory`, async ({ onTestFinished }) => {
      const prometheus = await serve(handler, onTestFinished);
      const kube = await serveKube(() => false, onTestFinished);
      const s = stack(onTestFinished, 'cloud', (t) => t.replace('http://prometheus-operated.monitoring.svc:9090', prometheus));
      const result = await runCli(['preflight', ...args(s.file), '--kubeconfig', kube.kubeconfig(s.dir, 'token: t0k3n-value'), '--timeout', '8s', '--deadline', '40s'], { killAfterMs: 120_000 });
      expectSafe(result, name, { codes: [1], maxPeakBytes: 300 * 1024 * 1024 });
      expect(result.stdout).toMatch(new RegExp(`Prometheus ${prometheus.replace(/[.:/]/g, '\\$&')} answers: ${prometheus.replace(/[.:/]/g, '\\$&')} ${message.source}`));
      expect(result.stdout).not.toMatch(/the API server is slow or unreachable/);
    });
  }
});

describe.concurrent('M6, m15: verify refuses-anonymous', { timeout: 600_000 }, () => {
  const TOKEN = 'ci:VTOKEN-SECRET-0123456789abcdefXYZ';
  const BASIC = Buffer.from(TOKEN).toString('base64');
  const withKeys = (onFinished: OnFinished) => stack(onFinished, 'kind', (t) => `${t.replace('          open: true       # anyone who reaches', '          apiKeys: [ci]    # anyone who reaches')}  app-serving:apiKeys:\n    ci:${SECURE.replace(/\n    /g, '\n      ')}`);

  for (const pad of [340, 350, 360, 370]) {
    it(`an anonymous answer echoing the last caller after ${pad} characters: no part of the credential in --json or JUnit`, async ({ onTestFinished }) => {
      let last = '';
      const url = await serve((req, res) => {
        const echo = `${'E'.repeat(pad)} last caller: ${last}`;
        last = String(req.headers.authorization ?? '');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(req.url === '/v1/models' && !req.headers.authorization ? echo : JSON.stringify({ object: 'list', data: [{ id: 'random' }] }));
      }, onTestFinished);
      const s = withKeys(onTestFinished);
      const junit = join(s.dir, 'junit.xml');
      const result = await runCli(['verify', ...args(s.file), '--base-url', url, '--model', 'Sim', '--timeout', '5s', '--json', '--junit', junit], { env: { APP_SERVING_VERIFY_TOKEN: TOKEN }, ...GUARD });
      expectSafe(result, `pad ${pad}`, { codes: [1], secrets: ['VTOKEN'] });
      const report = readFileSync(junit, 'utf8');
      for (let i = 0; i + 8 <= BASIC.length; i += 1) {
        expect(result.stdout, BASIC.slice(i, i + 8)).not.toContain(BASIC.slice(i, i + 8));
        expect(report, BASIC.slice(i, i + 8)).not.toContain(BASIC.slice(i, i + 8));
      }
    });
  }

  it('a --base-url with user:password@ sends no credentials in the anonymous request, and never prints them', async ({ onTestFinished }) => {
    const anonymous: string[] = [];
    const url = await serve((req, res) => {
      if (!req.headers.authorization) {
        anonymous.push(req.url ?? '');
        res.writeHead(401, { 'content-type': 'text/plain' });
        return res.end('who are you?');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'random' }] }));
    }, onTestFinished);
    const s = withKeys(onTestFinished);
    const result = await runCli(['verify', ...args(s.file), '--base-url', url.replace('http://', 'http://u:URLPASS-CANARY-123@'), '--model', 'Sim', '--timeout', '5s', '--json'], { env: { APP_SERVING_VERIFY_TOKEN: TOKEN }, ...GUARD });
    expectSafe(result, 'base URL with credentials', { codes: [0, 1], secrets: ['URLPASS-CANARY-123', Buffer.from('u:URLPASS-CANARY-123').toString('base64')] });
    const check = JSON.parse(result.stdout).models[0].checks.find((c: { name: string }) => c.name === 'refuses-anonymous');
    expect(check).toMatchObject({ status: 'pass', message: 'refused without credentials (HTTP 401)' });
    expect(anonymous).toEqual(['/v1/models']);
  });
});

describe.concurrent('M7, m12, m14: values validate must refuse', { timeout: 600_000 }, () => {
  const autoscaled = (key: string, value: string) => (t: string) => t.replace('          cooldown: 5m\n', key === 'cooldown' ? `          cooldown: ${value}\n` : `          cooldown: 5m\n          ${key}: ${value}\n`);
  const CASES: Record<string, ['cloud' | 'current' | 'kind', (text: string) => string, RegExp, string?]> = {
    'cooldown: 2h': ['cloud', autoscaled('cooldown', '2h'), /autoscaling\.cooldown: is 2h \(7200 s\), more than the HPA's scale-down stabilization window allows: at most 1h \(3600 s\)/],
    'cooldown: 99999999999999999999h': ['cloud', autoscaled('cooldown', '99999999999999999999h'), /autoscaling\.cooldown: is 99999999999999999999h, more than/],
    'pollingInterval: 99999999h': ['cloud', autoscaled('pollingInterval', '99999999h'), /autoscaling\.pollingInterval: is 99999999h \(359999996400 s\), more than KEDA's pollingInterval \(an int32 of seconds\)/],
    'target: 1e-300': ['cloud', (t) => t.replace('          target: 5\n', '          target: 1e-300\n'), /autoscaling\.target: is 1e-300, less than 0\.001/],
    'readyTimeout: 99999999999999999999h': ['cloud', (t) => t.replace('        enabled: true\n', '        enabled: true\n        readyTimeout: 99999999999999999999h\n'), /readyTimeout: "99999999999999999999h" is more than Pulumi's await timeout allows: at most 2562047h47m16s \(9223372036 s\)/],
    'a JWKS with its private key first and a public one second': [
      'cloud',
      (t) => t.replace('          open: true       # anyone who reaches the gateway: apiKeys or jwt instead (docs/access.md)', `          jwt:\n            issuer: https://id.example.com\n            jwks: '{"keys":[{"kty":"RSA","n":"x","e":"AQAB","d":"PRIVATE-D-CANARY"}],"keys":[{"kty":"RSA","n":"x","e":"AQAB"}]}'`),
      /access\.jwt\.jwks: is not strict JSON: the member "keys" twice in one object/,
      'PRIVATE-D-CANARY',
    ],
    'a Prometheus password with a raw @': ['cloud', (t) => t.replace('http://prometheus-operated.monitoring.svc:9090', 'http://admin:PR@M-AT-CANARY@prom:9090'), /prometheus\.address: "http:\/\/\[redacted\]@prom:9090" carries credentials/, 'M-AT-CANARY'],
    'a Prometheus URL written http:\\\\': ['cloud', (t) => t.replace('http://prometheus-operated.monitoring.svc:9090', "'http:\\\\admin:PROM-BS-CANARY@prom:9090'"), /prometheus\.address: /, 'PROM-BS-CANARY'],
    'credentials in jwt.jwksUri': [
      'cloud',
      (t) => t.replace('          open: true       # anyone who reaches the gateway: apiKeys or jwt instead (docs/access.md)', '          jwt:\n            issuer: https://id.example.com\n            jwksUri: https://admin:JWKS-PASS-CANARY@id.example.com/keys?token=JWKS-TOKEN-CANARY'),
      /access\.jwt\.jwksUri: .* carries credentials/,
      'JWKS-PASS-CANARY',
    ],
    'credentials in jwt.issuer': [
      'cloud',
      (t) => t.replace('          open: true       # anyone who reaches the gateway: apiKeys or jwt instead (docs/access.md)', '          jwt:\n            issuer: https://user:ISSUER-PASS-CANARY@id.example.com\n            jwksUri: https://id.example.com/keys'),
      /access\.jwt\.issuer: .* carries credentials/,
      'ISSUER-PASS-CANARY',
    ],
    'a GitLab private_token in a chart repository': [
      'cloud',
      (t) => t.replace('config:\n', 'config:\n  app-serving:charts:\n    infra:\n      chart: llm-d-infra\n      repo: https://gitlab.example.com/api/v4/projects/1/packages/helm/stable?private_token=GLPAT-CANARY\n'),
      /charts\.infra\.repo: .* carries credentials/,
      'GLPAT-CANARY',
    ],
  };
  for (const [name, [base, edit, message, secret]] of Object.entries(CASES)) {
    it(`${name}: validate and plan exit 1 with the limit or the reason${secret ? ', never the secret' : ''}`, async ({ onTestFinished }) => {
      const s = stack(onTestFinished, base, edit);
      for (const command of ['validate', 'plan']) {
        const result = await runCli([command, ...args(s.file)], GUARD);
        expectSafe(result, `${command}: ${name}`, { codes: [1], ...(secret && { secrets: [secret] }) });
        expect(result.stdout).toMatch(message);
      }
    });
  }

  it('credentials in a values file are redacted by plan --json and render (X-Goog-Signature, #access_token, private_token)', async ({ onTestFinished }) => {
    const s = stack(onTestFinished, 'kind');
    const models = join(s.dir, 'models');
    execFileSync('cp', ['-r', MODELS, models]);
    const values = join(models, 'generative', 'Sim', 'ms-sim', 'values.yaml');
    writeFileSync(
      values,
      `${readFileSync(values, 'utf8')}\nextraNotes:\n  a: https://storage.googleapis.com/b/o?X-Goog-Signature=GOOG-CANARY\n  b: https://idp.example.com/cb#access_token=FRAGMENT-CANARY\n  c: https://gitlab.example.com/x?private_token=GITLAB-CANARY\n`,
    );
    for (const command of [['plan', '--json'], ['render']]) {
      const result = await runCli([...command, '--stack', s.file, '--models-dir', models], GUARD);
      expectSafe(result, command.join(' '), { codes: [0, 1], secrets: ['GOOG-CANARY', 'FRAGMENT-CANARY', 'GITLAB-CANARY'] });
    }
  });
});
