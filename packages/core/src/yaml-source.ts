import { FAILSAFE_SCHEMA, Type as JsYamlType, load as jsYamlLoad, type Schema as JsYamlSchema } from 'js-yaml';
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
  const fast = readPlainYaml(text);
  if (fast) {
    // Lines are needed only for an issue in this file: the careful parse runs then, once.
    let positions: Positions | undefined;
    return { source: makeSource(file, () => (positions ??= parseYamlWithPositions(file, text)), fast.value, text), issues: [] };
  }
  const careful = parseYamlWithPositions(file, text);
  return { source: makeSource(file, () => careful, careful.value), issues: careful.issues };
}

/** yaml's document and line counter, from which {@link YamlSource.lineOf} finds lines. */
interface Positions {
  readonly doc: Document;
  readonly lineCounter: LineCounter;
}

/**
 * The careful path: yaml's document model, with positions, every syntax error, duplicate keys,
 * alias cycles and bombs, `__proto__` keys, merge keys and tags.
 */
export function parseYamlWithPositions(file: string, text: string): Positions & { value: unknown; issues: Issue[] } {
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
  return { doc, lineCounter, value, issues };
}

/**
 * The fast path (issue 16: the yaml library's document model, kept for positions, was 40% of
 * `validate` on 50 models). Values files are almost always plain block YAML: maps, lists and
 * scalars, no anchors, aliases, tags, merge keys, directives or complex keys. Such text is read
 * with js-yaml, several times faster, under a schema that resolves plain scalars exactly as yaml's
 * YAML 1.2 core schema does; lines are found later, only for a file that has an issue, by the
 * careful path. Anything else — any construct listed above, anything js-yaml refuses (duplicate
 * keys, syntax errors, several documents), and text a character test cannot vouch for — takes the
 * careful path, so every message and every value stays what it was. A differential test
 * (yaml-fast-path.test.ts) holds the two paths to the same value. Exported for that test only.
 */
export function readPlainYaml(text: string): { value: unknown } | undefined {
  if (!PLAIN_YAML_TEXT.test(text) || NOT_PLAIN_YAML.test(text) || hasMultiLineQuote(text)) return undefined;
  try {
    const value = jsYamlLoad(text, { schema: coreSchema(), json: false });
    // An empty document is null to yaml, undefined to js-yaml.
    return { value: value === undefined ? null : value };
  } catch {
    return undefined;
  }
}

/**
 * Only printable text without tabs, carriage returns or a byte-order mark: the characters on
 * which the two parsers were compared.
 */
const PLAIN_YAML_TEXT = /^[\n\x20-\x7e\u00a0-\ud7ff\ue000-\ufefe\uff00-\ufffd\ud800-\udfff]*$/;

/**
 * Constructs the fast path leaves to the careful one: anchors, aliases and tags (`&`, `*`, `!` at
 * the start of a node), merge keys (`<<`), directives (`%`), explicit keys (`?`), a flow
 * collection used as a key (`]:` or `}:`), a null key (`~:`, `null:`, an empty key, or a null or
 * empty entry in a flow collection: "" to yaml, "null" to js-yaml), block scalars with an indentation indicator (`|2`), a list entry with
 * nothing after its dash, also nested as in `- -` (js-yaml mis-nests an empty one), `#` right after a character (yaml
 * refuses it after a flow collection, js-yaml takes it as a comment), `__proto__` keys,
 * escapes in double quotes, and document markers (`--- x: 1` is a map to js-yaml, an error to yaml). A
 * false alarm (say, `a & b` in a description) only costs the careful path's time.
 */
