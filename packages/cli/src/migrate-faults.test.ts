import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pc from 'picocolors';
import { isStackError } from '@app-serving/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STACK, STAGE, asObject, classify, hasStage, oldProject, snapshot, visible, type Variant } from '../test/migrate-tree.ts';
import { UsageError } from './errors.ts';
import type { Output } from './output.ts';

/**
 * Fault injection at every step of a real migration, in this process: node:fs is wrapped
 * (test/fault-fs.cjs) so that each step that changes the disk — mkdir, a new file, write, fsync,
 * rename, unlink, rmdir, chown/chmod — can (a) be the last one before the process "dies" (every
 * later step does nothing: the disk stays as a killed process leaves it), or (b) fail with ENOSPC,
 * the disk then staying full. After each, the tree is checked against the old tree and the clean
 * result, file by file (hashes), and a second run, without faults, must produce exactly the clean
 * result. test/hostile/migrate-kill.test.ts does the same with real SIGKILLs of the built CLI, and
 * real ENOSPC on a small tmpfs.
 */

const fault = vi.hoisted(() => ({
  mode: 'off' as 'off' | 'count' | 'kill' | 'enospc',
  at: 0,
  root: '',
  steps: [] as string[],
  dead: false,
  full: false,
  onStep: undefined as undefined | ((n: number, name: string, path: string) => void),
}));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const { faultFs } = await import('../test/fault-fs.cjs');
  const wrapped = { ...fs, ...faultFs(fs, fault) };
  return { ...wrapped, default: wrapped };
});

// Loaded after the mock: the command and core read and write through the wrapped node:fs.
const { default: migrate } = await import('./commands/migrate.ts');


interface Run {
  readonly code: number | 'killed';
  readonly out: string;
  readonly err: string;
}

/** Runs migrate in this process, as main would (exit codes by error kind). */
async function run(root: string, extra: { model?: string[]; json?: boolean } = {}): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const output: Output = { color: pc.createColors(false), tty: false, out: (l = '') => out.push(l), err: (l = '') => err.push(l), json: (v) => out.push(JSON.stringify(v)), raw: (t) => out.push(t) };
  let code: Run['code'];
  try {
    code = await migrate({ options: { stack: join(root, STACK), modelsDir: join(root, 'models'), to: '2026-08', ...extra }, output });
  } catch (error) {
    if (fault.dead) code = 'killed';
    else if (error instanceof UsageError) code = 2;
    else if (isStackError(error)) code = 1;
    else throw error;
    err.push(isStackError(error) ? error.issues.map((i) => `${i.code}: ${i.message}`).join('\n') : error instanceof Error ? error.message : String(error));
  }
  // A "killed" run that swallowed the error (a tidy-up's failure is a warning) died all the same.
  return { code: fault.dead ? 'killed' : code, out: out.join('\n'), err: err.join('\n') };
}

/** Runs with a fault. */
async function withFault(root: string, mode: typeof fault.mode, at: number, extra?: { model?: string[] }): Promise<Run & { steps: string[] }> {
  Object.assign(fault, { mode, at, root, steps: [], dead: false, full: false });
  try {
    return { ...(await run(root, extra)), steps: [...fault.steps] };
  } finally {
    Object.assign(fault, { mode: 'off', root: '', dead: false, full: false, onStep: undefined });
  }
}

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'app-serving-migrate-faults-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let copies = 0;
function copyOf(template: string): string {
  const dir = join(scratch, `run-${++copies}`);
  cpSync(template, dir, { recursive: true, verbatimSymlinks: true });
  return dir;
}

/** What a scenario's sweeps found, for the summary at the end. */
const summary: string[] = [];

interface Scenario {
  readonly name: string;
  readonly variant: Variant;
  readonly model?: string[];
  /** The file migrate replaces (the link's target), relative to the project. */
  readonly replaced: string;
}

