#!/usr/bin/env node
// Prepares what the plugin's SDK test (packages/pulumi-plugin/test/sdks.test.ts) needs, once, into a
// cache outside the work tree, so that the test itself never reaches the network:
//   pulumi-sdkgen      this folder's Go program: Pulumi's own Python and Go code generators
//                      (github.com/pulumi/pulumi/pkg/v3 PKG_VERSION), built from Go modules
//   a Python venv      with the Pulumi Python SDK (PYTHON_PULUMI) from PyPI, to run the generated SDK
//   Go modules         of github.com/pulumi/pulumi/sdk/v3, which the generated Go SDK and the test's
//                      Go program (packages/pulumi-plugin/test/sdk-consumers/go) need, fetched into
//                      the module cache by vetting and compiling that program once
// Each cache folder's name is a hash of what decides its content, so a version bump builds anew.
//
//   node tools/pulumi-sdkgen/build.mjs       prepare all three if needed, print the generator's path
//
// Needs Go (>= 1.26), python3 with venv, the Go module proxy and PyPI. Several test processes may
// call it at once: one prepares (under a lock folder), the others wait for it.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** The Pulumi code generators' version (go.mod's `require github.com/pulumi/pulumi/pkg/v3`). */
export function pkgVersion() {
  const match = /^\s*(?:require\s+)?github\.com\/pulumi\/pulumi\/pkg\/v3 (v\S+)$/m.exec(readFileSync(join(here, 'go.mod'), 'utf8'));
  if (!match) throw new Error('tools/pulumi-sdkgen/go.mod: no requirement "github.com/pulumi/pulumi/pkg/v3 vX.Y.Z"');
  return match[1];
}

/**
 * The Pulumi Python SDK the generated Python SDK runs on: the release nearest the generators'
 * v3.276.0 that PyPI serves here (the generated setup.py asks for pulumi>=3.269.0,<4).
 */
export const PYTHON_PULUMI = '3.272.0';

/** `$APP_SERVING_SDKGEN_CACHE`, else `$XDG_CACHE_HOME/app-serving/pulumi-sdkgen`, else `~/.cache/...`. */
export function cacheRoot(env = process.env) {
  if (env.APP_SERVING_SDKGEN_CACHE) return env.APP_SERVING_SDKGEN_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'app-serving', 'pulumi-sdkgen');
}

function hashOf(...parts) {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex').slice(0, 12);
}

/** `<cache>/generator-<pkg version>-<hash of build.mjs, go.mod, go.sum, main.go>/pulumi-sdkgen`. */
export function generatorPath(env = process.env) {
  const hash = hashOf(...['build.mjs', 'go.mod', 'go.sum', 'main.go'].map((f) => readFileSync(join(here, f))));
  return join(cacheRoot(env), `generator-${pkgVersion()}-${hash}`, 'pulumi-sdkgen');
}

/** `<cache>/python-<pulumi version>-<hash>/venv`: a venv with the Pulumi Python SDK (and wheel, to install a setup.py SDK). */
export function pythonVenv(env = process.env) {
  return join(cacheRoot(env), `python-${PYTHON_PULUMI}-${hashOf(PYTHON_PULUMI, readFileSync(join(here, 'build.mjs')))}`, 'venv');
}

/** The Go program the SDK test compiles against the generated Go SDK (go.mod, main.go, main_test.go). */
export const GO_CONSUMER = join(here, '..', '..', 'packages', 'pulumi-plugin', 'test', 'sdk-consumers', 'go');

/** `<cache>/go-modules-<hash>`: a marker that the consumer's module graph is in the Go module cache. */
function goModulesMarker(env) {
  return join(cacheRoot(env), `go-modules-${hashOf(readFileSync(join(GO_CONSUMER, 'go.mod')), readFileSync(join(here, 'go.mod')))}`);
}

