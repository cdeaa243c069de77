import http from 'node:http';
import https from 'node:https';
import { abortKind, checkSignal, formatMs } from './clock.ts';
import type { Endpoint } from './http.ts';
import { DEFAULT_CHECK_TIMEOUT_MS, DEFAULT_MAX_TOKENS, streamChat, type StreamOutcome } from './openai.ts';
import { checkResult } from './result.ts';
import { LOAD_PROBE_LABEL, type CheckResult, type LoadProbeResult, type Percentiles } from './types.ts';

/** Most requests of one probe (`--load`). */
export const MAX_LOAD_REQUESTS = 10_000;
/** Most concurrent requests of one probe (`--concurrency`): one socket each, reused (keep-alive). */
export const MAX_LOAD_CONCURRENCY = 256;

export interface LoadProbeOptions {
  /** Number of streamed chat requests (at most {@link MAX_LOAD_REQUESTS}). */
  readonly requests: number;
  /** How many run at once (at most {@link MAX_LOAD_CONCURRENCY}). */
  readonly concurrency: number;
  /** Timeout of each request. @default 30000 */
  readonly timeoutMs?: number;
  /** Aborts the probe. */
  readonly signal?: AbortSignal;
  /** @default 32 */
  readonly maxTokens?: number;
}

/**
 * A short latency probe: `requests` streamed chat requests, `concurrency` at a time. Reports time
 * to first token and end-to-end latency (p50/p95) and output tokens per second. A smoke-level
 * probe of a live deployment, not a benchmark: few requests, one prompt, no warm-up.
 */
export async function runLoadProbe(endpoint: Endpoint, servedModelName: string, options: LoadProbeOptions): Promise<LoadProbeResult> {
  const requests = Math.max(1, Math.min(MAX_LOAD_REQUESTS, Math.floor(options.requests)));
  const concurrency = Math.max(1, Math.min(requests, MAX_LOAD_CONCURRENCY, Math.floor(options.concurrency)));
  const timeoutMs = options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  // Connections are reused (keep-alive): a fresh socket per request leaves thousands in TIME_WAIT.
  const own = endpoint.agent ? null : endpoint.url.startsWith('https:') ? new https.Agent({ keepAlive: true, maxSockets: concurrency }) : new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const target: Endpoint = own ? { ...endpoint, agent: own } : endpoint;
  const outcomes: StreamOutcome[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < requests && !options.signal?.aborted) {
      next += 1;
      outcomes.push(await streamChat(target, servedModelName, options.maxTokens ?? DEFAULT_MAX_TOKENS, checkSignal(timeoutMs, options.signal)));
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    own?.destroy();
  }
  const wallMs = performance.now() - started;

  // A request cut by the run's deadline (or Ctrl-C) says nothing about the server.
  const cut = (o: StreamOutcome) => o.error !== null && (o.error.kind === 'deadline' || o.error.kind === 'aborted') && !o.done;
  const counted = outcomes.filter((o) => !cut(o));
  const ok = counted.filter((o) => o.status === 200 && o.done && !o.malformed && !o.serverError);
  const errors = [...new Set(counted.filter((o) => !ok.includes(o)).map(describeFailure))].slice(0, 5);
  const usage = ok.length > 0 && ok.every((o) => o.usageTokens !== null);
  const tokens = ok.reduce((sum, o) => sum + (usage ? o.usageTokens! : o.contentChunks), 0);
  const ttfts = ok.map((o) => o.ttftMs).filter((t): t is number => t !== null);
  const kind = abortKind(options.signal);
  const stopped = counted.length < requests && options.signal?.aborted ? (kind === 'deadline' ? 'the deadline' : 'a cancellation') : null;
  return {
    label: LOAD_PROBE_LABEL,
    requests,
    concurrency,
    sent: outcomes.length,
    succeeded: ok.length,
    failed: counted.length - ok.length,
    stopped,
    ttftMs: percentiles(ttfts),
    e2eMs: percentiles(ok.map((o) => o.e2eMs)),
    outputTokensPerSecond: ok.length ? round(tokens / (wallMs / 1000), 1) : null,
    tokenCount: usage ? 'usage' : 'chunks',
    wallMs: Math.round(wallMs),
    errors,
  };
}

function describeFailure(o: StreamOutcome): string {
  if (o.status !== 0 && o.status !== 200) return `HTTP ${o.status}`;
  if (o.malformed !== null) return 'malformed SSE event';
  if (o.serverError !== null) return `error event: ${o.serverError.slice(0, 80)}`;
  if (o.status === 200 && o.contentType !== 'text/event-stream') return `not a stream (${o.contentType || 'no content-type'})`;
  if (o.error?.kind === 'timeout') return 'timed out';
  if (o.status === 200) return `stream cut before [DONE] (${o.error?.message ?? 'ended'})`;
  return o.error?.message ?? 'no answer';
}

/** Nearest-rank p50 and p95, rounded to 0.1 ms; null for no samples. */
export function percentiles(samples: readonly number[]): Percentiles | null {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return { p50: round(rank(50), 1), p95: round(rank(95), 1) };
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** The `load` check for a probe: it fails when any request failed. */
export function loadCheck(probe: LoadProbeResult, target: string | null, durationMs: number): CheckResult {
  const stats = [
    probe.ttftMs ? `TTFT p50 ${formatMs(probe.ttftMs.p50)} p95 ${formatMs(probe.ttftMs.p95)}` : null,
    probe.e2eMs ? `e2e p50 ${formatMs(probe.e2eMs.p50)} p95 ${formatMs(probe.e2eMs.p95)}` : null,
    probe.outputTokensPerSecond !== null ? `${probe.outputTokensPerSecond} tok/s` : null,
  ]
    .filter(Boolean)
    .join(', ');
  const data = {
    requests: probe.requests,
    concurrency: probe.concurrency,
    sent: probe.sent,
    succeeded: probe.succeeded,
    failed: probe.failed,
  };
  if (probe.stopped !== null) {
    const message = `stopped at ${probe.stopped} after ${probe.succeeded + probe.failed} of ${probe.requests} requests (${probe.succeeded} succeeded, ${probe.failed} failed)`;
    return checkResult('load', 'fail', `${message}${stats ? `; ${stats}` : ''} (${LOAD_PROBE_LABEL})`, {
      durationMs,
      target,
      data,
      failure: {
        expected: `${probe.requests} streamed chat requests, ${probe.concurrency} at a time, all ending in [DONE]`,
        got: `${message}${probe.errors.length ? `: ${probe.errors.join('; ')}` : ''}`,
        cause: probe.stopped === 'the deadline' ? 'the run\'s deadline passed before the probe finished: lower --load or raise --deadline' : 'the run was cancelled',
        httpStatus: null,
        body: null,
      },
    });
  }
  if (probe.failed === 0) {
    return checkResult('load', 'pass', `${probe.requests} req × ${probe.concurrency} concurrent: ${stats} (${LOAD_PROBE_LABEL})`, { durationMs, target, data });
  }
  return checkResult('load', 'fail', `${probe.failed}/${probe.requests} requests failed${stats ? `; ${stats}` : ''} (${LOAD_PROBE_LABEL})`, {
    durationMs,
    target,
    data,
    failure: {
      expected: `${probe.requests} streamed chat requests, ${probe.concurrency} at a time, all ending in [DONE]`,
      got: `${probe.failed} failed: ${probe.errors.join('; ')}`,
      cause: 'the deployment fails under light concurrent load: an overloaded model server (queue, KV cache), too short a --timeout, or a proxy limit',
      httpStatus: null,
      body: null,
    },
  });
}
