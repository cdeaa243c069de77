import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collect, CLI_ROOT, REPO_ROOT } from '../test/run-cli.ts';
// @ts-expect-error -- the benchmarks' plain-JavaScript stack generator has no types
import { generatedStack } from '../scripts/generated-stack.mjs';

/**
 * What each command loads (structure, not time: the cold start is measured by scripts/bench.mjs).
 * A command pays, on every run, for every chunk and Node module it loads: the commands people run
 * most load only their own code, and the Node modules only other commands need stay unloaded.
 */
const dir = mkdtempSync(join(tmpdir(), 'app-serving-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const probe = join(dir, 'probe.cjs');
// Preloaded: at exit, the bundle's chunks the process loaded and Node's built-in modules.
writeFileSync(
  probe,
  `process.on('exit', () => { require('node:fs').writeFileSync(process.env.PROBE_OUT, JSON.stringify({ chunks: Object.keys(require.cache).filter((f) => f.includes('/dist/cli/')), builtins: process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)) })); });\n`,
);

async function loads(args: string[], codeCache = 'off'): Promise<{ chunks: string[]; builtins: string[] }> {
  const out = join(dir, `${args[0]}.json`);
  const run = await collect(process.execPath, ['-r', probe, join(CLI_ROOT, 'bin', 'app-serving.js'), ...args], { cwd: REPO_ROOT, env: { PATH: process.env.PATH, HOME: dir, APP_SERVING_CODE_CACHE: codeCache, PROBE_OUT: out } });
  expect(run.code, run.stderr).toBe(0);
  const { chunks, builtins } = JSON.parse(readFileSync(out, 'utf8')) as { chunks: string[]; builtins: string[] };
  // A chunk by its name without the content hash: main-3xA9.cjs → main.
  return { chunks: chunks.map((f) => basename(f).replace(/(-[\w-]{8})?\.cjs$/, '')).sort(), builtins };
}

describe('what a command loads', () => {
  it('--help loads the command table only: no command, no core, no child_process', async () => {
    const { chunks, builtins } = await loads(['--help']);
    expect(chunks.filter((c) => !['code-cache', 'main', 'output', 'redact', 'rolldown-runtime'].includes(c))).toEqual([]);
    expect(builtins).not.toContain('child_process');
  });

  it("validate and plan load core and their own command, not migrate's, diff's, render's or new-model's; no child_process, crypto or zlib", async () => {
    for (const command of ['validate', 'plan']) {
      const { chunks, builtins } = await loads([command]);
      expect(chunks).toContain(command);
      expect(chunks).toContain('context');
      expect(chunks.filter((c) => ['migrate', 'diff', 'render', 'new-model', 'images', 'verify', 'preflight', 'temp'].includes(c)), command).toEqual([]);
      expect(builtins.filter((b) => b === 'child_process' || b === 'crypto' || b === 'zlib'), command).toEqual([]);
    }
  });

  it('with the code cache (its checksums are node:zlib\'s CRC-32), validate and plan still load no crypto: loading node:crypto was 1.2–1.5 ms of each run', async () => {
    const cache = join(dir, 'code-cache');
    for (const command of ['validate', 'plan']) {
      for (const run of ['writes the cache', 'reads it']) {
        const { builtins } = await loads([command], cache);
        expect(builtins.filter((b) => b === 'child_process' || b === 'crypto'), `${command}, ${run}`).toEqual([]);
      }
    }
  });
});

describe('the bundle', () => {
  it('is ASCII: one other character makes V8 hold a whole chunk as a two-byte string (the context chunk: 1 MB instead of 500 KB, read, copied and checksummed at every run)', () => {
    const bundle = join(CLI_ROOT, 'dist', 'cli');
    const chunks = readdirSync(bundle).filter((f) => f.endsWith('.cjs'));
    expect(chunks.length).toBeGreaterThan(5);
    const other = chunks.flatMap((f) => {
      const text = readFileSync(join(bundle, f), 'utf8');
      const at = text.search(/[^\x00-\x7f]/);
      return at < 0 ? [] : [`${f}: ${JSON.stringify(text.slice(Math.max(0, at - 30), at + 10))}`];
    });
    expect(other).toEqual([]);
  });
});

describe("what V8 optimizes during a command (src/code-cache.ts: raiseOptimizationBudget)", () => {
  /** How many functions TurboFan compiles during `validate` of 50 models (node --trace-opt). */
  async function turbofanCompiles(nodeArgs: string[]): Promise<number> {
    const stack = generatedStack(50) as string;
    try {
      const run = await collect(process.execPath, [...nodeArgs, '--trace-opt', join(CLI_ROOT, 'bin', 'app-serving.js'), 'validate', '--stack', 'Pulumi.big.yaml'], { cwd: stack, env: { PATH: process.env.PATH, HOME: dir, APP_SERVING_CODE_CACHE: 'off' } });
      expect(run.code, run.stderr).toBe(0);
      return run.stdout.split('\n').filter((line) => /^\[compiling method .*\(target TURBOFAN\)/.test(line)).length;
    } finally {
      rmSync(stack, { recursive: true, force: true });
    }
  }

  it("leaves a short command's code to the interpreter: TurboFan compiles a fraction of what it compiles under V8's own budget", async () => {
    // V8's default budget, given by the user, is left as it is: the comparison.
    const withDefault = await turbofanCompiles(['--interrupt-budget=67584']);
    const ours = await turbofanCompiles([]);
    expect(withDefault).toBeGreaterThan(3 * ours);
  });
});
