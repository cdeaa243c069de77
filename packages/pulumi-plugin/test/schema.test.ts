import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gpuTolerationSchema, modelSourceSchema } from '@app-serving/core/schema';
import { ComponentProvider } from '@pulumi/pulumi/provider/experimental/index.js';
import { describe, expect, it } from 'vitest';
import { AppServing, KserveModel, LlmdModel } from '../index.ts';

const dir = join(import.meta.dirname, '..');
const SCHEMA = join(dir, 'schema.json');

/** The provider `pulumi package add` would run (the same analyzer as `pulumi package get-schema`). */
export function provider(): ComponentProvider {
  return new ComponentProvider({ components: [LlmdModel, KserveModel, AppServing], name: 'app-serving', namespace: 'app-serving', dirname: dir });
}

describe('the plugin schema (Pulumi component analyzer)', () => {
  it('matches the checked-in schema.json (UPDATE_SCHEMA=1 rewrites it)', async () => {
    const schema = JSON.parse(await provider().getSchema()) as Record<string, unknown>;
    if (process.env.UPDATE_SCHEMA) writeFileSync(SCHEMA, `${JSON.stringify(schema, null, 2)}\n`);
    expect(schema).toEqual(JSON.parse(readFileSync(SCHEMA, 'utf8')));
  }, 120_000);
});

interface Schema {
  resources: Record<string, { inputProperties: Record<string, { plain?: boolean; $ref?: string; type?: string }>; requiredInputs: string[]; properties: Record<string, unknown>; required: string[] }>;
  types: Record<string, { type: string; enum?: { name: string; value: string }[]; properties?: Record<string, { plain?: boolean; type?: string; additionalProperties?: unknown }>; required?: string[] }>;
}

describe('what the SDKs are generated from', () => {
  const schema = JSON.parse(readFileSync(SCHEMA, 'utf8')) as Schema & { name: string };
  it('tokens app-serving:index:*, required inputs, plain flags and enums', () => {
    expect(schema.name).toBe('app-serving');
    expect(Object.keys(schema.resources).sort()).toEqual(['app-serving:index:AppServing', 'app-serving:index:KserveModel', 'app-serving:index:LlmdModel']);
    const llmd = schema.resources['app-serving:index:LlmdModel']!;
    expect(llmd.requiredInputs.sort()).toEqual(['name']);
    // What decides the plan is plain (known when the component is constructed); secrets are Inputs.
    const plain = Object.entries(llmd.inputProperties)
      .filter(([, p]) => p.plain === true)
      .map(([k]) => k)
      .sort();
    expect(plain).toEqual(['category', 'cloudProvider', 'createNamespace', 'gpuToleration', 'harborHostname', 'harborUser', 'modelSource', 'modelsDir', 'name', 'namespace', 'nodeSelector', 'pullTimeout', 'releaseName', 'values']);
    expect(llmd.inputProperties.harborToken!.plain).toBeUndefined();
    expect(llmd.inputProperties.category!.$ref).toBe('#/types/app-serving:index:Category');
    expect(llmd.required.sort()).toEqual(['gatewayService', 'gatewayUrl', 'inferencePoolName', 'namespace', 'servedModelName']);
    expect(schema.resources['app-serving:index:KserveModel']!.inputProperties.hfToken!.plain).toBeUndefined();
    expect(schema.resources['app-serving:index:KserveModel']!.requiredInputs.sort()).toEqual(['name']);
    expect(schema.resources['app-serving:index:AppServing']!.requiredInputs.sort()).toEqual(['modelsDir', 'stackFile']);
    expect(schema.types['app-serving:index:Category']!.enum!.map((e) => e.value)).toEqual(['generative', 'embedder']);
    expect(schema.types['app-serving:index:CloudProvider']!.enum!.map((e) => e.value)).toEqual(['cloud', 'on-prem']);
  });

  it('model source and GPU toleration: objects of plain fields, their closed sets as the enums core accepts', () => {
    const llmd = schema.resources['app-serving:index:LlmdModel']!;
    expect(llmd.inputProperties.modelSource!.$ref).toBe('#/types/app-serving:index:ModelSource');
    expect(llmd.inputProperties.gpuToleration!.$ref).toBe('#/types/app-serving:index:GpuToleration');
    expect(schema.resources['app-serving:index:KserveModel']!.inputProperties.modelSource!.$ref).toBe('#/types/app-serving:index:ModelSource');
    const source = schema.types['app-serving:index:ModelSource']!;
    expect(source.required).toEqual(['storageSize']);
    expect(Object.keys(source.properties!).sort()).toEqual(['harborRef', 'hostpathDir', 'hostpathNode', 'huggingFace', 'layout', 'modelUri', 'storageClass', 'storageSize']);
    expect(schema.types['app-serving:index:GpuToleration']!.required).toEqual(['key']);
    // The enums hold exactly what core's stack schema accepts.
    const values = (type: string) => schema.types[`app-serving:index:${type}`]!.enum!.map((e) => e.value);
    expect(values('ModelLayout')).toEqual(modelSourceSchema.shape.layout.unwrap().options);
    expect(values('TolerationOperator')).toEqual(gpuTolerationSchema.shape.operator.unwrap().options);
    expect(values('TaintEffect')).toEqual(gpuTolerationSchema.shape.effect.unwrap().options);
  });

  it('inline values: one plain object per model, a map of any values per chart', () => {
    const anyMap = { type: 'object', additionalProperties: { $ref: 'pulumi.json#/Any' }, plain: true };
    for (const [resource, type, charts, required] of [
      ['LlmdModel', 'LlmdValues', ['gaie', 'infra', 'modelService'], ['gaie', 'modelService', 'slug']],
      ['KserveModel', 'KserveValues', ['kserve'], ['kserve', 'slug']],
    ] as const) {
      const values = schema.resources[`app-serving:index:${resource}`]!.inputProperties.values!;
      expect(values.$ref).toBe(`#/types/app-serving:index:${type}`);
      expect(values.plain).toBe(true);
      const def = schema.types[`app-serving:index:${type}`]!;
      expect(def.type).toBe('object');
      expect(Object.keys(def.properties!).sort()).toEqual([...charts, 'slug'].sort());
      expect(def.required!.sort()).toEqual(required);
      expect(def.properties!.slug).toMatchObject({ type: 'string', plain: true });
      for (const chart of charts) expect(def.properties![chart], chart).toMatchObject(anyMap);
    }
  });
});
