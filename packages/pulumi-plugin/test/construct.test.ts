import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import { recordUnderMocks } from '@app-serving/pulumi-components/testing';
import { ComponentProvider } from '@pulumi/pulumi/provider/experimental/index.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { AppServing, KserveModel, LlmdModel } from '../index.ts';

const dir = join(import.meta.dirname, '..');
const REPO = join(dir, '../..');
const MODELS = join(REPO, 'models');
const schema = JSON.parse(readFileSync(join(dir, 'schema.json'), 'utf8')) as { resources: Record<string, { properties: Record<string, unknown> }> };
const FIXTURES = join(dir, 'test/fixtures/models');
const read = (path: string) => parse(readFileSync(join(MODELS, path), 'utf8')) as Record<string, unknown>;

/** `construct` as the engine calls it for a Python or Go program, under mocks, with the caller's provider. */
async function construct(type: string, inputs: Record<string, unknown>) {
  const provider = new ComponentProvider({ components: [LlmdModel, KserveModel, AppServing], name: 'app-serving', namespace: 'app-serving', dirname: dir });
  let state: Record<string, unknown> = {};
  const records = await recordUnderMocks(
    async () => {
      const mine = new k8s.Provider('callers', {});
      const result = await provider.construct('m', type, inputs, { providers: { kubernetes: mine } });
      state = await new Promise((resolve) => pulumi.output(result.state).apply((s) => resolve(s as Record<string, unknown>)));
    },
    { project: 'py', stack: 'dev' },
  );
  return { state, records };
}

describe('construct under mocks', () => {
  const sim = { gaie: read('generative/Sim/gaie-sim/values.yaml'), modelService: read('generative/Sim/ms-sim/values.yaml') };
  for (const [type, inputs, expected] of [
    ['app-serving:index:LlmdModel', { modelsDir: MODELS, name: 'Sim' }, { namespace: 'llm-d-sim', gatewayUrl: 'http://infra-sim-inference-gateway-istio.llm-d-sim.svc.cluster.local:80', routeName: 'llm-d-sim' }],
    ['app-serving:index:LlmdModel', { modelsDir: MODELS, name: 'SimEmbeddings', category: 'embedder' }, { namespace: 'llm-d-sim-embed' }],
    ['app-serving:index:KserveModel', { modelsDir: FIXTURES, name: 'Tiny', hfToken: 'hf_x' }, { namespace: 'llm-d-tiny', serviceName: 'tiny', servedModelName: 'Qwen/Qwen3-0.6B', pathPrefix: '/llm-d-tiny/tiny', gatewayName: 'kserve-ingress-gateway', gatewayNamespace: 'kserve' }],
    // Inline values: no model folder; every name derives from the given slug.
    ['app-serving:index:LlmdModel', { name: 'Mine', values: { slug: 'mine', ...sim } }, { namespace: 'llm-d-mine', gatewayUrl: 'http://infra-mine-inference-gateway-istio.llm-d-mine.svc.cluster.local:80', routeName: 'llm-d-mine', inferencePoolName: 'gaie-mine' }],
    ['app-serving:index:KserveModel', { name: 'Tiny', values: { slug: 'tiny', kserve: { model: { uri: 'hf://Qwen/Qwen3-0.6B', name: 'Qwen/Qwen3-0.6B' } } } }, { namespace: 'llm-d-tiny', serviceName: 'tiny', servedModelName: 'Qwen/Qwen3-0.6B' }],
    ['app-serving:index:AppServing', { modelsDir: MODELS, stackFile: join(REPO, 'apps/app-serving/Pulumi.kind.yaml') }, { namespaces: { sim: 'llm-d-sim', 'sim-embed': 'llm-d-sim-embed' } }],
  ] as const) {
    it(`${type} ${'name' in inputs ? inputs.name : 'Pulumi.kind.yaml'}${'values' in inputs ? ' (inline values)' : ''}${'category' in inputs ? ` (${inputs.category})` : ''}: the schema's outputs, the caller's provider`, async () => {
      const { state, records } = await construct(type, inputs);
      // Every output the state has is in the schema, and every required one is there.
      const { properties: outputs, required } = schema.resources[type] as { properties: Record<string, unknown>; required: string[] };
      for (const key of required) expect(state, key).toHaveProperty(key);
      for (const key of Object.keys(state)) expect(Object.keys(outputs), key).toContain(key);
      expect(state).toMatchObject(expected);
      const ref = `${records.find((r) => r.name === 'callers')!.urn}::callers-id`;
      const kube = records.filter((r) => r.type.startsWith('kubernetes:'));
      expect(kube.length).toBeGreaterThanOrEqual(3);
      for (const r of kube) {
        if (r.custom) expect(r.provider, r.name).toBe(ref);
        else expect(r.providers, r.name).toEqual({ kubernetes: ref });
      }
    }, 120_000);
  }
});

