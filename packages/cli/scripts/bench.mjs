#!/usr/bin/env node
// Cold-start benchmark of the built CLI (not a test: timings depend on the machine).
// Usage: npm run build && node packages/cli/scripts/bench.mjs [runs] [--no-render]
//
// Whole-process wall time of each command over `runs` rounds (default 7). Every round runs
// `node -e ''` and then each command once, so that a busy machine slows a command and the
// baseline of its round alike; each command's ratio is taken to the baseline of its own round, and
// the min/median/max of those ratios are printed with the median time, and (with GNU time) the
// median CPU time and its ratio to node's, steadier than wall time on a busy machine. Stacks:
//   - the example stack (apps/app-serving/Pulumi.example.yaml, 2 models);
//   - the light generated stack (50 models, half embedders, minimal values files);
//   - the heavy generated stack (1, 10, 50 and 500 generative models with values files of the
//     usual shape), with the cost per model between 10 and 500 models to show it is linear.
// Goals (issue 16): validate and plan --json of 50 models ≤ 2.5×, of 500 models ≤ 8×; issue 33:
// validate and plan of 50 models ≤ 2.0×, --help ≤ 1.5×, render of 100 models ≤ 2.0 s.
// Then `render --json` (Pulumi's mocks, whole process) of 1, 10 and 100 heavy models, min/median/max
// (skip it with --no-render).
//
// The CLI keeps V8's compiled code between runs (src/code-cache.ts): the bench gives it a cache
// folder of its own, runs every command once before the rounds (as any second run of a command
// finds it), and times 50 heavy models without the cache too (APP_SERVING_CODE_CACHE=off).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedStack } from './generated-stack.mjs';

const args = process.argv.slice(2);
const runs = Number(args.find((a) => /^\d+$/.test(a)) ?? 7);
const withRender = !args.includes('--no-render');
const cliDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const repo = join(cliDir, '..', '..');
const bin = join(cliDir, 'bin', 'app-serving.js');
const codeCache = mkdtempSync(join(tmpdir(), 'app-serving-bench-code-cache-'));
process.env.APP_SERVING_CODE_CACHE = codeCache;
process.on('exit', () => rmSync(codeCache, { recursive: true, force: true }));

// CPU time (user + system, 10 ms resolution) of each run too, through GNU time where there is one:
// on a machine shared with other work, wall time measures the neighbours as much as the command.
const gnuTime = existsSync('/usr/bin/time') && spawnSync('/usr/bin/time', ['-f', '%U', 'true']).status === 0;

/** Runs `node …argv` once: wall time in ms, and CPU time in ms (NaN without GNU time). */
function time(argv, cwd, env = process.env) {
  const start = process.hrtime.bigint();
  const result = gnuTime
    ? spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, ...argv], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', maxBuffer: 1 << 28 })
    : spawnSync(process.execPath, argv, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', maxBuffer: 1 << 28 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`${argv.join(' ')} exited ${result.status}: ${result.stderr}`);
  const used = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(result.stderr);
  return { ms, cpu: used ? (Number(used[1]) + Number(used[2])) * 1000 : Number.NaN };
}

const sorted = (values) => [...values].sort((a, b) => a - b);
const median = (values) => sorted(values)[Math.floor(values.length / 2)];
const spread = (values, digits) => {
  const s = sorted(values);
  return `${s[0].toFixed(digits)} / ${median(s).toFixed(digits)} / ${s[s.length - 1].toFixed(digits)}`;
};

const stacks = {
  light50: generatedStack(50),
  heavy1: generatedStack(1, { shape: 'heavy' }),
  heavy10: generatedStack(10, { shape: 'heavy' }),
  heavy50: generatedStack(50, { shape: 'heavy' }),
  heavy500: generatedStack(500, { shape: 'heavy' }),
};
const big = ['--stack', 'Pulumi.big.yaml'];
const noCodeCache = { ...process.env, APP_SERVING_CODE_CACHE: 'off' };
const commands = [
  ['app-serving --help', [bin, '--help'], repo],
  ['validate (example, 2 models)', [bin, 'validate'], repo],
  ['plan (example, 2 models)', [bin, 'plan'], repo],
  ['validate (light, 50)', [bin, 'validate', ...big], stacks.light50],
  ['plan --json (light, 50)', [bin, 'plan', '--json', ...big], stacks.light50],
  ...[1, 10, 50, 500].flatMap((count) => [
    [`validate (heavy, ${count})`, [bin, 'validate', ...big], stacks[`heavy${count}`]],
    [`plan --json (heavy, ${count})`, [bin, 'plan', '--json', ...big], stacks[`heavy${count}`]],
  ]),
  ['validate (heavy, 50), no cache', [bin, 'validate', ...big], stacks.heavy50, noCodeCache],
  ['plan --json (heavy, 50), no cache', [bin, 'plan', '--json', ...big], stacks.heavy50, noCodeCache],
];

