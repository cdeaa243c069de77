import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectSafe, runCli, tempDir, type OnFinished } from './harness.ts';

/**
 * `verify` against misbehaving servers: each run is bounded by --timeout (not by the deadline),
 * in memory, prints no secret and no raw control character, and exits 1 (never 70). The CLI runs
 * with a garbage collection every 25 ms: timers must survive it (nodejs/node#57736).
 */

type Behaviour = (req: IncomingMessage, res: ServerResponse) => void;

async function serve(behaviour: Behaviour, onTestFinished: OnFinished): Promise<string> {
  const server: Server = createServer((req, res) => {
    res.on('error', () => undefined);
    req.resume();
    req.on('end', () => behaviour(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Writes `piece()` whenever the socket drains, until the client goes away. */
function pump(res: ServerResponse, piece: () => string): void {
  let open = true;
  res.on('close', () => (open = false));
  const go = () => {
    while (open && res.write(piece()));
    if (open) res.once('drain', go);
  };
  go();
}

const SSE = { 'content-type': 'text/event-stream' };
const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
const TOKEN = 'tok"en\\x-secret-42';
const PASSWORD = 'Pa55word-secret';

const SERVERS: Record<string, Behaviour> = {
  'accepts and never answers': () => undefined,
  'sends headers and stalls': (_req, res) => {
    res.writeHead(200, SSE);
    res.flushHeaders();
  },
  'drips a byte at a time': (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const timer = setInterval(() => res.write(' '), 100);
    res.on('close', () => clearInterval(timer));
  },
  'streams without end': (_req, res) => {
    res.writeHead(200, SSE);
    pump(res, () => chunk('x'.repeat(4000)));
  },
  'sends one endless data: line': (_req, res) => {
    res.writeHead(200, isModels(_req) ? { 'content-type': 'application/json' } : SSE);
    res.write('data: ');
    pump(res, () => 'y'.repeat(64 * 1024));
  },
  'echoes secrets and control characters': (req, res) => {
    const echoed = `${JSON.stringify(req.headers)} \u001b[2J\u001b]0;title\u0007\rBEL\u0007 \u009b31m`;
    if (isModels(req)) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: [{ id: `evil\u001b[2J\r${echoed}` }] }));
      return;
    }
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `engine failed: ${echoed}` } }));
  },
  'redirects without a Location': (_req, res) => {
    res.writeHead(302);
    res.end();
  },
};

function isModels(req: IncomingMessage): boolean {
  return (req.url ?? '').endsWith('/v1/models');
}

