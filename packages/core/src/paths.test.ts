import fc from 'fast-check';
import { relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { displayPath } from './paths.ts';

/** What displayPath gave before its fast path (relative() every time). */
function slow(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  if (rel === '') return '.';
  if (rel.startsWith('..') || rel.startsWith('/')) return path;
  return rel.split(sep).join('/');
}

describe('displayPath', () => {
  it('gives what relative() gives, for paths with dots, doubled and trailing slashes too (property)', () => {
    const segment = fc.constantFrom('a', 'b', 'models', '.', '..', '', 'x.yaml', 'a b');
    const path = fc.array(segment, { minLength: 0, maxLength: 6 }).map((s) => `/${s.join('/')}`);
    fc.assert(
      fc.property(path, path, (p, cwd) => {
        expect(displayPath(p, cwd)).toBe(slow(p, cwd));
      }),
      { numRuns: 20000 },
    );
    expect(displayPath('/work/repo/models/generative/A/ms-a/values.yaml', '/work/repo')).toBe('models/generative/A/ms-a/values.yaml');
    expect(displayPath('/work/repo2/x', '/work/repo')).toBe('/work/repo2/x');
  });
});
