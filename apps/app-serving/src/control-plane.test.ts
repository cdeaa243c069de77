import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyPatches, isStackError, loadStackFile, modelReleases, planDeployment, type LlmdModelPlan, type StackError } from '@app-serving/core';
import { renderStack } from '@app-serving/pulumi-components/render';
import {
  applyObjects,
  clusterApiVersions,
  createNodes,
  describeObject,
  ensureNamespaces,
  istioGatewayStandIn,
  list,
  renderedManifests,
  renderReleases,
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
 * The KServe rule both ways: a model folder that sets `scaling` plans to an LLMInferenceService the
 * server admits (the plan adds no `replicas` then), and one that sets both is refused by validate
 * with file, line and key, before anything reaches a cluster.
 */
describe('replicas and scaling, from a values file to the API server', () => {
  const KSERVE_FOLDER = 'generative/Qwen2.5-0.5B-Instruct/kserve-qwen25-05b/values.yaml';
  function modelsWith(extra: string): string {
    const dir = mkdtempSync(join(tmpdir(), 'app-serving-kserve-'));
    cpSync(MODELS, join(dir, 'models'), { recursive: true });
    const file = join(dir, 'models', KSERVE_FOLDER);
    writeFileSync(file, `${readFileSync(file, 'utf8').replace(/^replicas: .*\n/m, '')}${extra}`);
    return join(dir, 'models');
  }

  it('scaling alone: admitted', async () => {
    // Pulumi.kserve.yaml autoscales the model: the stack's autoscaling is the spec's scaling (an
    // overlay's own scaling beside it is refused by validate).
    const models = modelsWith('');
    const plan = planDeployment(loadStackFile(join(APP, 'Pulumi.kserve.yaml'), 'Pulumi.kserve.yaml', { checkRules: false }), models);
    const objects = renderedManifests((await renderStack(plan, { homeDir: '/home/user' })).resources);
    await ensureNamespaces(cluster, objects);
    expect(await tryApply(cluster, objects.filter((o) => o.kind !== 'Namespace'), { dryRun: true })).toEqual([]);
    const service = objects.find((o) => o.kind === 'LLMInferenceService')!;
    expect((service.spec as Record<string, unknown>).replicas).toBeUndefined();
    expect((service.spec as Record<string, unknown>).scaling).toMatchObject({ minReplicas: 1, maxReplicas: 3, wva: { hpa: {} } });
  });

  it('both: refused by validate, at the file, line and key', () => {
    const models = modelsWith('replicas: 2\nscaling:\n  minReplicas: 1\n  maxReplicas: 2\n  wva:\n    hpa: {}\n');
    let error: unknown;
    try {
      planDeployment(loadStackFile(join(APP, 'Pulumi.kserve.yaml'), 'Pulumi.kserve.yaml', { checkRules: false }), models);
    } catch (e) {
      error = e;
    }
    expect(isStackError(error)).toBe(true);
    const issue = (error as StackError).issues.find((i) => /mutually exclusive/.test(i.message));
    expect(issue).toMatchObject({ path: 'replicas', file: expect.stringMatching(/kserve-qwen25-05b\/values\.yaml$/), line: expect.any(Number) });
  });
});

/**
 * The cloud example on nodes shaped the way Pulumi.cloud.yaml expects: a GPU pool labelled
 * `cloud.google.com/gke-accelerator: nvidia-l4` and tainted `nvidia.com/gpu:NoSchedule`, and CPU
 * nodes labelled `nodegroup: cpu`. What render produces and what the published charts render with
 * the plan's values (real Helm, the plan's post-render patches applied) are applied for real; Istio's
 * gateway is stood in for as Istio's controller makes it, from the Gateway and its parameters
 * ConfigMap the chart rendered (test-cluster controllers.ts). The real scheduler decides where each
 * pod runs.
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
    const charts = await renderReleases(models.flatMap(modelReleases), { applyPatches, apiVersions: await clusterApiVersions(cluster) });
    await applyObjects(cluster, charts);
    for (const m of models) await istioGatewayStandIn(cluster, m.namespace, m.gateway.name);
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
      [embedder.inferencePool.epp]: 'gke-cpu-1',
      [embedder.gateway.service]: 'gke-cpu-1',
    });
    const service = embedder.embeddingService!;
    await waitFor(cluster, `/apis/discovery.k8s.io/v1/namespaces/${embedder.namespace}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3D${service.name}`, (l) => l.items.some((s: any) => s.endpoints?.some((e: any) => e.conditions?.ready)));
  }, 180_000);
});
