import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { homeOf, recoverTransaction } from './transaction.ts';

describe("migrate's recovery of step 1 (a folder made, its journal not yet written)", () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
  const stack = () => {
    const dir = mkdtempSync(join(tmpdir(), 'app-serving-transaction-'));
    dirs.push(dir);
    const file = join(dir, 'Pulumi.s.yaml');
    writeFileSync(file, 'config: {}\n');
    return file;
  };

  it("leaves the folder of a run still at work (found between its mkdir and its journal: 8 concurrent runs had two 'winners')", () => {
    const file = stack();
    // A live process other than this one: the test's parent (vitest's worker pool) is one.
    const tmp = `${homeOf(file)}.${process.ppid}.0123456789ab.tmp`;
    mkdirSync(tmp);
    expect(recoverTransaction(file)).toEqual([]);
    expect(existsSync(tmp)).toBe(true);
  });

  it('removes the folder of a run that is gone', () => {
    const file = stack();
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    const tmp = `${homeOf(file)}.${gone}.0123456789ab.tmp`;
    mkdirSync(tmp);
    expect(recoverTransaction(file).map((r) => r.kind)).toEqual(['removed']);
    expect(existsSync(tmp)).toBe(false);
  });
});
