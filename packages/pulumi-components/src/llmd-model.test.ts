import * as pulumi from '@pulumi/pulumi';
import { describe, expect, it } from 'vitest';
import { MODELS_DIR, allStrings, dependencyDepth, llmdModel, record, valueOf } from '../test/harness.ts';
import { kubernetesProblems } from '../test/k8s-schemas.ts';
import { LlmdModel } from './llmd-model.ts';
import { redactSecrets } from './mock-runtime.ts';

const TOKEN = 'harbor-robot-t0ken';
const harbor = { harborHostname: 'harbor.example.com', harborUser: 'robot$k8s-puller', harborToken: pulumi.secret(TOKEN) };

describe('LlmdModel', () => {
  it('on-prem generative model: every child, name, parent and dependency', async () => {
    const plan = llmdModel('example', 'Qwen3-0.6B-rke2');
    let m!: LlmdModel;
    const rec = await record(() => {
      m = new LlmdModel('q', { plan, ...harbor });
    });
    expect(rec.summary()).toEqual([
      'app-serving:llmd:InferencePool q-pool',
      'app-serving:llmd:InferenceRoute q-route',
      'app-serving:llmd:LlmdInfra q-infra',
      'app-serving:llmd:LlmdModel q',
      'app-serving:llmd:ModelService q-model-service',
      'app-serving:model:ModelNamespace q-namespace',
      'app-serving:storage:ModelStorage q-storage',
      'kubernetes:batch/v1:Job q-storage-pull-job',
      'kubernetes:core/v1:Namespace q-namespace-namespace',
      'kubernetes:core/v1:PersistentVolume q-storage-pv',
      'kubernetes:core/v1:PersistentVolumeClaim q-storage-pvc',
      'kubernetes:core/v1:Secret q-namespace-pull-secret',
      'kubernetes:core/v1:Service q-infra-gateway-alias',
      'kubernetes:gateway.networking.k8s.io/v1:HTTPRoute q-route-httproute',
      'kubernetes:helm.sh/v4:Chart q-infra-chart',
      'kubernetes:helm.sh/v4:Chart q-model-service-chart',
      'kubernetes:helm.sh/v4:Chart q-pool-chart',
    ]);
    expect(rec.children('q')).toEqual([
      'app-serving:llmd:InferencePool q-pool',
      'app-serving:llmd:InferenceRoute q-route',
      'app-serving:llmd:LlmdInfra q-infra',
      'app-serving:llmd:ModelService q-model-service',
      'app-serving:model:ModelNamespace q-namespace',
      'app-serving:storage:ModelStorage q-storage',
    ]);
    const ns = ['q-namespace-namespace', 'q-namespace-pull-secret'];
    expect(rec.dependencies('q-namespace-namespace')).toEqual([]);
    expect(rec.dependencies('q-namespace-pull-secret')).toEqual(['q-namespace-namespace']);
    expect(rec.dependencies('q-storage-pv')).toEqual(ns);
    expect(rec.dependencies('q-storage-pvc')).toEqual([...ns, 'q-storage-pv']);
    expect(rec.dependencies('q-storage-pull-job')).toEqual([...ns, 'q-storage-pvc']);
    expect(rec.dependencies('q-infra-chart')).toEqual(ns);
    expect(rec.dependencies('q-infra-gateway-alias')).toEqual(ns);
    expect(rec.dependencies('q-pool-chart')).toEqual(ns);
    // The model servers start only on a filled volume, after the pool.
    expect(rec.dependencies('q-model-service-chart')).toEqual([...ns, 'q-pool-chart', 'q-storage-pull-job', 'q-storage-pv', 'q-storage-pvc'].sort());
    // The route after the Gateway (infra) and the pool.
    expect(rec.dependencies('q-route-httproute')).toEqual([...ns, 'q-infra-chart', 'q-infra-gateway-alias', 'q-pool-chart'].sort());

    // Names and namespaces come from the plan.
    for (const r of rec.kubernetesObjects()) {
      const meta = (rec.revealed(r.name).metadata ?? {}) as { namespace?: string };
      if (r.type !== 'kubernetes:core/v1:Namespace' && r.type !== 'kubernetes:core/v1:PersistentVolume') expect(meta.namespace, r.name).toBe('llm-d-qwen3-06b-rke2');
      expect(kubernetesProblems(rec.revealed(r.name)), r.name).toEqual([]);
    }
    for (const chart of ['q-infra-chart', 'q-pool-chart', 'q-model-service-chart']) expect(rec.get(chart).inputs.namespace).toBe('llm-d-qwen3-06b-rke2');
    expect(rec.get('q-infra-chart').inputs.name).toBe('infra-qwen3-06b-rke2');
    expect(rec.get('q-pool-chart').inputs.name).toBe('gaie-qwen3-06b-rke2');
    expect(rec.get('q-model-service-chart').inputs.name).toBe('ms-qwen3-06b-rke2');
    expect(rec.get('q-infra-chart').transforms).toHaveLength(1);
    expect(rec.get('q-pool-chart').transforms).toHaveLength(1);
    expect(rec.get('q-model-service-chart').transforms).toHaveLength(1);

    // The token never appears in plaintext.
    expect(allStrings(rec.resources.map((r) => redactSecrets(r.inputs))).filter((s) => s.includes(TOKEN))).toEqual([]);

    expect(await valueOf(m.namespace)).toBe('llm-d-qwen3-06b-rke2');
    expect(await valueOf(m.gatewayHost)).toBe('infra-qwen3-06b-rke2-inference-gateway-istio.llm-d-qwen3-06b-rke2.svc.cluster.local');
    expect(await valueOf(m.gatewayUrl)).toBe('http://infra-qwen3-06b-rke2-inference-gateway-istio.llm-d-qwen3-06b-rke2.svc.cluster.local:80');
    expect(await valueOf(m.embeddingsUrl)).toBeUndefined();
    expect(await valueOf(m.pvcName)).toBe('qwen3-06b-rke2-model');
    // Namespace → pull secret → PV → PVC → pull Job → modelservice chart.
    expect(dependencyDepth(rec.resources.filter((r) => r.custom || r.remote))).toBe(6);
  });

  it('cloud embedder without storage: the embeddings Service after the model service, no route', async () => {
    const plan = llmdModel('cloud', 'bge-small-en-v1.5');
    let m!: LlmdModel;
    const rec = await record(() => {
      m = new LlmdModel('b', { plan });
    });
    expect(rec.children('b')).toEqual([
      'app-serving:llmd:EmbeddingService b-embeddings',
      'app-serving:llmd:InferencePool b-pool',
      'app-serving:llmd:LlmdInfra b-infra',
      'app-serving:llmd:ModelService b-model-service',
      'app-serving:model:ModelNamespace b-namespace',
    ]);
    expect(rec.children('b-namespace')).toEqual(['kubernetes:core/v1:Namespace b-namespace-namespace']);
    expect(rec.dependencies('b-model-service-chart')).toEqual(['b-namespace-namespace', 'b-pool-chart']);
    expect(rec.dependencies('b-embeddings-service')).toEqual(['b-model-service-chart', 'b-namespace-namespace']);
    // The cloud stack places the gateway pods on the model's nodes: one transform, on the infra chart only.
    expect(plan.patches.infra.map((p) => p.kind)).toEqual(['gateway-pod-placement']);
    expect(rec.get('b-infra-chart').transforms).toHaveLength(1);
    // Only the transform every chart has (rendered objects replaced delete-first): nothing to patch.
    expect(rec.get('b-pool-chart').transforms).toHaveLength(1);
    expect(await valueOf(m.embeddingsUrl)).toBe('http://ms-bge-small-embeddings.llm-d-bge-small.svc.cluster.local:8200');
    expect(await valueOf(m.pvcName)).toBeUndefined();
    expect(dependencyDepth(rec.resources.filter((r) => r.custom || r.remote))).toBe(4);
  });

  it('plans a model from its folder with the same result as the stack plan', async () => {
    const fromPlan = await record(() => new LlmdModel('s', { plan: llmdModel('kind', 'Sim') }));
    const fromFolder = await record(() => new LlmdModel('s', { folder: { modelsDir: MODELS_DIR, name: 'Sim' } }));
    const view = (r: typeof fromPlan) => r.resources.map((x) => ({ type: x.type, name: x.name, parent: x.parent, deps: x.dependencies, inputs: x.inputs })).sort((a, b) => a.name.localeCompare(b.name));
    expect(view(fromFolder)).toEqual(view(fromPlan));
  });

  it('plans an on-prem Harbor model from its folder as the example stack does (the README example)', async () => {
    const view = (r: Awaited<ReturnType<typeof record>>) => r.resources.map((x) => ({ type: x.type, name: x.name, deps: x.dependencies, inputs: x.inputs })).sort((a, b) => a.name.localeCompare(b.name));
    const fromPlan = await record(() => new LlmdModel('q', { plan: llmdModel('example', 'Qwen3-0.6B-rke2'), ...harbor }));
    const fromFolder = await record(
      () =>
        new LlmdModel('q', {
          folder: {
            modelsDir: MODELS_DIR,
            name: 'Qwen3-0.6B-rke2',
            cloudProvider: 'on-prem',
            nodeSelector: { workload: 'gpu' },
            gpuToleration: { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' },
            modelSource: { harborRef: 'harbor.example.com/ai-models/qwen3-0.6b:2025-05', modelUri: 'hub/Qwen/Qwen3-0.6B', storageSize: '10Gi', hostpathNode: 'gpu-node-1' },
          },
          harborHostname: 'harbor.example.com',
          harborUser: 'robot$k8s-puller',
          harborToken: pulumi.secret(TOKEN),
        }),
    );
    expect(view(fromFolder)).toEqual(view(fromPlan));
  });

  it('reports bad arguments by property', async () => {
    const plan = llmdModel('example', 'Qwen3-0.6B-rke2');
    await expect(record(() => new LlmdModel('q', { plan }))).rejects.toMatchObject({ propertyPath: 'harborToken' });
    await expect(record(() => new LlmdModel('q', {}))).rejects.toMatchObject({ propertyPath: 'plan' });
    await expect(record(() => new LlmdModel('q', { plan, folder: { modelsDir: MODELS_DIR, name: 'Sim' } }))).rejects.toMatchObject({ propertyPath: 'plan' });
    await expect(record(() => new LlmdModel('q', { folder: { modelsDir: MODELS_DIR, name: 'Nope' } }))).rejects.toMatchObject({
      propertyPath: 'folder',
      reason: expect.stringContaining('no model folder'),
    });
  });
});
