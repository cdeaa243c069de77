import { isMap, isScalar, isSeq, parseDocument, type Document, type Node, type Pair, type YAMLMap } from 'yaml';
import { CONFIG_NAMESPACE, type Category } from '../constants.ts';
import { deepEqual } from '../values/merge.ts';

/**
 * Edits of a Pulumi stack file that keep everything else as it was written — comments, order,
 * quoting, blank lines, line endings: each edit changes only the lines of the key it sets, adds
 * or removes (found with the `yaml` library's document model and its source ranges); a value set
 * keeps its quotes, an added line takes the line ending of the line above it (a file may mix LF and
 * CR LF). When an edit cannot be made that way (a flow mapping, a key sharing its line with
 * another), the document is changed with the same library's Document API and written out again,
 * which keeps comments but may re-flow long lines; the keys go where the in-place edit puts them
 * (a stack key first in `config:` with its comment, a model key below `name`). Either way the
 * result is parsed back and checked to hold exactly the edited values, or the edit fails.
 */

/** One edit of a stack file's `config:` section. */
export type StackEdit =
  /** Sets `app-serving:<key>` (a scalar), adding it, with a comment above it, at the top of `config:`. */
  | { readonly kind: 'set-stack'; readonly key: string; readonly value: string; readonly comment?: string }
  /** Sets `<key>` of a model entry `app-serving:models.<category>[<index>]`, adding it below the entry's `name`. */
  | { readonly kind: 'set-model'; readonly category: Category; readonly index: number; readonly key: string; readonly value: string }
  /** Removes `<key>` from a model entry. */
  | { readonly kind: 'delete-model'; readonly category: Category; readonly index: number; readonly key: string };

/** The edited text, and whether it had to be written out by the Document API (see above). */
export interface EditedStack {
  readonly text: string;
  readonly rewritten: boolean;
}

interface Splice {
  readonly start: number;
  readonly end: number;
  readonly insert: string;
}

/** Applies `edits` to a stack file's text (see the module comment). Throws an Error when they cannot be applied. */
export function editStackText(text: string, edits: readonly StackEdit[]): EditedStack {
  const doc = parse(text);
  const expected = applyToValue(doc, edits);
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const splices = edits.map((edit) => spliceFor(doc, text, edit));
  if (splices.every((s): s is Splice => s !== null)) {
    let out = text;
    for (const s of [...splices].sort((a, b) => b.start - a.start)) out = out.slice(0, s.start) + s.insert + out.slice(s.end);
    if (holds(out, expected)) return { text: out, rewritten: false };
  }
  const fresh = parse(text);
  for (const edit of edits) editDocument(fresh, edit);
  const out = eol === '\r\n' ? fresh.toString().replace(/\r?\n/g, '\r\n') : fresh.toString();
  if (!holds(out, expected)) throw new Error('the stack file could not be edited in place: the result does not hold the edited values');
  return { text: out, rewritten: true };
}

