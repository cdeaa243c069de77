import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { STACK_KEYS, configKeyPaths, loadStackFile } from '@app-serving/core';
import { describe, expect, it } from 'vitest';

/** Pulumi.TEMPLATE.yaml documents every key of the stack schema and loads as it is. */
const file = join(import.meta.dirname, '..', 'Pulumi.TEMPLATE.yaml');
const text = readFileSync(file, 'utf8');

describe('Pulumi.TEMPLATE.yaml', () => {
  it('loads as a valid (empty) stack', () => {
    const config = loadStackFile(file);
    expect(config.cloudProvider).toBe('cloud');
    expect(config.models).toEqual({ generative: [], embedder: [] });
  });

  it('mentions every top-level key as app-serving:<key>', () => {
    for (const key of STACK_KEYS) expect(text, key).toContain(`app-serving:${key}:`);
  });

  it('mentions every nested key', () => {
    const nested = configKeyPaths().filter((path) => path.length > 1);
    expect(nested.map((p) => p.join('.'))).toEqual(expect.arrayContaining(['models.generative.modelSource.huggingFace.revision', 'kserve.gateway.create', 'charts.gaie.repo', 'gpuToleration.effect']));
    const missing = configKeyPaths()
      .filter((path) => path.length > 1)
      .map((path) => path.at(-1)!)
      .filter((key) => !new RegExp(`^\\s*#?\\s*(- )?${key}:`, 'm').test(text));
    expect(missing).toEqual([]);
  });
});
