#!/usr/bin/env node
// Builds KEDA's operator and metrics server (the adapter) from their Go module
// (github.com/kedacore/keda/v2, served by the Go module proxy at KEDA_VERSION), once, into the cache
// the control plane uses, for the tests that scale model servers with a real KEDA and the real HPA
// controller. KEDA's go.mod has replace directives, so `go install pkg@version` refuses it: the
// module is downloaded (`go mod download`, checked against the checksum database) and built as the
// main module, with its own go.mod and go.sum. Its CRDs (config/crd/bases, all six: the operator
// watches ScaledJobs and CloudEventSources too) are copied beside the commands.
//
//   node tools/test-cluster/keda.mjs          build if needed, print the folder (bin/, crds/)
//
// Needs Go (>= 1.26) and the Go module proxy; APP_SERVING_KEDA names a prebuilt folder instead.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot } from './build.mjs';
import { goFlags } from './go-flags.mjs';
import { once } from './lock.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** The KEDA release built (the version of its CRDs in ../shared/upstream/current/crds). */
export const KEDA_VERSION = 'v2.20.2';
const MODULE = 'github.com/kedacore/keda/v2';

/** The commands built: `keda-operator` (cmd/operator) and `keda-adapter` (cmd/adapter, the metrics server). */
export const KEDA_COMMANDS = ['keda-operator', 'keda-adapter'];

/** `<cache>/keda-<version>-<hash of this script>`: `bin/keda-operator`, `bin/keda-adapter`, `crds/*.yaml`. */
export function kedaPath(env = process.env) {
  const hash = createHash('sha256').update(KEDA_VERSION).update(goFlags()).update(readFileSync(join(here, 'keda.mjs'))).digest('hex').slice(0, 12);
  return join(cacheRoot(env), `keda-${KEDA_VERSION}-${hash}`);
}

function complete(folder) {
  return KEDA_COMMANDS.every((c) => existsSync(join(folder, 'bin', c))) && existsSync(join(folder, 'crds'));
}

/** Returns the folder holding `bin/` and `crds/`, building it first if needed. Throws with the fix. */
export function ensureKeda({ env = process.env, log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  if (env.APP_SERVING_KEDA) {
    if (!complete(env.APP_SERVING_KEDA)) throw new Error(`APP_SERVING_KEDA=${env.APP_SERVING_KEDA} lacks bin/${KEDA_COMMANDS.join(', bin/')} or crds/`);
    return env.APP_SERVING_KEDA;
  }
  const folder = kedaPath(env);
  once(folder, () => complete(folder), () => {
    if (spawnSync('go', ['version'], { env }).status !== 0) throw new Error('building KEDA needs Go (>= 1.26) on the PATH, or set APP_SERVING_KEDA to a folder with bin/keda-operator, bin/keda-adapter and crds/');
    const started = Date.now();
    log(`test-cluster: building KEDA ${KEDA_VERSION} (operator, metrics server) into ${folder} …`);
    const goEnv = { ...env, GOFLAGS: goFlags('-mod=readonly'), CGO_ENABLED: '0' };
    const download = spawnSync('go', ['mod', 'download', '-json', `${MODULE}@${KEDA_VERSION}`], { env: goEnv, encoding: 'utf8', cwd: dirname(folder), maxBuffer: 16 * 1024 * 1024 });
    if (download.status !== 0) throw new Error(`go mod download ${MODULE}@${KEDA_VERSION} exited with ${download.status ?? download.signal}: ${download.stderr || download.stdout}`);
    const source = JSON.parse(download.stdout).Dir;
    if (!source || !existsSync(join(source, 'go.mod'))) throw new Error(`go mod download ${MODULE}@${KEDA_VERSION} gave no source folder`);
    const staging = `${folder}.partial`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(join(staging, 'bin'), { recursive: true });
    const stamp = `-X ${MODULE}/version.Version=${KEDA_VERSION.slice(1)} -X ${MODULE}/version.GitCommit=${KEDA_VERSION}`;
    for (const [command, pkg] of [['keda-operator', './cmd/operator'], ['keda-adapter', './cmd/adapter']]) {
      const result = spawnSync('go', ['build', `-ldflags=-s -w ${stamp}`, '-o', join(staging, 'bin', command), pkg], { cwd: source, env: goEnv, stdio: ['ignore', 'inherit', 'inherit'] });
      if (result.status !== 0) throw new Error(`go build ${pkg} (${MODULE}@${KEDA_VERSION}) exited with ${result.status ?? result.signal}`);
    }
    mkdirSync(join(staging, 'crds'));
    const bases = join(source, 'config', 'crd', 'bases');
    for (const file of readdirSync(bases).filter((f) => f.endsWith('.yaml'))) copyFileSync(join(bases, file), join(staging, 'crds', file));
    writeFileSync(join(staging, 'versions.json'), `${JSON.stringify({ keda: KEDA_VERSION, builtIn: `${Math.round((Date.now() - started) / 1000)}s` }, null, 2)}\n`);
    rmSync(folder, { recursive: true, force: true });
    renameSync(staging, folder);
    log(`test-cluster: KEDA built in ${Math.round((Date.now() - started) / 1000)} s`);
  });
  return folder;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(ensureKeda());
  } catch (error) {
    console.error(`test-cluster: ${error.message}`);
    process.exit(1);
  }
}
