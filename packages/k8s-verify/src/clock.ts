import { setTimeout as delay } from 'node:timers/promises';

/**
 * Time as the wait loop sees it. Injectable so that tests of `--wait` and its backoff run without
 * sleeping: a fake clock advances its own time in `sleep` and returns at once.
 */
export interface Clock {
  /** Milliseconds since an arbitrary origin. */
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => performance.now(),
  sleep: async (ms, signal) => {
    await delay(ms, undefined, signal ? { signal } : undefined);
  },
};

/** Exponential backoff of readiness retries under `--wait`. */
export interface Backoff {
  /** @default 1000 */
  readonly initialMs: number;
  /** @default 15000 */
  readonly maxMs: number;
  /** @default 2 */
  readonly factor: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 1000, maxMs: 15_000, factor: 2 };

/** The reason a run's signal aborts with when its deadline passes. */
export class DeadlineError extends Error {
  override readonly name = 'DeadlineError';
  constructor(readonly deadlineMs: number) {
    super(`the run's deadline (${formatMs(deadlineMs)}) passed`);
  }
}

/** `1.2 s`, `350 ms`, `2 min 5 s`. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0).replace(/\.0$/, '')} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
}

/** A signal that aborts after `timeoutMs` (reason: a `TimeoutError`) or when `parent` aborts (its reason). */
export function checkSignal(timeoutMs: number, parent?: AbortSignal): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return parent ? AbortSignal.any([timeout, parent]) : timeout;
}

/** What aborted a signal: its own timeout, the run's deadline, or a cancellation. */
export function abortKind(signal: AbortSignal | undefined): 'timeout' | 'deadline' | 'aborted' | null {
  if (!signal?.aborted) return null;
  const reason: unknown = signal.reason;
  if (reason instanceof DeadlineError) return 'deadline';
  if (reason instanceof Error && reason.name === 'TimeoutError') return 'timeout';
  return 'aborted';
}
