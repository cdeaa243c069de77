import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { applyPatches, loadStackFile, modelReleases, planDeployment, type LlmdModelPlan } from '@app-serving/core';
import { renderStack } from '@app-serving/pulumi-components/render';
import {
  applyObjects,
  clusterApiVersions,
  createNodes,
  forwardPodPorts,
  list,
  OUTCOME_ANNOTATION,
  podFileSystem,
  publishedChart,
  renderedManifests,
  renderReleases,
  ensureNamespaces,
  istioGatewayStandIn,
  startCluster,
  waitFor,
  type KubeObject,
  type TestCluster,
} from '@app-serving/test-cluster';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAiServer } from './openai-server.ts';
import { cli, REPO_ROOT } from './run-cli.ts';

/**
 * The example stack (on-prem RKE2, Harbor, a generative and an embedding model) deployed into a real
 * control plane whose nodes are kwok's: the plain objects `render` produces are applied for real,
 * the scheduler places every pod, the Job controller runs the pull Jobs, the EndpointSlice controller
 * fills the Services. What the charts create is rendered by real Helm from the published chart
 * packages with the very values and patches the plan hands them. Then `app-serving verify --kubeconfig` runs
 * through the API server: pods and Jobs from their real status, the weights marker by exec, and
 * chat/completions/embeddings through the API server's port-forward to a local OpenAI server.
 */
const STACK = 'apps/app-serving/Pulumi.example.yaml';
const config = loadStackFile(join(REPO_ROOT, STACK), STACK, { checkRules: false });
const plan = planDeployment(config, join(REPO_ROOT, 'models'));
const models = plan.models as LlmdModelPlan[];
const generative = models.find((m) => m.category === 'generative')!;
const embedder = models.find((m) => m.category === 'embedder')!;

/** The on-prem shape the example expects: tainted GPU nodes (one is the hostPath node), CPU nodes. */
const TAINT = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' as const };
const NODES = [
  { name: 'gpu-node-1', labels: { workload: 'gpu' }, taints: [TAINT], gpus: 2 },
  { name: 'gpu-node-2', labels: { workload: 'gpu' }, taints: [TAINT], gpus: 2 },
  { name: 'cpu-node-1', labels: { workload: 'cpu' } },
];

let cluster: TestCluster;
let server: string;

beforeAll(async () => {
  cluster = await startCluster();
  await createNodes(cluster, NODES);
}, 600_000);
afterAll(async () => cluster?.stop());

async function renderedObjects(): Promise<KubeObject[]> {
  return renderedManifests((await renderStack(plan, { homeDir: '/home/user' })).resources);
}

/**
 * The model's Helm releases as real Helm renders them from the published packages, with the plan's
 * values (or `values`, to break one) and post-render patches
 * (`only`: the releases, by chart key).
 */
async function chartObjects(model: LlmdModelPlan, only: readonly string[], values: Record<string, unknown> = {}): Promise<KubeObject[]> {
  const releases = modelReleases(model)
    .filter((r) => only.includes(r.key))
    .map((r) => ({ ...r, chart: { chart: publishedChart(r.chart.chart, r.chart.version)!, version: r.chart.version }, values: values[r.key] ?? r.values }));
  return renderReleases(releases, { applyPatches, apiVersions: await clusterApiVersions(cluster) });
}

async function readyPods(namespace: string): Promise<any[]> {
  const pods = await list(cluster, `/api/v1/namespaces/${namespace}/pods`);
  return pods.filter((p) => p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'));
}

/** Every Ready pod's port-forward goes to the local OpenAI server; decode pods get the weights marker. */
async function wirePods(model: LlmdModelPlan, marker: boolean): Promise<void> {
  const port = Number(new URL(server).port);
  for (const pod of await readyPods(model.namespace)) {
    await forwardPodPorts(cluster, model.namespace, pod.metadata.name, pod.spec.containers.flatMap((c: any) => (c.ports ?? []).map((p: any) => p.containerPort)), { port });
    if (pod.metadata.labels['llm-d.ai/role'] === 'decode') await podFileSystem(cluster, model.namespace, pod.metadata.name, marker && model.storage ? { [model.storage.marker]: '' } : {});
  }
}

async function verify(args: string[] = [], as: { stack?: string; modelsDir?: string; kubeconfig?: string } = {}): Promise<{ code: number | null; json: any; stderr: string }> {
  const result = await cli(['verify', '--stack', as.stack ?? STACK, '--models-dir', as.modelsDir ?? join(REPO_ROOT, 'models'), '--kubeconfig', as.kubeconfig ?? cluster.kubeconfigPath, '--timeout', '10s', '--deadline', '90s', '--json', ...args]);
  let json: any = null;
  try {
    json = JSON.parse(result.stdout);
  } catch {}
  return { code: result.code, json, stderr: result.stderr };
}

function checksOf(json: any, model: string): Record<string, { status: string; detail: string }> {
  const entry = json.models.find((m: any) => m.name === model);
  return Object.fromEntries(entry.checks.map((c: any) => [c.name, { status: c.status, detail: `${c.message} (cause: ${c.failure?.cause ?? 'none'})` }]));
}

/** The Role of docs/verify.md's RBAC section, as written there. */
function documentedRole(): any {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'verify.md'), 'utf8');
  const section = doc.slice(doc.indexOf('\n## RBAC\n'));
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
  const role = parseAllDocuments(yaml).map((d) => d.toJS()).find((o: any) => o?.kind === 'Role');
  expect(role, 'docs/verify.md has a Role').toBeDefined();
  return role;
}

