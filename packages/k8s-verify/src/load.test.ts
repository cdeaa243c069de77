import { describe, expect, it } from 'vitest';
import { DeadlineError } from './clock.ts';
import { reply, sse, startModelServer } from '../test/model-server.ts';
import { loadCheck, percentiles, runLoadProbe } from './load.ts';

describe('percentiles', () => {
  it('uses the nearest rank', () => {
    expect(percentiles([])).toBeNull();
    expect(percentiles([5])).toEqual({ p50: 5, p95: 5 });
    expect(percentiles([10, 1, 9, 2, 8, 3, 7, 4, 6, 5])).toEqual({ p50: 5, p95: 10 });
    expect(percentiles(Array.from({ length: 100 }, (_, i) => i + 1))).toEqual({ p50: 50, p95: 95 });
  });
});

describe('runLoadProbe', () => {
  it('measures TTFT, end-to-end latency and tokens/s at the given concurrency', async () => {
    // Each request is held until four are open, then streamed: 8 requests at concurrency 4 pass this
    // barrier twice. A probe that ran them one by one would never be answered.
    let open = 0;
    let mostInFlight = 0;
    const waiting: Array<() => void> = [];
    const server = await startModelServer({
      routes: {
        'POST /v1/chat/completions': (_req, res) => {
          open += 1;
          mostInFlight = Math.max(mostInFlight, open);
          res.on('close', () => (open -= 1));
          waiting.push(() => sse(res, ['Yes', ', it', ' is', ' up.'], 20, (ms, fn) => void setTimeout(fn, ms)));
          if (waiting.length === 4) waiting.splice(0).forEach((start) => start());
        },
      },
    });
    const result = await runLoadProbe({ url: server.url }, 'test-model', { requests: 8, concurrency: 4 });
    expect(result).toMatchObject({ label: 'smoke-level probe, not a benchmark', requests: 8, concurrency: 4, succeeded: 8, failed: 0, tokenCount: 'chunks', errors: [] });
    expect(server.requests.length).toBe(8);
    expect(server.requests.every((r) => r.body?.stream === true)).toBe(true);
    // 4 chunks 20 ms apart: e2e ≥ 60 ms; first token before the end.
    expect(result.e2eMs!.p50).toBeGreaterThanOrEqual(60);
    expect(result.ttftMs!.p50).toBeLessThan(result.e2eMs!.p50);
    expect(result.outputTokensPerSecond).toBeGreaterThan(0);
    // At most 4 at once, and 4 at once indeed (how long that took is the benchmark's business).
    expect(mostInFlight).toBe(4);
  });

  it('counts failures and keeps their reasons', async () => {
    let n = 0;
    const server = await startModelServer({
      routes: {
        'POST /v1/chat/completions': (req, res, body) => {
          n += 1;
          if (n % 2 === 0) return reply(503, 'overloaded', 'text/plain')(req, res, body);
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(`data: ${JSON.stringify({ choices: [{ delta: { content: 'x' } }], usage: { completion_tokens: 7 } })}\n\ndata: [DONE]\n\n`);
        },
      },
    });
    const result = await runLoadProbe({ url: server.url }, 'test-model', { requests: 4, concurrency: 1 });
    expect(result).toMatchObject({ succeeded: 2, failed: 2, errors: ['HTTP 503'], tokenCount: 'usage' });
    const check = loadCheck(result, 'target', 10);
    expect(check.status).toBe('fail');
    expect(check.failure?.got).toBe('2 failed: HTTP 503');
    expect(check.message).toMatch(/^2\/4 requests failed; TTFT p50 \d+ ms p95 \d+ ms, e2e p50 \d+ ms p95 \d+ ms, [\d.]+ tok\/s \(smoke-level probe, not a benchmark\)$/);
  });
});

describe('runLoadProbe at the deadline', () => {
  it('counts only the requests sent and says it stopped at the deadline, without blaming the server', async () => {
    // The deadline passes when the sixth request arrives (an event, not a timer).
    const deadline = new AbortController();
    let arrived = 0;
    const server = await startModelServer({
      routes: {
        'POST /v1/chat/completions': (_req, res) => {
          arrived += 1;
          if (arrived === 6) deadline.abort(new DeadlineError(150));
          sse(res, ['Yes', ', it', ' is', ' up.'], 30, (ms, fn) => void setTimeout(fn, ms));
        },
      },
    });
    const result = await runLoadProbe({ url: server.url }, 'test-model', { requests: 10_000, concurrency: 4, signal: deadline.signal });
    expect(result.stopped).toBe('the deadline');
    expect(result.failed).toBe(0);
    // Nothing sent after the deadline: the sixth, and at most the three others already in flight
    // (which the server may not have read when the run stopped).
    expect(result.sent).toBeGreaterThanOrEqual(6);
    expect(result.sent).toBeLessThanOrEqual(9);
    expect(server.requests.length).toBeGreaterThanOrEqual(6);
    expect(server.requests.length).toBeLessThanOrEqual(result.sent);
    const check = loadCheck(result, 'target', 10);
    expect(check.status).toBe('fail');
    expect(check.message).toMatch(new RegExp(`^stopped at the deadline after ${result.succeeded} of 10000 requests \\(${result.succeeded} succeeded, 0 failed\\)`));
    expect(check.failure?.cause).toMatch(/deadline/);
  });

  it('reuses connections (keep-alive) instead of opening one per request', async () => {
    const ports = new Set<number>();
    const server = await startModelServer({
      routes: {
        'POST /v1/chat/completions': (req, res) => {
          ports.add(req.socket.remotePort!);
          sse(res, ['a', 'b'], 0, (_ms, fn) => fn());
        },
      },
    });
    const result = await runLoadProbe({ url: server.url }, 'test-model', { requests: 20, concurrency: 2 });
    expect(result.succeeded).toBe(20);
    expect(server.requests.length).toBe(20);
    expect(ports.size).toBeLessThanOrEqual(2);
  });
});
