import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CLI_ROOT, collect, type CliResult } from '../run-cli.ts';
import { STACK, asObject, bigProject, classify, hasStage, oldProject, snapshot, visible } from '../migrate-tree.ts';
import { runCli, tempDir } from './harness.ts';

/**
 * `app-serving migrate` stopped for real: the built CLI under strace, killed (SIGKILL) at the entry
 * of each mkdir, rename, fsync, unlink, rmdir and fchmod it makes — every point between two of
 * these steps — and failed with ENOSPC at each of them; then on a small tmpfs that is really full.
 * After each, the tree is the old one or the new one (test/migrate-tree.ts `classify`), and a
 * second run gives exactly the clean result. src/migrate-faults.test.ts does every step (opens and
 * writes too) in-process.
 */

const BIN = join(CLI_ROOT, 'bin', 'app-serving.js');
const ENV = { PATH: process.env.PATH, HOME: process.env.HOME, APP_SERVING_CODE_CACHE: 'off' };
const ARGS = ['migrate', '--to', '2026-08', '--stack', STACK];
const HAS_STRACE = spawnSync('strace', ['-V']).status === 0;
const IS_ROOT = process.getuid?.() === 0;
/** The syscalls of migrate's commit protocol that strace counts (openat and write are also Node's own: the in-process sweep covers them). */
const SYSCALLS = ['mkdir', 'rename', 'fsync', 'unlink', 'rmdir', 'fchmod'] as const;

function migrate(cwd: string, wrap: string[] = [], args: string[] = ARGS): Promise<CliResult & { signal?: string }> {
  const [command, ...rest] = [...wrap, process.execPath, BIN, ...args];
  return collect(command!, rest, { cwd, env: ENV });
}

/** Runs `tasks` two at a time (two cores). */
async function pool<T>(tasks: (() => Promise<T>)[], width = 2): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]!();
      }
    }),
  );
  return out;
}

