import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { applyPatches, loadStackFile, modelReleases, planDeployment, type AutoscalingPlan, type LlmdModelPlan, type LlmdRouterModelPlan } from '@app-serving/core';
import {
  applyObjects,
  clusterApiVersions,
  createNodes,
  ensureNamespaces,
  publishedChart,
  renderReleases,
  startCluster,
  startKeda,
  startPrometheus,
  waitFor,
  type KubeObject,
  type RunningKeda,
  type StandInPrometheus,
  type TestCluster,
} from '@app-serving/test-cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Autoscaling for real: KEDA's operator and metrics server (built from its Go module) against the
 * test control plane, whose controller-manager runs the real HPA controller, reading the external
 * metric through the API server's aggregation layer; a stand-in Prometheus on 127.0.0.1 answers the
 * ScaledObject's query with the queue depth the test sets. The objects are core's, planned from a
 * stack file; the decode Deployment is the chart's (llm-d-modelservice rendered by real Helm with the
 * plan's values and patches; its pods played by kwok).
 *
 * The stand-in Prometheus answers only the query core planned: a ScaledObject with another query or
 * another target scales nothing, and these tests fail (their waits are hang guards only, generous
 * for a machine at load 20).
 */
const APP = join(import.meta.dirname, '..');
const MODELS = join(APP, '..', '..', 'models');
const GUARD = 240_000;

let cluster: TestCluster;
let keda: RunningKeda;
let prometheus: StandInPrometheus;
let work: string;