const SCENARIOS: Scenario[] = [
  { name: 'the example stack (two llm-d models: four new folders)', variant: 'plain', replaced: STACK },
  { name: 'a stack file that is a symbolic link (its target replaced, the link kept)', variant: 'linked-stack', replaced: 'config-repo/Pulumi.example.yaml' },
  { name: 'a model folder that is a symbolic link (staged in the folder it points to)', variant: 'linked-model', replaced: STACK },
  { name: '--model: one model, by its own upstream key', variant: 'plain', model: ['bge-small-en-v1.5-rke2'], replaced: STACK },
];

describe.each(SCENARIOS)('migrate stopped at every step: $name', { timeout: 1_800_000 }, (scenario) => {
  let template: string;
  let OLD: Map<string, string>;
  let NEW: Map<string, string>;
  let steps: string[];
  /** The step that renames the new stack file over the old one (the last rename). */
  let stackRename: number;

  beforeAll(async () => {
    template = join(scratch, `template-${scenario.variant}-${scenario.model?.join('-') ?? 'all'}`);
    oldProject(template, scenario.variant);
    OLD = snapshot(template);
    const clean = copyOf(template);
    const counted = await withFault(clean, 'count', 0, { model: scenario.model });
    expect(counted.code, counted.err).toBe(0);
    NEW = snapshot(clean);
    steps = counted.steps;
    stackRename = steps.findIndex((s) => s === `rename ${scenario.replaced}`) + 1;
    expect(stackRename).toBeGreaterThan(0);
  });

  it('the clean run: the stack file replaced and the new folders written, nothing else changed, no stage left', () => {
    const changed = [...NEW].filter(([path, entry]) => OLD.get(path) !== entry).map(([path]) => path);
    const removed = [...OLD.keys()].filter((path) => !NEW.has(path));
    expect(removed).toEqual([]);
    expect(changed.filter((p) => !p.endsWith('values.yaml') && !/(server|router)-[^/]*$/.test(p))).toEqual([scenario.replaced]);
    expect(hasStage(NEW)).toBe(false);
    if (scenario.variant === 'linked-stack') expect(NEW.get(STACK)).toBe('link ../../config-repo/Pulumi.example.yaml');
    // Every kind of step is there, and the stack file is replaced last of all the moves.
    const kinds = new Set(steps.map((s) => s.split(' ')[0]));
    for (const kind of ['mkdir', 'open', 'write', 'fsync', 'rename', 'unlink', 'rmdir']) expect(kinds).toContain(kind);
    expect(steps.slice(stackRename).filter((s) => s.startsWith('rename') && !s.includes(STAGE))).toEqual([]);
  });

  it('killed after each step: the old tree or the new one (the new folders beside the old stack only past the commit point), and a second run gives exactly the clean result', async () => {
    const states = { old: 0, new: 0, between: 0 };
    for (let at = 1; at <= steps.length; at++) {
      const dir = copyOf(template);
      const killed = await withFault(dir, 'kill', at, { model: scenario.model });
      const where = `killed after step ${at} (${steps[at - 1]})`;
      expect(killed.code, where).toBe('killed');
      const tree = snapshot(dir);
      states[classify(tree, OLD, NEW, scenario.replaced, where)]++;
      const again = await run(dir, { model: scenario.model });
      // Killed after its very last step, the run had finished: nothing is left to do.
      const finished = at === steps.length && !hasStage(tree);
      expect(again.code, `${where}, then run again: ${again.err}`).toBe(finished ? 1 : 0);
      if (finished) expect(again.err).toMatch(/^migrate\.nothing-to-do:/);
      expect(asObject(snapshot(dir)), `${where}, then run again`).toEqual(asObject(NEW));
      if (hasStage(tree)) expect(again.err, where).toMatch(/an (interrupted )?app-serving migrate .*(undone|finished|removed)/);
      rmSync(dir, { recursive: true, force: true });
    }
    expect(states.old + states.new + states.between).toBe(steps.length);
    expect(states.old).toBeGreaterThan(0);
    expect(states.new).toBeGreaterThan(0);
    summary.push(`${scenario.name}: ${steps.length} steps; killed after each: ${states.old} old tree, ${states.new} new tree, ${states.between} new folders beside the old stack (committed, finished by the next run); every second run gave the clean result`);
  });

  it('ENOSPC at each step (the disk then stays full): exit 2 and the old tree exactly, or — once the stack file is replaced — exit 0, the new tree and a warning; a second run gives exactly the clean result', async () => {
    const outcomes = { old: 0, new: 0 };
    for (let at = 1; at <= steps.length; at++) {
      const dir = copyOf(template);
      const failed = await withFault(dir, 'enospc', at, { model: scenario.model });
      const where = `ENOSPC at step ${at} (${steps[at - 1]})`;
      const tree = snapshot(dir);
      if (at <= stackRename) {
        expect(failed.code, `${where}: ${failed.err}`).toBe(2);
        expect(failed.err, where).toMatch(/^cannot write the migration: .*\(ENOSPC\)/);
        expect(failed.err, where).toContain('nothing was written');
        expect(failed.err, where).not.toContain('could not be removed');
        expect(asObject(tree), where).toEqual(asObject(OLD));
        outcomes.old++;
      } else {
        expect(failed.code, where).toBe(0);
        expect(failed.err, where).toContain(`warning: the migration is in place, but`);
        expect(asObject(visible(tree)), where).toEqual(asObject(NEW));
        outcomes.new++;
      }
      const again = await run(dir, { model: scenario.model });
      expect(asObject(snapshot(dir)), `${where}, then run again: ${again.err}`).toEqual(asObject(NEW));
      // Exit 0, or 1 when the failed run had tidied up everything already (nothing left to do).
      expect(again.code === 0 || (again.code === 1 && again.err.includes('migrate.nothing-to-do:')), `${where}, then run again: ${again.code} ${again.err}`).toBe(true);
      rmSync(dir, { recursive: true, force: true });
    }
    summary.push(`${scenario.name}: ENOSPC at each of ${steps.length} steps: ${outcomes.old} left the old tree exactly (exit 2), ${outcomes.new} the new tree with a warning (exit 0); every second run gave the clean result`);
  });
});

