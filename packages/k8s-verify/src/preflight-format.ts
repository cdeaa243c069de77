import { formatMs } from './clock.ts';
import { xml } from './format.ts';
import type { PreflightCheckResult, PreflightResult, PreflightStatus } from './preflight.ts';

const LABEL: Record<PreflightStatus, string> = { pass: 'PASS', fail: 'FAIL', warn: 'WARN', skip: 'SKIP' };

/** One line per check: status, title, what was found; a failed (or warned) check adds its fix on the next line. */
export function describePreflightCheck(check: PreflightCheckResult, color: (status: PreflightStatus, text: string) => string = (_s, t) => t): string {
  const line = `${color(check.status, LABEL[check.status])}  ${check.title}: ${check.message}`;
  return check.fix ? `${line}\n      fix: ${check.fix}` : line;
}

/** The human report of `app-serving preflight`. */
export function formatPreflight(result: PreflightResult, options: { colorStatus?: (status: PreflightStatus, text: string) => string } = {}): string {
  const color = options.colorStatus ?? ((_s: PreflightStatus, t: string) => t);
  const where = `${result.target.context ? `context ${result.target.context}` : 'cluster'}${result.target.server ? ` ${result.target.server}` : ''} (${result.target.source})`;
  const lines = [`app-serving preflight: stack ${result.stack}, ${where}`, ''];
  if (result.checks.length === 0) lines.push('No model to check.');
  for (const check of result.checks) lines.push(describePreflightCheck(check, color));
  const c = result.counts;
  lines.push('');
  const verdict = result.ok ? color('pass', 'ready') : color('fail', 'NOT READY');
  lines.push(`${verdict}: ${c.pass} passed, ${c.fail} failed, ${c.warn} warning${c.warn === 1 ? '' : 's'}, ${c.skip} skipped in ${formatMs(result.durationMs)}`);
  return lines.join('\n');
}

/** The `--json` document (docs/cli.md), with a final newline. */
export function formatPreflightJson(result: PreflightResult): string {
  return `${JSON.stringify(result, null, 2)}\n`;
}

/** A JUnit XML report: one test case per check; a warning passes with its message in system-out. */
export function formatPreflightJunit(result: PreflightResult): string {
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const out = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const name = xml(`app-serving preflight ${result.stack}`);
  out.push(`<testsuites name="${name}" tests="${result.checks.length}" failures="${result.counts.fail}" errors="0" skipped="${result.counts.skip}" time="${seconds(result.durationMs)}">`);
  out.push(`  <testsuite name="${name}" tests="${result.checks.length}" failures="${result.counts.fail}" errors="0" skipped="${result.counts.skip}" time="${seconds(result.durationMs)}" timestamp="${xml(result.startedAt)}">`);
  for (const check of result.checks) {
    const open = `    <testcase name="${xml(check.id)}" classname="${xml(`app-serving.preflight.${result.stack}.${check.type}`)}" time="${seconds(check.durationMs)}">`;
    if (check.status === 'fail') out.push(open, `      <failure message="${xml(check.message)}" type="${xml(check.type)}">${xml(`${check.title}\n${check.message}\nfix: ${check.fix ?? ''}`)}</failure>`, '    </testcase>');
    else if (check.status === 'skip') out.push(open, `      <skipped message="${xml(check.message)}"/>`, '    </testcase>');
    else out.push(open, `      <system-out>${xml(`${LABEL[check.status]}: ${check.message}${check.fix ? `\nfix: ${check.fix}` : ''}`)}</system-out>`, '    </testcase>');
  }
  out.push('  </testsuite>', '</testsuites>');
  return `${out.join('\n')}\n`;
}