describe.concurrent('verify against misbehaving servers', { timeout: 600_000 }, () => {
  for (const [name, behaviour] of Object.entries(SERVERS)) {
    it(`${name}: --timeout 1s bounds every check; no secret, no control character`, async ({ onTestFinished }) => {
      const url = await serve(behaviour, onTestFinished);
      const base = url.replace('http://', `http://robot:${PASSWORD}@`);
      const junit = join(tempDir(onTestFinished), 'r.xml');
      const result = await runCli(['verify', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--base-url', base, '--timeout', '1s', '--deadline', '60s', '--junit', junit], {
        env: { APP_SERVING_VERIFY_TOKEN: TOKEN },
        gcStress: true,
      });
      expectSafe(result, name, { codes: [1], secrets: [TOKEN, PASSWORD, JSON.stringify(TOKEN).slice(1, -1), Buffer.from(`robot:${PASSWORD}`).toString('base64')] });
      // Every check ended by its own 1 s timeout or by the server's answer, none by the 60 s deadline.
      expect(result.stdout + result.stderr).not.toMatch(/the run's deadline/);
    });
  }

  it('--json: the echoed secrets stay out, the JSON stays parseable', async ({ onTestFinished }) => {
    const url = await serve(SERVERS['echoes secrets and control characters']!, onTestFinished);
    const result = await runCli(['verify', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--base-url', url.replace('http://', `http://robot:${PASSWORD}@`), '--timeout', '2s', '--json'], {
      env: { APP_SERVING_VERIFY_TOKEN: TOKEN },
    });
    expectSafe(result, 'echo --json', { codes: [1], secrets: [TOKEN, PASSWORD, JSON.stringify(TOKEN).slice(1, -1), JSON.stringify(JSON.stringify(TOKEN)).slice(1, -1)] });
    JSON.parse(result.stdout);
  });

  it('a token the server echoes where the 200-byte snippet is cut: no part of it printed', async ({ onTestFinished }) => {
    const token = 'vtok-SECRET-abcdefghijklmnopqrstuvwxyz';
    // The echoed header starts so that a 200-byte cut falls inside the token.
    const url = await serve((req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`${'e'.repeat(185)} ${String(req.headers.authorization)} tail`);
    }, onTestFinished);
    const junit = join(tempDir(onTestFinished), 'r.xml');
    for (const json of [[], ['--json']]) {
      const result = await runCli(['verify', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--base-url', url, '--timeout', '2s', '--junit', junit, ...json], { env: { APP_SERVING_VERIFY_TOKEN: token } });
      // Any 6 characters of the token in a row give it away in part.
      const pieces = Array.from({ length: token.length - 5 }, (_, i) => token.slice(i, i + 6));
      expectSafe(result, 'cut snippet', { codes: [1], secrets: pieces });
      for (const piece of pieces) expect(readFileSync(junit, 'utf8')).not.toContain(piece);
    }
  });

  it('a model id of 7 MiB: stdout and the JUnit report stay small', async ({ onTestFinished }) => {
    const id = `m${'i'.repeat(7 * 1024 * 1024)}`;
    const url = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(isModels(req) ? JSON.stringify({ data: [{ id }] }) : JSON.stringify({ choices: [{ message: { content: id }, text: id }] }));
    }, onTestFinished);
    const junit = join(tempDir(onTestFinished), 'r.xml');
    for (const json of [[], ['--json']]) {
      const result = await runCli(['verify', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--base-url', url, '--timeout', '20s', '--junit', junit, ...json]);
      expectSafe(result, '7 MiB id', { codes: [1] });
      expect(result.stdout.length + result.stderr.length).toBeLessThan(200_000);
      expect(readFileSync(junit, 'utf8').length).toBeLessThan(200_000);
    }
  });

  it('8 MiB of nested [[[ as every answer: bounded memory', async ({ onTestFinished }) => {
    const nested = '['.repeat(8 * 1024 * 1024 - 16);
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(nested);
    }, onTestFinished);
    const result = await runCli(['verify', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--base-url', url, '--timeout', '20s', '--deadline', '60s']);
    expectSafe(result, 'nested', { codes: [1], maxPeakBytes: 300 * 1024 * 1024 });
    expect(result.stdout).toMatch(/nested hundreds of levels deep/);
  });

  for (const [name, eol] of [
    ['CR-only', '\r'],
    ['CRLF', '\r\n'],
  ] as const) {
    it(`an SSE stream with ${name} line endings, sent a byte at a time: read to [DONE]`, async ({ onTestFinished }) => {
      const url = await serve((req, res) => {
        if (isModels(req)) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ data: [{ id: 'random' }, { id: 'sim-embeddings' }] }));
          return;
        }
        if (!(req.url ?? '').endsWith('/chat/completions')) {
          res.writeHead(404);
          res.end();
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const event = (data: string) => `data: ${data}${eol}${eol}`;
        const text = `${event(JSON.stringify({ choices: [{ index: 0, delta: { content: 'yes' } }] }))}${event('[DONE]')}`;
        // Byte by byte, so that a CR ends one chunk and the next line starts the next. The stream stays open after [DONE].
        let i = 0;
        const timer = setInterval(() => {
          if (i < text.length) res.write(text[i++]!);
          else clearInterval(timer);
        }, 1);
        res.on('close', () => clearInterval(timer));
      }, onTestFinished);
      const result = await runCli(['verify', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--base-url', url, '--model', 'Sim', '--timeout', '10s', '--json']);
      expectSafe(result, name, { codes: [1] });
      const checks = JSON.parse(result.stdout).models[0].checks as { name: string; status: string; message: string }[];
      expect(checks.find((c) => c.name === 'chat-stream'), JSON.stringify(checks)).toMatchObject({ status: 'pass' });
    });
  }

  it('a silent API server (--kubeconfig): --timeout bounds ready and every later check', async ({ onTestFinished }) => {
    const url = await serve(() => undefined, onTestFinished);
    const dir = tempDir(onTestFinished);
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ${url}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: ${TOKEN.replace(/["\\]/g, '')}\n`,
    );
    const result = await runCli(['verify', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--kubeconfig', kubeconfig, '--timeout', '1s', '--deadline', '60s'], { gcStress: true });
    expectSafe(result, 'silent API server', { codes: [1], secrets: [TOKEN.replace(/["\\]/g, '')] });
    expect(result.stdout + result.stderr).not.toMatch(/the run's deadline/);
  });
});