beforeAll(async () => {
  prometheus = await startPrometheus();
  // The HPA controller every 2 s (its default is 15 s): the same controller, less waiting.
  cluster = await startCluster({ aggregation: true, controllerManagerArgs: ['--horizontal-pod-autoscaler-sync-period=2s'] });
  await createNodes(cluster, [{ name: 'gpu-1', labels: { workload: 'gpu' }, gpus: 8 }]);
  keda = await startKeda(cluster);
  work = mkdtempSync(join(tmpdir(), 'app-serving-autoscaling-'));
  // The simulator model, without its fixed replica count (validate refuses one beside autoscaling).
  cpSync(join(MODELS, 'generative', 'Sim'), join(work, 'models', 'generative', 'Sim'), { recursive: true });
  const values = join(work, 'models', 'generative', 'Sim', 'ms-sim', 'values.yaml');
  writeFileSync(values, readFileSync(values, 'utf8').replace(/^  replicas: 1\n/m, ''));
}, 900_000);
afterAll(async () => {
  await keda?.stop();
  await cluster?.stop();
  await prometheus?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Plans the Sim model with `autoscaling` and the stand-in Prometheus, as `pulumi up` would. */
function planModel(autoscaling: string, namespace: string): LlmdModelPlan {
  const file = join(work, `Pulumi.${namespace}.yaml`);
  writeFileSync(
    file,
    `config:\n  app-serving:cloudProvider: cloud\n  app-serving:prometheus:\n    address: ${prometheus.url}\n  app-serving:models:\n    generative:\n      - name: Sim\n        nameSpace: ${namespace}\n        nodeSelector: { workload: gpu }\n        autoscaling: ${autoscaling}\n`,
  );
  const model = planDeployment(loadStackFile(file), join(work, 'models')).models[0]!;
  if (model.platform !== 'llm-d' || model.upstream !== '2026-02' || !model.autoscaling) throw new Error('an autoscaled llm-d model on the 2026-02 set was expected');
  return model;
}

/** The decode Deployment as the chart renders it from the plan's values, then the autoscaling objects. */
async function deploy(model: LlmdModelPlan, autoscaling: AutoscalingPlan): Promise<string> {
  const releases = modelReleases(model)
    .filter((r) => r.key === 'modelService')
    .map((r) => ({ ...r, chart: { chart: publishedChart(r.chart.chart, r.chart.version)!, version: r.chart.version } }));
  const rendered = await renderReleases(releases, { applyPatches, apiVersions: await clusterApiVersions(cluster) });
  expect(rendered.map((o) => `${o.kind}/${o.metadata.name}`)).toContain(`Deployment/${model.modelServer.decodeDeployment}`);
  const objects = [...rendered, ...autoscaling.objects] as KubeObject[];
  await ensureNamespaces(cluster, objects);
  await applyObjects(cluster, objects);
  return `/apis/apps/v1/namespaces/${model.namespace}/deployments/${model.modelServer.decodeDeployment}`;
}

/** Waits (hang guard only) until the Deployment wants `replicas` and has them all ready. */
async function scaledTo(path: string, replicas: number): Promise<void> {
  try {
    await waitFor(cluster, path, (d) => d.spec.replicas === replicas && (d.status.readyReplicas ?? 0) === replicas && (d.status.replicas ?? 0) === replicas, GUARD);
  } catch (error) {
    const { operator } = keda.logs();
    throw new Error(`${(error as Error).message}\nqueries Prometheus received: ${JSON.stringify(prometheus.queries())}\nKEDA operator (last lines):\n${operator.split('\n').slice(-15).join('\n')}`);
  }
}

describe('KEDA and the HPA controller scale the decode pods on the queue depth core plans', () => {
  it('scales up when requests wait, and back down to minReplicas when the queue drains', async () => {
    const model = planModel('{ minReplicas: 1, maxReplicas: 3, target: 5, cooldown: 5s, pollingInterval: 1s }', 'llm-d-scale');
    const autoscaling = model.autoscaling!;
    const query = autoscaling.targets[0]!.query.query;
    prometheus.set(query, 0);
    const path = await deploy(model, autoscaling);
    await scaledTo(path, 1);
    // KEDA made the HPA for the Deployment, on the external metric of the trigger.
    const hpa = await waitFor(cluster, `/apis/autoscaling/v2/namespaces/${model.namespace}/horizontalpodautoscalers/keda-hpa-${autoscaling.targets[0]!.scaledObject}`, (h) => h.spec, GUARD);
    expect(hpa.spec).toMatchObject({ scaleTargetRef: { kind: 'Deployment', name: model.modelServer.decodeDeployment }, minReplicas: 1, maxReplicas: 3 });
    expect(hpa.spec.metrics[0]).toMatchObject({ type: 'External', external: { target: { type: 'AverageValue' } } });

    // 12 requests waiting, 5 per replica: ⌈12 / 5⌉ = 3.
    prometheus.set(query, 12);
    await scaledTo(path, 3);
    // The metric reached the HPA through the external metrics API (the aggregation layer).
    const status = await waitFor(cluster, `/apis/autoscaling/v2/namespaces/${model.namespace}/horizontalpodautoscalers/keda-hpa-${autoscaling.targets[0]!.scaledObject}`, (h) => h.status?.currentMetrics?.[0]?.external?.current, GUARD);
    expect(status.status.desiredReplicas).toBe(3);

    // The queue drains: after the cool-down, back to the minimum, never below.
    prometheus.set(query, 0);
    await scaledTo(path, 1);
    expect(prometheus.queries()).toContain(query);
  }, 900_000);

});

/**
 * Scale from zero on the 2026-08 set, for real: the model planned from a stack file at
 * `minReplicas: 0`; the Router chart v0.10.0 rendered by real Helm with the plan's values (the EPP's
 * config turns flow control on; its /metrics is open to the PodMonitor of ours); the model-server
 * Deployment core writes, its ScaledObject reconciled by KEDA, the HPA by the controller-manager.
 * The stand-in Prometheus plays the EPP's gauges: requests waiting in the flow-control queue and
 * requests running.
 */
describe("KEDA scales a 2026-08 model from zero on the Router's flow-control queue, and back to zero", () => {
  /** Plans the Sim model on the 2026-08 set with `autoscaling`. */
  function planRouterModel(autoscaling: string, namespace: string): LlmdRouterModelPlan {
    const file = join(work, `Pulumi.${namespace}.yaml`);
    writeFileSync(
      file,
      `config:\n  app-serving:cloudProvider: cloud\n  app-serving:upstream: 2026-08\n  app-serving:prometheus:\n    address: ${prometheus.url}\n  app-serving:models:\n    generative:\n      - name: Sim\n        nameSpace: ${namespace}\n        nodeSelector: { workload: gpu }\n        readyTimeout: 10m\n        autoscaling: ${autoscaling}\n`,
    );
    const model = planDeployment(loadStackFile(file), join(work, 'models')).models[0]!;
    if (model.platform !== 'llm-d' || model.upstream !== '2026-08' || !model.autoscaling) throw new Error('an autoscaled llm-d model on the 2026-08 set was expected');
    return model;
  }

  it('the Router chart takes the plan\'s values: flow control on (queue TTL = readyTimeout), /metrics without a token, on the pods our PodMonitor selects', async () => {
    const model = planRouterModel('{ minReplicas: 0, maxReplicas: 2, target: 5, cooldown: 5s, pollingInterval: 1s }', 'llm-d-router-chart');
    const rendered = await renderReleases(
      modelReleases(model).map((r) => ({ ...r, chart: { chart: publishedChart(r.chart.chart, r.chart.version)!, version: r.chart.version } })),
      { applyPatches, apiVersions: await clusterApiVersions(cluster) },
    );
    const epp = rendered.find((o) => o.kind === 'Deployment' && o.metadata.name === model.inferencePool.epp) as any;
    const container = epp.spec.template.spec.containers.find((c: any) => c.name === 'epp');
    expect(container.args).toEqual(expect.arrayContaining(['--config-file', '/config/app-serving-flow-control.yaml', '--metrics-endpoint-auth=false', '--pool-name', model.inferencePool.name]));
    const monitor = model.autoscaling!.objects.find((o) => o.kind === 'PodMonitor' && o.metadata?.name === `${model.slug}-epp`) as any;
    expect(epp.spec.template.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
    expect(container.ports).toContainEqual(expect.objectContaining({ name: monitor.spec.podMetricsEndpoints[0].port }));
    // The config core wrote is the chart's own default config, plus the feature gate and the queue TTL.
    const config = rendered.find((o) => o.kind === 'ConfigMap' && o.metadata.name === model.inferencePool.epp) as any;
    const ours = parse(config.data['app-serving-flow-control.yaml']);
    const { featureGates, flowControl, ...rest } = ours;
    expect([featureGates, flowControl]).toEqual([['flowControl'], { defaultRequestTTL: '600s' }]);
    expect(rest).toEqual(parse(config.data['default-plugins.yaml']));
    // What the API server admits of it (the kinds that need no CRD of the Router's set).
    const plain = rendered.filter((o) => ['ConfigMap', 'Deployment', 'ServiceAccount', 'Service'].includes(o.kind));
    await ensureNamespaces(cluster, plain);
    await applyObjects(cluster, plain);
  }, 900_000);

  it('idle: to zero; a request waits in the flow-control queue: 0 → 1; requests running keep it up; more waiting: up to the maximum; idle again: to zero', async () => {
    const model = planRouterModel('{ minReplicas: 0, maxReplicas: 2, target: 5, cooldown: 5s, pollingInterval: 1s }', 'llm-d-zero');
    const autoscaling = model.autoscaling!;
    const target = autoscaling.targets[0]!;
    const [queue, waiting, running] = [target.query.query, ...target.wake.map((w) => w.query.query)] as [string, string, string];
    expect(target.wake.map((w) => w.name)).toEqual(['epp-flow-control', 'epp-running']);
    expect(waiting).toBe(`sum(llm_d_epp_flow_control_queue_size{namespace="llm-d-zero",inference_pool="${model.inferencePool.name}"})`);
    for (const query of [queue, waiting, running]) prometheus.set(query, 0);
    const objects = [model.manifests.modelServer, ...autoscaling.objects] as KubeObject[];
    await ensureNamespaces(cluster, objects);
    await applyObjects(cluster, objects);
    const path = `/apis/apps/v1/namespaces/${model.namespace}/deployments/${model.modelServer.decodeDeployment}`;
    const scaledObject = `/apis/keda.sh/v1alpha1/namespaces/${model.namespace}/scaledobjects/${target.scaledObject}`;
    const active = (value: 'True' | 'False') => waitFor(cluster, scaledObject, (o) => o.status?.conditions?.find((c: any) => c.type === 'Active')?.status === value, GUARD);

    // It starts at one replica (the first deploy waits for it), then idles to zero after the cool-down.
    await scaledTo(path, 0);
    // A request arrives: the EPP holds it in its flow-control queue, KEDA activates the Deployment.
    prometheus.set(waiting, 1);
    await scaledTo(path, 1);
    // The request runs (it left the queue): the model stays active on the running requests alone —
    // KEDA still finds it active more than a cool-down (5 s) after the queue emptied, and keeps it.
    prometheus.set(waiting, 0);
    prometheus.set(running, 1);
    const emptied = Date.now();
    await waitFor(cluster, scaledObject, (o) => Date.parse(o.status?.lastActiveTime ?? '') > emptied + 6_000, GUARD);
    expect((await cluster.request('GET', path)).body.spec.replicas).toBe(1);
    // Nine wait: ⌈9 / 5⌉ = 2 replicas (the maximum).
    prometheus.set(waiting, 9);
    await scaledTo(path, 2);
    // Everything done: inactive, and back to zero after the cool-down.
    prometheus.set(waiting, 0);
    prometheus.set(running, 0);
    await active('False');
    await scaledTo(path, 0);
    expect(prometheus.queries()).toEqual(expect.arrayContaining([queue, waiting, running]));
  }, 900_000);
});
