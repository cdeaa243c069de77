#!/usr/bin/env node
// Builds Pulumi's engine and code generators from Go modules, once per version, into a cache outside
// the work tree, so that the tests themselves never reach the network:
//   pulumi                      the Pulumi CLI (github.com/pulumi/pulumi/pkg/v3/cmd/pulumi at
//                               PKG_VERSION): the engine the deploy tests run through the
//                               Automation API. Same Go module as the generators: one build of pkg/v3.
//   pulumi-resource-kubernetes  the Kubernetes provider (KUBERNETES_PROVIDER: the commit the module
//                               proxy serves, see there), found by the engine on the PATH
//   pulumi-sdkgen               this folder's Go program: Pulumi's own Python and Go code generators
//   a Python venv               with the Pulumi Python SDK (PYTHON_PULUMI) from PyPI, to run the generated SDK
//   Go modules                  of github.com/pulumi/pulumi/sdk/v3, which the generated Go SDK and the
//                               test's Go program (packages/pulumi-plugin/test/sdk-consumers/go)
//                               need, fetched into the module cache by vetting and compiling it once
// Each cache folder's name is a hash of what decides its content, so a version bump builds anew.
//
//   node tools/pulumi/build.mjs [engine|sdk|all]   prepare what is asked (default: all), print the paths
//
// Needs Go (>= 1.26), python3 with venv, the Go module proxy and PyPI. Several test processes may
// call it at once: one prepares each thing (under a lock folder), the others wait for it.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { goFlags } from '../test-cluster/go-flags.mjs';
import { once } from '../test-cluster/lock.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** The Pulumi code generators' version (go.mod's `require github.com/pulumi/pulumi/pkg/v3`). */
export function pkgVersion() {
  const match = /^\s*(?:require\s+)?github\.com\/pulumi\/pulumi\/pkg\/v3 (v\S+)$/m.exec(readFileSync(join(here, 'go.mod'), 'utf8'));
  if (!match) throw new Error('tools/pulumi/go.mod: no requirement "github.com/pulumi/pulumi/pkg/v3 vX.Y.Z"');
  return match[1];
}

/**
 * The Pulumi Python SDK the generated Python SDK runs on: the release nearest the generators'
 * v3.276.0 that PyPI serves here (the generated setup.py asks for pulumi>=3.269.0,<4).
 */
export const PYTHON_PULUMI = '3.272.0';

/** `$APP_SERVING_PULUMI_CACHE`, else `$XDG_CACHE_HOME/app-serving/pulumi`, else `~/.cache/...`. */
export function cacheRoot(env = process.env) {
  if (env.APP_SERVING_PULUMI_CACHE) return env.APP_SERVING_PULUMI_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'app-serving', 'pulumi');
}

function hashOf(...parts) {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex').slice(0, 12);
}

/** `<cache>/generator-<pkg version>-<hash of build.mjs, go.mod, go.sum, main.go>/pulumi-sdkgen`. */
export function generatorPath(env = process.env) {
  const hash = hashOf(goFlags(), ...['build.mjs', 'go.mod', 'go.sum', 'main.go'].map((f) => readFileSync(join(here, f))));
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

/** The Go environment for building and for the module downloads (`-mod=mod`: go.sum is written as needed). */
export function goEnv(env = process.env) {
  return { ...env, GOFLAGS: goFlags('-mod=mod') };
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
    log(`pulumi: building Pulumi's code generators ${pkgVersion()} into ${dirname(bin)} …`);
    const staging = `${dirname(bin)}.partial`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    run('go', ['build', '-ldflags=-s -w', '-o', join(staging, 'pulumi-sdkgen'), '.'], { cwd: here, env: goEnv(env) });
    rmSync(dirname(bin), { recursive: true, force: true });
    renameSync(staging, dirname(bin));
    log(`pulumi: pulumi-sdkgen built in ${Math.round((Date.now() - started) / 1000)} s`);
  });
  return bin;
}

/**
 * The Kubernetes provider the deploy tests run. `@pulumi/kubernetes` 4.34.2 (the SDK the components
 * use) asks the engine for provider v4.34.2, but the Go module proxy serves
 * github.com/pulumi/pulumi-kubernetes/provider/v4 at one commit only: f47bc2d6 of 2026-01-15, just
 * after v4.24.0 (every other version and commit tried answers 403). That is what is built, stamped
 * with the version pulumi-kubernetes' own build gives such a commit (`<next patch>-alpha.<unix
 * time>+<commit>`). The engine warns that it expected >= 4.34.2 and goes on (a test holds that).
 *
 * Its go.mod replaces `sdk/v4` with `../sdk` (a folder of the repository, absent from the module):
 * the build drops that replace and takes the `sdk/v4` version the go.mod requires from the proxy.
 * Its main package embeds `schema-embed.json` and `terraform-mapping-embed.json`, which its
 * `go generate` makes from `schema.json` and `terraform-mapping.json` by stamping the version into
 * the schema and compacting both: done here in a few lines instead of a Go run.
 */
export const KUBERNETES_PROVIDER = {
  module: 'github.com/pulumi/pulumi-kubernetes/provider/v4',
  version: 'v4.0.0-20260115033456-f47bc2d6f199',
  pluginVersion: '4.24.1-alpha.1768448096+f47bc2d6',
};

