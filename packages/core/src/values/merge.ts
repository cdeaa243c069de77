/**
 * Helm's values semantics, as pure functions.
 *
 * Helm layers values files: maps merge key by key, recursively; lists and scalars in a later
 * layer replace the earlier value whole; a `null` in a later layer removes the key (Helm keeps the
 * null while layering user files, and drops the key when it coalesces with the chart defaults).
 * {@link mergeValues} keeps nulls, so layering is associative and a null still reaches Helm to
 * delete a chart default; {@link effectiveValues} is what the chart finally sees.
 */

/** A Helm values tree. */
export type Values = { [key: string]: unknown };

/** True for a values map (a plain object, not a list or null). */
export function isValuesMap(value: unknown): value is Values {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Layers `overlay` over `base` with Helm's rules, keeping `null` (a deletion) in the result.
 * Inputs are not modified.
 *
 * Layering is associative where the layers agree on which keys hold maps. A scalar, list or null
 * over a map replaces it, and a later map starts afresh, so Helm's left-to-right order matters:
 * `{a:{x:1}}`, `{a:0}`, `{a:{}}` gives `{a:{}}` left to right, but `{a:{x:1}}` right first.
 */
export function mergeValues(base: Values, overlay: Values): Values {
  return mergeInto(clone(base), overlay);
}

/** Layers every argument in order (the first is the lowest). */
export function mergeAll(...layers: readonly Values[]): Values {
  // One fresh tree, layered in place: each layer is copied once, not the whole tree per layer.
  let out: Values = {};
  for (const layer of layers) out = mergeInto(out, layer);
  return out;
}

/**
 * Layers `overlay` over `target`, a tree this module just built (no caller holds a part of it),
 * changing `target` in place; what it takes from `overlay` is copied, except frozen parts
 * ({@link freezeValues}: a values file as read), which are shared, and copied only where a later
 * layer changes them. The same result, key order included, as {@link mergeValues} of a copy,
 * without copying each level again at every depth.
 */
function mergeInto(target: Values, overlay: Values): Values {
  const keys = Object.keys(overlay);
  for (let i = 0; i < keys.length; i += 1) {
    const key = keys[i]!;
    const value = overlay[key];
    const current = target[key];
    target[key] = isValuesMap(current) && isValuesMap(value) ? mergeInto(Object.isFrozen(current) ? { ...current } : current, value) : share(value);
  }
  return target;
}

/** `value` itself when it cannot change (a scalar, or frozen), else a copy. */
function share(value: unknown): unknown {
  return typeof value !== 'object' || value === null || Object.isFrozen(value) ? value : clone(value);
}

/**
 * Freezes a values tree, maps and lists at every depth, and returns it. Merges share a frozen tree
 * instead of copying it (a values file of 50 models was copied three times per `validate`), and
 * code that would change a file's values as read throws instead.
 */
export function freezeValues<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) freezeValues(value[i]);
  } else {
    const record = value as Values;
    const keys = Object.keys(record);
    for (let i = 0; i < keys.length; i += 1) freezeValues(record[keys[i]!]);
  }
  return Object.freeze(value);
}

/** The values a chart ends up with: the layers merged, then every `null` key removed. */
export function effectiveValues(...layers: readonly Values[]): Values {
  // mergeAll's tree is fresh: only the maps that hold a null are copied again (not the whole tree).
  return withoutNulls(mergeAll(...layers));
}

/** {@link stripNulls} of a tree no caller holds: maps without a null anywhere below are kept as they are (frozen ones are copied where they hold one). */
function withoutNulls(values: Values): Values {
  let out: Values | undefined;
  const frozen = Object.isFrozen(values);
  const keys = Object.keys(values);
  const copyUpTo = (i: number): Values => {
    const copy: Values = {};
    for (let j = 0; j < i; j += 1) copy[keys[j]!] = values[keys[j]!];
    return copy;
  };
  for (let i = 0; i < keys.length; i += 1) {
    const key = keys[i]!;
    const value = values[key];
    if (value === null) {
      out ??= copyUpTo(i);
      continue;
    }
    const next = isValuesMap(value) ? withoutNulls(value) : value;
    if (!out && next !== value) {
      if (!frozen) {
        values[key] = next;
        continue;
      }
      out = copyUpTo(i);
    }
    if (out) out[key] = next;
  }
  return out ?? values;
}

/** Removes keys whose value is `null`, at every depth of maps (lists are left as they are). */
export function stripNulls(values: Values): Values {
  const out: Values = {};
  for (const key of Object.keys(values)) {
    const value = values[key];
    if (value === null) continue;
    out[key] = isValuesMap(value) ? stripNulls(value) : value;
  }
  return out;
}

/** The value at `path`, or `undefined` when any step is missing or not a map. */
export function getPath(values: unknown, path: readonly string[]): unknown {
  let current: unknown = values;
  // Indexed loops here and in clone: a `for…of` allocates an iterator and a result per step until
  // V8 optimizes the function, which a command of a tenth of a second mostly never does.
  for (let i = 0; i < path.length; i += 1) {
    const key = path[i]!;
    if (!isValuesMap(current) || !Object.hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

/** A values tree with `value` at `path` (for building programmatic values). */
export function atPath(path: readonly string[], value: unknown): Values {
  if (path.length === 0) throw new Error('atPath needs a non-empty path');
  let out: unknown = value;
  for (let i = path.length - 1; i >= 0; i -= 1) out = { [path[i]!]: out };
  return out as Values;
}

/** Every leaf of a values tree with its path; a list is a leaf. Empty maps are leaves too. */
export function leaves(values: Values, prefix: readonly string[] = []): { path: string[]; value: unknown }[] {
  const out: { path: string[]; value: unknown }[] = [];
  for (const [key, value] of Object.entries(values)) {
    const path = [...prefix, key];
    if (isValuesMap(value) && Object.keys(value).length > 0) out.push(...leaves(value, path));
    else out.push({ path, value });
  }
  return out;
}

/** Deep structural equality of JSON-like values. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isValuesMap(a) && isValuesMap(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/** A deep copy of maps and lists (plain loops: `Object.fromEntries` of `entries` was a tenth of `validate`). */
export function clone<T>(value: T): T {
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i += 1) out[i] = clone(value[i]);
    return out as T;
  }
  if (isValuesMap(value)) {
    const out: Values = {};
    const keys = Object.keys(value);
    for (let i = 0; i < keys.length; i += 1) out[keys[i]!] = clone(value[keys[i]!]);
    return out as T;
  }
  return value;
}