function parse(text: string): Document {
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length > 0) throw new Error(`the stack file is not valid YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
  return doc;
}

function holds(text: string, expected: unknown): boolean {
  const doc = parseDocument(text, { uniqueKeys: false });
  return doc.errors.length === 0 && deepEqual(doc.toJS(), expected);
}

/**
 * The config section's key of a stack key, as the file writes its keys: `<key>` or
 * `app-serving:<key>` when it is there; else namespaced, unless every key of the file is bare.
 */
function configKey(config: YAMLMap | undefined, key: string): string {
  const keys = (config?.items ?? []).map((p) => (isScalar(p.key) ? String(p.key.value) : ''));
  if (keys.includes(key)) return key;
  if (keys.includes(`${CONFIG_NAMESPACE}:${key}`)) return `${CONFIG_NAMESPACE}:${key}`;
  return keys.length > 0 && keys.every((k) => !k.includes(':')) ? key : `${CONFIG_NAMESPACE}:${key}`;
}

function configMap(doc: Document): YAMLMap | undefined {
  const config = doc.get('config', true);
  return isMap(config) ? config : undefined;
}

/** The path of an edit in the document (the keys as the file writes them). */
function pathOf(doc: Document, edit: StackEdit): (string | number)[] {
  const config = configMap(doc);
  if (edit.kind === 'set-stack') return ['config', configKey(config, edit.key)];
  return ['config', configKey(config, 'models'), edit.category, edit.index, edit.key];
}

/**
 * Makes one edit with the Document API, placed as the in-place edit places it: a new stack key
 * first in `config:` with its comment, a new model key below the entry's `name`; a value set in
 * place keeps its quoting.
 */
function editDocument(doc: Document, edit: StackEdit): void {
  const path = pathOf(doc, edit);
  if (edit.kind === 'delete-model') {
    doc.deleteIn(path);
    return;
  }
  const current = doc.getIn(path, true);
  if (isScalar(current)) {
    current.value = edit.value;
    return;
  }
  const parent = doc.getIn(path.slice(0, -1), true);
  const key = path[path.length - 1] as string;
  if (!isMap(parent)) {
    doc.setIn(path, edit.value);
    return;
  }
  const pair = doc.createPair(key, edit.value);
  if (edit.kind === 'set-stack') {
    if (edit.comment && isScalar(pair.key)) pair.key.commentBefore = edit.comment.split('\n').map((line) => ` ${line}`).join('\n');
    parent.items.unshift(pair);
  } else {
    const name = parent.items.findIndex((p) => isScalar(p.key) && p.key.value === 'name');
    parent.items.splice(name + 1, 0, pair);
  }
}

/** What the document holds once edited, as plain data (what the edited text must parse to). */
function applyToValue(doc: Document, edits: readonly StackEdit[]): unknown {
  const out = structuredClone((doc.toJS() as unknown) ?? {}) as Record<string, unknown>;
  const map = configMap(doc);
  for (const edit of edits) {
    const config = (out.config ??= {}) as Record<string, unknown>;
    if (edit.kind === 'set-stack') {
      config[configKey(map, edit.key)] = edit.value;
      continue;
    }
    const models = config[configKey(map, 'models')] as Record<string, Record<string, unknown>[]>;
    const entry = models[edit.category]![edit.index]!;
    if (edit.kind === 'delete-model') delete entry[edit.key];
    else entry[edit.key] = edit.value;
  }
  return out;
}

/** The splice that makes one edit in place, or null when it cannot be made that way. */
function spliceFor(doc: Document, text: string, edit: StackEdit): Splice | null {
  const config = configMap(doc);
  if (!config || config.flow) return null;
  if (edit.kind === 'set-stack') {
    const pair = findPair(config, configKey(config, edit.key));
    if (pair) return replaceValue(text, pair, edit.value);
    const first = config.items[0];
    const configPair = (doc.contents as YAMLMap).items.find((p) => isScalar(p.key) && p.key.value === 'config');
    if (!first || !isNode(first.key) || !configPair || !isNode(configPair.key)) return null;
    // Below the `config:` line, indented as its keys.
    const at = text.indexOf('\n', configPair.key.range![1]);
    if (at < 0 || at >= first.key.range![0]) return null;
    const indent = ' '.repeat(column(text, first.key.range![0]));
    const eol = lineEnding(text, at);
    const comment = edit.comment ? edit.comment.split('\n').map((line) => `${indent}# ${line}${eol}`).join('') : '';
    return { start: at + 1, end: at + 1, insert: `${comment}${indent}${configKey(config, edit.key)}: ${edit.value}${eol}` };
  }
  const models = config.get(configKey(config, 'models'), true);
  const list = isMap(models) ? models.get(edit.category, true) : undefined;
  const entry = isSeq(list) ? list.items[edit.index] : undefined;
  if (!isMap(entry) || entry.flow) return null;
  const pair = findPair(entry, edit.key);
  if (edit.kind === 'delete-model') {
    if (!pair || !isNode(pair.key) || !isNode(pair.value)) return null;
    const start = lineStart(text, pair.key.range![0]);
    if (text.slice(start, pair.key.range![0]).trim() !== '') {
      // The entry's first key, after `- `: removed up to the next key, which takes its place on
      // that line, when only a line break (and this key's own comment) stands between them.
      const next = entry.items[entry.items.indexOf(pair) + 1];
      if (entry.items[0] !== pair || !next || !isNode(next.key)) return null;
      if (!/^[ \t]*(#[^\n]*)?\n[ \t]*$/.test(text.slice(pair.value.range![1], next.key.range![0]))) return null;
      return { start: pair.key.range![0], end: next.key.range![0], insert: '' };
    }
    const newline = text.indexOf('\n', pair.value.range![1]);
    return { start, end: newline < 0 ? text.length : newline + 1, insert: '' };
  }
  if (pair) return replaceValue(text, pair, edit.value);
  const name = findPair(entry, 'name');
  if (!name || !isNode(name.key) || !isNode(name.value)) return null;
  const newline = text.indexOf('\n', name.value.range![1]);
  if (newline < 0) return null;
  const indent = ' '.repeat(column(text, name.key.range![0]));
  return { start: newline + 1, end: newline + 1, insert: `${indent}${edit.key}: ${edit.value}${lineEnding(text, newline)}` };
}

function findPair(map: YAMLMap, key: string): Pair | undefined {
  return map.items.find((p) => isScalar(p.key) && p.key.value === key);
}

/**
 * Replaces a scalar's value, quoted as it was (`"2026-02"` → `"2026-08"`, `'…'` likewise); a block
 * scalar (`|` and its line) becomes a plain value on the key's line. `value` needs no escaping
 * (a set name).
 */
function replaceValue(text: string, pair: Pair, value: string): Splice | null {
  if (!isScalar(pair.value) || !pair.value.range) return null;
  const [start, end] = pair.value.range;
  switch (pair.value.type) {
    case 'QUOTE_DOUBLE':
      return { start, end, insert: `"${value}"` };
    case 'QUOTE_SINGLE':
      return { start, end, insert: `'${value}'` };
    case 'BLOCK_LITERAL':
    case 'BLOCK_FOLDED':
      // The range ends after the content's last line break, which the value keeps.
      return { start, end, insert: `${value}${text[end - 1] === '\n' ? lineEnding(text, end - 1) : ''}` };
    default:
      return { start, end, insert: value };
  }
}

/** The line ending of the line whose line feed is at `newline`: CR LF or LF (a file may mix them; each inserted line takes its neighbour's). */
function lineEnding(text: string, newline: number): string {
  return text[newline - 1] === '\r' ? '\r\n' : '\n';
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && 'range' in value && Array.isArray((value as Node).range);
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

function column(text: string, offset: number): number {
  return offset - lineStart(text, offset);
}
