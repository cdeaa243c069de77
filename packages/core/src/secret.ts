import { inspect } from 'node:util';

const REDACTED = '[secret]';

/**
 * A secret value from the stack config (a registry token, a Hugging Face token, a kubeconfig).
 *
 * It cannot be printed by accident: `String()`, template literals, `JSON.stringify`, `console.log`
 * and `util.inspect` all show `[secret]`. Read the value with {@link Secret.reveal}, only where it is
 * handed to Pulumi as a secret. A value read from a stack file on disk is still encrypted
 * (`secure: v1:…`): it is known to be set, but has no plaintext, and `reveal()` throws.
 */
export class Secret {
  readonly #plain: string | undefined;
  /** True when the value came from a stack file still encrypted (`secure:`), so no plaintext exists here. */
  readonly encrypted: boolean;

  private constructor(plain: string | undefined, encrypted: boolean) {
    this.#plain = plain;
    this.encrypted = encrypted;
  }

  /** A secret whose plaintext is known (what a Pulumi program receives from its config). */
  static plain(value: string): Secret {
    return new Secret(value, false);
  }

  /** A secret that is set but still encrypted in the stack file. */
  static encrypted(): Secret {
    return new Secret(undefined, true);
  }

  /** The plaintext. Throws for an encrypted value: decrypting is Pulumi's job, not core's. */
  reveal(): string {
    if (this.#plain === undefined) {
      throw new Error('This secret is still encrypted in the stack file; only a Pulumi program sees its value.');
    }
    return this.#plain;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }

  [Symbol.toPrimitive](): string {
    return REDACTED;
  }
}

/** True for a {@link Secret}, also across duplicate copies of this package. */
export function isSecret(value: unknown): value is Secret {
  return value instanceof Secret || (typeof value === 'object' && value !== null && value.constructor?.name === 'Secret' && typeof (value as Secret).reveal === 'function');
}

/** How every secret value is printed (by {@link Secret}, `render`, `diff`). */
export const REDACTED_SECRET = REDACTED;

/**
 * A redacted secret that still tells two values apart: `[secret:<digest>]`, the digest made by the
 * caller (e.g. an HMAC under a key that lives only in one process). Without a digest, `[secret]`.
 */
export function redactedSecret(digest?: string): string {
  return digest === undefined ? REDACTED : `[secret:${digest}]`;
}

/** True for a value printed in place of a secret: `[secret]` or `[secret:<digest>]`. */
export function isRedactedSecret(value: unknown): value is string {
  return typeof value === 'string' && (value === REDACTED || /^\[secret:[0-9a-f]+\]$/.test(value));
}
