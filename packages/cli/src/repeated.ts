import type { Issue } from '@app-serving/core';

/** How many names a summary shows before "and N more" (core's `SUMMARY_NAMES`, kept here so `--help` loads no core). */
const SHOWN = 3;

/**
 * One line to print: an issue, and the other issues with the same code, key path and message in
 * other files (the same problem repeated across models), which it stands for.
 */
export interface IssueLine {
  readonly issue: Issue;
  /** Every issue the line stands for, `issue` first. */
  readonly all: readonly Issue[];
}

/**
 * Folds a problem repeated in more than four files (same code, key path and message; a values
 * file of each model) into one line at its first occurrence; fewer repeats stay one line each,
 * with their own file and line. Order is kept.
 */
export function foldRepeated(issues: readonly Issue[]): IssueLine[] {
  const groups = new Map<string, Issue[]>();
  for (const issue of issues) {
    if (!issue.file) continue;
    const key = `${issue.code}\u0000${issue.path}\u0000${issue.message}`;
    const group = groups.get(key);
    if (group) group.push(issue);
    else groups.set(key, [issue]);
  }
  const lines: IssueLine[] = [];
  const folded = new Set<Issue>();
  for (const issue of issues) {
    if (folded.has(issue)) continue;
    const group = issue.file ? groups.get(`${issue.code}\u0000${issue.path}\u0000${issue.message}`)! : [issue];
    if (group.length > SHOWN + 1) {
      for (const member of group) folded.add(member);
      lines.push({ issue, all: group });
    } else lines.push({ issue, all: [issue] });
  }
  return lines;
}

/**
 * What a folded line adds after the message: ` (in 50 models: M0, M1, M2 and 47 more)`, naming
 * each model by the folder of its values file (`models/<category>/<Model>/<release>/values.yaml`),
 * or ` (in 50 files: a.yaml, …)` when the files are not values files of models. Empty for one issue.
 */
export function repeatedSuffix(line: IssueLine): string {
  if (line.all.length === 1) return '';
  const models = line.all.map((issue) => /(?:^|[/\\])([^/\\]+)[/\\][^/\\]+[/\\]values\.ya?ml$/.exec(issue.file ?? '')?.[1]);
  const byModel = models.every((model) => model !== undefined);
  const names = byModel ? (models as string[]) : line.all.map((issue) => `${issue.file}${issue.line ? `:${issue.line}` : ''}`);
  const shown = names.length <= SHOWN + 1 ? `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}` : `${names.slice(0, SHOWN).join(', ')} and ${groupDigits(names.length - SHOWN)} more`;
  return ` (in ${groupDigits(names.length)} ${byModel ? 'models' : 'files'}: ${shown})`;
}

/** `1047` → `1,047` (core's `groupDigits`; `toLocaleString` would load the locale data). */
export function groupDigits(count: number): string {
  return String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
