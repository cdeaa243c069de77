/**
 * The data-path tier's cluster: the test control plane in the tier's own network namespace, the DNS
 * server of `cluster.local`, the pod runtime running what {@link dataPathRunner} maps for real, and
 * Envoy Gateway installed from its release's chart. A stack is then deployed by the real engine as
 * in the deploy tier (apps/app-serving/test/deploy/support.ts), and its model pods load the real
 * weights from their volumes: {@link provideWeights} gives each claim the folder the pull Job would
 * have filled (the model's files at `modelUri`, and the `.pulled` marker).
 */
import { request } from 'node:http';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { DeploymentPlan } from '@app-serving/core';
import { deployedProblems } from '../../app-serving/test/deploy/support.ts';
import {
  ENVOY_GATEWAY_SYSTEM,
  createNodes,
  installEnvoyGateway,
  list,
  startCluster,
  startClusterDns,
  startPodRuntime,
  waitFor,
  type ClusterDns,
  type PodRuntime,
  type TestCluster,
} from '@app-serving/test-cluster';
import { dataPathRunner, type DataPathTools } from './images.ts';
import { ENVOY_GATEWAY_VERSION, dataPathTools, envoyGatewayChartDir } from './tools.ts';

export const TIER_DIR = join(import.meta.dirname, '..');
/** The tier's model folders (its stacks' `models/`). */
export const MODELS_DIR = join(TIER_DIR, 'models');
/** The tier's stacks. */
export const STACKS_DIR = join(TIER_DIR, 'stacks');

export interface Tier {
  readonly cluster: TestCluster;
  readonly dns: ClusterDns;
  readonly runtime: PodRuntime;
  readonly tools: DataPathTools;
  /** Lines the runtime logged (pods started, probes, restarts; also in `<cluster>/runtime.log`, to read while a test runs). */
  readonly log: string[];
  stop(): Promise<void>;
}

/** The folders the claims of the deployed stacks hold, by `<namespace>/<claim>`. */
const claims = new Map<string, string>();

/** Starts the tier's cluster with Envoy Gateway running (ready once its controller is). */
export async function startTier(options: { crdSet?: '2026-02' | '2026-08' } = {}): Promise<Tier> {
  const tools = dataPathTools();
  const log: string[] = [];
  const cluster = await startCluster({ dataPath: true, crdSet: options.crdSet ?? '2026-08' });
  let dns: ClusterDns | undefined;
  let runtime: PodRuntime | undefined;
  try {
    dns = await startClusterDns(cluster);
    runtime = await startPodRuntime(cluster, {
      run: dataPathRunner(tools),
      claim: (namespace, claim) => claims.get(`${namespace}/${claim}`),
      log: (line) => {
        const stamped = `${new Date().toISOString()} ${line}`;
        log.push(stamped);
        appendFileSync(join(cluster.dir, 'runtime.log'), `${stamped}\n`);
      },
    });
    // A node for what the cluster runs before any stack (Envoy Gateway's controller).
    await createNodes(cluster, [{ name: 'tier-system', labels: { 'test.app-serving.io/role': 'system' } }]);
    await installEnvoyGateway(cluster, { chartDir: envoyGatewayChartDir(), version: ENVOY_GATEWAY_VERSION, binary: tools.envoyGateway });
    await waitFor(cluster, `/apis/apps/v1/namespaces/${ENVOY_GATEWAY_SYSTEM}/deployments/envoy-gateway`, (d) => d.status?.readyReplicas === 1, 300_000);
  } catch (error) {
    await runtime?.stop();
    await dns?.stop();
    await cluster.stop();
    throw error;
  }
  const started = { runtime: runtime!, dns: dns! };
  return {
    cluster,
    dns: started.dns,
    runtime: started.runtime,
    tools,
    log,
    stop: async () => {
      await started.runtime.stop();
      await started.dns.stop();
      await cluster.stop();
    },
  };
}

/**
 * Gives each model's claim what its pull Job leaves on the volume: the weights at `modelUri` (the
 * tier's prepared model, by the `modelUri` → folder map `weights`) and the `.pulled` marker. Returns
 * a function that removes the folders (and forgets the claims). An adapter a model takes from its
 * volume (`path:`) is put there too, from `adapters` (adapter name → the tier's prepared adapter).
 */
