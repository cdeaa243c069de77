/** Stable codes of {@link VerifyError}. */
export type VerifyErrorCode =
  /** `--model` names a model the stack does not deploy. */
  | 'unknown-model'
  /** An option is out of range or contradicts another (usage error). */
  | 'invalid-option'
  /** No kubeconfig could be loaded (none given, none found, not in a cluster, or unreadable). */
  | 'kubeconfig'
  /** `--context` names a context the kubeconfig does not have. */
  | 'context';

/**
 * A problem that stops a run before any check: bad options or no way to reach the cluster.
 * The CLI reports `unknown-model`, `invalid-option` and `context` as usage errors (exit 2) and
 * `kubeconfig` as an expected failure (exit 1). Check failures are never thrown: they are results.
 */
export class VerifyError extends Error {
  override readonly name = 'VerifyError';
  constructor(
    readonly code: VerifyErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function isVerifyError(error: unknown): error is VerifyError {
  return error instanceof VerifyError || (error instanceof Error && error.name === 'VerifyError' && typeof (error as VerifyError).code === 'string');
}
