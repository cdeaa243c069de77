/** A mistake in how the command was called (exit 2): a missing flag, a bad value, a file that is not there. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Exit codes: a contract with scripts and CI. */
export const EXIT = {
  ok: 0,
  /** The stack has problems, or a check failed. */
  problems: 1,
  usage: 2,
  /** A bug in app-serving. */
  internal: 70,
} as const;
