/** The longest duration a timer can hold (2^31 − 1 ms, about 24.8 days); longer ones fire at once in Node. */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/**
 * Parses a duration as the CLI flags take it (`--wait 5m`, `--timeout 30s`): a whole or decimal
 * number followed by `ms`, `s`, `m` or `h`, optionally several (`1m30s`); a bare number is seconds.
 * Returns milliseconds, or throws a RangeError naming the accepted forms, or saying that the
 * duration is longer than {@link MAX_DURATION_MS} (a timer cannot hold it).
 */
export function parseDuration(text: string): number {
  const input = text.trim();
  if (/^\d+(\.\d+)?$/.test(input)) return bounded(text, Math.round(Number(input) * 1000));
  const part = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let consumed = 0;
  for (let match = part.exec(input); match; match = part.exec(input)) {
    total += Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
    consumed = part.lastIndex;
  }
  if (input.length === 0 || consumed !== input.length) {
    throw new RangeError(`"${text}" is not a duration: use e.g. 500ms, 30s, 5m, 1h or 1m30s (a bare number is seconds)`);
  }
  return bounded(text, Math.round(total));
}

function bounded(text: string, ms: number): number {
  if (!Number.isFinite(ms) || ms > MAX_DURATION_MS) throw new RangeError(`"${text}" is too long: at most 24 days (596h) can be timed`);
  return ms;
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
