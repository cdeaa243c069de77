#!/usr/bin/env node
// Builds Helm v4 from its Go module (helm.sh/helm/v4, no replace directives: `go install` builds it
// by version), once, into the cache the control plane uses, for the tests that render the
// published charts with real Helm (`helm template`) rather than through Pulumi.
//
//   node tools/test-cluster/helm.mjs          build if needed, print the helm binary's path
//
// Needs Go (>= 1.26) and the Go module proxy; APP_SERVING_HELM names a prebuilt helm instead.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot } from './build.mjs';
import { goFlags } from './go-flags.mjs';
import { once } from './lock.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** The Helm release built (the module proxy serves helm.sh/helm/v4 v4.2 to v4.3). */
export const HELM_VERSION = 'v4.3.2';

/** `<cache>/helm-<version>-<hash of this script>/bin/helm`. */
export function helmPath(env = process.env) {
  const hash = createHash('sha256').update(HELM_VERSION).update(goFlags()).update(readFileSync(join(here, 'helm.mjs'))).digest('hex').slice(0, 12);
  return join(cacheRoot(env), `helm-${HELM_VERSION}-${hash}`, 'bin', 'helm');
}

/** Returns the path of a helm binary, building it first if needed. Throws with the fix. */
export function ensureHelm({ env = process.env, log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  if (env.APP_SERVING_HELM) {
    if (!existsSync(env.APP_SERVING_HELM)) throw new Error(`APP_SERVING_HELM=${env.APP_SERVING_HELM} does not exist`);
    return env.APP_SERVING_HELM;
  }
  const bin = helmPath(env);
  const folder = dirname(dirname(bin));
  once(folder, () => existsSync(bin), () => {
    if (spawnSync('go', ['version'], { env }).status !== 0) throw new Error('building Helm needs Go (>= 1.26) on the PATH, or set APP_SERVING_HELM to a helm v4 binary');
    const started = Date.now();
    log(`test-cluster: building Helm ${HELM_VERSION} into ${folder} …`);
    const staging = `${folder}.partial`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(join(staging, 'bin'), { recursive: true });
    const stamp = `-X helm.sh/helm/v4/internal/version.version=${HELM_VERSION}`;
    const result = spawnSync('go', ['install', `-ldflags=-s -w ${stamp}`, `helm.sh/helm/v4/cmd/helm@${HELM_VERSION}`], {
      cwd: staging,
      env: { ...env, GOBIN: join(staging, 'bin'), GOFLAGS: goFlags(), CGO_ENABLED: '0' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (result.status !== 0) throw new Error(`go install helm.sh/helm/v4/cmd/helm@${HELM_VERSION} exited with ${result.status ?? result.signal}`);
    rmSync(folder, { recursive: true, force: true });
    renameSync(staging, folder);
    log(`test-cluster: Helm built in ${Math.round((Date.now() - started) / 1000)} s`);
  });
  return bin;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(ensureHelm());
  } catch (error) {
    console.error(`test-cluster: ${error.message}`);
    process.exit(1);
  }
}