describe.skipIf(!HAS_STRACE)('migrate under strace: killed before, and failed with ENOSPC at, each of its syscalls', { timeout: 1_800_000 }, () => {
  it('every kill point and every ENOSPC point leaves the old tree or the new one; a second run gives the clean result', async ({ onTestFinished }) => {
    const scratch = tempDir(onTestFinished);
    const template = join(scratch, 'template');
    oldProject(template);
    const OLD = snapshot(template);
    const clean = join(scratch, 'clean');
    cpSync(template, clean, { recursive: true });
    const log = join(scratch, 'strace.log');
    const counted = await migrate(clean, ['strace', '-f', '-qq', '-e', `trace=${SYSCALLS.join(',')}`, '-o', log]);
    expect(counted.code, counted.stderr).toBe(0);
    const NEW = snapshot(clean);
    const calls = readFileSync(log, 'utf8').split('\n').filter((l) => / (\w+)\(/.test(l) && !l.includes('resumed>'));
    const count = Object.fromEntries(SYSCALLS.map((s) => [s, calls.filter((l) => l.includes(` ${s}(`)).length]));
    // The protocol's steps: 7 folders made, 7 renames (the lock, 4 folders, the stack, H away), the fsyncs, the tidy-up.
    expect(count).toMatchObject({ mkdir: 7, rename: 7, unlink: 2, fchmod: 1 });
    expect(count.rmdir).toBeGreaterThanOrEqual(3);

    const cases = SYSCALLS.flatMap((syscall) => Array.from({ length: count[syscall]! }, (_, i) => i + 1).flatMap((when) => (['kill', 'enospc'] as const).map((fault) => ({ syscall, when, fault }))));
    const results = await pool(
      cases.map(({ syscall, when, fault }, i) => async () => {
        const dir = join(scratch, `case-${i}`);
        cpSync(template, dir, { recursive: true });
        const inject = fault === 'kill' ? `inject=${syscall}:signal=SIGKILL:when=${when}` : `inject=${syscall}:error=ENOSPC:when=${when}`;
        const stopped = await migrate(dir, ['strace', '-f', '-qq', '-e', `trace=${syscall}`, '-e', inject, '-o', '/dev/null']);
        const where = `${fault} at ${syscall} #${when}`;
        const tree = snapshot(dir);
        const state = classify(tree, OLD, NEW, STACK, where);
        if (fault === 'kill') expect(stopped.code === 137 || stopped.code === null, `${where}: killed (${stopped.code})`).toBe(true);
        else {
          // A real error: said, exit 2 with the old tree exactly; or exit 0 once the stack file is replaced.
          expect([0, 2], `${where}: ${stopped.stderr}`).toContain(stopped.code);
          if (stopped.code === 2) {
            expect(stopped.stderr, where).toMatch(/error: cannot write the migration: .*ENOSPC.*nothing was written/);
            expect(asObject(tree), where).toEqual(asObject(OLD));
          } else expect(asObject(visible(tree)), where).toEqual(asObject(NEW));
        }
        const again = await migrate(dir);
        expect(asObject(snapshot(dir)), `${where}, then run again: ${again.stderr}`).toEqual(asObject(NEW));
        expect(again.code === 0 || (!hasStage(tree) && state === 'new' && again.code === 1), `${where}, then run again: exit ${again.code} ${again.stderr}${again.stdout}`).toBe(true);
        rmSync(dir, { recursive: true, force: true });
        return { fault, state, code: stopped.code };
      }),
    );
    const kills = results.filter((r) => r.fault === 'kill');
    const enospc = results.filter((r) => r.fault === 'enospc');
    console.log(
      `strace: ${calls.length} syscalls of the protocol (${SYSCALLS.map((s) => `${s} ${count[s]}`).join(', ')}); ` +
        `SIGKILL before each: ${kills.filter((r) => r.state === 'old').length} old tree, ${kills.filter((r) => r.state === 'new').length} new, ${kills.filter((r) => r.state === 'between').length} new folders beside the old stack (committed); ` +
        `ENOSPC at each: ${enospc.filter((r) => r.code === 2).length} exit 2 with the old tree, ${enospc.filter((r) => r.code === 0).length} exit 0 with the new tree; every second run gave the clean result`,
    );
    expect(kills.length).toBe(calls.length);
  });

  it('the review’s M2 repro 1 (killed at the second mkdir): the second run finishes nothing half — the clean result, router values included', async ({ onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    oldProject(dir);
    const killed = await migrate(dir, ['strace', '-f', '-qq', '-e', 'trace=mkdir', '-e', 'inject=mkdir:signal=SIGKILL:when=2', '-o', '/dev/null']);
    expect(killed.code === 137 || killed.code === null).toBe(true);
    expect(existsSync(join(dir, 'models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2'))).toBe(false);
    const again = await migrate(dir);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('note: an interrupted app-serving migrate');
    expect(readdirSync(join(dir, 'models/generative/Qwen3-0.6B-rke2')).sort()).toEqual(['gaie-qwen3-06b-rke2', 'ms-qwen3-06b-rke2', 'router-qwen3-06b-rke2', 'server-qwen3-06b-rke2']);
    expect(readFileSync(join(dir, 'models/generative/Qwen3-0.6B-rke2/router-qwen3-06b-rke2/values.yaml'), 'utf8')).toContain('llm-d-router-endpoint-picker');
  });
});

/** A tmpfs of `size` bytes mounted at `dir` for the test (root only); unmounted after it. */
function tmpfs(dir: string, size: number, onFinished: (fn: () => void) => void): boolean {
  mkdirSync(dir, { recursive: true });
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]).status !== 0) return false;
  onFinished(() => void spawnSync('umount', ['-l', dir]));
  return true;
}

/** Fills the file system of `dir` with `dir/fill`, then frees `pages` pages of it. */
function fill(dir: string, pages: number): void {
  spawnSync('sh', ['-c', `dd if=/dev/zero of=${join(dir, 'fill')} bs=4096 2>/dev/null; true`]);
  const size = readFileSync(join(dir, 'fill')).length;
  truncateSync(join(dir, 'fill'), Math.max(0, size - pages * 4096));
}

