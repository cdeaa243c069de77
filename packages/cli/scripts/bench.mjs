#!/usr/bin/env node
// Cold-start benchmark of the built CLI (not a test: timings depend on the machine).
// Usage: npm run build && node packages/cli/scripts/bench.mjs [runs]
// Prints the median wall time of each command over `runs` runs (default 9) and its ratio to
// `node -e ''` on the same machine, for the example stack and a generated 50-model stack; then
// the time of `render --json` (Pulumi's mocks, whole process) for 1, 10 and 100 models.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedStack } from './generated-stack.mjs';

const runs = Number(process.argv[2] ?? 9);
const cliDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const repo = join(cliDir, '..', '..');
const bin = join(cliDir, 'bin', 'app-serving.js');

const big = generatedStack(50);

function median(args, cwd, count = runs) {
  const times = [];
  for (let i = 0; i < count; i += 1) {
    const start = process.hrtime.bigint();
    const result = spawnSync(process.execPath, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

const baseline = median(['-e', ''], repo);
const rows = [
  ['node -e ""', baseline],
  ['app-serving --help', median([bin, '--help'], repo)],
  ['validate (example, 2 models)', median([bin, 'validate'], repo)],
  ['plan (example, 2 models)', median([bin, 'plan'], repo)],
  ['validate (50 models)', median([bin, 'validate', '--stack', 'Pulumi.big.yaml'], big)],
  ['plan --json (50 models)', median([bin, 'plan', '--json', '--stack', 'Pulumi.big.yaml'], big)],
];
rmSync(big, { recursive: true, force: true });
console.log(`median of ${runs} runs, node ${process.version}`);
for (const [name, ms] of rows) console.log(`${name.padEnd(32)} ${ms.toFixed(0).padStart(6)} ms  ${(ms / baseline).toFixed(2)}×`);

const renderRuns = Math.max(1, Math.min(runs, 3));
console.log(`\nrender --json, whole process (median of ${renderRuns})`);
for (const count of [1, 10, 100]) {
  const dir = generatedStack(count);
  const ms = median([bin, 'render', '--json', '--stack', 'Pulumi.big.yaml'], dir, renderRuns);
  rmSync(dir, { recursive: true, force: true });
  console.log(`${`${count} model${count === 1 ? '' : 's'}`.padEnd(32)} ${ms.toFixed(0).padStart(6)} ms`);
}
