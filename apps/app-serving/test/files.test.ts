import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UPSTREAMS } from '@app-serving/core';
import { describe, expect, it } from 'vitest';
import { deployedStacks, setOf } from './deploy/suite.ts';

/**
 * The real-deploy and real-Helm suites run from a file per set of upstream versions (vitest runs
 * files side by side, not the tests of one file): a set without its file would go untested, silently.
 */
describe('the files that run the suites', () => {
  const missing = (paths: string[]) => paths.filter((path) => !existsSync(join(import.meta.dirname, '..', path)));

  it('every set a deployed stack is on has its deploy file', () => {
    expect(missing([...new Set(deployedStacks().map(setOf))].map((set) => `test/deploy/${set}.test.ts`))).toEqual([]);
  });

  it('every set of upstream versions has its real-Helm file', () => {
    expect(missing(UPSTREAMS.map((set) => `test/sets/${set}.test.ts`))).toEqual([]);
  });
});
