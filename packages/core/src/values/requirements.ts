import { formatPath, type Issue } from '../errors.ts';
import { didYouMean } from '../suggest.ts';
import type { ValuesFile } from '../discovery.ts';
import type { StrictBlock } from './chart-facts.ts';
import { clone, deepEqual, getPath, isValuesMap, mergeValues, type Values } from './merge.ts';

/** A programmatic value the stack depends on; a values file may repeat it but not contradict it. */
export interface Requirement {
  readonly path: readonly string[];
  readonly value: unknown;
  /** Why the stack needs it, shown when a file contradicts it. */
  readonly reason: string;
}

/** A key a values file must not set to a non-empty value (it would rename objects others find by name). */
export interface Forbidden {
  readonly path: readonly string[];
  readonly reason: string;
}

/** The values tree holding every requirement. */
export function requirementValues(requirements: readonly Requirement[]): Values {
  // mergeAll of each requirement's atPath tree, built in one tree (no wrapper per requirement to copy).
  const out: Values = {};
  for (const { path, value } of requirements) {
    if (path.length === 0) throw new Error('a requirement needs a non-empty path');
    let at = out;
    for (let i = 0; i < path.length - 1; i += 1) {
      const key = path[i]!;
      const next = at[key];
      at = isValuesMap(next) ? next : (at[key] = {});
    }
    const last = path[path.length - 1]!;
    at[last] = isValuesMap(at[last]) && isValuesMap(value) ? mergeValues(at[last] as Values, value) : clone(value);
  }
  return out;
}


/** Every place where `file` contradicts a requirement or sets a forbidden key. */
export function findConflicts(file: ValuesFile | undefined, requirements: readonly Requirement[], forbidden: readonly Forbidden[] = []): Issue[] {
  if (!file) return [];
  const issues: Issue[] = [];
  const blocked = new Set<string>();
  for (const requirement of requirements) {
    const blocking = blockingPrefix(file.values, requirement.path);
    if (blocking) {
      const { path, value } = blocking;
      // One message per blocking key, however many requirements sit under it.
      if (blocked.has(path.join('\0'))) continue;
      blocked.add(path.join('\0'));
      issues.push(
        file.source.issue('values.conflict', path, `is ${show(value)} in the values file, but the stack needs ${formatPath(requirement.path)} = ${show(requirement.value)} (${requirement.reason}); remove it from the file`),
      );
      continue;
    }
    const value = getPath(file.values, requirement.path);
    if (value !== undefined && !deepEqual(value, requirement.value)) {
      issues.push(
        file.source.issue('values.conflict', [...requirement.path], `is ${show(value)} in the values file, but the stack sets ${show(requirement.value)} (${requirement.reason}); remove it from the file`),
      );
    }
  }
  for (const rule of forbidden) {
    const value = getPath(file.values, rule.path);
    if (value !== undefined && value !== '' && value !== null) {
      issues.push(file.source.issue('values.conflict', [...rule.path], `must not be set (${rule.reason}); remove it from the file`));
    }
  }
  return issues;
}

/** Keys a chart's strict schema would reject, reported before anything is deployed. */
export function findUnknownKeys(file: ValuesFile | undefined, blocks: readonly StrictBlock[], chart: string): Issue[] {
  if (!file) return [];
  const issues: Issue[] = [];
  // Plain loops: this runs for every strict block of every model (see getPath).
  for (let b = 0; b < blocks.length; b += 1) {
    const block = blocks[b]!;
    const found = valuesAt(file.values, block.path);
    for (let f = 0; f < found.length; f += 1) {
      const { at, value } = found[f]!;
      if (!isValuesMap(value)) continue;
      const keys = Object.keys(value);
      for (let k = 0; k < keys.length; k += 1) {
        const key = keys[k]!;
        if (!block.keys.includes(key)) {
          issues.push(file.source.issue('values.unknown-key', [...at, key], `${chart} does not accept this key${didYouMean(key, block.keys)}; allowed here: ${block.keys.join(', ')}`));
        }
      }
    }
  }
  return issues;
}

/** Every value at `path` (a `[]` segment visits each item of a list), with its concrete path. */
export function valuesAt(values: unknown, path: readonly string[], at: (string | number)[] = []): { at: (string | number)[]; value: unknown }[] {
  const out: { at: (string | number)[]; value: unknown }[] = [];
  collectValuesAt(values, path, 0, at, out);
  return out;
}

/** {@link valuesAt} from `path[from]` on, into `out` (plain loops: it runs for every strict block of every model). */
function collectValuesAt(values: unknown, path: readonly string[], from: number, at: (string | number)[], out: { at: (string | number)[]; value: unknown }[]): void {
  let current = values;
  let where = at;
  for (let i = from; i < path.length; i += 1) {
    const head = path[i]!;
    if (head === '[]') {
      if (!Array.isArray(current)) return;
      for (let index = 0; index < current.length; index += 1) collectValuesAt(current[index], path, i + 1, [...where, index], out);
      return;
    }
    if (!isValuesMap(current) || !Object.hasOwn(current, head)) return;
    current = current[head];
    where = [...where, head];
  }
  out.push({ at: where, value: current });
}

/** The first prefix of `path` where the file holds something that is not a map (so the required value cannot sit under it). */
function blockingPrefix(values: Values, path: readonly string[]): { path: string[]; value: unknown } | undefined {
  let current: unknown = values;
  for (let i = 0; i < path.length - 1; i += 1) {
    if (!isValuesMap(current)) return undefined;
    const next = current[path[i]!];
    if (next === undefined) return undefined;
    if (!isValuesMap(next)) return { path: path.slice(0, i + 1), value: next };
    current = next;
  }
  return undefined;
}

/** A type check of one key of a values file. */
export interface TypeCheck {
  readonly path: readonly string[];
  readonly ok: (value: unknown) => boolean;
  /** What the key must be, for the message: "a list of tolerations". */
  readonly want: string;
}

/** Values of the wrong type in a file, for keys core reads or adds to (null and absent keys pass). */
export function findTypeProblems(file: ValuesFile, checks: readonly TypeCheck[]): Issue[] {
  const issues: Issue[] = [];
  for (const check of checks) {
    const value = getPath(file.values, check.path);
    if (value !== undefined && value !== null && !check.ok(value)) {
      issues.push(file.source.issue('values.invalid', [...check.path], `must be ${check.want}, not ${show(value)}`));
    }
  }
  return issues;
}

/** `existing` (when it is a list) plus every item of `added` it does not already hold. */
export function unionList(existing: unknown, added: readonly unknown[]): unknown[] {
  const list = Array.isArray(existing) ? [...existing] : [];
  for (const item of added) if (!list.some((x) => deepEqual(x, item))) list.push(item);
  return list;
}

/** A short rendering of a value for messages. */
export function show(value: unknown): string {
  if (value === null) return 'null';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
