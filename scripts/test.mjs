#!/usr/bin/env node
// Runs every project's tests through Nx, then prints one total over all of them.
// CI reads only the last line: "N passed, N failed". The exit code is non-zero when any
// test failed, any test file failed to load, or a project produced no report at all.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const reports = join(root, '.reports', 'vitest');
const env = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false', NX_SKIP_NX_CACHE: 'true' };
const nx = join(root, 'node_modules', '.bin', 'nx');

rmSync(reports, { recursive: true, force: true });

const listed = spawnSync(nx, ['show', 'projects', '--with-target', 'test', '--json'], { cwd: root, env, encoding: 'utf8' });
if (listed.status !== 0) {
  process.stderr.write(listed.stderr);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
const projects = JSON.parse(listed.stdout).sort();

// What the tests run besides Node, built from Go modules once and cached outside the work tree,
// before the projects' tests start in parallel. The builds run side by side (each caches its own
// folder under ~/.cache/app-serving/ and takes a lock, so a test that needs one waits for it):
//   tools/test-cluster/build.mjs   etcd, kube-apiserver, controller-manager, scheduler, kwok
//   tools/test-cluster/helm.mjs    Helm v4 (the tests that render the published charts)
//   tools/pulumi/build.mjs cli     the Pulumi CLI, then (same Go module: one build of pkg/v3) the
//                      … sdk      code generators, a Python venv and the Go SDK's modules
//   tools/pulumi/build.mjs provider  the Kubernetes provider (the deploy tests)
const builds = [
  { what: 'the test control plane', argv: [['tools/test-cluster/build.mjs']] },
  { what: 'Helm', argv: [['tools/test-cluster/helm.mjs']] },
  { what: 'the Pulumi CLI and code generators', argv: [['tools/pulumi/build.mjs', 'cli'], ['tools/pulumi/build.mjs', 'sdk']] },
  { what: 'the Kubernetes provider', argv: [['tools/pulumi/build.mjs', 'provider']] },
];
const started = Date.now();
const failedBuilds = (
  await Promise.all(
    builds.map(async ({ what, argv }) => {
      for (const args of argv) {
        const code = await new Promise((resolve) => {
          const child = spawn(process.execPath, args.map((a, i) => (i === 0 ? join(root, a) : a)), { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
          child.on('error', () => resolve(1));
          child.on('close', (status) => resolve(status));
        });
        if (code !== 0) return what;
      }
      return null;
    }),
  )
).filter(Boolean);
for (const what of failedBuilds) console.log(`${what} could not be built (see above): the tests that need it will fail`);
if (Date.now() - started > 60_000) console.log(`tools built in ${Math.round((Date.now() - started) / 1000)} s`);

const run = spawnSync(nx, ['run-many', '-t', 'test', '--outputStyle=static', ...process.argv.slice(2)], {
  cwd: root,
  env,
  stdio: 'inherit',
});

let passed = 0;
let failed = 0;
const problems = [];
for (const project of projects) {
  const file = join(reports, `${project.replace(/^@app-serving\//, '').replace(/[/@]/g, '-')}.json`);
  if (!existsSync(file)) {
    failed += 1;
    problems.push(`${project}: no test report (the test run did not complete)`);
    continue;
  }
  const report = JSON.parse(readFileSync(file, 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  // A test file that fails to load, or whose beforeAll fails (its tests are then reported as
  // skipped), has no failed test in it, but it is a failure all the same.
  for (const suite of report.testResults) {
    if (suite.status === 'failed' && !suite.assertionResults.some((test) => test.status === 'failed')) {
      failed += 1;
      problems.push(`${project}: ${suite.name} failed to run: ${String(suite.message).split('\n')[0]}`);
    }
  }
}
for (const problem of problems) console.log(problem);
console.log(`${passed} passed, ${failed} failed`);
process.exit(run.status === 0 && failed === 0 ? 0 : 1);
