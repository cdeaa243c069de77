import { formatPath } from '../errors.ts';
import { isRedactedSecret, REDACTED_SECRET } from '../secret.ts';
import { deepEqual, isValuesMap } from '../values/merge.ts';

/** A path into a values tree or an object: map keys and list indexes. */
export type PathSegments = readonly (string | number)[];

/** One difference between two values trees (Helm values, a Kubernetes object, resource inputs). */
export interface ValueChange {
  /** The key path, e.g. `decode.containers[0].image` or `metadata.labels["llm-d.ai/model"]`. */
  readonly path: string;
  readonly change: 'added' | 'removed' | 'changed';
  /** The value before (absent when added, or when the value is a secret). */
  readonly old?: unknown;
  /** The value after (absent when removed, or when the value is a secret). */
  readonly new?: unknown;
  /** Set when the value is a secret: only the fact that it changed is shown, never a value. */
  readonly secret?: true;
}

/** A {@link ValueChange} with its path as segments, for rules that match paths. */
export interface LocatedChange extends ValueChange {
  readonly segments: PathSegments;
}

/**
 * Every difference between `before` and `after`, by key path, in a stable order (keys sorted).
 *
 * Maps are compared key by key. Lists of maps are compared item by item (`containers[0].image`);
 * a list of scalars (`args`, `values`) is one value, shown whole. A value printed in place of a
 * secret (`[secret]`, `[secret:<digest>]`) is reported as `secret: true` without old or new, and
 * no secret marker ever appears inside a shown value.
 */
export function diffValues(before: unknown, after: unknown, prefix: PathSegments = []): LocatedChange[] {
  const out: LocatedChange[] = [];
  walk(before, after, [...prefix], out);
  return out;
}

/** Drops the segments: what the JSON output carries. */
export function publicChange({ segments: _segments, ...change }: LocatedChange): ValueChange {
  return change;
}

function walk(before: unknown, after: unknown, at: (string | number)[], out: LocatedChange[]): void {
  if (deepEqual(before, after)) return;
  if (before === undefined) {
    out.push(change(at, 'added', undefined, after));
    return;
  }
  if (after === undefined) {
    out.push(change(at, 'removed', before, undefined));
    return;
  }
  if (isValuesMap(before) && isValuesMap(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    for (const key of keys) walk(before[key], after[key], [...at, key], out);
    return;
  }
  if (Array.isArray(before) && Array.isArray(after) && (before.some(isStructured) || after.some(isStructured))) {
    for (let i = 0; i < Math.max(before.length, after.length); i += 1) walk(before[i], after[i], [...at, i], out);
    return;
  }
  out.push(change(at, 'changed', before, after));
}

function isStructured(value: unknown): boolean {
  return isValuesMap(value) || Array.isArray(value);
}

function change(segments: (string | number)[], kind: ValueChange['change'], before: unknown, after: unknown): LocatedChange {
  const path = formatPath(segments);
  if (isRedactedSecret(before) || isRedactedSecret(after)) return { path, segments, change: kind, secret: true };
  return {
    path,
    segments,
    change: kind,
    ...(before !== undefined && { old: scrub(before) }),
    ...(after !== undefined && { new: scrub(after) }),
  };
}

/** `value` with every secret marker (digests included) shown as `[secret]`. */
export function scrub(value: unknown): unknown {
  if (isRedactedSecret(value)) return REDACTED_SECRET;
  if (Array.isArray(value)) return value.map(scrub);
  if (isValuesMap(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrub(v)]));
  return value;
}

/**
 * True when `pattern` (dotted, `*` for any list item or key, as in Pulumi's `replaceOnChanges` and
 * the provider's force-new fields) covers `segments`: the change is at or under the field, or the
 * change replaces a whole object the field is part of.
 */
export function pathCovers(pattern: string, segments: PathSegments): boolean {
  const parts = parsePattern(pattern);
  const n = Math.min(parts.length, segments.length);
  for (let i = 0; i < n; i += 1) {
    const part = parts[i]!;
    if (part !== '*' && part !== String(segments[i])) return false;
  }
  return true;
}

/** `spec.template`, `.spec.containers[*].image`, `metadata.labels["a.b/c"]` → segments. */
function parsePattern(pattern: string): string[] {
  const out: string[] = [];
  const re = /\["((?:[^"\\]|\\.)*)"\]|\[(\*|\d+)\]|\.?([^.[\]]+)/g;
  for (let m = re.exec(pattern); m !== null; m = re.exec(pattern)) out.push(m[1] ?? m[2] ?? m[3]!);
  return out;
}
