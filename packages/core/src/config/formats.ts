/**
 * Formats of stack values that code besides the schema checks too (node selectors, durations),
 * free of zod so that core's public declarations stay free of zod's.
 */

const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A duration such as `30m`, `1h30m`, `900s` (hours, minutes, seconds; at least one). */
const DURATION = /^(?=\d)(\d+h)?(\d+m)?(\d+s)?$/;

/** A Kubernetes label key (`[prefix/]name`), as used in node selectors. */
export function isLabelKey(key: string): boolean {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !LABEL_PREFIX.test(prefix))) return false;
  return name.length > 0 && name.length <= 63 && LABEL_NAME.test(name);
}

/** A Kubernetes label value: empty, or ≤ 63 alphanumerics with `-_.` inside. */
export function isLabelValue(value: string): boolean {
  return value === '' || (value.length <= 63 && LABEL_NAME.test(value));
}

/**
 * Seconds of a duration such as `1h30m` (hours h, minutes m, seconds s; at least one); undefined
 * when it is not one. A duration of more digits than any API takes is a huge number (never cut):
 * the key's own limit refuses it ({@link durationLimitProblem}).
 */
export function durationSeconds(text: string): number | undefined {
  const match = DURATION.exec(text);
  if (!match || text === '') return undefined;
  const [, h, m, s] = match;
  return (h ? parseInt(h, 10) * 3600 : 0) + (m ? parseInt(m, 10) * 60 : 0) + (s ? parseInt(s, 10) : 0);
}

/** The largest value of a Kubernetes `int32` field (format int32 in an OpenAPI schema). */
export const INT32_MAX = 2_147_483_647;

/** `2h (7200 s)`, `1h (3600 s)`: a duration as written, with its seconds. */
export function describeSeconds(seconds: number): string {
  if (!Number.isSafeInteger(seconds)) return `more than ${Number.MAX_SAFE_INTEGER} s`;
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const text = `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s || (!h && !m) ? `${s}s` : ''}`;
  return `${text} (${seconds} s)`;
}

/**
 * Why a duration of `seconds` is more than an API takes, or null: "is 2h (7200 s), more than
 * <what> (at most 1h (3600 s): <source>): use at most 1h". `what` and `source` say whose limit it is.
 */
export function durationLimitProblem(
  text: string,
  seconds: number,
  max: { readonly seconds: number; readonly what: string; readonly source: string },
  options: { readonly echo?: boolean } = {},
): string | null {
  if (seconds <= max.seconds) return null;
  const shown = text.length > 40 ? `${text.slice(0, 37)}...` : text;
  // Where the caller prints the value itself (a schema issue: `key: "value" <message>`), the message starts at "is more than".
  const value = options.echo === false ? (Number.isSafeInteger(seconds) ? ` ${seconds} s,` : '') : ` ${shown}${Number.isSafeInteger(seconds) ? ` (${seconds} s)` : ''},`;
  return `is${value} more than ${max.what} allows: at most ${describeSeconds(max.seconds)} (${max.source}) — use at most ${describeSeconds(max.seconds).split(' ')[0]}`;
}
