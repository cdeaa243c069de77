import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../run-cli.ts';
import { expectSafe, runCli, tempDir, type HostileResult } from './harness.ts';
import { json, pump, serveKube } from './kube-server.ts';

/**
 * `preflight` and `verify --kubeconfig` against a hostile HTTPS API server and hostile kubeconfigs:
 * a server that echoes the credentials back, answers without end, in gzip, in HTML, with `null`, a
 * redirect loop or malformed objects; kubeconfigs that are /dev/zero, a FIFO, an alias bomb, or
 * whose credential plugins hang, print without end, or would run through a shell. Every run exits
 * 1 or 2 within its deadline, in bounded memory, with no secret anywhere (stdout, stderr, JUnit).
 */

const KIND = join(REPO_ROOT, 'apps/app-serving/Pulumi.kind.yaml');
/**
 * Generous limits for every run: the servers here answer at once (or without end, where a size limit
 * must be what stops them), so no test needs a timeout to fire, and on a loaded CI machine (tests side
 * by side) a 2 s per-check timeout ended a check before the HTML page it was testing arrived.
 */
const FLAGS = ['--timeout', '40s', '--deadline', '80s'];
/** The hang guard of a run with FLAGS: longer than its deadline. */
const GUARD = { killAfterMs: 150_000 };