function run(command, args, options) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
  if (result.error) throw new Error(`${command} ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status}`);
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Runs `make` under `<target>.lock` unless `done()`; a lock older than 20 minutes is a crashed builder's. */
function once(target, done, make) {
  if (done()) return;
  mkdirSync(dirname(target), { recursive: true });
  const lock = `${target}.lock`;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (done()) return;
      try {
        if (Date.now() - statSync(lock).mtimeMs > 20 * 60_000) rmSync(lock, { recursive: true, force: true });
      } catch {}
      sleep(1000);
    }
  }
  try {
    if (!done()) make();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** The Go environment for building and for the module downloads (`-mod=mod`: go.sum is written as needed). */
export function goEnv(env = process.env) {
  return { ...env, GOFLAGS: '-mod=mod -buildvcs=false -trimpath' };
}

/**
 * The Go environment of the SDK test: modules only from the cache this script filled (no proxy,
 * no checksum database; both were consulted when the modules were downloaded).
 */
export function offlineGoEnv(env = process.env) {
  return { ...goEnv(env), GOPROXY: 'off', GOSUMDB: 'off' };
}

/**
 * Lays out the Go consumer in `dir` against the generated Go SDK in `goSdk`: the consumer's files,
 * with the SDK module replaced by that folder.
 */
export function layOutGoConsumer(dir, goSdk) {
  cpSync(GO_CONSUMER, dir, { recursive: true });
  run('go', ['mod', 'edit', `-replace=github.com/app-serving/pulumi-app-serving/sdk/go=${goSdk}`], { cwd: dir, env: goEnv() });
}

/** Generates the Python and Go SDKs of `schema` into `<out>/python` and `<out>/go`. */
export function generateSdks(generator, schema, out) {
  run(generator, [schema, out], {});
}

const log = (line) => process.stderr.write(`${line}\n`);

/** Builds pulumi-sdkgen if needed; returns its path. */
export function ensureGenerator({ env = process.env } = {}) {
  const bin = generatorPath(env);
  once(dirname(bin), () => existsSync(bin), () => {
    if (spawnSync('go', ['version'], { env }).status !== 0) throw new Error('pulumi-sdkgen needs Go (>= 1.26) on the PATH');
    const started = Date.now();
    log(`pulumi-sdkgen: building Pulumi's code generators ${pkgVersion()} into ${dirname(bin)} …`);
    const staging = `${dirname(bin)}.partial`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    run('go', ['build', '-ldflags=-s -w', '-o', join(staging, 'pulumi-sdkgen'), '.'], { cwd: here, env: goEnv(env) });
    rmSync(dirname(bin), { recursive: true, force: true });
    renameSync(staging, dirname(bin));
    log(`pulumi-sdkgen: built in ${Math.round((Date.now() - started) / 1000)} s`);
  });
  return bin;
}

/** Creates the Python venv with the Pulumi SDK if needed; returns the venv's python. */
export function ensurePythonVenv({ env = process.env } = {}) {
  const venv = pythonVenv(env);
  const python = join(venv, 'bin', 'python');
  once(dirname(venv), () => existsSync(join(dirname(venv), 'ready')), () => {
    const started = Date.now();
    log(`pulumi-sdkgen: a Python venv with pulumi==${PYTHON_PULUMI} in ${venv} …`);
    rmSync(dirname(venv), { recursive: true, force: true });
    run('python3', ['-m', 'venv', venv], { env });
    run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `pulumi==${PYTHON_PULUMI}`, 'wheel', 'setuptools'], { env });
    writeFileSync(join(dirname(venv), 'ready'), `${JSON.stringify({ pulumi: PYTHON_PULUMI, builtIn: `${Math.round((Date.now() - started) / 1000)}s` })}\n`);
    log(`pulumi-sdkgen: venv ready in ${Math.round((Date.now() - started) / 1000)} s`);
  });
  return python;
}

/**
 * Downloads the Go consumer's module graph (the Pulumi Go SDK and its dependencies) into the module
 * cache if needed, by generating the SDK from the plugin's schema and resolving the consumer against it.
 */
export function ensureGoModules({ env = process.env, generator = ensureGenerator({ env }) } = {}) {
  const marker = goModulesMarker(env);
  once(marker, () => existsSync(marker), () => {
    const started = Date.now();
    log('pulumi-sdkgen: downloading the Pulumi Go SDK modules …');
    const tmp = mkdtempSync(join(tmpdir(), 'sdkgen-warm-'));
    try {
      generateSdks(generator, join(here, '..', '..', 'packages', 'pulumi-plugin', 'schema.json'), join(tmp, 'sdk'));
      layOutGoConsumer(join(tmp, 'consumer'), join(tmp, 'sdk', 'go'));
      // What the test runs offline, run here online: the modules it needs land in the module
      // cache, and the Pulumi Go SDK's packages in the build cache.
      run('go', ['vet', './...'], { cwd: join(tmp, 'consumer'), env: goEnv(env) });
      run('go', ['test', '-count=1', '-run', '^$', './...'], { cwd: join(tmp, 'consumer'), env: goEnv(env) });
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    writeFileSync(marker, `${Math.round((Date.now() - started) / 1000)}s\n`);
    log(`pulumi-sdkgen: Go modules ready in ${Math.round((Date.now() - started) / 1000)} s`);
  });
}

/** Everything the SDK test needs; returns the generator's path and the venv's python. */
export function prepare({ env = process.env } = {}) {
  const generator = ensureGenerator({ env });
  const python = ensurePythonVenv({ env });
  ensureGoModules({ env, generator });
  return { generator, python };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(prepare().generator);
  } catch (error) {
    console.error(`pulumi-sdkgen: ${error.message}`);
    process.exit(1);
  }
}
