import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { hang, startModelServer } from '../test/model-server.ts';
import { abortKind, anySignal, checkSignal } from './clock.ts';
import { checkModels } from './openai.ts';

// A real garbage collection, as in a long run: Node 20 collected the timeout signal inside
// AbortSignal.any([AbortSignal.timeout(t), parent]) and the check never timed out (nodejs/node#57736).
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Resolves with the ms it took `signal` to abort, or null when it has not aborted within `limitMs`. */
function abortedWithin(signal: AbortSignal, limitMs: number): Promise<number | null> {
  const started = performance.now();
  return new Promise((resolve) => {
    const guard = setTimeout(() => resolve(null), limitMs);
    signal.addEventListener('abort', () => {
      clearTimeout(guard);
      resolve(performance.now() - started);
    });
  });
}

describe('checkSignal survives garbage collection', () => {
  it('fires its timeout after a forced GC, with a parent signal', async () => {
    const parent = new AbortController();
    const signal = checkSignal(100, parent.signal);
    gc();
    await new Promise((r) => setImmediate(r));
    gc();
    const took = await abortedWithin(signal, 60_000);
    expect(took).not.toBeNull();
    expect(abortKind(signal)).toBe('timeout');
  });

  it('fires when the parent aborts, with the parent reason', async () => {
    const parent = new AbortController();
    const signal = checkSignal(60_000, parent.signal);
    gc();
    parent.abort(new Error('stop'));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('stop');
  });

  it('anySignal follows the first source to abort, after a GC', async () => {
    const a = new AbortController();
    const b = new AbortController();
    const signal = anySignal([a.signal, b.signal]);
    gc();
    b.abort(new Error('b'));
    expect((signal.reason as Error).message).toBe('b');
  });

  it('a check against a server that never answers ends at --timeout, not at the deadline, despite GC', async () => {
    const server = await startModelServer({ routes: { 'GET /v1/models': hang } });
    // The deadline never fires by itself: only the 300 ms timeout can end the check (the test's
    // timeout guards a hang; the message names the 300 ms).
    const deadline = new AbortController();
    const pending = checkModels({ url: server.url }, 'test-model', { timeoutMs: 300, signal: deadline.signal });
    gc();
    const result = await pending;
    gc();
    expect(result.status).toBe('fail');
    expect(result.message).toMatch(/no answer within 300 ms|timed out after 300 ms/);
  });
});
