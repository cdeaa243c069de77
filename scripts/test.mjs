#!/usr/bin/env node
// Runs every project's tests through Nx, then prints one total over all of them.
// CI reads only the last line: "N passed, N failed". The exit code is non-zero when any
// test failed, any test file failed to load, or a project produced no report at all.
import { spawnSync } from 'node:child_process';
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

// The control-plane tests need etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
// kwok, built from Go modules once and cached outside the work tree (tools/test-cluster/build.mjs).
// Build them here, once, before the projects' tests start in parallel.
const built = spawnSync(process.execPath, [join(root, 'tools', 'test-cluster', 'build.mjs')], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
if (built.status !== 0) {
  console.log('the test control plane could not be built (see above): its tests will fail');
}

// The plugin's SDK test needs Pulumi's code generators (tools/pulumi-sdkgen), a Python venv with the
// Pulumi SDK and the Pulumi Go SDK's modules, fetched once and cached outside the work tree.
const sdkgen = spawnSync(process.execPath, [join(root, 'tools', 'pulumi-sdkgen', 'build.mjs')], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
if (sdkgen.status !== 0) {
  console.log('the SDK generator or its Python/Go environments could not be prepared (see above): the plugin SDK test will fail');
}

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
