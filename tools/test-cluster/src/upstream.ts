/**
 * Where the upstream data lives. Tests hold the project's own facts against these files; the project
 * never copies them. Every file a test reads is pinned in `tools/test-cluster/upstream.json` (path,
 * source at the pinned tag, sha256), and is read from, in this order:
 *
 * 1. `APP_SERVING_UPSTREAM`, when set (a copy of shared/upstream);
 * 2. `../shared/upstream/` beside the project's root, when it is there (the project's workspace and
 *    CI lay it there; see its README.md for what each file is);
 * 3. the cache that `npm run fetch-upstream` fills (`tools/test-cluster/upstream.mjs`, which checks
 *    every checksum), `~/.cache/app-serving/upstream/<manifest hash>/`.
 *
 * With none of them, every read throws one message naming the command to run.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { FETCH_COMMAND, MANIFEST_PATH, cacheDir, localUpstream, readManifest } from '../upstream.mjs';

/** The project's root (this file is at tools/test-cluster/src/). */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Where the upstream files were found, and how. */
export interface UpstreamLocation {
  readonly dir: string;
  readonly source: 'APP_SERVING_UPSTREAM' | 'shared' | 'cache';
}

/**
 * Finds the upstream folder (see the module's comment for the order), or throws the one message
 * that says what to run. `projectRoot` and `env` are for tests of this lookup.
 */
export function locateUpstream({ env = process.env, projectRoot = PROJECT_ROOT }: { env?: NodeJS.ProcessEnv; projectRoot?: string } = {}): UpstreamLocation {
  if (env.APP_SERVING_UPSTREAM && !existsSync(env.APP_SERVING_UPSTREAM)) {
    throw new Error(`APP_SERVING_UPSTREAM=${env.APP_SERVING_UPSTREAM}: no such folder (unset it to use ../shared/upstream or the cache of ${FETCH_COMMAND})`);
  }
  const local = localUpstream(env, projectRoot);
  if (local) return local;
  const shared = join(projectRoot, '..', 'shared', 'upstream');
  const cache = cacheDir(env);
  if (existsSync(join(cache, '.accepted.json'))) return { dir: cache, source: 'cache' };
  throw new Error(
    `upstream test data not found: neither ${shared} nor the cache ${cache} holds it. ` +
      `Run \`${FETCH_COMMAND}\` once on a machine with internet: it downloads the ${readManifest().files.length} upstream files pinned in tools/test-cluster/upstream.json ` +
      'into that cache and checks each sha256 (or set APP_SERVING_UPSTREAM to a copy of shared/upstream)',
  );
}

/** The upstream data folder (throws with the command to run when there is none). */
export function upstreamDir(): string {
  return locateUpstream().dir;
}

let pinned: Set<string> | undefined;

/** Whether a path is a pinned file, or a folder holding pinned files. */
function isPinned(relative: string): boolean {
  pinned ??= new Set(readManifest().files.map((f) => f.path));
  const path = relative.replace(/\/+$/, '');
  return pinned.has(path) || [...pinned].some((p) => p.startsWith(`${path}/`));
}

/**
 * The absolute path of a file (or a folder of files) under the upstream folder, e.g.
 * `crds/istio-1.28.5-crd-all.gen.yaml`. It must be pinned in upstream.json: a file that is not could
 * be read here and be missing on a fresh clone. With `optional`, a file that is not pinned (so not
 * there on every machine) gives undefined instead of an error.
 */
export function upstreamPath(relative: string): string;
export function upstreamPath(relative: string, options: { optional: true }): string | undefined;
export function upstreamPath(relative: string, options: { optional?: boolean } = {}): string | undefined {
  const { dir, source } = locateUpstream();
  const path = join(dir, relative);
  if (options.optional && (!isPinned(relative) || !existsSync(path))) return undefined;
  if (!isPinned(relative)) {
    throw new Error(
      `upstream file not pinned: ${relative} is not in ${MANIFEST_PATH}; add it there (path and url) and run node tools/test-cluster/upstream.mjs --pin ../shared/upstream to record its sha256`,
    );
  }
  if (!existsSync(path)) {
    throw new Error(
      source === 'cache'
        ? `upstream file not found: ${path} (not in the cache: run \`${FETCH_COMMAND}\`, which says why a file could not be fetched)`
        : `upstream file not found: ${path}`,
    );
  }
  return path;
}

/** The text of an upstream file. */
export function readUpstream(relative: string): string {
  const path = upstreamPath(relative);
  if (statSync(path).isDirectory()) throw new Error(`${path} is a folder, not a file`);
  return readFileSync(path, 'utf8');
}

/** Every non-empty YAML document of an upstream file, as plain data. */
export function readUpstreamYaml(relative: string): unknown[] {
  return parseAllDocuments(readUpstream(relative))
    .map((doc) => doc.toJS({ maxAliasCount: -1 }) as unknown)
    .filter((doc) => doc !== null && doc !== undefined);
}

/** An upstream JSON file (a chart's values.schema.json), parsed. */
export function readUpstreamJson(relative: string): unknown {
  return JSON.parse(readUpstream(relative)) as unknown;
}
