import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { MODELS_DIR, record } from '../test/harness.ts';
import { LlmdModel } from './llmd-model.ts';
import { KserveModel } from './kserve-model.ts';
import { planModelFolder } from './model-folder.ts';

const read = (path: string) => parse(readFileSync(join(MODELS_DIR, path), 'utf8')) as Record<string, unknown>;
const none = { harborToken: false, hfToken: false };

describe('inline values (no model folder)', () => {
  it('plan the model exactly as its folder does', () => {
    const fromFolder = planModelFolder({ modelsDir: MODELS_DIR, name: 'Sim', nodeSelector: { pool: 'cpu' } }, none).models[0]!;
    const inline = planModelFolder(
      { name: 'Sim', nodeSelector: { pool: 'cpu' }, values: { slug: 'sim', gaie: read('generative/Sim/gaie-sim/values.yaml'), modelService: read('generative/Sim/ms-sim/values.yaml') } },
      none,
    ).models[0]!;
    expect({ ...inline, folder: '', images: [] }).toEqual({ ...fromFolder, folder: '', images: [] });
    expect(inline.folder).toBe('folder.values');
    // Image sources name where the caller wrote them.
    expect(inline.images.map((i) => i.where).join('\n')).toContain('folder.values.modelService');
  });

  it('every problem in one pass, in the component’s terms', async () => {
    const values = { slug: 'Bad_Slug', gaie: { inferenceExtension: { replicas: 1 } }, kserve: {} };
    await expect(record(() => new LlmdModel('m', { folder: { name: 'Inline', nodeSelector: { 'bad key!': 'x' }, values } }))).rejects.toMatchObject({
      propertyPath: 'folder',
    });
    const error = await record(() => new LlmdModel('m', { folder: { name: 'Inline', nodeSelector: { 'bad key!': 'x' }, values } })).catch((e: Error) => e);
    const reason = (error as unknown as { reason: string }).reason;
    for (const part of [
      'folder.nodeSelector',
      'folder.values.slug: ',
      'folder.values.modelService: is required for the llm-d platform',
      'folder.values.kserve: is not used by the llm-d platform (it takes folder.values.gaie, folder.values.modelService, folder.values.infra)',
    ]) {
      expect(reason).toContain(part);
    }
    expect(reason).not.toContain('models.generative');
    expect(reason).not.toContain('component arguments');
  });

  it('values conflicts found by the merge name the inline chart values', async () => {
    const ms = read('generative/Sim/ms-sim/values.yaml');
    const error = await record(
      () =>
        new LlmdModel('m', {
          folder: {
            name: 'Sim',
            modelSource: { harborRef: 'harbor.example.com/m/sim:1', modelUri: 'hub/Org/sim', storageSize: '1Gi' },
            values: { slug: 'sim', gaie: read('generative/Sim/gaie-sim/values.yaml'), modelService: { ...ms, modelArtifacts: { ...(ms.modelArtifacts as object), uri: 'hf://other/model' } } },
          },
          harborHostname: 'harbor.example.com',
          harborUser: 'robot$x',
          harborToken: 't',
        }),
    ).catch((e: Error) => e);
    expect((error as unknown as { reason: string }).reason).toMatch(/^folder\.values\.modelService: modelArtifacts\.uri: /);
  });

  it('a KServe model from inline values', async () => {
    const rec = await record(
      () =>
        new KserveModel('k', {
          folder: { name: 'Tiny', platform: 'kserve', values: { slug: 'tiny', kserve: { model: { uri: 'hf://Qwen/Qwen3-0.6B', name: 'Qwen/Qwen3-0.6B' } } } },
        }),
    );
    expect(rec.revealed('k-service').metadata).toMatchObject({ name: 'tiny', namespace: 'llm-d-tiny' });
  });

  it('namespace is the override; nameSpace stays as its deprecated alias', () => {
    const values = { slug: 'sim', gaie: read('generative/Sim/gaie-sim/values.yaml'), modelService: read('generative/Sim/ms-sim/values.yaml') };
    expect(planModelFolder({ name: 'Sim', values, namespace: 'team-ml' }, none).models[0]!.namespace).toBe('team-ml');
    expect(planModelFolder({ name: 'Sim', values, nameSpace: 'team-ml' }, none).models[0]!.namespace).toBe('team-ml');
  });
});
