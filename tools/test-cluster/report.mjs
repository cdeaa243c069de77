/**
 * What scripts/test.mjs says about a project's vitest JSON report besides its counts: each failed
 * test by file and name, with the first line of why, printed just above the total. CI shows only
 * the end of a run's output, and a failure printed among thousands of lines above it is lost: a
 * run whose last lines were the type check and "2020 passed, 2 failed" said nothing of which two.
 */
import { relative } from 'node:path';

/** How many failed tests a project's lines name before "… N more". */
export const NAMED_PER_PROJECT = 10;

/** The first line of a failure message that says something (vitest starts some with a blank line or ANSI codes). */
function firstLine(message) {
  // eslint-disable-next-line no-control-regex
  const plain = String(message ?? '').replace(/\u001b\[[0-9;]*m/g, '');
  const line = plain.split('\n').find((l) => l.trim() !== '') ?? '';
  const trimmed = line.trim();
  return trimmed.length > 200 ? `${trimmed.slice(0, 199)}…` : trimmed;
}

/**
 * Whether a test file of a report failed with no failed test in it: it failed to load, or a hook
 * failed (its tests are then reported as skipped). A failure all the same.
 */
export function failedToRun(suite) {
  return suite.status === 'failed' && !(suite.assertionResults ?? []).some((test) => test.status === 'failed');
}

/**
 * One line per failed test of `report` (a vitest JSON report), at most NAMED_PER_PROJECT and then
 * how many more; one per test file that failed with no failed test in it (it failed to load, or a
 * hook failed and its tests were skipped). File names relative to `root`.
 */
export function failuresOf(project, report, root) {
  const lines = [];
  let more = 0;
  for (const suite of report.testResults ?? []) {
    const file = relative(root, suite.name);
    if (failedToRun(suite)) {
      lines.push(`${project}: ${file} failed to run: ${firstLine(suite.message)}`);
      continue;
    }
    for (const test of (suite.assertionResults ?? []).filter((t) => t.status === 'failed')) {
      if (lines.length >= NAMED_PER_PROJECT) {
        more += 1;
        continue;
      }
      lines.push(`${project}: ${file} > ${test.fullName} failed: ${firstLine(test.failureMessages?.[0])}`);
    }
  }
  if (more > 0) lines.push(`${project}: … ${more} more failed (its report: .reports/vitest/)`);
  return lines;
}