describe('what the sweeps found', () => {
  it('prints the counts', () => {
    // eslint-disable-next-line no-console
    console.log(summary.join('\n'));
    expect(summary.length).toBe(SCENARIOS.length * 2);
  });
});

describe('a concurrent edit of the stack file is never overwritten', () => {
  it('an edit saved while migrate writes: nothing is written, the edit is kept, and the next run migrates the edited stack', async () => {
    const template = join(scratch, 'template-edit');
    oldProject(template, 'plain');
    const dir = copyOf(template);
    const file = join(dir, STACK);
    const edited = `${readFileSync(file, 'utf8')}# an edit saved while migrate ran\n`;
    Object.assign(fault, { mode: 'count', at: 0, root: dir, steps: [], dead: false, full: false });
    // As an editor saves it: when migrate creates its commit marker.
    fault.onStep = (_n, name, path) => {
      if (name === 'open' && path.endsWith('/committed')) writeFileSync(file, edited);
    };
    let result: Run;
    try {
      result = await run(dir);
    } finally {
      Object.assign(fault, { mode: 'off', root: '', onStep: undefined });
    }
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/Pulumi\.example\.yaml changed while migrate ran .*: nothing was written; run app-serving migrate again/);
    expect(readFileSync(file, 'utf8')).toBe(edited);
    expect(existsSync(join(dir, 'models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2'))).toBe(false);
    expect(readdirSync(join(dir, 'apps/app-serving')).filter((n) => n.startsWith('.'))).toEqual([]);
    const again = await run(dir);
    expect(again.code).toBe(0);
    expect(readFileSync(file, 'utf8')).toContain('# an edit saved while migrate ran\n');
    expect(readFileSync(file, 'utf8')).toContain('app-serving:upstream: 2026-08');
  });
});
