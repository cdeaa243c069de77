import { isMap, isScalar, isSeq, parseDocument, type Document, type Node, type Pair, type YAMLMap } from 'yaml';
import { CONFIG_NAMESPACE, type Category } from '../constants.ts';
import { deepEqual } from '../values/merge.ts';

/**
 * Edits of a Pulumi stack file that keep everything else as it was written — comments, order,
 * quoting, blank lines, line endings: each edit changes only the lines of the key it sets, adds
 * or removes (found with the `yaml` library's document model and its source ranges). When an edit
 * cannot be made that way (a flow mapping, a key sharing its line with another), the document is
 * changed with the same library's Document API and written out again, which keeps comments but may
 * re-flow long lines. Either way the result is parsed back and checked to hold exactly the edited
 * values, or the edit fails.
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
  const splices = edits.map((edit) => spliceFor(doc, text, edit, eol));
  if (splices.every((s): s is Splice => s !== null)) {
    let out = text;
    for (const s of [...splices].sort((a, b) => b.start - a.start)) out = out.slice(0, s.start) + s.insert + out.slice(s.end);
    if (holds(out, expected)) return { text: out, rewritten: false };
  }
  const fresh = parse(text);
  for (const edit of edits) {
    const path = pathOf(fresh, edit);
    if (edit.kind === 'delete-model') fresh.deleteIn(path);
    else fresh.setIn(path, edit.value);
  }
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
function spliceFor(doc: Document, text: string, edit: StackEdit, eol: string): Splice | null {
  const config = configMap(doc);
  if (!config || config.flow) return null;
  if (edit.kind === 'set-stack') {
    const pair = findPair(config, configKey(config, edit.key));
    if (pair) return replaceValue(pair, edit.value);
    const first = config.items[0];
    const configPair = (doc.contents as YAMLMap).items.find((p) => isScalar(p.key) && p.key.value === 'config');
    if (!first || !isNode(first.key) || !configPair || !isNode(configPair.key)) return null;
    // Below the `config:` line, indented as its keys.
    const at = text.indexOf('\n', configPair.key.range![1]);
    if (at < 0 || at >= first.key.range![0]) return null;
    const indent = ' '.repeat(column(text, first.key.range![0]));
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
    // Only a key alone on its lines (not the entry's first key, after `- `).
    if (text.slice(start, pair.key.range![0]).trim() !== '') return null;
    const newline = text.indexOf('\n', pair.value.range![1]);
    return { start, end: newline < 0 ? text.length : newline + 1, insert: '' };
  }
  if (pair) return replaceValue(pair, edit.value);
  const name = findPair(entry, 'name');
  if (!name || !isNode(name.key) || !isNode(name.value)) return null;
  const newline = text.indexOf('\n', name.value.range![1]);
  if (newline < 0) return null;
  const indent = ' '.repeat(column(text, name.key.range![0]));
  return { start: newline + 1, end: newline + 1, insert: `${indent}${edit.key}: ${edit.value}${eol}` };
}

function findPair(map: YAMLMap, key: string): Pair | undefined {
  return map.items.find((p) => isScalar(p.key) && p.key.value === key);
}

function replaceValue(pair: Pair, value: string): Splice | null {
  if (!isScalar(pair.value) || !pair.value.range) return null;
  return { start: pair.value.range[0], end: pair.value.range[1], insert: value };
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