/** Polls until `probe` holds (RBAC takes effect through the API server's caches); a hang guard of 2 min. */
async function waitUntil(probe: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 120_000;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error('RBAC did not take effect within 2 min');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the example stack on a simulated on-prem cluster', () => {
  it('schedules what render produces where the plan says: the hostPath PV binds, the pull Job runs on its node and completes', async () => {
    const objects = await renderedObjects();
    await ensureNamespaces(cluster, objects);
    // A PV for the embedder's claim, as the cluster's `hostpath` provisioner would make it.
    const claim = objects.find((o) => o.kind === 'PersistentVolumeClaim' && o.metadata.namespace === embedder.namespace) as any;
    await applyObjects(cluster, [
      { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: `${embedder.slug}-provisioned` }, spec: { capacity: { storage: claim.spec.resources.requests.storage }, accessModes: claim.spec.accessModes, storageClassName: claim.spec.storageClassName ?? '', hostPath: { path: `/var/lib/hostpath/${embedder.slug}` }, claimRef: { namespace: embedder.namespace, name: claim.metadata.name } } },
    ]);
    await applyObjects(cluster, objects.filter((o) => o.kind !== 'Namespace'));

    const storage = generative.storage!;
    const pvc = await waitFor(cluster, `/api/v1/namespaces/${generative.namespace}/persistentvolumeclaims/${storage.pvc}`, (c) => c.status?.phase === 'Bound');
    expect(pvc.spec.volumeName).toBe(storage.pv);
    const job = await waitFor(cluster, `/apis/batch/v1/namespaces/${generative.namespace}/jobs/${storage.job}`, (j) => j.status?.succeeded === 1);
    expect(job.status.conditions.map((c: any) => c.type)).toContain('Complete');
    const [jobPod] = await list(cluster, `/api/v1/namespaces/${generative.namespace}/pods?labelSelector=job-name%3D${storage.job}`);
    expect(jobPod.spec.nodeName).toBe('gpu-node-1');
    await waitFor(cluster, `/apis/batch/v1/namespaces/${embedder.namespace}/jobs/${embedder.storage!.job}`, (j) => j.status?.succeeded === 1);
  }, 120_000);

  it('places the model servers by the values we give the charts, and the embeddings Service gets endpoints', async () => {
    // Every object the three charts render, and Istio's gateway as its controller makes it from the chart's Gateway.
    const ALL = ['infra', 'gaie', 'modelService'];
    await applyObjects(cluster, [...(await chartObjects(generative, ALL)), ...(await chartObjects(embedder, ALL))]);
    for (const model of models) await istioGatewayStandIn(cluster, model.namespace, model.gateway.name);
    for (const model of models) {
      for (const d of await list(cluster, `/apis/apps/v1/namespaces/${model.namespace}/deployments`)) {
        await waitFor(cluster, `/apis/apps/v1/namespaces/${model.namespace}/deployments/${d.metadata.name}`, (x) => x.status?.readyReplicas >= 1);
      }
    }
    const [decode] = await list(cluster, `/api/v1/namespaces/${generative.namespace}/pods?labelSelector=llm-d.ai%2Frole%3Ddecode`);
    expect(decode.spec.nodeName).toMatch(/^gpu-node-/);
    const [embed] = await list(cluster, `/api/v1/namespaces/${embedder.namespace}/pods?labelSelector=llm-d.ai%2Frole%3Ddecode`);
    expect(embed.spec.nodeName).toBe('cpu-node-1');
    const service = embedder.embeddingService!;
    const slices = await waitFor(cluster, `/apis/discovery.k8s.io/v1/namespaces/${embedder.namespace}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3D${service.name}`, (l) => l.items.some((s: any) => s.endpoints?.some((e: any) => e.conditions?.ready)));
    expect(slices.items[0].endpoints[0].targetRef.name).toBe(embed.metadata.name);
    expect(slices.items[0].ports[0].port).toBe(service.targetPort);
  }, 120_000);

  it('verify --kubeconfig passes through the API server: readiness, the weights marker by exec, the HTTP checks by port-forward', async () => {
    server = await openAiServer([generative.modelServer.servedModelName, embedder.modelServer.servedModelName]);
    for (const model of models) await wirePods(model, true);
    const run = await verify();
    expect(run.stderr).toBe('');
    const failing = run.json.models.flatMap((m: any) => m.checks.filter((c: any) => c.status === 'fail').map((c: any) => `${m.name}/${c.name}: ${c.message}`));
    expect(failing).toEqual([]);
    expect(run.code).toBe(0);
    expect(checksOf(run.json, generative.name).ready!.status).toBe('pass');
    expect(checksOf(run.json, generative.name).pulled!.status).toBe('pass');
    expect(checksOf(run.json, generative.name).chat!.status).toBe('pass');
    expect(checksOf(run.json, embedder.name).embeddings!.status).toBe('pass');

    // The weights marker gone from the decode pod's volume: the weights check fails, and says so.
    const [decode] = await readyPods(generative.namespace).then((pods) => pods.filter((p) => p.metadata.labels['llm-d.ai/role'] === 'decode'));
    rmSync(join(cluster.dir, 'pods', generative.namespace, decode.metadata.name, generative.storage!.marker));
    const missing = await verify(['--model', generative.name]);
    expect(missing.code).toBe(1);
    expect(checksOf(missing.json, generative.name).pulled).toEqual({ status: 'fail', detail: expect.stringContaining(generative.storage!.marker) });
  }, 120_000);

  it("verify of an autoscaled model as a user bound to exactly docs/verify.md's Role: every check passes (without its autoscaling rules, ready fails on RBAC)", async () => {
    // The example with its generative model autoscaled: KEDA's ScaledObject (and the PodMonitors) beside the running pods.
    const dir = mkdtempSync(join(tmpdir(), 'app-serving-verify-rbac-'));
    const stack = join(dir, 'Pulumi.example.yaml');
    const autoscaled = readFileSync(join(REPO_ROOT, STACK), 'utf8')
      .replace('config:\n', 'config:\n  app-serving:prometheus:\n    address: http://prometheus-operated.monitoring.svc:9090\n')
      .replace(`      - name: ${generative.name}\n`, `      - name: ${generative.name}\n        autoscaling:\n          maxReplicas: 2\n`);
    writeFileSync(stack, autoscaled);
    // Its model folders, the decode replicas left to the autoscaler (validate refuses both owners).
    const modelsDir = join(dir, 'models');
    cpSync(join(REPO_ROOT, 'models'), modelsDir, { recursive: true });
    const ms = join(modelsDir, 'generative', generative.name, generative.releases.modelService, 'values.yaml');
    writeFileSync(ms, readFileSync(ms, 'utf8').replace(/^decode:\n {2}replicas: \d+\n/m, 'decode:\n'));
    try {
      const scaledPlan = planDeployment(loadStackFile(stack, 'Pulumi.example.yaml', { checkRules: false }), modelsDir);
      const scaled = scaledPlan.models.find((m) => m.name === generative.name) as LlmdModelPlan;
      expect(scaled.autoscaling?.targets.map((t) => t.scaledObject)).toEqual([generative.modelServer.decodeDeployment]);
      const objects = renderedManifests((await renderStack(scaledPlan, { homeDir: '/home/user' })).resources).filter((o) => ['ScaledObject', 'PodMonitor'].includes(o.kind));
      expect(objects.map((o) => o.kind)).toContain('ScaledObject');
      await applyObjects(cluster, objects);
      // The pods answer again (a server of this test's own) and the weights marker is back.
      server = await openAiServer([generative.modelServer.servedModelName, embedder.modelServer.servedModelName]);
      for (const model of models) await wirePods(model, true);

      // The Role exactly as docs/verify.md gives it, bound to the cluster's `nobody` in each model namespace.
      const role = documentedRole();
      const bind = async (rules: object[]) => {
        for (const model of models) {
          await applyObjects(cluster, [
            { ...role, metadata: { name: role.metadata.name, namespace: model.namespace }, rules },
            { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'app-serving-verify', namespace: model.namespace }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.metadata.name }, subjects: [{ kind: 'User', name: 'nobody', apiGroup: 'rbac.authorization.k8s.io' }] },
          ]);
        }
      };
      const mayGet = async (group: string, resource: string) =>
        (await cluster.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', group, resource, namespace: generative.namespace } } }, { user: 'nobody' })).body?.status?.allowed === true;
      const asNobody = { stack, modelsDir, kubeconfig: cluster.kubeconfigFor('nobody') };

      // Without the rules for KEDA's objects (the Role as it was): ready fails, naming the rule.
      await bind(role.rules.filter((r: { apiGroups: string[] }) => !r.apiGroups.includes('keda.sh') && !r.apiGroups.includes('autoscaling')));
      await waitUntil(async () => (await mayGet('', 'pods')) && !(await mayGet('keda.sh', 'scaledobjects')));
      const denied = await verify(['--model', generative.name], asNobody);
      expect(denied.code).toBe(1);
      expect(checksOf(denied.json, generative.name).ready).toEqual({ status: 'fail', detail: expect.stringMatching(/forbidden/) });

      await bind(role.rules);
      await waitUntil(() => mayGet('keda.sh', 'scaledobjects'));
      const run = await verify([], asNobody);
      expect(run.stderr).toBe('');
      // (An info never fails a run: the embedder's gateway-rejects-embeddings explains an answer.)
      const failing = run.json.models.flatMap((m: any) => m.checks.filter((c: any) => c.status === 'fail' || c.status === 'skip').map((c: any) => `${m.name}/${c.name}: ${c.status} ${c.message}`));
      expect(failing).toEqual([]);
      expect(run.code).toBe(0);
      expect(checksOf(run.json, generative.name).ready!.detail).toMatch(/autoscaling decode: 0 current, 0 desired \(1–2 on queue-depth\)|no HPA keda-hpa-/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      for (const model of models) {
        await cluster.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/namespaces/${model.namespace}/rolebindings/app-serving-verify`);
        await cluster.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/namespaces/${model.namespace}/roles/app-serving-verify`);
      }
    }
  }, 180_000);

  it('a broken deployment fails verify with the reason, in bounded time', async () => {
    // Decode pods without the GPU toleration (Pending on the taint), a pull Job that fails, and an
    // embeddings Service with no pods behind it.
    const noToleration = { ...(generative.values.modelService as any).decode, tolerations: [] };
    await cluster.request('DELETE', `/apis/apps/v1/namespaces/${generative.namespace}/deployments/${generative.modelServer.decodeDeployment}?propagationPolicy=Foreground`);
    await cluster.request('DELETE', `/apis/apps/v1/namespaces/${embedder.namespace}/deployments/${embedder.modelServer.decodeDeployment}?propagationPolicy=Foreground`);
    const job = (await renderedObjects()).find((o) => o.kind === 'Job' && o.metadata.namespace === embedder.namespace) as any;
    await cluster.request('DELETE', `/apis/batch/v1/namespaces/${embedder.namespace}/jobs/${job.metadata.name}?propagationPolicy=Foreground`);
    // The decode and pull Job pods gone (the EPP's and the gateway's stay).
    await waitFor(cluster, `/api/v1/namespaces/${embedder.namespace}/pods`, (l) => !l.items.some((p: any) => p.metadata.labels?.['llm-d.ai/role'] === 'decode' || p.metadata.labels?.['job-name']));
    job.spec.template.metadata = { ...job.spec.template.metadata, annotations: { ...job.spec.template.metadata?.annotations, [OUTCOME_ANNOTATION]: 'fail' } };
    job.spec.backoffLimit = 0;
    const decode = (await chartObjects(generative, ['modelService'], { modelService: { ...(generative.values.modelService as any), decode: noToleration } })).filter((o) => o.kind === 'Deployment' && o.metadata.name === generative.modelServer.decodeDeployment);
    expect(decode).toHaveLength(1);
    await applyObjects(cluster, [job, ...decode]);
    await waitFor(cluster, `/apis/batch/v1/namespaces/${embedder.namespace}/jobs/${job.metadata.name}`, (j) => j.status?.failed >= 1);
    await waitFor(cluster, `/api/v1/namespaces/${generative.namespace}/pods?labelSelector=llm-d.ai%2Frole%3Ddecode`, (l) => l.items.some((p: any) => p.status?.conditions?.some((c: any) => c.reason === 'Unschedulable')));

    const run = await verify();
    // Each check failed with its own reason, none at the 90 s deadline.
    expect(run.code).toBe(1);
    const g = checksOf(run.json, generative.name);
    expect(g.ready!.status).toBe('fail');
    expect(g.ready!.detail).toMatch(/untolerated taint/);
    expect(g.ready!.detail).toMatch(/no node fits the pod/);
    const e = checksOf(run.json, embedder.name);
    expect(e.ready!.status).toBe('fail');
    expect(e.ready!.detail).toMatch(new RegExp(`${job.metadata.name}.*fail`, 'i'));
    expect(e.ready!.detail).toMatch(/no decode pods/);
    expect(e.embeddings).toEqual({ status: 'skip', detail: expect.stringMatching(/^not run: no embeddings endpoint/) });
  }, 180_000);
});
