import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configKeyPaths } from './keys.ts';

/** docs/configuration.md is checked against the schema: every key is described there. */
describe('docs/configuration.md', () => {
  const doc = readFileSync(join(import.meta.dirname, '..', '..', '..', '..', 'docs', 'configuration.md'), 'utf8');

  it('describes every key of the stack schema', () => {
    const missing = configKeyPaths()
      .map((path) => path.at(-1)!)
      .filter((key, index, all) => all.indexOf(key) === index)
      .filter((key) => !new RegExp(`\`([\\w.]+\\.)?${key}\``).test(doc));
    expect(missing).toEqual([]);
  });
});