describe.skipIf(!IS_ROOT)('migrate on a small tmpfs that is full (real ENOSPC)', { timeout: 1_800_000 }, () => {
  it.each([
    { layout: 'the stack file is a link to a file on the full tmpfs (M1)', setup: 'link' },
    { layout: 'the stack folder is on the full tmpfs, the models on disk (m8)', setup: 'stack-dir' },
    { layout: 'the whole project is on the full tmpfs', setup: 'all' },
  ] as const)('$layout: with 0, 1, 2, … pages free, exit 2 and every byte as it was, or the clean result; a leftover never blocks the next run', async ({ setup }) => {
    const scratch = tempDir(onTestFinished);
    const small = join(scratch, 'small');
    if (!tmpfs(small, 256 * 1024, onTestFinished)) return;
    const clean = join(scratch, 'clean');
    oldProject(clean);
    // The stack file padded to 4,090 bytes, as in the review's repro.
    const stackText = readFileSync(join(clean, STACK), 'utf8');
    const padded = `${stackText}# ${'p'.repeat(4090 - Buffer.byteLength(stackText) - 3)}\n`;
    writeFileSync(join(clean, STACK), padded);
    const template = join(scratch, 'template');
    cpSync(clean, template, { recursive: true });
    expect((await migrate(clean)).code).toBe(0);
    const stackNew = readFileSync(join(clean, STACK));
    const modelsNew = snapshot(join(clean, 'models'));
    const modelsOld = snapshot(join(template, 'models'));

    const outcomes: string[] = [];
    for (let pages = 0; pages < 40; pages++) {
      for (const name of readdirSync(small)) rmSync(join(small, name), { recursive: true, force: true });
      const project = setup === 'all' ? join(small, 'p') : join(scratch, `p-${pages}`);
      rmSync(project, { recursive: true, force: true });
      cpSync(template, project, { recursive: true });
      let stackFile = join(project, STACK);
      if (setup === 'link') {
        cpSync(stackFile, join(small, 'Pulumi.example.yaml'));
        rmSync(stackFile);
        symlinkSync(join(small, 'Pulumi.example.yaml'), stackFile);
        stackFile = join(small, 'Pulumi.example.yaml');
      } else if (setup === 'stack-dir') {
        cpSync(join(project, 'apps'), join(small, 'apps'), { recursive: true });
        rmSync(join(project, 'apps'), { recursive: true });
        symlinkSync(join(small, 'apps'), join(project, 'apps'));
        stackFile = join(small, STACK);
      }
      fill(small, pages);
      const result = await migrate(project, [], [...ARGS, '--models-dir', join(project, 'models')]);
      const where = `${setup}, ${pages} pages free`;
      const stack = readFileSync(stackFile);
      if (setup === 'link') expect(lstatSync(join(project, STACK)).isSymbolicLink(), `${where}: the link stays a link`).toBe(true);
      if (result.code === 0) {
        expect(stack.equals(stackNew), where).toBe(true);
        expect(asObject(snapshot(join(project, 'models'))), where).toEqual(asObject(modelsNew));
        outcomes.push(`${pages}: migrated`);
        break;
      }
      expect(result.code, `${where}: ${result.stderr}`).toBe(2);
      expect(result.stderr, where).toMatch(/error: cannot write the migration: .*ENOSPC.*nothing was written/);
      // Every byte as it was: the stack (a link stays a link to it), the models; no leftover anywhere.
      expect(stack.toString('utf8'), where).toBe(padded);
      expect(asObject(snapshot(join(project, 'models'))), where).toEqual(asObject(modelsOld));
      expect(hasStage(snapshot(small)), where).toBe(false);
      expect(readdirSync(small).filter((n) => n.startsWith('.')), where).toEqual([]);
      outcomes.push(`${pages}: exit 2, unchanged`);
      // Space again: the next run is not blocked by anything, and migrates.
      rmSync(join(small, 'fill'));
      const again = await migrate(project, [], [...ARGS, '--models-dir', join(project, 'models')]);
      expect(again.code, `${where}, then with space: ${again.stderr}`).toBe(0);
      expect(readFileSync(stackFile).equals(stackNew), where).toBe(true);
      expect(asObject(snapshot(join(project, 'models'))), where).toEqual(asObject(modelsNew));
    }
    console.log(`tmpfs, ${setup}: ${outcomes.join('; ')}`);
    expect(outcomes[outcomes.length - 1]).toMatch(/migrated$/);
    expect(outcomes.length).toBeGreaterThan(1);
  });
});

