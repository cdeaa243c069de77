import { LineCounter, isMap, isNode, isScalar, isSeq, parseDocument, visit, type Alias, type Document, type Node } from 'yaml';
import { formatPath, type Issue, type IssueCode } from './errors.ts';

/** A parsed YAML file that can say on which line a key path sits. */
export interface YamlSource {
  /** The file name shown in messages (as the user gave it, or relative to the working directory). */
  readonly file: string;
  /** The parsed value: plain JSON-like data. */
  readonly value: unknown;
  /** The 1-based line of the node at `path`, or of its nearest existing parent. */
  lineOf(path: readonly (string | number)[]): number | undefined;
  /** An issue located at `path` in this file. `shownPath` overrides the path printed (default: `path`). */
  issue(code: IssueCode, path: readonly (string | number)[], message: string, shownPath?: string): Issue;
}

/**
 * Parses YAML text. Syntax errors become issues (all of them, with lines) instead of exceptions.
 * Duplicate keys are errors, as they are for Helm and kubectl.
 */
export function parseYaml(file: string, text: string): { source: YamlSource; issues: Issue[] } {
  const lineCounter = new LineCounter();
  // Duplicate keys are found below in one linear pass: yaml's own check (`uniqueKeys`) compares
  // every key with every other, minutes for a map of 20,000 keys.
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false, keepSourceTokens: false });
  const issues: Issue[] = [];
  for (const error of doc.errors) {
    const line = error.linePos?.[0]?.line ?? (error.pos ? lineCounter.linePos(error.pos[0]).line : undefined);
    issues.push({ code: 'yaml.syntax', path: '', message: `YAML syntax error: ${firstLine(error.message)}`, file, ...(line ? { line } : {}) });
  }
  // One walk of the tree finds duplicate keys, alias cycles and `__proto__` keys (three walks were
  // a tenth of the parse); each kind is still reported only when the checks before it found nothing.
  const found = issues.length === 0 ? scanTree(file, doc, lineCounter) : undefined;
  if (found) issues.push(...found.duplicates);
  if (found && issues.length === 0) issues.push(...found.cycles);
  let value: unknown;
  if (issues.length === 0) {
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      // yaml throws for an alias bomb ("Excessive alias count"): a problem of the file, not a crash.
      const first = found?.firstAlias;
      const line = first?.range ? lineCounter.linePos(first.range[0]).line : undefined;
      const why = /alias/i.test(error instanceof Error ? error.message : '')
        ? `YAML aliases expand to too many nodes (more than ${MAX_ALIAS_COUNT} per anchor): an alias bomb? Write the values out instead of nesting aliases`
        : `the YAML cannot be read: ${firstLine(error instanceof Error ? error.message : String(error))}`;
      issues.push({ code: 'yaml.syntax', path: '', message: why, file, ...(line ? { line } : {}) });
      value = undefined;
    }
  }
  if (found && issues.length === 0) issues.push(...found.protoKeys);
  return { source: makeSource(file, doc, lineCounter, value), issues };
}

/**
 * In one walk of a document without syntax errors:
 * - keys set twice in one map (as Helm and kubectl refuse them), with the line of the second;
 * - aliases that refer to a node containing them: a cycle no values file can mean (and that
 *   recursion never ends on);
 * - `__proto__` keys: JavaScript objects drop them silently, so they would vanish from the
 *   values; say so instead;
 * - the first alias (where an alias bomb is reported).
 */