try {
  const load = loadavg()[0].toFixed(2);
  const baseline = [];
  const baselineCpu = [];
  const times = commands.map(() => []);
  const cpu = commands.map(() => []);
  const ratios = commands.map(() => []);
  for (const [, argv, cwd, env] of commands) time(argv, cwd, env);
  for (let round = 0; round < runs; round += 1) {
    const base = time(['-e', ''], repo);
    baseline.push(base.ms);
    baselineCpu.push(base.cpu);
    commands.forEach(([, argv, cwd, env], i) => {
      const { ms, cpu: used } = time(argv, cwd, env);
      times[i].push(ms);
      cpu[i].push(used);
      ratios[i].push(ms / base.ms);
    });
  }
  console.log(`${runs} rounds, node ${process.version}, ${availableParallelism()} cores, load average ${load} → ${loadavg()[0].toFixed(2)}`);
  console.log(`${'command'.padEnd(34)} ${'wall'.padStart(8)}   wall ÷ node -e '' of the round (min / median / max)${gnuTime ? '   cpu (median)   cpu ÷ node -e \'\'' : ''}`);
  const cpuText = (values) => (gnuTime ? `   ${`${median(values).toFixed(0)} ms`.padStart(12)}   ${(median(values) / median(baselineCpu)).toFixed(2)}×` : '');
  console.log(`${"node -e ''".padEnd(34)} ${`${median(baseline).toFixed(0)} ms`.padStart(8)}   ${`(wall min / max ${Math.min(...baseline).toFixed(0)} / ${Math.max(...baseline).toFixed(0)} ms)`.padEnd(42)}${cpuText(baselineCpu)}`);
  commands.forEach(([name], i) => console.log(`${name.padEnd(34)} ${`${median(times[i]).toFixed(0)} ms`.padStart(8)}   ${`${spread(ratios[i], 2)}×`.padEnd(42)}${cpuText(cpu[i])}`));
  for (const command of ['validate', 'plan --json']) {
    const at = (count, list = times) => median(list[commands.findIndex(([name]) => name === `${command} (heavy, ${count})`)]);
    const perModel = (from, to, list) => ((at(to, list) - at(from, list)) / (to - from)).toFixed(2);
    console.log(
      `${command}: ms per model, wall 10→50 ${perModel(10, 50)}, 50→500 ${perModel(50, 500)}${gnuTime ? `; cpu 10→50 ${perModel(10, 50, cpu)}, 50→500 ${perModel(50, 500, cpu)}` : ''} (linear when they agree)`,
    );
  }
} finally {
  for (const dir of Object.values(stacks)) rmSync(dir, { recursive: true, force: true });
}

if (withRender) {
  const renderRuns = Math.max(1, Math.min(runs, 3));
  console.log(`\nrender --json of the heavy stack, whole process, ${renderRuns} runs: wall min / median / max${gnuTime ? ', cpu median' : ''}`);
  for (const count of [1, 10, 100]) {
    const dir = generatedStack(count, { shape: 'heavy' });
    try {
      time([bin, 'render', '--json', ...big], dir);
      const runsOf = Array.from({ length: renderRuns }, () => time([bin, 'render', '--json', ...big], dir));
      const cpuText = gnuTime ? `, cpu ${median(runsOf.map((r) => r.cpu)).toFixed(0)} ms` : '';
      console.log(`${`${count} model${count === 1 ? '' : 's'}`.padEnd(34)} ${spread(runsOf.map((r) => r.ms), 0)} ms${cpuText}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
