#!/usr/bin/env node
// Builds the Envoy Gateway controller (github.com/envoyproxy/gateway/cmd/envoy-gateway, no replace
// directives: `go install` builds it by version) once, into a cache outside the work tree, for the
// data-path tests that let the real controller program a real Envoy from the objects we deploy.
// Its commands: `server` (the controller), `certgen` (the xDS certificates), `envoy` (the proxy's
// shutdown manager), `version`.
//
//   node tools/data-path/envoy-gateway.mjs          build if needed, print the binary's path
//
// Needs Go (>= 1.26) and the Go module proxy; APP_SERVING_ENVOY_GATEWAY names a prebuilt binary instead.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { goFlags } from '../test-cluster/go-flags.mjs';
import { once } from '../test-cluster/lock.mjs';
import { cacheRoot, hashOf, run, secondsSince, stderrLog } from './cache.mjs';

/**
 * The Envoy Gateway release built: the 2026-08 set's (`current/crds` of the upstream data). Its
 * `version` names the Envoy it runs, `distroless-v1.38.1` (envoy.mjs installs 1.38.3, the match
 * PyPI serves).
 */
export const ENVOY_GATEWAY_VERSION = 'v1.8.1';
const MODULE = 'github.com/envoyproxy/gateway';

/** `<cache>/envoy-gateway-<version>-<hash of this script>/bin/envoy-gateway`. */
export function envoyGatewayPath(env = process.env) {
  return join(cacheRoot(env), `envoy-gateway-${ENVOY_GATEWAY_VERSION}-${hashOf([ENVOY_GATEWAY_VERSION, goFlags()], ['envoy-gateway.mjs', 'cache.mjs'])}`, 'bin', 'envoy-gateway');
}

/** Returns the path of the envoy-gateway binary, building it first if needed. Throws with the fix. */
export function ensureEnvoyGateway({ env = process.env, log = stderrLog } = {}) {
  if (env.APP_SERVING_ENVOY_GATEWAY) {
    if (!existsSync(env.APP_SERVING_ENVOY_GATEWAY)) throw new Error(`APP_SERVING_ENVOY_GATEWAY=${env.APP_SERVING_ENVOY_GATEWAY} does not exist`);
    return env.APP_SERVING_ENVOY_GATEWAY;
  }
  const bin = envoyGatewayPath(env);
  const folder = dirname(dirname(bin));
  once(folder, () => existsSync(bin), () => {
    if (spawnSync('go', ['version'], { env }).status !== 0) {
      throw new Error(`building Envoy Gateway needs Go (>= 1.26) on the PATH and the Go module proxy, or set APP_SERVING_ENVOY_GATEWAY to an envoy-gateway ${ENVOY_GATEWAY_VERSION} binary`);
    }
    const started = Date.now();
    log(`data-path: building Envoy Gateway ${ENVOY_GATEWAY_VERSION} into ${folder} …`);
    const staging = `${folder}.partial`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(join(staging, 'bin'), { recursive: true });
    // What `envoy-gateway version` prints; its release build stamps the same variables.
    const stamp = `-X ${MODULE}/internal/cmd/version.envoyGatewayVersion=${ENVOY_GATEWAY_VERSION} -X ${MODULE}/internal/cmd/version.gitCommitID=${ENVOY_GATEWAY_VERSION}`;
    run('go', ['install', `-ldflags=-s -w ${stamp}`, `${MODULE}/cmd/envoy-gateway@${ENVOY_GATEWAY_VERSION}`], {
      cwd: staging,
      env: { ...env, GOBIN: join(staging, 'bin'), GOFLAGS: goFlags(), CGO_ENABLED: '0' },
    });
    writeFileSync(join(staging, 'versions.json'), `${JSON.stringify({ envoyGateway: ENVOY_GATEWAY_VERSION, builtIn: `${secondsSince(started)}s` }, null, 2)}\n`);
    rmSync(folder, { recursive: true, force: true });
    renameSync(staging, folder);
    log(`data-path: Envoy Gateway built in ${secondsSince(started)} s`);
  });
  return bin;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(ensureEnvoyGateway());
  } catch (error) {
    console.error(`data-path: ${error.message}`);
    process.exit(1);
  }
}