function scanTree(file: string, doc: Document, lineCounter: LineCounter): { duplicates: Issue[]; cycles: Issue[]; protoKeys: Issue[]; firstAlias: Alias | undefined } {
  const duplicates: Issue[] = [];
  const cycles: Issue[] = [];
  const protoKeys: Issue[] = [];
  let firstAlias: Alias | undefined;
  const lineOf = (node: { range?: unknown } | undefined) => {
    const range = node?.range as [number, number, number] | null | undefined;
    return range ? lineCounter.linePos(range[0]).line : undefined;
  };
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        const key = isScalar(pair.key) ? pair.key.value : pair.key;
        if (key === '<<' || (key !== null && typeof key === 'object')) continue;
        if (seen.has(key)) {
          const line = lineOf(isNode(pair.key) ? pair.key : undefined);
          duplicates.push({ code: 'yaml.syntax', path: '', message: `YAML syntax error: Map keys must be unique (${JSON.stringify(String(key)).slice(0, 80)} is set twice)`, file, ...(line ? { line } : {}) });
        }
        seen.add(key);
      }
    },
    Pair(_key, pair) {
      if (isScalar(pair.key) && pair.key.value === '__proto__') {
        const line = lineOf(pair.key);
        protoKeys.push({ code: 'yaml.syntax', path: '', message: 'a key "__proto__" cannot be used: no chart or stack key has this name, and it would be dropped silently', file, ...(line ? { line } : {}) });
      }
    },
    Alias(_key, node, path) {
      firstAlias ??= node;
      const target = node.resolve(doc);
      if (target && path.includes(target as never)) {
        const line = lineOf(node);
        cycles.push({ code: 'yaml.syntax', path: '', message: `YAML alias *${node.source} refers to its own anchor &${node.source} (a cycle): values cannot contain themselves`, file, ...(line ? { line } : {}) });
      }
    },
  });
  return { duplicates, cycles, protoKeys, firstAlias };
}

/** Most expansions of one anchor through aliases (yaml's guard against "billion laughs"). */
export const MAX_ALIAS_COUNT = 100;

/** A source without text (a map handed over by a Pulumi program): no lines, only paths. */
export function sourceWithoutLines(file: string, value: unknown): YamlSource {
  return {
    file,
    value,
    lineOf: () => undefined,
    issue: (code, path, message, shownPath) => ({ code, path: shownPath ?? formatPath(path), message, file }),
  };
}

function makeSource(file: string, doc: Document, lineCounter: LineCounter, value: unknown): YamlSource {
  const lineOf = (path: readonly (string | number)[]): number | undefined => {
    for (let depth = path.length; depth >= 0; depth -= 1) {
      const node = nodeAt(doc, path.slice(0, depth));
      if (node?.range) return lineCounter.linePos(node.range[0]).line;
    }
    return undefined;
  };
  return {
    file,
    value,
    lineOf,
    issue: (code, path, message, shownPath) => {
      const line = lineOf(path);
      return { code, path: shownPath ?? formatPath(path), message, file, ...(line ? { line } : {}) };
    },
  };
}

/** The node at `path`; for a map entry, the key node (so the line is the key's line). */
function nodeAt(doc: Document, path: readonly (string | number)[]): Node | undefined {
  let node: unknown = doc.contents;
  let keyNode: Node | undefined;
  for (const segment of path) {
    keyNode = undefined;
    if (isMap(node)) {
      const pair = pairIndex(node).get(segment);
      if (!pair) return undefined;
      keyNode = isNode(pair.key) ? pair.key : undefined;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      node = node.items[segment];
    } else {
      return undefined;
    }
  }
  return keyNode ?? (isNode(node) ? node : undefined);
}

/** The pairs of a map by key, built once per map: looking up thousands of issues stays linear. */
const PAIR_INDEX = new WeakMap<object, Map<unknown, { key: unknown; value: unknown }>>();

function pairIndex(map: { items: { key: unknown; value: unknown }[] }): Map<unknown, { key: unknown; value: unknown }> {
  let index = PAIR_INDEX.get(map);
  if (!index) {
    index = new Map();
    for (const item of map.items) {
      const key = isScalar(item.key) ? item.key.value : item.key;
      if (!index.has(key)) index.set(key, item);
    }
    PAIR_INDEX.set(map, index);
  }
  return index;
}

function firstLine(message: string): string {
  return message.split('\n')[0]!.trim();
}
