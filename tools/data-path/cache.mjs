// What the data-path build scripts share: the cache root, the hash that keys a cache folder, and
// running a command with its output on stderr. The scripts themselves (envoy.mjs,
// envoy-gateway.mjs, epp.mjs, vllm.mjs) each prepare one tool, once, under a lock (../test-cluster/lock.mjs).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** `$APP_SERVING_DATA_PATH_CACHE`, else `$XDG_CACHE_HOME/app-serving/data-path`, else `~/.cache/...`. */
export function cacheRoot(env = process.env) {
  if (env.APP_SERVING_DATA_PATH_CACHE) return env.APP_SERVING_DATA_PATH_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'app-serving', 'data-path');
}

/** The first 12 hex digits of the sha256 of `parts` and of the files `files` (relative to this folder). */
export function hashOf(parts, files = []) {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  for (const file of files) hash.update(readFileSync(join(here, file)));
  return hash.digest('hex').slice(0, 12);
}

/** Runs a command, its output on stderr (stdout is the scripts' answer); throws naming it when it fails. */
export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: ['ignore', 2, 2], ...options });
  if (result.error) throw new Error(`${command} ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}`);
  return result;
}

/** Seconds since `started` (a Date.now()), rounded. */
export function secondsSince(started) {
  return Math.round((Date.now() - started) / 1000);
}

/** The default log: a line on stderr. */
export const stderrLog = (line) => process.stderr.write(`${line}\n`);