/** A script (`#!/bin/sh`) in `dir`, executable; returns its path. */
function script(dir: string, name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

/** Whether process `pid` is gone (or a zombie waiting to be reaped), polling for up to 20 s. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 400; i += 1) {
    let state: string;
    try {
      state = /State:\s+(\S)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 'Z';
    } catch {
      return true;
    }
    if (state === 'Z') return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** Every form of `secret` a server may echo: as is, JSON-escaped, base64. */
const forms = (secret: string) => [secret, JSON.stringify(secret).slice(1, -1), Buffer.from(secret).toString('base64')];

/** preflight and verify, in text with JUnit and in --json: every output and the report files. */
async function everyOutput(kubeconfig: string, dir: string, extra: string[] = []): Promise<{ runs: HostileResult[]; reports: string[] }> {
  const runs: HostileResult[] = [];
  const reports: string[] = [];
  for (const command of ['preflight', 'verify']) {
    for (const json of [false, true]) {
      const junit = join(dir, `${command}-${json}.xml`);
      runs.push(await runCli([command, '--stack', KIND, '--kubeconfig', kubeconfig, ...FLAGS, ...extra, '--junit', junit, ...(json ? ['--json'] : [])], { env: { APP_SERVING_CODE_CACHE: 'off' }, ...GUARD }));
      if (existsSync(junit)) reports.push(readFileSync(junit, 'utf8'));
    }
  }
  return { runs, reports };
}

describe.concurrent('a hostile API server', { timeout: 600_000 }, () => {
  const TOKENS = {
    token: 'kube-tok-SECRET-0001',
    exec: 'exec-tok-SECRET-0002',
    gcp: 'gcp-tok-SECRET-0003',
    password: 'basic-pw-SECRET-0004',
  };

  for (const kind of Object.keys(TOKENS) as (keyof typeof TOKENS)[]) {
    it(`echoes the credentials back (${kind}): not in any output, report or progress line`, async ({ onTestFinished }) => {
      const dir = tempDir(onTestFinished);
      const secret = TOKENS[kind];
      const kube = await serveKube((req, res) => {
        const auth = String(req.headers.authorization ?? 'none');
        const path = req.url ?? '';
        if (path === '/version') return json(res, 200, { gitVersion: `v1.31.2-${auth}` }), true;
        if (path.includes('customresourcedefinitions')) return json(res, 403, { kind: 'Status', code: 403, message: `user with ${auth} cannot get ${JSON.stringify(auth)}` }), true;
        if (path.includes('gatewayclasses') || path.includes('/pods')) {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(`server failure for ${auth}`);
          return true;
        }
        if (path.startsWith('/api/v1/nodes')) return json(res, 200, { items: [{ metadata: { name: `node-${auth}`, labels: {} } }] }), true;
        if (path.endsWith('selfsubjectaccessreviews')) return json(res, 201, { status: { allowed: false, reason: `denied ${auth}` } }), true;
        if (path.includes('/services/')) return json(res, 403, { message: `no: ${Buffer.from(auth).toString('base64')}` }), true;
        return false;
      }, onTestFinished);
      const user = {
        token: `token: ${secret}`,
        exec: `exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: ${script(dir, 'plugin', `echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${secret}"}}'`)}\n  interactiveMode: Never`,
        gcp: `auth-provider:\n  name: gcp\n  config:\n    cmd-path: ${script(dir, 'gcloud', `echo '{"access_token":"${secret}"}'`)}\n    cmd-args: config config-helper\n    token-key: '{.access_token}'`,
        password: `username: admin\npassword: ${secret}`,
      }[kind];
      const { runs, reports } = await everyOutput(kube.kubeconfig(dir, user), dir);
      const secrets = [...forms(secret), ...(kind === 'password' ? forms(`admin:${secret}`) : [])];
      for (const run of runs) expectSafe(run, `${kind}: ${run.stdout.slice(0, 80)}`, { codes: [1], secrets });
      expect(reports.length, `the runs' stderr: ${runs.map((r) => r.stderr.slice(0, 200)).join(' | ')}`).toBe(4);
      for (const report of reports) for (const s of secrets) expect(report.includes(s), `the JUnit report holds ${s}`).toBe(false);
      // The server did see the credential: the echo was real.
      expect(kube.requests.length).toBeGreaterThan(3);
    });
  }

  const BOUNDED = { codes: [1], maxPeakBytes: 300 * 1024 * 1024 };

  it('a gzip bomb (1 MB that inflates to 1 GB): not inflated, said so, bounded memory', async ({ onTestFinished }) => {
    const bomb = gzipSync(Buffer.alloc(1024 * 1024 * 1024), { level: 9 });
    const kube = await serveKube((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(bomb);
      return true;
    }, onTestFinished);
    const result = await runCli(['preflight', '--stack', KIND, '--kubeconfig', kube.kubeconfig(tempDir(onTestFinished), 'token: t0k3n-value'), ...FLAGS], GUARD);
    expectSafe(result, 'gzip', BOUNDED);
    expect(result.stdout).toMatch(/content-encoding gzip/);
    expect(result.stdout).not.toMatch(/cannot reach the API server/);
  });

  for (const [name, behaviour] of [
    ['an endless /version', (res: import('node:http').ServerResponse) => (res.writeHead(200, { 'content-type': 'application/json' }), res.write('{"gitVersion":"'), pump(res, () => 'v'.repeat(65536)))],
    ['8 MiB of nested [[[ as /version', (res: import('node:http').ServerResponse) => (res.writeHead(200, { 'content-type': 'application/json' }), res.end('['.repeat(8 * 1024 * 1024)))],
    ['a 20 MB node list', (res: import('node:http').ServerResponse) => json(res, 200, { items: Array.from({ length: 2000 }, (_, i) => ({ metadata: { name: `n${i}`, labels: { x: 'y'.repeat(10_000) } } })) })],
  ] as const) {
    it(`${name}: preflight stops at the size or depth limit, bounded memory`, async ({ onTestFinished }) => {
      const kube = await serveKube((req, res) => {
        const path = (req.url ?? '').split('?')[0];
        if (name.includes('node') ? path === '/api/v1/nodes' : path === '/version') return behaviour(res), true;
        return false;
      }, onTestFinished);
      const result = await runCli(['preflight', '--stack', KIND, '--kubeconfig', kube.kubeconfig(tempDir(onTestFinished), 'token: t0k3n-value'), ...FLAGS], GUARD);
      expectSafe(result, name, BOUNDED);
      expect(result.stdout).toMatch(/exceeded 16 MiB|nested deeper/);
    });
  }

  it('an endless pod list: verify stops at the size limit, bounded memory', async ({ onTestFinished }) => {
    const kube = await serveKube((req, res) => {
      if (!(req.url ?? '').includes('/pods')) return false;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"items":[');
      pump(res, () => `${JSON.stringify({ metadata: { name: 'p'.repeat(1000) } })},`.repeat(50));
      return true;
    }, onTestFinished);
    const result = await runCli(['verify', '--stack', KIND, '--kubeconfig', kube.kubeconfig(tempDir(onTestFinished), 'token: t0k3n-value'), ...FLAGS], GUARD);
    expectSafe(result, 'endless pods', BOUNDED);
    expect(result.stdout).toMatch(/exceeded 16 MiB/);
  });

  for (const [name, answer, said] of [
    ['an HTML page', (res: import('node:http').ServerResponse) => (res.writeHead(200, { 'content-type': 'text/html' }), res.end('<html><body>Sign in</body></html>')), /HTML page/],
    ['null', (res: import('node:http').ServerResponse) => json(res, 200, null), /answered null/],
    ['a JSON list', (res: import('node:http').ServerResponse) => json(res, 200, [1, 2]), /a JSON list/],
    ['a redirect loop', (res: import('node:http').ServerResponse) => (res.writeHead(302, { location: '/version' }), res.end()), /redirect/],
  ] as const) {
    it(`answers ${name}: said as it is, not "cannot reach the API server"`, async ({ onTestFinished }) => {
      const kube = await serveKube((_req, res) => (answer(res), true), onTestFinished);
      const result = await runCli(['preflight', '--stack', KIND, '--kubeconfig', kube.kubeconfig(tempDir(onTestFinished), 'token: t0k3n-value'), ...FLAGS], GUARD);
      expectSafe(result, name, { codes: [1] });
      expect(result.stdout).toMatch(said);
      expect(result.stdout).not.toMatch(/cannot reach the API server|internal error|please report/);
    });
  }

  for (const versions of ['"v1"', '[null, 5, {"name": {"x": 1}, "served": "yes"}]', '{"0": {"name": "v1"}}']) {
    it(`a malformed CRD (spec.versions ${versions}): a failed check, not an internal error`, async ({ onTestFinished }) => {
      const kube = await serveKube((req, res) => {
        if (!(req.url ?? '').includes('customresourcedefinitions')) return false;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"kind":"CustomResourceDefinition","spec":{"versions":${versions}},"metadata":{"labels":5}}`);
        return true;
      }, onTestFinished);
      const result = await runCli(['preflight', '--stack', KIND, '--kubeconfig', kube.kubeconfig(tempDir(onTestFinished), 'token: t0k3n-value'), ...FLAGS, '--json'], GUARD);
      expectSafe(result, versions, { codes: [1] });
      const checks = JSON.parse(result.stdout).checks as { id: string; status: string; message: string }[];
      const crds = checks.filter((c) => c.id.startsWith('crd:'));
      expect(crds.length).toBeGreaterThan(0);
      for (const c of crds) {
        expect(c.status).toBe('fail');
        expect(c.message).not.toMatch(/internal error|please report/);
      }
    });
  }

  it('a server text of 7 MiB (a node name): every message and report bounded', async ({ onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    const kube = await serveKube((req, res) => {
      if ((req.url ?? '').split('?')[0] !== '/version') return false;
      json(res, 200, { gitVersion: `x${'v'.repeat(7 * 1024 * 1024)}` });
      return true;
    }, onTestFinished);
    const junit = join(dir, 'r.xml');
    const result = await runCli(['preflight', '--stack', KIND, '--kubeconfig', kube.kubeconfig(dir, 'token: t0k3n-value'), ...FLAGS, '--junit', junit], GUARD);
    expectSafe(result, '7 MiB', { codes: [1] });
    expect(result.stdout.length + result.stderr.length).toBeLessThan(100_000);
    expect(readFileSync(junit, 'utf8').length).toBeLessThan(100_000);
  });
});

describe.concurrent('a hostile kubeconfig', { timeout: 600_000 }, () => {
  const BOUNDED = { codes: [1], maxPeakBytes: 300 * 1024 * 1024 };

  it('/dev/zero, a FIFO, a folder, a 10 MB file, a binary file: refused at once, naming the file', async ({ onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    const fifo = join(dir, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    writeFileSync(join(dir, 'big'), `apiVersion: v1\n# ${'x'.repeat(10 * 1024 * 1024)}\n`);
    writeFileSync(join(dir, 'binary'), Buffer.from([0x61, 0, 0xff, 0x0a]));
    for (const file of ['/dev/zero', fifo, dir, join(dir, 'big'), join(dir, 'binary')]) {
      for (const command of ['preflight', 'verify']) {
        const result = await runCli([command, '--stack', KIND, '--kubeconfig', file, ...FLAGS], GUARD);
        // A folder on the command line is a usage error (docs/cli.md, Exit codes); the rest are failed checks.
        expectSafe(result, `${command} --kubeconfig ${file}`, file === dir ? { ...BOUNDED, codes: [2] } : BOUNDED);
        expect(result.stderr).toContain(file);
      }
    }
  });

  it("the stack file's kubeconfig key naming /dev/zero or a FIFO: the same", async ({ onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    const fifo = join(dir, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    for (const file of ['/dev/zero', fifo]) {
      const stack = join(dir, 'Pulumi.k.yaml');
      writeFileSync(stack, `${readFileSync(KIND, 'utf8')}\n  app-serving:kubeconfig: ${file}\n`);
      const result = await runCli(['preflight', '--stack', stack, '-m', join(REPO_ROOT, 'models'), ...FLAGS], GUARD);
      expectSafe(result, `stack kubeconfig ${file}`, BOUNDED);
      expect(result.stderr).toContain(file);
    }
  });

  it('a YAML alias bomb in exec.args: refused before it expands, within the deadline', async ({ onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    const rows = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i += 1) rows.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
    const file = join(dir, 'kubeconfig');
    writeFileSync(
      file,
      `${rows.join('\n')}\napiVersion: v1\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:9"}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user:\n    exec:\n      command: /bin/true\n      args: *a8\n`,
    );
    // The deadline is only a guard here (refusing the bomb takes no time, BOUNDED checks the memory):
    // beside a CPU hog at load 23, 10 s passed while Node was still starting and reading the file.
    const result = await runCli(['preflight', '--stack', KIND, '--kubeconfig', file, '--deadline', '60s'], { killAfterMs: 150_000 });
    expectSafe(result, 'alias bomb', BOUNDED);
    expect(result.stderr).toMatch(/alias/);
  });

  it('an exec plugin that never ends (and its child): stopped at --deadline, said so, nothing left running', async ({ onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    const pids = join(dir, 'pids');
    const plugin = script(dir, 'plugin', `sleep 600 & echo $! >> ${pids}; echo $$ >> ${pids}; wait`);
    const kube = await serveKube(() => false, onTestFinished);
    const kubeconfig = kube.kubeconfig(dir, `exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: ${plugin}`);
    for (const command of ['preflight', 'verify']) {
      // A deadline long enough for the CLI to have started the plugin even at load 20 (at load 24, 5 s
      // passed while Node was still starting and reading the kubeconfig): the plugin never ends, so
      // whatever the deadline, it is what stops the run.
      const result = await runCli([command, '--stack', KIND, '--kubeconfig', kubeconfig, '--timeout', '10s', '--deadline', '30s'], { killAfterMs: 180_000 });
      expectSafe(result, command, { codes: [1] });
      expect(result.stderr).toMatch(/exec plugin .*plugin.*deadline/);
      expect(result.stdout + result.stderr).not.toMatch(/API server is slow/);
    }
    // Killed (SIGKILL to the plugin's process group) when the run ended; gone once reaped.
    for (const pid of readFileSync(pids, 'utf8').split('\n').filter(Boolean).map(Number)) expect(await gone(pid), `process ${pid} of the plugin still runs`).toBe(true);
  }, 400_000);

  it('an exec plugin runs once per run, however many calls the checks make', async ({ onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    const count = join(dir, 'count');
    const plugin = script(dir, 'plugin', `echo run >> ${count}; echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"once-tok"}}'`);
    const kube = await serveKube(() => false, onTestFinished);
    // Every check must get its answer (at load 24, 2 s per request was too short and preflight stopped
    // after the first): the count is only meaningful over all of them.
    const result = await runCli(['preflight', '--stack', KIND, '--kubeconfig', kube.kubeconfig(dir, `exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: ${plugin}`), ...FLAGS], GUARD);
    expectSafe(result, 'once', { codes: [0, 1], secrets: ['once-tok'] });
    expect(kube.requests.length).toBeGreaterThan(10);
    expect(readFileSync(count, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  }, 400_000);

  it('an exec plugin that prints without end: stopped at its output limit', async ({ onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    const plugin = script(dir, 'plugin', 'exec yes');
    const kube = await serveKube(() => false, onTestFinished);
    const result = await runCli(['preflight', '--stack', KIND, '--kubeconfig', kube.kubeconfig(dir, `exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: ${plugin}`), ...FLAGS], GUARD);
    expectSafe(result, 'endless plugin', BOUNDED);
    expect(result.stderr).toMatch(/printed more than 1 MiB/);
  });

  it('a gcp auth-provider cmd-path: run without a shell, and bounded by --deadline', async ({ onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    const kube = await serveKube(() => false, onTestFinished);
    const helper = script(dir, 'helper', `printf '%s\\n' "$@" > ${join(dir, 'args')}; echo '{"access_token":"gcp-ok"}'`);
    const pwned = join(dir, 'pwned');
    const injected = kube.kubeconfig(dir, `auth-provider:\n  name: gcp\n  config:\n    cmd-path: ${helper}\n    cmd-args: "config; touch ${pwned}"`);
    const run = await runCli(['preflight', '--stack', KIND, '--kubeconfig', injected, ...FLAGS], GUARD);
    expectSafe(run, 'gcp', { codes: [0, 1], secrets: ['gcp-ok'] });
    expect(existsSync(pwned)).toBe(false);
    expect(readFileSync(join(dir, 'args'), 'utf8').split('\n').filter(Boolean)).toEqual(['config;', 'touch', pwned]);

    mkdirSync(join(dir, 'slow'));
    const slow = script(join(dir, 'slow'), 'helper', 'exec sleep 600');
    const hanging = await runCli(['preflight', '--stack', KIND, '--kubeconfig', kube.kubeconfig(join(dir, 'slow'), `auth-provider:\n  name: gcp\n  config:\n    cmd-path: ${slow}`), '--timeout', '10s', '--deadline', '30s'], {
      killAfterMs: 180_000,
    });
    expectSafe(hanging, 'gcp slow', { codes: [1] });
    expect(hanging.stderr).toMatch(/gcp auth-provider cmd-path .*deadline/);
  }, 400_000);
});
