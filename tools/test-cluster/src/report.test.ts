/**
 * What scripts/test.mjs prints above its total for a failed run (../report.mjs), from a report the
 * real vitest writes: a fixture folder with a passing test, two failing ones and a file that fails
 * to load, run by this repository's vitest with its JSON reporter.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NAMED_PER_PROJECT, failuresOf } from '../report.mjs';

const VITEST = resolve(import.meta.dirname, '../../../node_modules/vitest/vitest.mjs');

describe("scripts/test.mjs's lines for a failed run", () => {
  let dir: string;
  let report: any;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'report-'));
    writeFileSync(join(dir, 'vitest.config.mjs'), 'export default { test: { include: ["*.test.mjs"] } };\n');
    writeFileSync(
      join(dir, 'some.test.mjs'),
      [
        "import { describe, expect, it } from 'vitest';",
        "describe('a group', () => {",
        "  it('passes', () => expect(1).toBe(1));",
        "  it('compares', () => expect({ a: 1 }).toEqual({ a: 2 }));",
        "  it('throws', () => { throw new Error('the route did not come back\\nsecond line'); });",
        '});',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'broken.test.mjs'), "throw new Error('cannot load: no cluster');\n");
    const run = spawnSync(process.execPath, [VITEST, 'run', '--root', dir, '--reporter=json', `--outputFile=${join(dir, 'report.json')}`], { cwd: dir, encoding: 'utf8' });
    expect(run.status, run.stderr).not.toBe(0);
    report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8'));
  }, 120_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names each failed test by file and full name, with the first line of why; a file that failed to load, and why', () => {
    const lines = failuresOf('@app-serving/x', report, dir).sort();
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^@app-serving\/x: broken\.test\.mjs failed to run: .*cannot load: no cluster/);
    expect(lines[1]).toMatch(/^@app-serving\/x: some\.test\.mjs > a group compares failed: AssertionError: expected \{ a: 1 \} to deeply equal \{ a: 2 \}$/);
    expect(lines[2]).toBe('@app-serving/x: some.test.mjs > a group throws failed: Error: the route did not come back');
  });

  it(`names at most ${NAMED_PER_PROJECT} per project, then how many more`, () => {
    const many = { testResults: [{ name: join(dir, 'many.test.ts'), status: 'failed', assertionResults: Array.from({ length: NAMED_PER_PROJECT + 3 }, (_, i) => ({ fullName: `t${i}`, status: 'failed', failureMessages: ['x'] })) }] };
    const lines = failuresOf('p', many, dir);
    expect(lines).toHaveLength(NAMED_PER_PROJECT + 1);
    expect(lines.at(-1)).toBe('p: … 3 more failed (its report: .reports/vitest/)');
  });

  it('a passing report: nothing', () => {
    expect(failuresOf('p', { testResults: report.testResults.map((s: any) => ({ ...s, status: 'passed', assertionResults: s.assertionResults.filter((t: any) => t.status === 'passed') })) }, dir)).toEqual([]);
  });
});
