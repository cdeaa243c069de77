import { setMaxListeners } from 'node:events';
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

/**
 * A signal that aborts after `timeoutMs` (reason: a `TimeoutError`) or when `parent` aborts (its reason).
 *
 * Built from an AbortController and a plain timer, not `AbortSignal.any([AbortSignal.timeout(t), parent])`:
 * on Node 20 the composite holds its sources weakly, so after a garbage collection the timeout signal is
 * collected and never fires (nodejs/node#57736) — a check against a silent server then ran to the run's
 * deadline whatever `--timeout` said. Here the timer's callback holds the controller strongly until it
 * fires or the parent aborts; the timer is unref'd so that it never keeps a finished process alive.
 */
export function checkSignal(timeoutMs: number, parent?: AbortSignal): AbortSignal {
  const controller = new AbortController();
  if (parent?.aborted) {
    controller.abort(parent.reason);
    return controller.signal;
  }
  const onParentAbort = () => {
    clearTimeout(timer);
    controller.abort(parent!.reason);
  };
  const timer = setTimeout(() => {
    parent?.removeEventListener('abort', onParentAbort);
    controller.abort(new DOMException(`the check timed out after ${formatMs(timeoutMs)}`, 'TimeoutError'));
  }, timeoutMs);
  timer.unref?.();
  if (parent) {
    // Every concurrent check listens on the run's signal until its own timer fires: more than
    // Node's default of 10 is expected, not a leak (and the warning would reach the user's stderr).
    setMaxListeners(0, parent);
    parent.addEventListener('abort', onParentAbort, { once: true });
  }
  return controller.signal;
}

/** A signal that aborts when any of `signals` aborts (its reason); every source is held strongly (see {@link checkSignal}). */
export function anySignal(signals: readonly AbortSignal[]): AbortSignal {
  const controller = new AbortController();
  const aborted = signals.find((s) => s.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return controller.signal;
  }
  const listeners = signals.map((signal) => {
    setMaxListeners(0, signal);
    const listener = () => {
      signals.forEach((s, i) => s.removeEventListener('abort', listeners[i]!));
      controller.abort(signal.reason);
    };
    signal.addEventListener('abort', listener, { once: true });
    return listener;
  });
  return controller.signal;
}

/** What aborted a signal: its own timeout, the run's deadline, or a cancellation. */
export function abortKind(signal: AbortSignal | undefined): 'timeout' | 'deadline' | 'aborted' | null {
  if (!signal?.aborted) return null;
  const reason: unknown = signal.reason;
  if (reason instanceof DeadlineError) return 'deadline';
  if (reason instanceof Error && reason.name === 'TimeoutError') return 'timeout';
  return 'aborted';
}
