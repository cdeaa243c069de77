import { checkSignal, formatMs } from './clock.ts';
import type { Endpoint } from './http.ts';
import { DEFAULT_CHECK_TIMEOUT_MS, DEFAULT_MAX_TOKENS, streamChat, type StreamOutcome } from './openai.ts';
import { checkResult } from './result.ts';
import { LOAD_PROBE_LABEL, type CheckResult, type LoadProbeResult, type Percentiles } from './types.ts';

export interface LoadProbeOptions {
  /** Number of streamed chat requests. */
  readonly requests: number;
  /** How many run at once. */
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
  const requests = Math.max(1, Math.floor(options.requests));
  const concurrency = Math.max(1, Math.min(requests, Math.floor(options.concurrency)));
  const timeoutMs = options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  const outcomes: StreamOutcome[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < requests && !options.signal?.aborted) {
      next += 1;
      outcomes.push(await streamChat(endpoint, servedModelName, options.maxTokens ?? DEFAULT_MAX_TOKENS, checkSignal(timeoutMs, options.signal)));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMs = performance.now() - started;

  const ok = outcomes.filter((o) => o.status === 200 && o.done && !o.malformed && !o.serverError);
  const errors = [...new Set(outcomes.filter((o) => !ok.includes(o)).map(describeFailure))].slice(0, 5);
  const usage = ok.length > 0 && ok.every((o) => o.usageTokens !== null);
  const tokens = ok.reduce((sum, o) => sum + (usage ? o.usageTokens! : o.contentChunks), 0);
  const ttfts = ok.map((o) => o.ttftMs).filter((t): t is number => t !== null);
  return {
    label: LOAD_PROBE_LABEL,
    requests,
    concurrency,
    succeeded: ok.length,
    failed: requests - ok.length,
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
    succeeded: probe.succeeded,
    failed: probe.failed,
  };
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
