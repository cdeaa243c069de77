import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import { recordUnderMocks } from '@app-serving/pulumi-components/testing';
import { ComponentProvider } from '@pulumi/pulumi/provider/experimental/index.js';
import { describe, expect, it } from 'vitest';
import { AppServing, KserveModel, LlmdModel } from '../index.ts';

const dir = join(import.meta.dirname, '..');
const REPO = join(dir, '../..');
const MODELS = join(REPO, 'models');
const schema = JSON.parse(readFileSync(join(dir, 'schema.json'), 'utf8')) as { resources: Record<string, { properties: Record<string, unknown> }> };

/** `construct` as the engine calls it for a Python or Go program, under mocks, with the caller's provider. */
async function construct(type: string, inputs: Record<string, unknown>, modelsDir = MODELS) {
  const provider = new ComponentProvider({ components: [LlmdModel, KserveModel, AppServing], name: 'app-serving', namespace: 'app-serving', dirname: dir });
  let state: Record<string, unknown> = {};
  const records = await recordUnderMocks(
    async () => {
      const mine = new k8s.Provider('callers', {});
      const result = await provider.construct('m', type, { modelsDir, ...inputs }, { providers: { kubernetes: mine } });
      state = await new Promise((resolve) => pulumi.output(result.state).apply((s) => resolve(s as Record<string, unknown>)));
    },
    { project: 'py', stack: 'dev' },
  );
  return { state, records };
}

describe('construct under mocks', () => {
  for (const [type, inputs, expected] of [
    ['app-serving:index:LlmdModel', { name: 'Sim' }, { namespace: 'llm-d-sim', gatewayUrl: 'http://infra-sim-inference-gateway-istio.llm-d-sim.svc.cluster.local:80', routeName: 'llm-d-sim' }],
    ['app-serving:index:LlmdModel', { name: 'SimEmbeddings', category: 'embedder' }, { namespace: 'llm-d-sim-embed' }],
    ['app-serving:index:AppServing', { stackFile: join(REPO, 'apps/app-serving/Pulumi.kind.yaml') }, { namespaces: { sim: 'llm-d-sim', 'sim-embed': 'llm-d-sim-embed' } }],
  ] as const) {
    it(`${type} ${JSON.stringify(inputs)}: the schema's outputs, the caller's provider`, async () => {
      const { state, records } = await construct(type, inputs);
      // Every output the state has is in the schema, and every required one is there.
      const { properties: outputs, required } = schema.resources[type] as { properties: Record<string, unknown>; required: string[] };
      for (const key of required) expect(state, key).toHaveProperty(key);
      for (const key of Object.keys(state)) expect(Object.keys(outputs), key).toContain(key);
      expect(state).toMatchObject(expected);
      const ref = `${records.find((r) => r.name === 'callers')!.urn}::callers-id`;
      const kube = records.filter((r) => r.type.startsWith('kubernetes:'));
      expect(kube.length).toBeGreaterThan(4);
      for (const r of kube) {
        if (r.custom) expect(r.provider, r.name).toBe(ref);
        else expect(r.providers, r.name).toEqual({ kubernetes: ref });
      }
    }, 120_000);
  }
});
