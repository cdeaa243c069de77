import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stackFileJsonSchema } from './json-schema.ts';

const COMMITTED = join(import.meta.dirname, '..', '..', 'stack-config.schema.json');

describe('the stack file JSON Schema', () => {
  const schema = stackFileJsonSchema();

  it('matches the committed stack-config.schema.json (regenerate: npm run schema -w @app-serving/core)', () => {
    const generated = `${JSON.stringify(schema, null, 2)}\n`;
    if (process.env.UPDATE_SCHEMA === '1') writeFileSync(COMMITTED, generated);
    expect(readFileSync(COMMITTED, 'utf8')).toBe(generated);
  });

  it('describes every app-serving key under config, and secrets as secure values', () => {
    const config = (schema.properties as { config: { properties: Record<string, Record<string, unknown>>; required: string[] } }).config;
    expect(Object.keys(config.properties).sort()).toEqual(
      ['apiKeys', 'charts', 'cloudProvider', 'controlNodeSelector', 'endpoint', 'gpuToleration', 'harborHostname', 'harborToken', 'harborUser', 'hfToken', 'kserve', 'kubeconfig', 'modelGateway', 'models', 'platform', 'prometheus', 'prometheusCredentials', 'router', 'upstream'].map((k) => `app-serving:${k}`),
    );
    expect(config.required).toEqual(['app-serving:cloudProvider', 'app-serving:models']);
    expect(config.properties['app-serving:harborToken']).toMatchObject({ type: 'object', properties: { secure: { type: 'string' } }, required: ['secure'] });
    expect(config.properties['app-serving:cloudProvider']).toMatchObject({ enum: ['cloud', 'on-prem'] });
    expect(config.properties['app-serving:upstream']).toMatchObject({ enum: ['2026-02', '2026-08'] });
  });

  it("describes a model's adapters (exactly the keys the loader takes) and maxLoraRank (vLLM's ranks)", () => {
    const entry = (schema.properties as any).config.properties['app-serving:models'].properties.generative.items;
    expect(Object.keys(entry.properties.adapters.items.properties).sort()).toEqual(['harborRef', 'huggingFace', 'name', 'path']);
    expect(entry.properties.adapters.items).toMatchObject({ required: ['name'], additionalProperties: false });
    expect(entry.properties.maxLoraRank).toMatchObject({ type: 'number', enum: [1, 8, 16, 32, 64, 128, 256, 320, 512] });
  });
});

describe('configKeyPaths', () => {
  it('lists nested keys of models entries and sources', async () => {
    const { configKeyPaths } = await import('./keys.ts');
    const paths = configKeyPaths().map((p) => p.join('.'));
    expect(paths).toContain('models.generative.modelSource.huggingFace.repo');
    expect(paths).toContain('kserve.gateway.create');
    expect(paths).toContain('gpuToleration.effect');
    expect(paths.length).toBe(new Set(paths).size);
  });
});
