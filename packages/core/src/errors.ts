/**
 * Typed errors of @app-serving/core.
 *
 * Every problem found while loading, discovering or planning a stack is an {@link Issue} with a
 * stable `code`, the key path it concerns and, where known, the file and line. Loaders collect
 * every issue of a stack in one pass and throw a single {@link StackError} listing them all.
 */

import { compareText } from './text-order.ts';
import type { StackConfig } from './config/load.ts';

/** Stable codes of the problems core reports. Scripts may match on them; never rename one. */
export type IssueCode =
  | 'yaml.syntax'
  | 'yaml.not-a-map'
  | 'file.unreadable'
  | 'file.too-large'
  | 'config.invalid'
  | 'config.unknown-key'
  | 'config.misplaced-key'
  | 'config.missing-key'
  | 'config.not-secret'
  | 'config.missing-credential'
  | 'config.contradiction'
  | 'model.not-found'
  | 'model.values-missing'
  | 'model.values-ambiguous'
  | 'model.slug-mismatch'
  | 'model.duplicate'
  | 'slug.invalid'
  | 'slug.duplicate'
  | 'name.invalid'
  | 'name.too-long'
  | 'name.duplicate'
  | 'values.invalid'
  | 'values.unknown-key'
  | 'values.conflict'
  | 'values.unsupported'
  /** `app-serving migrate`: every model named is on the current set already. */
  | 'migrate.nothing-to-do'
  | WarningCode;

/** Codes of warnings: things that deploy, but probably not as meant. */
export type WarningCode =
  | 'warning.no-models'
  | 'warning.chart-version'
  | 'warning.image-unpinned'
  | 'warning.image-not-mirrored'
  | 'warning.no-effect'
  | 'warning.unknown-key'
  | 'warning.simulator-duration'
  | 'warning.upstream-superseded'
  | 'warning.open-access'
  /** The endpoint's API keys are held in clear by the gateway (Envoy Gateway's apiKeyAuth, for Bearer keys). */
  | 'warning.keys-in-clear'
  /** `app-serving migrate`: a value of the 2026-02 files the 2026-08 set's files do not carry. */
  | 'warning.not-carried';

/** One problem of a stack. `path` is a key path such as `models.generative[0].modelSource.storageSize`. */
export interface Issue {
  readonly code: IssueCode;
  readonly path: string;
  readonly message: string;
  readonly file?: string;
  readonly line?: number;
  /**
   * Every model (and what sets the value there) an issue about many models concerns, when the
   * message names only the first few ({@link summarizeNames}); `--json` prints them all.
   */
  readonly uses?: readonly IssueUse[];
}

/** One model an issue concerns, and what in it the issue is about. */
export interface IssueUse {
  readonly model: string;
  readonly where: string;
}

/** How many names a summary shows before "and N more". */
export const SUMMARY_NAMES = 3;

/**
 * A list of names fit for one line: all of them up to {@link SUMMARY_NAMES} + 1
 * (`A, B and C`), else the first {@link SUMMARY_NAMES} and a count (`A, B, C and 47 more`).
 */
export function summarizeNames(names: readonly string[], shown: number = SUMMARY_NAMES): string {
  if (names.length <= 1) return names.join('');
  if (names.length <= shown + 1) return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
  return `${names.slice(0, shown).join(', ')} and ${groupDigits(names.length - shown)} more`;
}

/** `1047` → `1,047` (as `toLocaleString('en-US')`, without loading the locale data: it costs a cold start tens of ms). */
export function groupDigits(count: number): string {
  return String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Formats an issue as `<file>[:<line>]: <path>: <message>` (the form `app-serving validate` prints). */
export function formatIssue(issue: Issue): string {
  const where = issue.file ? `${issue.file}${issue.line ? `:${issue.line}` : ''}: ` : '';
  const path = issue.path ? `${issue.path}: ` : '';
  return `${where}${path}${issue.message}`;
}

/**
 * The one error core throws for bad input: a stack that cannot be deployed as written.
 * `issues` lists every problem found, in file and line order.
 */
export class StackError extends Error {
  readonly code = 'STACK_INVALID' as const;
  readonly issues: readonly Issue[];
  /**
   * Set by the stack loaders when the file has problems but its models can still be checked:
   * the config with every key and model entry that parsed (an entry that did not parse is left
   * out, disabled, at its index). {@link withModelFolderIssues} adds the problems of its model
   * folders, so that one run reports the stack file's and the values files' problems together.
   */
  readonly partial?: StackConfig;

  constructor(issues: readonly Issue[], options: { readonly partial?: StackConfig } = {}) {
    const sorted = sortIssues(issues);
    const head = sorted.length === 1 ? '1 problem' : `${sorted.length} problems`;
    super(`The stack has ${head}:\n${sorted.map((i) => `  ${formatIssue(i)}`).join('\n')}`);
    this.name = 'StackError';
    this.issues = sorted;
    // Not enumerable: printing or serialising the error shows the issues, not a config.
    if (options.partial) Object.defineProperty(this, 'partial', { value: options.partial, enumerable: false });
  }
}

/** True when `error` is a {@link StackError} (also across duplicate copies of this package). */
export function isStackError(error: unknown): error is StackError {
  return (
    error instanceof StackError ||
    (typeof error === 'object' &&
      error !== null &&
      (error as { code?: unknown }).code === 'STACK_INVALID' &&
      Array.isArray((error as { issues?: unknown }).issues))
  );
}

function sortIssues(issues: readonly Issue[]): Issue[] {
  return [...issues].sort(
    (a, b) =>
      compareText(a.file ?? '', b.file ?? '') ||
      (a.line ?? 0) - (b.line ?? 0) ||
      compareText(a.path, b.path) ||
      compareText(a.message, b.message),
  );
}

/** Collects issues during one pass; `throwIfAny` raises them together. */
export class IssueList {
  readonly items: Issue[] = [];

  add(issue: Issue): void {
    this.items.push(issue);
  }

  addAll(issues: readonly Issue[]): void {
    this.items.push(...issues);
  }

  get size(): number {
    return this.items.length;
  }

  throwIfAny(): void {
    if (this.items.length > 0) throw new StackError(this.items);
  }
}

/** Formats a key path from its segments: `['models', 'generative', 0, 'name']` → `models.generative[0].name`. */
export function formatPath(segments: readonly (string | number)[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** True when the key path `path` is `prefix` or a key below it (`a.b` is under `a`, `a[0]` too). */
export function isAtOrUnder(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`);
}
