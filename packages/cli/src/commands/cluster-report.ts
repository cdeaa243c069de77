import { writeFileSync } from 'node:fs';
import { displayPath } from '@app-serving/core';
import { EXIT, UsageError } from '../errors.ts';
import type { Output } from '../output.ts';

/**
 * Writes a JUnit report after the result was printed. A file that cannot be written is a usage
 * error (exit 2), and the result already printed is not lost. Returns the exit code to end with
 * instead of the result's, or null when the report was written (or none was asked for).
 */
export function writeJunitReport(output: Output, file: string | undefined, report: () => string, json: boolean | undefined): number | null {
  if (file === undefined) return null;
  try {
    writeFileSync(file, report());
  } catch (error) {
    output.err(`${output.color.red('error:')} --junit ${displayPath(file)}: cannot write the report (${(error as NodeJS.ErrnoException).code ?? String(error)}); the result is above`);
    return EXIT.usage;
  }
  if (!json) output.err(`wrote JUnit report ${displayPath(file)}`);
  return null;
}

/**
 * What verify and preflight do with an error of the cluster library: a kubeconfig that cannot be
 * loaded is an expected failure (exit 1, also as JSON, and with `--junit` a report holding that one
 * failure, so CI sees it rather than no results); another VerifyError is a usage error; any other
 * error is rethrown (a bug).
 */
export function clusterCommandError(
  error: unknown,
  output: Output,
  json: boolean | undefined,
  isVerifyError: (e: unknown) => e is Error & { code: string },
  junit?: { readonly file: string | undefined; readonly report: (error: { code: string; message: string }) => string },
): number {
  if (!isVerifyError(error)) throw error;
  if (error.code !== 'kubeconfig') throw new UsageError(error.message);
  if (json) output.json({ ok: false, error: { code: error.code, message: error.message } });
  else output.err(`${output.color.red('error:')} ${error.message}`);
  const reportFailed = junit ? writeJunitReport(output, junit.file, () => junit.report(error), json) : null;
  return reportFailed ?? EXIT.problems;
}
