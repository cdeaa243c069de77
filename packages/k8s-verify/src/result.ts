import type { CheckName, CheckResult, CheckStatus, Failure, JsonValue } from './types.ts';

/** Builds a {@link CheckResult}. */
export function checkResult(
  name: CheckName,
  status: CheckStatus,
  message: string,
  extra: { durationMs?: number; target?: string | null; failure?: Failure | null; data?: Record<string, JsonValue>; attempts?: number } = {},
): CheckResult {
  return {
    name,
    status,
    message,
    durationMs: Math.round(extra.durationMs ?? 0),
    target: extra.target ?? null,
    failure: status === 'fail' ? (extra.failure ?? { expected: message, got: message, cause: null, httpStatus: null, body: null }) : null,
    data: extra.data ?? {},
    attempts: extra.attempts ?? 1,
  };
}

/** A check that was not run, and why. */
export function skipped(name: CheckName, reason: string): CheckResult {
  return checkResult(name, 'skip', reason);
}

/** Runs `body`, timing it; an unexpected exception becomes a failed check that says it is a bug. */
export async function timed(name: CheckName, target: string | null, body: () => Promise<Omit<CheckResult, 'durationMs'> | CheckResult>): Promise<CheckResult> {
  const started = performance.now();
  try {
    const result = await body();
    return { ...result, target: result.target ?? target, durationMs: Math.round(performance.now() - started) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return checkResult(name, 'fail', `internal error: ${message}`, {
      durationMs: performance.now() - started,
      target,
      failure: { expected: 'the check to run', got: `an unexpected error: ${message}`, cause: 'a bug in @app-serving/k8s-verify: please report it with this output', httpStatus: null, body: null },
    });
  }
}