describe('migrate interrupted by Ctrl-C (SIGINT) on a stack of 150 models (M2 repro 2)', { timeout: 1_800_000 }, () => {
  it.each([
    { when: 'while it stages (its folder beside the stack file appears)', file: '.app-serving-migrate-Pulumi.big.yaml' },
    { when: 'while it moves the folders in (the first model’s server folder appears)', file: 'models/generative/Sim0/server-sim0' },
  ])('$when: the old tree or the new one, and the next run gives exactly the clean result', async ({ file }) => {
    const scratch = tempDir(onTestFinished);
    const template = join(scratch, 'template');
    bigProject(template, 150);
    const OLD = snapshot(template);
    const clean = join(scratch, 'clean');
    cpSync(template, clean, { recursive: true });
    const args = ['migrate', '--to', '2026-08', '--stack', 'Pulumi.big.yaml'];
    expect((await migrate(clean, [], args)).code).toBe(0);
    const NEW = snapshot(clean);
    const dir = join(scratch, 'run');
    cpSync(template, dir, { recursive: true });
    const stopped = await runCli(args, { cwd: dir, env: { APP_SERVING_CODE_CACHE: 'off' }, interrupt: { signal: 'SIGINT', whenFile: join(dir, file) } });
    const state = classify(snapshot(dir), OLD, NEW, 'Pulumi.big.yaml', `SIGINT ${file}`);
    // Stopped (130, or the signal), unless it was done before the signal came.
    expect(stopped.code === 130 || stopped.signal === 'SIGINT' || (stopped.code === 0 && state === 'new'), `exit ${stopped.code} ${stopped.signal}: ${stopped.stderr}`).toBe(true);
    const again = await migrate(dir, [], args);
    expect(asObject(snapshot(dir)), again.stderr).toEqual(asObject(NEW));
    console.log(`SIGINT when ${file} appeared: exit ${stopped.code ?? stopped.signal}, ${state} tree; then exit ${again.code}: ${again.stderr.split('\n').find((l) => l.startsWith('note:')) ?? '(nothing to recover)'}`);
  });
});

describe('concurrent runs of migrate on one stack', { timeout: 1_800_000 }, () => {
  it('8 at once: one writes, the others stop with exit 1 or 2, nothing mixed and nothing left behind', async () => {
    const scratch = tempDir(onTestFinished);
    const clean = join(scratch, 'clean');
    oldProject(clean);
    const dir = join(scratch, 'run');
    cpSync(clean, dir, { recursive: true });
    expect((await migrate(clean)).code).toBe(0);
    const results = await Promise.all(Array.from({ length: 8 }, () => migrate(dir)));
    const codes = results.map((r) => r.code).sort();
    expect(codes.filter((c) => c === 0), JSON.stringify(results.map((r) => [r.code, r.stderr.split('\n')[0], r.stdout.split('\n')[0]]))).toHaveLength(1);
    for (const r of results.filter((x) => x.code !== 0)) {
      expect([1, 2], r.stderr).toContain(r.code);
      expect(r.stderr + r.stdout).toMatch(/another app-serving migrate|on 2026-08 already|changed while migrate ran/);
    }
    expect(asObject(snapshot(dir)), 'the clean result, no stage left').toEqual(asObject(snapshot(clean)));
    console.log(`8 concurrent runs: exit codes ${codes.join(' ')}`);
  });
});