describe('construct: an on-prem model with weights from Harbor', () => {
  const args = {
    modelsDir: MODELS,
    name: 'Qwen3-0.6B-rke2',
    cloudProvider: 'on-prem',
    nodeSelector: { workload: 'gpu' },
    modelSource: { harborRef: 'harbor.example.com/ai-models/qwen3-0.6b:2025-05', modelUri: 'hub/Qwen/Qwen3-0.6B', storageSize: '10Gi', hostpathNode: 'gpu-node-1' },
    gpuToleration: { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' },
    harborHostname: 'harbor.example.com',
    harborUser: 'robot$k8s-puller',
    harborToken: 'not-a-real-token',
  };

  it('plans the stack entry would: hostPath PV, PVC, the ORAS pull Job, all tolerating the GPU taint', async () => {
    const { state, records } = await construct('app-serving:index:LlmdModel', args);
    expect(state).toMatchObject({ namespace: 'llm-d-qwen3-06b-rke2' });
    expect(typeof state.pvcName).toBe('string');
    const kinds = (type: string) => records.filter((r) => r.type === type);
    expect(kinds('kubernetes:core/v1:PersistentVolume')).toHaveLength(1);
    expect(kinds('kubernetes:core/v1:PersistentVolumeClaim')).toHaveLength(1);
    const [job] = kinds('kubernetes:batch/v1:Job');
    const pod = (job!.inputs as { spec: { template: { spec: { tolerations: unknown[]; containers: { args?: string[]; command?: string[] }[] } } } }).spec.template.spec;
    expect(pod.tolerations).toContainEqual({ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' });
    expect(JSON.stringify(pod.containers)).toContain('harbor.example.com/ai-models/qwen3-0.6b:2025-05');
    // The vLLM pods: the modelservice chart's values carry the toleration and read the volume.
    const charts = kinds('kubernetes:helm.sh/v4:Chart').map((r) => JSON.stringify(r.inputs.values));
    const modelService = charts.find((values) => values.includes('"decode"'))!;
    expect(modelService).toContain('"key":"dedicated"');
    expect(modelService).toContain('pvc+hf://');
  }, 120_000);

  it('a model source that is not known at construction is an error naming its path', async () => {
    const unknown = { ...args, modelSource: { ...args.modelSource, storageSize: pulumi.output('10Gi') } };
    await expect(construct('app-serving:index:LlmdModel', unknown)).rejects.toMatchObject({ propertyPath: 'modelSource.storageSize', reason: expect.stringContaining('must be known') });
  }, 120_000);

  it('a bad model source is named in the plugin’s terms (modelSource.*), with the fix', async () => {
    const bad = { ...args, modelSource: { ...args.modelSource, storageSize: 'ten gigs', layout: 'zip' } };
    const error = (await construct('app-serving:index:LlmdModel', bad).catch((e: unknown) => e)) as { propertyPath: string; reason: string };
    expect(error.reason).toContain('modelSource.storageSize');
    expect(error.reason).toContain('40Gi');
    expect(error.reason).toContain('modelSource.layout');
    expect(error.reason).not.toContain('folder');
  }, 120_000);
});

describe('construct: bad inline values, in the plugin’s terms', () => {
  it('every problem at once, named by the args a Python or Go caller wrote (values.*, nodeSelector), never folder.*', async () => {
    const error = (await construct('app-serving:index:LlmdModel', { name: 'Inline', nodeSelector: { 'bad key!': 'x' }, values: { slug: 'Bad_Slug', gaie: {}, modelService: {}, kserve: {} } }).catch((e: unknown) => e)) as {
      propertyPath: string;
      reason: string;
    };
    expect(error.propertyPath).toBe('values');
    for (const part of ['nodeSelector', 'values.slug: ', 'values.kserve: is not used by the llm-d platform']) expect(error.reason).toContain(part);
    expect(error.reason).not.toContain('folder');
  }, 120_000);

  it('neither modelsDir nor values: says which to give', async () => {
    await expect(construct('app-serving:index:LlmdModel', { name: 'Sim' })).rejects.toMatchObject({ propertyPath: 'modelsDir', reason: expect.stringContaining('values') });
  }, 120_000);

  it('a value not known at construction (an output of another resource) is an error naming its path', async () => {
    const values = { slug: 'mine', gaie: read('generative/Sim/gaie-sim/values.yaml'), modelService: { ...read('generative/Sim/ms-sim/values.yaml'), replicas: pulumi.output(2) } };
    await expect(construct('app-serving:index:LlmdModel', { name: 'Mine', values })).rejects.toMatchObject({ propertyPath: 'values.modelService.replicas', reason: expect.stringContaining('must be known') });
  }, 120_000);
});
