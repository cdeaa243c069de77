import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyPatches, loadStackFile, modelReleases, planAutoscaling, planDeployment, type AutoscalingPlan, type LlmdModelPlan } from '@app-serving/core';
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

  it('scales to zero when idle and back from zero when a request waits (where minReplicas is 0)', async () => {
    // Today's llm-d set refuses minReplicas 0 (nothing holds a request at zero): the objects for a
    // model whose requests can wait (the EPP's flow control) come from the same core function.
    const model = planModel('{ minReplicas: 1, maxReplicas: 2, target: 5, cooldown: 5s, pollingInterval: 1s }', 'llm-d-zero');
    const autoscaling = planAutoscaling({
      slug: model.slug,
      namespace: model.namespace,
      settings: { minReplicas: 0, maxReplicas: 2, target: 5, cooldown: '5s', pollingInterval: '1s' },
      prometheus: { address: prometheus.url, monitorLabels: {} },
      targets: [{ role: 'decode', deployment: model.modelServer.decodeDeployment }],
      modelServer: { podLabels: model.modelServer.podLabels, metricsPort: model.modelServer.port, monitoredByChart: false },
      epp: null,
    });
    const query = autoscaling.targets[0]!.query.query;
    prometheus.set(query, 0);
    const path = await deploy(model, autoscaling);
    // Idle: KEDA deactivates after its cool-down, to zero.
    await scaledTo(path, 0);
    // A request waits: KEDA activates the Deployment (0 → 1), the HPA holds it at ⌈1 / 5⌉ = 1.
    prometheus.set(query, 1);
    await scaledTo(path, 1);
    // More wait: the HPA takes it to the maximum.
    prometheus.set(query, 9);
    await scaledTo(path, 2);
  }, 900_000);
});