const NOT_PLAIN_YAML = /(?:^|[\s[{,:])[&*!]|<<|^%|(?:^|[\s[{,])\?(?:\s|$)|[\]}]\s*:|(?:^|[\s[{,?-])(?:~|[Nn]ull|NULL)?:(?:[\s,\]}]|$)|[|>](?:[-+]?[1-9]|[1-9][-+])|^[ ]*(?:-[ ]+)*-[ ]*(?:#.*)?$|[{,]\s*(?:~|[Nn]ull|NULL)?\s*[,}]|\S#|__proto__|\\|^(?:---|\.\.\.)(?:[ ]|$)/m;

/**
 * Whether a quoted scalar runs over a line end (the parsers fold those differently, and refuse
 * different ones). A quote opens a scalar only where a node can start: at the start of a line or
 * after a space or one of `[{,:`; `#` after a space starts a comment.
 */
function hasMultiLineQuote(text: string): boolean {
  let quote = '';
  let previous = '\n';
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (quote) {
      if (c === '\n') return true;
      if (c === quote) {
        if (quote === "'" && text[i + 1] === "'") i += 1;
        else quote = '';
      }
    } else if ((c === "'" || c === '"') && ' \n[{,:-?'.includes(previous)) {
      quote = c;
    } else if (c === '#' && (previous === ' ' || previous === '\n')) {
      const end = text.indexOf('\n', i);
      if (end === -1) return false;
      i = end;
    }
    previous = text[i]!;
  }
  return quote !== '';
}

let CORE_SCHEMA_LIKE_YAML: JsYamlSchema | undefined;

/**
 * A js-yaml schema whose plain scalars resolve exactly as in yaml 2's YAML 1.2 core schema (the
 * same tests in the same order: null, bool, octal, decimal and hex ints, then inf/nan,
 * exponent and plain floats); quoted and block scalars stay strings, as they do in both.
 */
function coreSchema(): JsYamlSchema {
  CORE_SCHEMA_LIKE_YAML ??= FAILSAFE_SCHEMA.extend({
    implicit: [
      scalar('null', /^(?:$|[~nN])/, [[/^(?:~|[Nn]ull|NULL)?$/, () => null]]),
      scalar('bool', /^[tTfF]/, [[/^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/, (s) => s[0] === 't' || s[0] === 'T']]),
      scalar('int', /^[-+0-9]/, [
        [/^0o[0-7]+$/, (s) => parseInt(s.substring(2), 8)],
        [/^[-+]?[0-9]+$/, (s) => parseInt(s, 10)],
        [/^0x[0-9a-fA-F]+$/, (s) => parseInt(s.substring(2), 16)],
      ]),
      scalar('float', /^[-+.0-9]/, [
        [/^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/, (s) => (s.slice(-3).toLowerCase() === 'nan' ? Number.NaN : s[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY)],
        [/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/, (s) => parseFloat(s)],
        [/^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/, (s) => parseFloat(s)],
      ]),
    ],
  });
  return CORE_SCHEMA_LIKE_YAML;
}

/**
 * One js-yaml type per tag (js-yaml keeps one implicit type per tag), trying its forms in order.
 * js-yaml asks every type of every plain scalar: `first` (what the first character of any of the
 * forms can be) turns most of them away with one test (a tenth of a `render`'s time was these tests).
 */
function scalar(tag: string, first: RegExp, forms: readonly (readonly [RegExp, (source: string) => unknown])[]): JsYamlType {
  const form = (data: string | null) => {
    const text = data ?? '';
    if (!first.test(text)) return undefined;
    for (let i = 0; i < forms.length; i += 1) if (forms[i]![0].test(text)) return forms[i];
    return undefined;
  };
  return new JsYamlType(`tag:yaml.org,2002:${tag}`, { kind: 'scalar', resolve: (data: string | null) => form(data) !== undefined, construct: (data: string | null) => form(data)![1](data ?? '') });
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

/**
 * How many lines a source finds in its text before it builds yaml's document model instead: each
 * look in the text reads the lines from the top (20,000 unknown keys took 42 s of CPU that way), the
 * model, once built, finds any path through an index.
 */
export const PLAIN_LOOKUPS = 32;

function makeSource(file: string, positions: () => Positions, value: unknown, plainText?: string): YamlSource {
  let lines: readonly Line[] | undefined;
  let lookups = 0;
  const lineOf = (path: readonly (string | number)[]): number | undefined => {
    // Plain block YAML (the fast path's): the line from the text itself, without yaml's document
    // model, whose first use costs a cold start tens of ms (a warning on every `validate` paid it) —
    // for the first few lines asked for; past them, the model.
    if (plainText !== undefined && lookups < PLAIN_LOOKUPS) {
      lookups += 1;
      const line = plainLineOf((lines ??= logicalLines(plainText)), path);
      if (line !== null) return line;
    }
    return positionLineOf(positions(), path);
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

/** The line of the node at `path` (the key's for a map entry), or of its nearest existing parent, from yaml's document model. */
export function positionLineOf({ doc, lineCounter }: Positions, path: readonly (string | number)[]): number | undefined {
  for (let depth = path.length; depth >= 0; depth -= 1) {
    const node = nodeAt(doc, path.slice(0, depth));
    if (node?.range) return lineCounter.linePos(node.range[0]).line;
  }
  return undefined;
}

/** A line of the text that holds content: its 1-based number, where its content starts, and the content. */
interface Line {
  readonly line: number;
  readonly col: number;
  readonly text: string;
}

/** The lines with content (not blank, not only a comment), with their indentation. */
export function logicalLines(text: string): Line[] {
  const out: Line[] = [];
  const all = text.split('\n');
  for (let i = 0; i < all.length; i += 1) {
    const raw = all[i]!;
    const col = raw.length - raw.trimStart().length;
    const content = raw.slice(col);
    if (content === '' || content.startsWith('#')) continue;
    out.push({ line: i + 1, col, text: content.trimEnd() });
  }
  return out;
}

/** A plain map key as the fast path's text may hold it: not one that resolves to null, a bool or a number. */
const PLAIN_KEY = /^[A-Za-z_/$][^#]*$/;
const SPECIAL_PLAIN = /^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+]?(?:\.inf|\.Inf|\.INF)|\.nan|\.NaN|\.NAN)$/;

/**
 * The key of a block-map entry line (`key:` or `key: value`, the key plain or quoted) and what
 * follows its colon; null when the line is not one.
 */
function entryOf(text: string): { key: string; rest: string } | null {
  let key: string;
  let end: number;
  if (text[0] === "'" || text[0] === '"') {
    const quote = text[0];
    let i = 1;
    let out = '';
    for (;;) {
      if (i >= text.length) return null;
      if (text[i] === quote) {
        if (quote === "'" && text[i + 1] === "'") {
          out += "'";
          i += 2;
          continue;
        }
        break;
      }
      out += text[i];
      i += 1;
    }
    key = out;
    end = i + 1;
    if (text[end] !== ':' || (end + 1 < text.length && text[end + 1] !== ' ')) return null;
  } else {
    const colon = text.search(/:(?: |$)/);
    if (colon <= 0) return null;
    key = text.slice(0, colon).trimEnd();
    if (!PLAIN_KEY.test(key) || SPECIAL_PLAIN.test(key) || /[[\]{},]/.test(key[0]!)) return null;
    end = colon;
  }
  return { key, rest: text.slice(end + 1).trim() };
}

/** Whether a line opens a block-sequence item (`-` then a space, or alone). */
const isItem = (text: string) => text === '-' || text.startsWith('- ');

/**
 * The line {@link YamlSource.lineOf} gives for `path`, found in plain block YAML without parsing
 * it (the key's line for a map entry, the item's line for a list item, else the nearest parent's);
 * null when the text is not shaped simply enough to tell (a flow collection on the way, a
 * multi-line key, a number-like key, …), and the caller asks yaml's document model instead. A
 * property test holds it to the document model's answer wherever it gives one.
 */
export function plainLineOf(lines: readonly Line[], path: readonly (string | number)[]): number | null {
  if (lines.length === 0 || lines[0]!.text.startsWith('---') || lines[0]!.text.startsWith('...')) return null;
  let block: Line[] = [...lines];
  let found = lines[0]!.line;
  for (const segment of path) {
    const first = block[0];
    if (!first) return null;
    const indent = first.col;
    if (block.some((l) => l.col < indent)) return null;
    if (typeof segment === 'number') {
      // A map has no numbered entry unless a key reads as a number, which entryOf leaves to yaml.
      if (!isItem(first.text)) return block.every((l) => l.col !== indent || isItem(l.text) || entryOf(l.text) !== null) ? found : null;
      const items = block.map((l, i) => [l, i] as const).filter(([l]) => l.col === indent);
      if (items.some(([l]) => !isItem(l.text))) return null;
      const at = items[segment];
      if (!at) return found;
      const [item, index] = at;
      const next = items[segment + 1]?.[1] ?? block.length;
      const after = item.text.slice(1);
      const content = after.trimStart();
      if (content === '' || content.startsWith('#')) return null;
      found = item.line;
      block = [{ line: item.line, col: item.col + 1 + (after.length - content.length), text: content }, ...block.slice(index + 1, next)];
    } else {
      if (isItem(first.text)) return found;
      if (first.text[0] === '{' || first.text[0] === '[') return null;
      let hit: { index: number; rest: string } | null = null;
      let index = 0;
      for (; index < block.length; index += 1) {
        const l = block[index]!;
        if (l.col !== indent) continue;
        if (isItem(l.text)) continue;
        const entry = entryOf(l.text);
        if (!entry) return null;
        if (entry.key === segment) {
          hit = { index, rest: entry.rest };
          break;
        }
      }
      if (!hit) return found;
      const keyLine = block[hit.index]!;
      found = keyLine.line;
      // The value: what follows on the key's line, or the lines below it (deeper, or list items at the same indentation).
      if (hit.rest !== '' && !hit.rest.startsWith('#')) {
        // A scalar (plain, quoted or block) has no children: the key's line stands; a flow collection may have some.
        if (hit.rest[0] === '{' || hit.rest[0] === '[') return null;
        return found;
      }
      const value: Line[] = [];
      for (let i = hit.index + 1; i < block.length; i += 1) {
        const l = block[i]!;
        if (l.col > indent || (l.col === indent && isItem(l.text))) value.push(l);
        else break;
      }
      if (value.length === 0) return found;
      block = value;
    }
  }
  return found;
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
