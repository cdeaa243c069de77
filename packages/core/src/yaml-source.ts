import { LineCounter, isMap, isNode, isScalar, isSeq, parseDocument, type Document, type Node } from 'yaml';
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
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, keepSourceTokens: false });
  const issues: Issue[] = [];
  for (const error of doc.errors) {
    const line = error.linePos?.[0]?.line ?? (error.pos ? lineCounter.linePos(error.pos[0]).line : undefined);
    issues.push({ code: 'yaml.syntax', path: '', message: `YAML syntax error: ${firstLine(error.message)}`, file, ...(line ? { line } : {}) });
  }
  const value = issues.length === 0 ? doc.toJS({ maxAliasCount: 100 }) : undefined;
  return { source: makeSource(file, doc, lineCounter, value), issues };
}

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
      const pair = node.items.find((item) => (isScalar(item.key) ? item.key.value : item.key) === segment);
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

function firstLine(message: string): string {
  return message.split('\n')[0]!.trim();
}