export function provideWeights(plan: DeploymentPlan, weights: Readonly<Record<string, string>>, adapters: Readonly<Record<string, string>> = {}): () => void {
  const made: string[] = [];
  for (const model of plan.models) {
    const storage = model.storage;
    // A claim given its weights already (by an earlier call for the same stack) keeps them.
    if (!storage || claims.has(`${model.namespace}/${storage.pvc}`)) continue;
    const source = weights[storage.modelUri];
    if (!source) throw new Error(`model ${model.name}: no prepared weights for modelUri ${storage.modelUri} (known: ${Object.keys(weights).join(', ')})`);
    const folder = mkdtempSync(join(tmpdir(), `app-serving-claim-${model.slug}-`));
    made.push(folder);
    const at = join(folder, storage.modelUri);
    mkdirSync(dirname(at), { recursive: true });
    symlinkSync(source, at);
    for (const adapter of model.adapters) {
      if (adapter.source.kind !== 'volume') continue;
      const prepared = adapters[adapter.name];
      if (!prepared) throw new Error(`model ${model.name}: no prepared adapter for ${adapter.name} (known: ${Object.keys(adapters).join(', ') || 'none'})`);
      const place = join(folder, adapter.source.path);
      mkdirSync(dirname(place), { recursive: true });
      symlinkSync(prepared, place);
    }
    writeFileSync(join(folder, basename(storage.marker)), `${storage.source.kind === 'oras' ? storage.source.ref : storage.modelUri}\n`);
    claims.set(`${model.namespace}/${storage.pvc}`, folder);
  }
  return () => {
    for (const folder of made) rmSync(folder, { recursive: true, force: true });
    for (const [claim, folder] of claims) if (made.includes(folder)) claims.delete(claim);
  };
}

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/** One HTTP request from the test (inside the tier's namespace) to an address of the cluster. */
export function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const req = request(url, { method: options.method ?? (payload ? 'POST' : 'GET'), timeout: 180_000, headers: { ...(payload && { 'content-type': 'application/json' }), ...options.headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer`)));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** The address of the proxy Envoy Gateway made for a Gateway — a model's, or the stack endpoint's (its pod, the listener's port). */
export async function gatewayAddress(tier: Tier, gateway: string, namespace: string): Promise<string> {
  const selector = encodeURIComponent(`gateway.envoyproxy.io/owning-gateway-name=${gateway},gateway.envoyproxy.io/owning-gateway-namespace=${namespace}`);
  const pods = (await list(tier.cluster, `/api/v1/namespaces/${ENVOY_GATEWAY_SYSTEM}/pods?labelSelector=${selector}`)).filter((p) => !p.metadata.deletionTimestamp && p.status?.podIP);
  const services = await list(tier.cluster, `/api/v1/namespaces/${ENVOY_GATEWAY_SYSTEM}/services?labelSelector=${selector}`);
  const port = services[0]?.spec.ports.find((p: any) => p.port === 80)?.targetPort;
  if (pods.length === 0 || typeof port !== 'number') throw new Error(`no proxy pod or port for Gateway ${namespace}/${gateway}`);
  return `http://${pods[0].status.podIP}:${port}`;
}

/**
 * A request a model answers: a pod behind the route may be out of its Service for a while at load
 * (a readiness probe failing, a replacement still loading), and Envoy answers 503 (no healthy
 * upstream) until it is back — e.g. the Router's proxy is a sidecar of the EPP's pod, which leaves
 * the EPP Service while the EPP's readiness probe fails (its gRPC health answers late at load 20 and
 * more). Retried on 503 only, for up to three minutes.
 */
export async function answered(url: string, options: Parameters<typeof send>[1]): Promise<Awaited<ReturnType<typeof send>>> {
  return settled(() => send(url, options), (answer) => answer.status !== 503);
}

/**
 * {@link deployedProblems} once they have settled: polled until there are none, for up to three
 * minutes, and the last ones returned. Here pods are real processes with real probes, and at load
 * one can leave Ready for a while after `up` — the EPP's gRPC health answered late in a CI run
 * (load 20 and more: its readiness probe failed two minutes after `up`, then passed), as
 * {@link answered} allows for requests.
 */
export async function settledProblems(cluster: Tier['cluster'], plan: DeploymentPlan): Promise<string[]> {
  return settled(() => deployedProblems(cluster, plan), (problems) => problems.length === 0);
}

/**
 * `attempt` again every 2 s until `done` holds of its result or three minutes have passed, then its
 * last result: what a state that real processes settle into at load is waited for with (a hang
 * guard, not a timing).
 */
async function settled<T>(attempt: () => Promise<T>, done: (result: T) => boolean): Promise<T> {
  const until = Date.now() + 180_000;
  for (;;) {
    const result = await attempt();
    if (done(result) || Date.now() > until) return result;
    await new Promise((r) => setTimeout(r, 2000));
  }
}
