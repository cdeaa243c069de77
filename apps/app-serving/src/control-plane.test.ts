import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadStackFile, planDeployment, type LlmdModelPlan } from '@app-serving/core';
import { renderStack } from '@app-serving/pulumi-components/render';
import {
  applyObjects,
  createNodes,
  decodeDeployment,
  describeObject,
  eppDeployment,
  ensureNamespaces,
  eppService,
  istioGateway,
  list,
  renderedManifests,
  startCluster,
  tryApply,
  waitFor,
  type KubeObject,
  type TestCluster,
} from '@app-serving/test-cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Admission by a real kube-apiserver (with the upstream CRDs of ../shared/upstream/crds): every plain
 * Kubernetes object and custom resource that `render` produces for each example stack is
 * server-side applied with dryRun=All — defaulting, core validation, the CRDs' OpenAPI schemas and
 * CEL rules all run — and must be accepted. Helm charts are not rendered here (their templates are
 * not available), so what they create is out of reach of this test.
 */
const APP = join(import.meta.dirname, '..');
const MODELS = join(APP, '..', '..', 'models');
const STACKS = readdirSync(APP)
  .filter((f) => /^Pulumi\.[a-z0-9-]+\.yaml$/.test(f) && f !== 'Pulumi.TEMPLATE.yaml' && f !== 'Pulumi.yaml')
  .sort();

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startCluster();
}, 600_000);
afterAll(async () => cluster?.stop());

function planFile(file: string) {
  return planDeployment(loadStackFile(join(APP, file), file, { checkRules: false }), MODELS);
}

async function renderFile(file: string): Promise<KubeObject[]> {
  return renderedManifests((await renderStack(planFile(file), { homeDir: '/home/user' })).resources);
}

describe('every object render produces is admitted by a real API server', () => {
  it.each(STACKS)('%s', async (file) => {
    const started = Date.now();
    const objects = await renderFile(file);
    expect(objects.length).toBeGreaterThan(0);
    // Namespaces for real (a dry-run create in a missing namespace is refused for that alone),
    // with those a cluster has before the stack (KServe's own).
    await ensureNamespaces(cluster, objects);
    const rejections = await tryApply(cluster, objects.filter((o) => o.kind !== 'Namespace'), { dryRun: true });
    expect(rejections).toEqual([]);
    console.log(`${file}: ${objects.length} objects admitted (${[...new Set(objects.map((o) => o.kind))].sort().join(', ')}) in ${Date.now() - started} ms`);
  });

  it('the check can fail: an LLMInferenceService with both replicas and scaling is refused by the CRD rule', async () => {
    const objects = await renderFile('Pulumi.kserve.yaml');
    const service = objects.find((o) => o.kind === 'LLMInferenceService');
    expect(service, 'the kserve example renders an LLMInferenceService').toBeDefined();
    await ensureNamespaces(cluster, objects);
    const spec = service!.spec as Record<string, unknown>;
    const { replicas: _replicas, ...withoutReplicas } = spec;
    const scaling = { minReplicas: 1, maxReplicas: 2, wva: { hpa: {} } };
    // Scaling alone is accepted: what is refused below is the pair, not the field.
    expect(await tryApply(cluster, [{ ...service!, spec: { ...withoutReplicas, scaling } } as KubeObject], { dryRun: true })).toEqual([]);
    const both = { ...service!, spec: { ...withoutReplicas, replicas: 1, scaling } } as KubeObject;
    const rejections = await tryApply(cluster, [both], { dryRun: true });
    expect(rejections.map((r) => r.object)).toEqual([describeObject(service!)]);
    expect(rejections[0]!.message).toContain('replicas and scaling are mutually exclusive');
  });
});

/**
 * The cloud example on nodes shaped the way Pulumi.cloud.yaml expects: a GPU pool labelled
 * `cloud.google.com/gke-accelerator: nvidia-l4` and tainted `nvidia.com/gpu:NoSchedule`, and CPU
 * nodes labelled `nodegroup: cpu`. What render produces is applied for real; the charts' model
 * servers and EPP and Istio's gateway are stood in for from the values we give them
 * (test-cluster stand-ins.ts); the real scheduler decides where each pod runs.
 */
describe('the cloud example on a simulated GKE-like cluster', () => {
  it('every pod lands where the plan means it to, and the embeddings Service gets endpoints', async () => {
    await createNodes(cluster, [
      { name: 'gke-l4-1', labels: { 'cloud.google.com/gke-accelerator': 'nvidia-l4' }, taints: [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }], gpus: 1 },
      { name: 'gke-cpu-1', labels: { nodegroup: 'cpu' } },
    ]);
    const plan = planFile('Pulumi.cloud.yaml');
    const objects = await renderFile('Pulumi.cloud.yaml');
    await ensureNamespaces(cluster, objects);
    await applyObjects(cluster, objects.filter((o) => o.kind !== 'Namespace'));
    const models = plan.models as LlmdModelPlan[];
    for (const m of models) {
      const ports = [...new Set([m.modelServer.port, m.modelServer.servicePort, m.embeddingService?.targetPort].filter((p): p is number => typeof p === 'number'))];
      await applyObjects(cluster, [decodeDeployment({ namespace: m.namespace, name: m.modelServer.decodeDeployment, values: m.values.modelService as Record<string, unknown>, ports })]);
      if (m.category === 'generative') {
        await applyObjects(cluster, [
          eppDeployment({ namespace: m.namespace, name: m.inferencePool.epp, pool: m.inferencePool.name, values: m.values.gaie as Record<string, unknown> }),
          eppService({ namespace: m.namespace, name: m.inferencePool.epp, pool: m.inferencePool.name }),
          ...istioGateway({ namespace: m.namespace, gateway: m.gateway.name, service: m.gateway.service, port: m.gateway.port, patches: m.patches.infra }),
        ]);
      }
    }
    const placed: Record<string, string> = {};
    for (const m of models) {
      for (const d of await list(cluster, `/apis/apps/v1/namespaces/${m.namespace}/deployments`)) {
        await waitFor(cluster, `/apis/apps/v1/namespaces/${m.namespace}/deployments/${d.metadata.name}`, (x) => x.status?.readyReplicas >= 1);
      }
      for (const pod of await list(cluster, `/api/v1/namespaces/${m.namespace}/pods`)) {
        placed[pod.metadata.generateName.replace(/-[a-z0-9]+-$/, '')] = pod.spec.nodeName;
      }
    }
    const generative = models.find((m) => m.category === 'generative')!;
    const embedder = models.find((m) => m.category === 'embedder')!;
    expect(placed).toEqual({
      [generative.modelServer.decodeDeployment]: 'gke-l4-1',
      // The control pods follow the model's nodeSelector (no controlNodeSelector in this stack):
      // on the tainted GPU pool, which they can only join because they carry the GPU toleration.
      [generative.inferencePool.epp]: 'gke-l4-1',
      [generative.gateway.service]: 'gke-l4-1',
      [embedder.modelServer.decodeDeployment]: 'gke-cpu-1',
    });
    const service = embedder.embeddingService!;
    await waitFor(cluster, `/apis/discovery.k8s.io/v1/namespaces/${embedder.namespace}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3D${service.name}`, (l) => l.items.some((s: any) => s.endpoints?.some((e: any) => e.conditions?.ready)));
  });
});
