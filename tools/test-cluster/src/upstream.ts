/**
 * Where the upstream data lives: `../shared/upstream/` beside the project's root (CI lays a copy of
 * `shared/` beside its clone). Tests hold the project's own facts against these files; the project
 * never copies them (see shared/upstream/README.md for what each file is and where it comes from).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

/** The project's root (this file is at tools/test-cluster/src/). */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * The upstream data folder: `APP_SERVING_UPSTREAM` if set, else `<project>/../shared/upstream`.
 * Throws with the fix when it is missing: a test that silently skipped its upstream check would
 * prove nothing.
 */
export function upstreamDir(): string {
  const dir = process.env.APP_SERVING_UPSTREAM ?? join(PROJECT_ROOT, '..', 'shared', 'upstream');
  if (!existsSync(join(dir, 'README.md'))) {
    throw new Error(
      `upstream data not found at ${dir}: check out shared/ beside the project (../shared/upstream) or set APP_SERVING_UPSTREAM`,
    );
  }
  return dir;
}

/**
 * The absolute path of a file under the upstream folder, e.g. `crds/istio-1.28.5-crd-all.gen.yaml`;
 * throws when it is missing, unless `optional` (then undefined).
 */
export function upstreamPath(relative: string): string;
export function upstreamPath(relative: string, options: { optional: true }): string | undefined;
export function upstreamPath(relative: string, options: { optional?: boolean } = {}): string | undefined {
  const path = join(upstreamDir(), relative);
  if (!existsSync(path)) {
    if (options.optional) return undefined;
    throw new Error(`upstream file not found: ${path}`);
  }
  return path;
}

/** The text of an upstream file. */
export function readUpstream(relative: string): string {
  return readFileSync(upstreamPath(relative), 'utf8');
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
