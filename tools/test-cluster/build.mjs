#!/usr/bin/env node
// Builds the test control plane's commands from Go modules, once per version, into a cache outside
// the work tree (so a fresh clone, CI's included, reuses them):
//   kube-apiserver, kube-controller-manager, kube-scheduler  from k8s.io/kubernetes (go/go.mod: the
//                                                             staging modules replaced by their versions)
//   etcd                                                      from go.etcd.io/etcd/server/v3 (go-etcd/go.mod)
//   kwok                                                      go install sigs.k8s.io/kwok/cmd/kwok@KWOK_VERSION
// The cache folder's name is a hash of this script, the Go flags (go-flags.mjs) and both go.mod/go.sum files, so a version
// bump builds anew and an old folder is never reused by mistake.
//
//   node tools/test-cluster/build.mjs          build if needed, print the bin folder
//
// Needs Go (>= 1.26) and the Go module proxy; APP_SERVING_TEST_CLUSTER_BIN names a folder of
// prebuilt commands instead. Several test processes may call it at once: one builds
// (under a lock folder), the others wait for it.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { goFlags } from './go-flags.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** kwok's version (its module has no replace directives, so `go install` builds it by version). */
export const KWOK_VERSION = 'v0.8.0';

/** The commands the test cluster runs. */
export const COMMANDS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'];

/** The Kubernetes version, read from go/go.mod (one place). */
export function kubernetesVersion() {
  const mod = readFileSync(join(here, 'go', 'go.mod'), 'utf8');
  const match = /^require k8s\.io\/kubernetes (v\S+)$/m.exec(mod);
  if (!match) throw new Error('tools/test-cluster/go/go.mod: no "require k8s.io/kubernetes vX.Y.Z" line');
  return match[1];
}

/** `$APP_SERVING_TEST_CLUSTER_CACHE`, else `$XDG_CACHE_HOME/app-serving/test-cluster`, else `~/.cache/...`. */
export function cacheRoot(env = process.env) {
  if (env.APP_SERVING_TEST_CLUSTER_CACHE) return env.APP_SERVING_TEST_CLUSTER_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'app-serving', 'test-cluster');
}

/** The folder of this exact set of versions: `<cache>/<kubernetes version>-<hash>/bin`. */
export function binDir(env = process.env) {
  const hash = createHash('sha256');
  hash.update(KWOK_VERSION);
  hash.update(goFlags());
  for (const file of ['build.mjs', 'go/go.mod', 'go/go.sum', 'go-etcd/go.mod', 'go-etcd/go.sum']) hash.update(readFileSync(join(here, file)));
  return join(cacheRoot(env), `${kubernetesVersion()}-${hash.digest('hex').slice(0, 12)}`, 'bin');
}

function complete(dir) {
  return COMMANDS.every((c) => existsSync(join(dir, c)));
}

function run(command, args, options) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
  if (result.error) throw new Error(`${command} ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status}`);
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Returns the folder holding every command, building what is missing first. Throws with the fix
 * when Go is missing or a build fails.
 */
export function ensureBinaries({ env = process.env, log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  if (env.APP_SERVING_TEST_CLUSTER_BIN) {
    const given = env.APP_SERVING_TEST_CLUSTER_BIN;
    if (!complete(given)) throw new Error(`APP_SERVING_TEST_CLUSTER_BIN=${given} lacks one of ${COMMANDS.join(', ')}`);
    return given;
  }
  const dir = binDir(env);
  if (complete(dir)) return dir;
  const go = spawnSync('go', ['version'], { encoding: 'utf8', env });
  if (go.status !== 0) {
    throw new Error('the test cluster needs Go (>= 1.26) on the PATH to build kube-apiserver, etcd and kwok: install it, or set APP_SERVING_TEST_CLUSTER_CACHE to a folder with prebuilt commands');
  }
  const top = dirname(dir);
  mkdirSync(dirname(top), { recursive: true });
  const lock = `${top}.lock`;
  // One builder at a time; a lock older than 40 minutes is a crashed builder's.
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (complete(dir)) return dir;
      try {
        if (Date.now() - statSync(lock).mtimeMs > 40 * 60_000) rmSync(lock, { recursive: true, force: true });
      } catch {}
      sleep(2000);
    }
  }
  try {
    if (complete(dir)) return dir;
    const staging = `${top}.partial`;
    rmSync(staging, { recursive: true, force: true });
    const out = join(staging, 'bin');
    mkdirSync(out, { recursive: true });
    const started = Date.now();
    const goEnv = { ...env, GOFLAGS: goFlags() };
    log(`test-cluster: building Kubernetes ${kubernetesVersion()} (kube-apiserver, kube-controller-manager, kube-scheduler) from Go modules into ${top} …`);
    // The version the binaries report (/version, the default emulation version), as Kubernetes' own
    // build sets it (hack/lib/version.sh); without it they say v0.0.0-master.
    const version = kubernetesVersion();
    const [major, minor] = version.slice(1).split('.');
    const stamp = ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']
      .flatMap((pkg) => [`-X ${pkg}.gitVersion=${version}`, `-X ${pkg}.gitMajor=${major}`, `-X ${pkg}.gitMinor=${minor}`, `-X ${pkg}.gitTreeState=clean`, `-X ${pkg}.buildDate=1970-01-01T00:00:00Z`])
      .join(' ');
    run('go', ['build', `-ldflags=-s -w ${stamp}`, '-o', `${out}/`, 'k8s.io/kubernetes/cmd/kube-apiserver', 'k8s.io/kubernetes/cmd/kube-controller-manager', 'k8s.io/kubernetes/cmd/kube-scheduler'], { cwd: join(here, 'go'), env: goEnv });
    log('test-cluster: building etcd …');
    run('go', ['build', '-ldflags=-s -w', '-o', join(out, 'etcd'), 'go.etcd.io/etcd/server/v3'], { cwd: join(here, 'go-etcd'), env: goEnv });
    log(`test-cluster: building kwok ${KWOK_VERSION} …`);
    run('go', ['install', '-ldflags=-s -w', `sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}`], { cwd: staging, env: { ...goEnv, GOBIN: out } });
    writeFileSync(join(staging, 'versions.json'), `${JSON.stringify({ kubernetes: kubernetesVersion(), kwok: KWOK_VERSION, builtIn: `${Math.round((Date.now() - started) / 1000)}s` }, null, 2)}\n`);
    rmSync(top, { recursive: true, force: true });
    renameSync(staging, top);
    log(`test-cluster: built in ${Math.round((Date.now() - started) / 1000)} s`);
    return dir;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(ensureBinaries());
  } catch (error) {
    console.error(`test-cluster: ${error.message}`);
    process.exit(1);
  }
}
