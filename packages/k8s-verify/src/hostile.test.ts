import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planOf } from '../test/plans.ts';
import { formatJson, formatJunit, formatSummary } from './format.ts';
import { verifyPlan } from './verify.ts';

/**
 * A fuzzer of server answers (fast-check, fixed seed, bounded count): whatever status, content
 * type and body a server sends — JSON of any shape, broken SSE, control characters, the request's
 * own Authorization header echoed in any encoding — verifyPlan returns a result (never throws),
 * within the timeout, and no encoding of the token reaches the result or any output format.
 */

const TOKEN = 'tok"en\\fuzz-4242';
const ENCODINGS = [TOKEN, JSON.stringify(TOKEN).slice(1, -1), JSON.stringify(JSON.stringify(TOKEN)).slice(1, -1), encodeURIComponent(TOKEN), Buffer.from(TOKEN).toString('base64')];

const answer = fc.record({
  status: fc.constantFrom(200, 200, 200, 201, 204, 301, 400, 404, 500, 503),
  type: fc.constantFrom('application/json', 'text/event-stream', 'text/html', '', 'application/json; charset=utf-8'),
  body: fc.oneof(
    fc.json({ maxDepth: 4 }),
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.array(fc.oneof(fc.json({ maxDepth: 3 }), fc.constant('[DONE]'), fc.string({ maxLength: 40 })), { maxLength: 8 }).map((events) => events.map((e) => `data: ${e}\n\n`).join('')),
  ),
  echo: fc.constantFrom('none', 'raw', 'json', 'json2', 'url', 'base64'),
  cut: fc.boolean(),
});

type Answer = typeof answer extends fc.Arbitrary<infer T> ? T : never;

let current: Answer | undefined;
let server: http.Server;
let url: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    res.on('error', () => undefined);
    req.resume();
    req.on('end', () => {
      const a = current!;
      const auth = String(req.headers.authorization ?? '');
      const echoed = { none: '', raw: auth, json: JSON.stringify(auth).slice(1, -1), json2: JSON.stringify(JSON.stringify(auth)).slice(1, -1), url: encodeURIComponent(auth), base64: Buffer.from(auth).toString('base64') }[a.echo];
      res.writeHead(a.status, a.type ? { 'content-type': a.type } : {});
      const body = echoed ? a.body.replace(/^(data: )?/, `$1${echoed} \u001b[2J`) : a.body;
      if (a.cut) {
        res.write(body.slice(0, Math.floor(body.length / 2)));
        res.socket?.destroy();
      } else res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(
  () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
);

describe('verify against fuzzed server answers', () => {
  const plan = planOf([
    { category: 'generative', name: 'Gen', slug: 'gen' },
    { category: 'embedder', name: 'Emb', slug: 'emb' },
  ]);

  it('never throws, stays within the timeout, never leaks the token (seed 12, 40 runs)', async () => {
    await fc.assert(
      fc.asyncProperty(answer, async (a) => {
        current = a;
        const result = await verifyPlan(plan, { baseUrl: url, headers: { Authorization: `Bearer ${TOKEN}` }, timeoutMs: 2000 });
        expect(typeof result.ok).toBe('boolean');
        for (const text of [formatJson(result), formatSummary(result), formatJunit(result)]) {
          for (const secret of ENCODINGS) expect(text.includes(secret), `${secret} in ${text.slice(0, 300)}`).toBe(false);
        }
      }),
      { seed: 12, numRuns: 40 },
    );
  }, 120_000);
});
