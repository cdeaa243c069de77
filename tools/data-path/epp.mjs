#!/usr/bin/env node
// Builds the Gateway API Inference Extension's endpoint picker (`epp`, cmd/epp) and body-based router
// (`bbr`, cmd/bbr) of sigs.k8s.io/gateway-api-inference-extension (no replace directives: `go
// install` builds them by version, both in one run) once, into a cache outside the work tree, for
// the data-path tests: Envoy calls the EPP over ext_proc (gRPC :9002) and it picks a model server
// pod from each pod's /metrics. GAIE_VERSION is the last release with cmd/epp: from v1.6 the EPP
// lives in the llm-d Router (not served by the module proxy here) and GAIE keeps only cmd/lwepp.
//
//   node tools/data-path/epp.mjs          build if needed, print the bin folder (epp, bbr)
//
// Needs Go (>= 1.26) and the Go module proxy; APP_SERVING_GAIE_BIN names a folder with prebuilt
// `epp` and `bbr` instead.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { goFlags } from '../test-cluster/go-flags.mjs';
import { once } from '../test-cluster/lock.mjs';
import { cacheRoot, hashOf, run, secondsSince, stderrLog } from './cache.mjs';

/** The GAIE release built. */
export const GAIE_VERSION = 'v1.5.0';
const MODULE = 'sigs.k8s.io/gateway-api-inference-extension';

/** The commands built, each `cmd/<name>` of the module. */
export const GAIE_COMMANDS = ['epp', 'bbr'];

/** `<cache>/gaie-<version>-<hash of this script>/bin` (holding `epp` and `bbr`). */
export function gaieBinDir(env = process.env) {
  return join(cacheRoot(env), `gaie-${GAIE_VERSION}-${hashOf([GAIE_VERSION, goFlags()], ['epp.mjs', 'cache.mjs'])}`, 'bin');
}

function complete(dir) {
  return GAIE_COMMANDS.every((c) => existsSync(join(dir, c)));
}

/** Returns the paths of `epp` and `bbr`, building them first if needed. Throws with the fix. */
export function ensureEpp({ env = process.env, log = stderrLog } = {}) {
  const given = env.APP_SERVING_GAIE_BIN;
  if (given) {
    if (!complete(given)) throw new Error(`APP_SERVING_GAIE_BIN=${given} lacks ${GAIE_COMMANDS.join(' or ')} (GAIE ${GAIE_VERSION}'s cmd/epp and cmd/bbr)`);
    return { epp: join(given, 'epp'), bbr: join(given, 'bbr') };
  }
  const dir = gaieBinDir(env);
  const folder = dirname(dir);
  once(folder, () => complete(dir), () => {
    if (spawnSync('go', ['version'], { env }).status !== 0) {
      throw new Error(`building the GAIE endpoint picker needs Go (>= 1.26) on the PATH and the Go module proxy, or set APP_SERVING_GAIE_BIN to a folder with GAIE ${GAIE_VERSION}'s epp and bbr`);
    }
    const started = Date.now();
    log(`data-path: building the GAIE ${GAIE_VERSION} endpoint picker and body-based router into ${folder} …`);
    const staging = `${folder}.partial`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(join(staging, 'bin'), { recursive: true });
    // As GAIE's Dockerfile and bbr.Dockerfile build them (CGO_ENABLED=0, the version variables).
    const stamp = `-X ${MODULE}/version.CommitSHA=${GAIE_VERSION} -X ${MODULE}/version.BuildRef=${GAIE_VERSION}`;
    run('go', ['install', `-ldflags=-s -w ${stamp}`, ...GAIE_COMMANDS.map((c) => `${MODULE}/cmd/${c}@${GAIE_VERSION}`)], {
      cwd: staging,
      env: { ...env, GOBIN: join(staging, 'bin'), GOFLAGS: goFlags(), CGO_ENABLED: '0' },
    });
    writeFileSync(join(staging, 'versions.json'), `${JSON.stringify({ gaie: GAIE_VERSION, commands: GAIE_COMMANDS, builtIn: `${secondsSince(started)}s` }, null, 2)}\n`);
    rmSync(folder, { recursive: true, force: true });
    renameSync(staging, folder);
    log(`data-path: the endpoint picker built in ${secondsSince(started)} s`);
  });
  return { epp: join(dir, 'epp'), bbr: join(dir, 'bbr') };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(dirname(ensureEpp().epp));
  } catch (error) {
    console.error(`data-path: ${error.message}`);
    process.exit(1);
  }
}