/** The `PKG_VERSION` CLI: `<cache>/cli-<version>-<hash of go.mod, go.sum, build.mjs>/bin/pulumi`. */
export function pulumiCliPath(env = process.env) {
  const hash = hashOf(goFlags(), ...['build.mjs', 'go.mod', 'go.sum'].map((f) => readFileSync(join(here, f))));
  return join(cacheRoot(env), `cli-${pkgVersion()}-${hash}`, 'bin', 'pulumi');
}

/** `<cache>/provider-kubernetes-<plugin version>-<hash>/bin/pulumi-resource-kubernetes`. */
export function kubernetesProviderPath(env = process.env) {
  const hash = hashOf(goFlags(), JSON.stringify(KUBERNETES_PROVIDER), readFileSync(join(here, 'build.mjs')));
  return join(cacheRoot(env), `provider-kubernetes-${KUBERNETES_PROVIDER.pluginVersion.replace(/\+/g, '_')}-${hash}`, 'bin', 'pulumi-resource-kubernetes');
}

/** Builds `bin` (a file in `<folder>/bin/`) by `make(stagingBin)` under a lock, into a fresh folder swapped in whole. */
function buildInto(bin, what, make, env) {
  const folder = dirname(dirname(bin));
  once(folder, () => existsSync(bin), () => {
    if (spawnSync('go', ['version'], { env }).status !== 0) throw new Error(`${what} needs Go (>= 1.26) on the PATH`);
    const started = Date.now();
    log(`pulumi: building ${what} into ${folder} …`);
    const staging = `${folder}.partial`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(join(staging, 'bin'), { recursive: true });
    make(join(staging, 'bin'), staging);
    writeFileSync(join(staging, 'built.json'), `${JSON.stringify({ what, builtIn: `${Math.round((Date.now() - started) / 1000)}s` })}\n`);
    rmSync(folder, { recursive: true, force: true });
    renameSync(staging, folder);
    log(`pulumi: ${what} built in ${Math.round((Date.now() - started) / 1000)} s`);
  });
  return bin;
}

/** Builds the Pulumi CLI if needed; returns its path. */
export function ensurePulumiCli({ env = process.env } = {}) {
  if (env.APP_SERVING_PULUMI_BIN) return join(env.APP_SERVING_PULUMI_BIN, 'pulumi');
  return buildInto(pulumiCliPath(env), `the Pulumi CLI ${pkgVersion()}`, (out) => {
    const stamp = `-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=${pkgVersion()}`;
    run('go', ['build', `-ldflags=-s -w ${stamp}`, '-o', join(out, 'pulumi'), 'github.com/pulumi/pulumi/pkg/v3/cmd/pulumi'], { cwd: here, env: goEnv(env) });
  }, env);
}

/** Builds the Kubernetes provider if needed; returns its path. */
export function ensureKubernetesProvider({ env = process.env } = {}) {
  if (env.APP_SERVING_PULUMI_BIN) return join(env.APP_SERVING_PULUMI_BIN, 'pulumi-resource-kubernetes');
  const { module, version, pluginVersion } = KUBERNETES_PROVIDER;
  return buildInto(kubernetesProviderPath(env), `the Kubernetes provider ${pluginVersion}`, (out, staging) => {
    const download = spawnSync('go', ['mod', 'download', '-json', `${module}@${version}`], { cwd: staging, env: goEnv(env), encoding: 'utf8' });
    if (download.status !== 0) throw new Error(`go mod download ${module}@${version}: ${download.stderr || download.stdout}`);
    const source = join(staging, 'provider');
    cpSync(JSON.parse(download.stdout).Dir, source, { recursive: true });
    run('chmod', ['-R', 'u+w', source], {});
    run('go', ['mod', 'edit', '-dropreplace=github.com/pulumi/pulumi-kubernetes/sdk/v4'], { cwd: source, env: goEnv(env) });
    const cmd = join(source, 'cmd', 'pulumi-resource-kubernetes');
    const schema = JSON.parse(readFileSync(join(cmd, 'schema.json'), 'utf8'));
    schema.version = pluginVersion;
    writeFileSync(join(cmd, 'schema-embed.json'), JSON.stringify(schema));
    writeFileSync(join(cmd, 'terraform-mapping-embed.json'), JSON.stringify(JSON.parse(readFileSync(join(cmd, 'terraform-mapping.json'), 'utf8'))));
    const stamp = `-X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=${pluginVersion}`;
    run('go', ['build', `-ldflags=-s -w ${stamp}`, '-o', join(out, 'pulumi-resource-kubernetes'), './cmd/pulumi-resource-kubernetes'], {
      cwd: source,
      env: { ...goEnv(env), CGO_ENABLED: '0' },
    });
    rmSync(source, { recursive: true, force: true });
  }, env);
}

/** The Pulumi engine of the deploy tests: the CLI and the Kubernetes provider (built if needed). */
export function ensureEngine({ env = process.env } = {}) {
  return { pulumi: ensurePulumiCli({ env }), kubernetesProvider: ensureKubernetesProvider({ env }) };
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
  const what = process.argv[2] ?? 'all';
  try {
    if (!['engine', 'cli', 'provider', 'sdk', 'all'].includes(what)) throw new Error(`unknown target ${what}: engine, cli, provider, sdk or all`);
    if (what === 'cli' || what === 'engine' || what === 'all') console.log(ensurePulumiCli());
    if (what === 'provider' || what === 'engine' || what === 'all') console.log(ensureKubernetesProvider());
    if (what === 'sdk' || what === 'all') console.log(prepare().generator);
  } catch (error) {
    console.error(`pulumi: ${error.message}`);
    process.exit(1);
  }
}
