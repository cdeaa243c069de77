import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FEATURES } from './index.ts';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const features = join(src, 'features');

/** Every `.ts` file under a folder of src (tests aside), with the files it imports (resolved). */
function importsUnder(folder: string): { file: string; imports: string[] }[] {
  const out: { file: string; imports: string[] }[] = [];
  for (const entry of readdirSync(join(src, folder), { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    const imports = [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)\b[^;]*?from '(\.[^']+)'/gms)].map((m) => resolve(dirname(file), m[1]!));
    out.push({ file: relative(src, file), imports });
  }
  return out;
}

/** The feature folder a resolved path is in, or null. */
function featureOf(path: string): string | null {
  const rel = relative(features, path);
  if (rel.startsWith('..')) return null;
  const [first, ...rest] = rel.split('/');
  return rest.length > 0 ? first! : null;
}

describe('features (DESIGN §2: one folder each, composed by the plan step)', () => {
  it('config and upstream import no feature', () => {
    const offending = ['config', 'upstream'].flatMap((folder) =>
      importsUnder(folder).flatMap(({ file, imports }) => imports.filter((path) => featureOf(path) !== null).map((path) => `${file} → ${relative(src, path)}`)),
    );
    expect(offending).toEqual([]);
  });

  it('a feature imports no other feature', () => {
    const offending = importsUnder('features').flatMap(({ file, imports }) => {
      const own = featureOf(join(src, file));
      return imports.filter((path) => own !== null && featureOf(path) !== null && featureOf(path) !== own).map((path) => `${file} → ${relative(src, path)}`);
    });
    expect(offending).toEqual([]);
  });

  it('every feature folder is registered, once', () => {
    const folders = readdirSync(features, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
    expect(FEATURES.map((f) => f.name).sort()).toEqual(folders);
  });
});
