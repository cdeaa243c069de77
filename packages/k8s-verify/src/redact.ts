import { redactUrlCredentials } from '@app-serving/core';

const REDACTED = '[redacted]';

/**
 * Removes secret values (header values such as a bearer token, URL credentials) from any text or
 * JSON-like value. Every string the library returns or reports passes through one, so a server
 * that echoes a request header back cannot leak it into the output.
 */
export class Redactor {
  readonly #secrets: readonly string[];

  constructor(secrets: Iterable<string>) {
    // Every encoding a server may echo a secret in: JSON-escaped (once, and inside JSON inside
    // JSON), percent-encoded, base64. Longest first, so that "Bearer abc" is replaced whole before "abc".
    const all = [...secrets].filter((s) => s.length >= 4).flatMap(encodings);
    this.#secrets = [...new Set(all.filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  }

  text(value: string): string {
    let out = value;
    for (const secret of this.#secrets) out = out.split(secret).join(REDACTED);
    // A text cut through a secret ("Bearer vtok-SECRET-a…"): what precedes the cut is redacted when
    // it is the start of a secret. Texts are redacted before they are cut; this is the second line.
    if (out.includes('…')) out = out.replace(/(\S{4,})…/g, (whole, before: string) => this.#cutSecret(before) ?? whole);
    return redactUrlCredentials(out);
  }

  /** `before…` with the start of a secret at its end redacted; null when it ends in none. */
  #cutSecret(before: string): string | null {
    for (const secret of this.#secrets) {
      for (let k = Math.min(secret.length - 1, before.length); k >= 4; k -= 1) {
        if (before.endsWith(secret.slice(0, k))) return `${before.slice(0, before.length - k)}${REDACTED}…`;
      }
    }
    return null;
  }

  /** A deep copy of `value` with every string redacted. */
  deep<T>(value: T): T {
    if (this.#secrets.length === 0) return value;
    return this.#walk(value) as T;
  }

  #walk(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) return value.map((v) => this.#walk(v));
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.#walk(v)]));
    }
    return value;
  }
}

/** The secret parts of request headers: each value, and the credential after an auth scheme (`Bearer <token>`). */
export function headerSecrets(headers: Readonly<Record<string, string>> | undefined): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (name.toLowerCase() === 'host' || name.toLowerCase() === 'content-type') continue;
    out.push(value);
    const scheme = /^\s*\S+\s+(\S.*)$/.exec(value);
    if (scheme?.[1]) out.push(scheme[1].trim());
  }
  return out;
}

/** The forms a secret takes once escaped or encoded by the other side. */
function encodings(secret: string): string[] {
  const json1 = JSON.stringify(secret).slice(1, -1);
  const json2 = JSON.stringify(json1).slice(1, -1);
  const json3 = JSON.stringify(json2).slice(1, -1);
  const base64 = Buffer.from(secret, 'utf8').toString('base64');
  return [secret, json1, json2, json3, encodeURIComponent(secret), base64, base64.replace(/=+$/, ''), Buffer.from(secret, 'utf8').toString('base64url')];
}

/** Credentials and query values in a URL (`https://user:pass@host/?key=…`), and the Basic credential Node sends for them. */
export function urlSecrets(url: string): string[] {
  try {
    const u = new URL(url);
    // The user name alone is not a secret (and may be a common word): the password and the pair are.
    const out = [u.password].filter(Boolean).map(safeDecode);
    if (u.username || u.password) out.push(`${safeDecode(u.username)}:${safeDecode(u.password)}`);
    for (const value of u.searchParams.values()) out.push(value);
    return out;
  } catch {
    return [];
  }
}

/** A URL fit for output: no credentials, no query string. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '[invalid URL]';
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
