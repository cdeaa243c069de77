#!/usr/bin/env node
// Benchmark of `app-serving diff` (not a test: timings depend on the machine).
// Usage: npm run build && node packages/cli/scripts/bench-diff.mjs [runs]
// Whole-process wall time, median of `runs` runs (default 5), interleaved so that a busy machine
// slows every command alike:
//   - `render --json` of a generated 100-model stack, the yardstick;
//   - `diff --base HEAD --json` of that stack in a git repository, one model changed in the work tree
//     (target: ≤ 1.5× the render);
//   - `diff --base HEAD` of the example stack (apps/app-serving/Pulumi.example.yaml, 2 models) with one
//     model changed (target: ≤ 2 s).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedStack } from './generated-stack.mjs';

const runs = Number(process.argv[2] ?? 5);
const cliDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const repo = join(cliDir, '..', '..');
const bin = join(cliDir, 'bin', 'app-serving.js');

function git(cwd, ...args) {
  const result = spawnSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', ...args], { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
}

/** Commits everything in `dir`, then changes one model's values in the work tree. */
function gitRepoWithOneChange(dir, file, from, to) {
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'base');
  const text = readFileSync(join(dir, file), 'utf8');
  if (!text.includes(from)) throw new Error(`${file} has no "${from}"`);
  writeFileSync(join(dir, file), text.replace(from, to));
}

const big = generatedStack(100);
gitRepoWithOneChange(big, 'models/generative/Model-0/ms-model-0/values.yaml', 'inference-sim:v0.10.2', 'inference-sim:v0.10.3');

const example = mkdtempSync(join(tmpdir(), 'app-serving-bench-example-'));
mkdirSync(join(example, 'apps', 'app-serving'), { recursive: true });
cpSync(join(repo, 'apps', 'app-serving', 'Pulumi.example.yaml'), join(example, 'apps', 'app-serving', 'Pulumi.example.yaml'));
cpSync(join(repo, 'models'), join(example, 'models'), { recursive: true });
gitRepoWithOneChange(example, 'models/generative/Qwen3-0.6B-rke2/ms-qwen3-06b-rke2/values.yaml', '--max-model-len', '--max-num-seqs\n        - "64"\n        - --max-model-len');

const commands = {
  'render --json (100 models)': [[bin, 'render', '--json', '--stack', 'Pulumi.big.yaml'], big],
  'diff --base HEAD --json (100 models, 1 changed)': [[bin, 'diff', '--base', 'HEAD', '--json', '--stack', 'Pulumi.big.yaml'], big],
  'diff --base HEAD (example, 1 changed)': [[bin, 'diff', '--base', 'HEAD'], example],
};
// CPU time (user + system) of each run too, through GNU time where there is one: on a machine shared
// with other work, wall time measures the neighbours as much as the command.
const gnuTime = existsSync('/usr/bin/time') && spawnSync('/usr/bin/time', ['-f', '%U', 'true']).status === 0;
const times = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
const cpu = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
for (let i = 0; i < runs; i += 1) {
  for (const [name, [args, cwd]] of Object.entries(commands)) {
    const start = process.hrtime.bigint();
    const result = gnuTime
      ? spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' })
      : spawnSync(process.execPath, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    times[name].push(Number(process.hrtime.bigint() - start) / 1e6);
    if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`);
    const used = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(result.stderr);
    if (used) cpu[name].push((Number(used[1]) + Number(used[2])) * 1000);
  }
}
rmSync(big, { recursive: true, force: true });
rmSync(example, { recursive: true, force: true });

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const render = median(times['render --json (100 models)']);
const renderCpu = gnuTime ? median(cpu['render --json (100 models)']) : 0;
console.log(`median of ${runs} runs, whole process, node ${process.version}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${availableParallelism()} cores`);
for (const name of Object.keys(commands)) {
  const ms = median(times[name]);
  const cpuText = gnuTime ? `   cpu ${median(cpu[name]).toFixed(0).padStart(6)} ms  ${(median(cpu[name]) / renderCpu).toFixed(2)}× render` : '';
  console.log(`${name.padEnd(48)} wall ${ms.toFixed(0).padStart(6)} ms  ${(ms / render).toFixed(2)}× render${cpuText}`);
}
