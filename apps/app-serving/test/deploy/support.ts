/**
 * Support of the deploy tests: a stack file made deployable on the test cluster (charts from the
 * published packages in ../shared/upstream, secrets set, the cluster's kubeconfig), kwok nodes
 * shaped like any plan, what must exist in the cluster once `pulumi up` is done, and the wiring
 * `app-serving verify` needs where no container runs (port-forwards to a local model server, the
 * weights marker in the pod's file system, the controllers' stand-ins).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import {
  BBR_CHART,
  DEFAULT_CHARTS,
  ROUTER_CHARTS,
  ROUTER_CHART_OF,
  commonLabels,
  gpuRequest,
  loadStackFile,
  planDeployment,
  type AnyLlmdModelPlan,
  type ChartRef,
  type DeploymentPlan,
  type EndpointPlan,
  type KserveModelPlan,
  type ModelPlan,
  type Upstream,
} from '@app-serving/core';
import {
  ENVOY_GATEWAY_SYSTEM,
  forwardPodPorts,
  agentgatewayStandIn,
  chartPackage,
  envoyGatewayStandIn,
  istioGatewayStandIn,
  kserveStandIns,
  list,
  podFileSystem,
  startModelServer,
  upstreamDir,
  waitFor,
  type KubeObject,
  type ModelServer,
  type ModelServerOptions,
  type NodeSpec,
  type ResourceStep,
  type TestCluster,
} from '@app-serving/test-cluster';
import { parse, stringify } from 'yaml';
import { gatewayAuthorizer, harnessToken, useHarnessKeys } from './access.ts';

export const APP_DIR = join(import.meta.dirname, '..', '..');
export const REPO_ROOT = join(APP_DIR, '..', '..');
export const MODELS_DIR = join(REPO_ROOT, 'models');
export const CLI_BIN = join(REPO_ROOT, 'packages', 'cli', 'bin', 'app-serving.js');
/** The deploy tier's own stacks, beside the examples (suite.ts). */
export const STACKS_DIR = join(import.meta.dirname, 'stacks');

/** Every example stack file of the app (`Pulumi.<stack>.yaml`, not the template). */
export function exampleStacks(dir: string = APP_DIR): string[] {
  return readdirSync(dir)
    .filter((f) => /^Pulumi\.[a-z0-9-]+\.yaml$/.test(f) && f !== 'Pulumi.TEMPLATE.yaml')
    .sort();
}

/** A stack file made deployable on the test cluster. */
export interface StackUnderTest {
  /** The stack's name (`Pulumi.<name>.yaml`). */
  readonly name: string;
  /** The rewritten stack file (secrets as placeholders), for `app-serving` commands. */
  readonly file: string;
  /** The `config:` map without the secrets, for the engine. */
  readonly config: Record<string, unknown>;
  /**
   * The secrets with test values, by config path as `pulumi config set --path` takes it: a key
   * (`app-serving:harborToken`) or a key and the place inside its value (`app-serving:apiKeys["ci"]`).
   */
  readonly secrets: Record<string, string>;
  readonly modelsDir: string;
  readonly plan: DeploymentPlan;
  /** What verify sends per model name whose access is not open (`APP_SERVING_VERIFY_TOKEN`). */
  readonly credentials: Record<string, string>;
}

/**
 * The value the engine gets for a secret of the stack file: derived from its `secure:` text, so that
 * a changed ciphertext is a changed secret for the engine as it is for `app-serving diff`.
 */
export function secretValue(key: string, secure: string): string {
  const name = key.replace(/^app-serving:/, '').replace(/[^A-Za-z0-9-]+/g, '.').replace(/\.+$/, '');
  // 32 base64url characters of the digest (192 bits): an API key must pass the key-strength rule (issue 34).
  return `test-${name}-${createHash('sha256').update(secure).digest('base64url').slice(0, 32)}`;
}

/** The config path of `key` inside the value at `path`, as `pulumi config set --path` takes it (`app-serving:apiKeys["ci"]`). */
const configMember = (path: string, key: string): string => `${path}[${JSON.stringify(key)}]`;

const isSecure = (value: unknown): value is { secure: unknown } => typeof value === 'object' && value !== null && !Array.isArray(value) && 'secure' in value;

/**
 * Takes every secret (`{secure: …}`) out of a config map, at any depth (`pulumi config set --secret
 * --path` writes them inside a key's value, as `app-serving:apiKeys.<name>`): returns them by config
 * path with test values, and the map without them (a value left empty by it dropped).
 */
export function takeSecrets(config: Record<string, unknown>): { config: Record<string, unknown>; secrets: Record<string, string> } {
  const secrets: Record<string, string> = {};
  const walk = (value: unknown, path: string): unknown => {
    if (isSecure(value)) {
      secrets[path] = secretValue(path, String(value.secure));
      return undefined;
    }
    if (Array.isArray(value)) return value.map((item, i) => walk(item, `${path}[${i}]`));
    if (typeof value !== 'object' || value === null) return value;
    const kept = Object.entries(value).flatMap(([key, inner]) => {
      const left = walk(inner, configMember(path, key));
      return left === undefined ? [] : [[key, left] as const];
    });
    return kept.length === 0 && Object.keys(value).length > 0 ? undefined : Object.fromEntries(kept);
  };
  const kept = Object.entries(config).flatMap(([key, value]) => {
    const left = walk(value, key);
    return left === undefined ? [] : [[key, left] as const];
  });
  return { config: Object.fromEntries(kept), secrets };
}

/**
 * Reads a stack file and rewrites what the test cluster needs: every chart at a published package
 * under ../shared/upstream/charts (the air-gap way: `charts.<chart>.chart` as a path), the kubeconfig
 * key (if any) at the cluster's, each JWT model's keys at the harness's (./access.ts), and each
 * secret (`secure:`, at any depth) as a placeholder here and a test value for the engine. `edit` may
 * change the config map first (the change tests).
 */
export function stackUnderTest(
  file: string,
  options: { kubeconfig: string; modelsDir?: string; dir?: string; upstream?: Upstream; edit?: (config: Record<string, unknown>) => void },
): StackUnderTest {
  const name = /^Pulumi\.(.+)\.yaml$/.exec(basename(file))![1]!;
  const doc = parse(readFileSync(file, 'utf8')) as { config: Record<string, unknown> };
  const config: Record<string, unknown> = structuredClone(doc.config);
  if (options.upstream !== undefined) config['app-serving:upstream'] = options.upstream;
  options.edit?.(config);
  useHarnessKeys(config);
  if ('app-serving:kubeconfig' in config) config['app-serving:kubeconfig'] = options.kubeconfig;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), `app-serving-stack-${name}-`));
  mkdirSync(dir, { recursive: true });
  const written = join(dir, basename(file));
  const modelsDir = options.modelsDir ?? MODELS_DIR;
  const planOf = () => {
    writeFileSync(written, stringify({ config }));
    return planDeployment(loadStackFile(written, basename(file), { checkRules: false }), modelsDir);
  };
  // Every chart the stack's models use, at its published package (the stack's own chart keys kept).
  const charts = { ...((config['app-serving:charts'] as Record<string, Record<string, string>> | undefined) ?? {}) };
  for (const [key, pinned] of usedCharts(planOf())) {
    const override = charts[key] ?? {};
    const chart = override.chart ?? pinned.chart;
    if (chart.startsWith('/') || chart.startsWith('.')) continue;
    const version = override.version ?? pinned.version;
    const local = chartPackage(chart, version);
    if (!local) throw new Error(`${basename(file)}: no published package of chart ${chart} ${version} in ${upstreamDir()} to deploy it here`);
    charts[key] = { chart: local, version };
  }
  if (Object.keys(charts).length > 0) config['app-serving:charts'] = charts;
  const plan = planOf();
  const { config: engineConfig, secrets } = takeSecrets(config);
  return { name, file: written, config: engineConfig, secrets, modelsDir, plan, credentials: credentials(plan, secrets) };
}

/**
 * The credential verify needs per model name (`APP_SERVING_VERIFY_TOKEN`): `<key name>:<key>` for
 * API keys (the first the model accepts, its value from `secrets` by config path), a harness-signed
 * token for JWT; none for an open model.
 */
export function credentials(plan: DeploymentPlan, secrets: Readonly<Record<string, string>>): Record<string, string> {
  const found: Record<string, string> = {};
  for (const model of plan.models) {
    const { access } = model;
    if (access.mode === 'apiKeys') {
      const name = access.apiKeys[0]!;
      const key = secrets[configMember('app-serving:apiKeys', name)];
      if (key !== undefined) found[model.name] = `${name}:${key}`;
    } else if (access.mode === 'jwt') {
      found[model.name] = harnessToken(access.jwt!.issuer, access.jwt!.audiences);
    }
  }
  return found;
}

/** The chart keys (`charts.<key>`) the llm-d models and the endpoint of a plan deploy, with their pinned charts. */
function usedCharts(plan: DeploymentPlan): Map<string, ChartRef> {
  const used = new Map<string, ChartRef>();
  // The endpoint's body-based router: packaged from GAIE's Go module while the upstream data has no package (test-cluster's chartPackage).
  if (plan.endpoint) used.set('bodyBasedRouting', BBR_CHART);
  for (const model of plan.models) {
    if (model.platform !== 'llm-d') continue;
    if (model.upstream === '2026-02') for (const key of Object.keys(DEFAULT_CHARTS) as (keyof typeof DEFAULT_CHARTS)[]) used.set(key, DEFAULT_CHARTS[key]);
    else used.set(ROUTER_CHART_OF[model.router.mode], ROUTER_CHARTS[ROUTER_CHART_OF[model.router.mode]]);
  }
  return used;
}

/** A node label key for every simulated node of one test, so that a test can find (and remove) its own. */
export const SHAPE_LABEL = 'test.app-serving.io/shape';

/**
 * kwok nodes shaped like the cluster a plan expects, derived from the plan alone (so any valid stack
 * gets a cluster it fits): per distinct node selector of the models, a node with those labels,
 * GPUs where the model asks for them and, when the stack has a GPU toleration, the matching taint
 * on those GPU nodes (only tolerating pods land there, as on a real GPU pool); the hostPath node by
 * its own name; a node for the control pods' `controlNodeSelector`. Nodes are big enough for any
 * example (64 CPUs, 512 GiB, 8 GPUs).
 */
export function clusterShape(plan: DeploymentPlan, prefix: string): NodeSpec[] {
  const nodes = new Map<string, NodeSpec>();
  const add = (name: string, labels: Record<string, string>, gpu: boolean) => {
    const existing = nodes.get(name);
    const toleration = plan.gpuToleration;
    const taint =
      gpu && toleration?.effect && toleration.key
        ? [{ key: toleration.key, ...(toleration.operator !== 'Exists' && toleration.value !== undefined && { value: toleration.value }), effect: toleration.effect }]
        : [];
    nodes.set(name, {
      name,
      labels: { ...existing?.labels, ...labels, [SHAPE_LABEL]: prefix },
      taints: existing?.taints?.length ? existing.taints : taint,
      gpus: 8,
      cpu: '64',
      memory: '512Gi',
    });
  };
  const key = (selector: Readonly<Record<string, string>>) => Object.entries(selector).sort().map(([k, v]) => `${k}=${v}`).join(',') || 'any';
  const groups = new Map<string, string>();
  for (const model of plan.models) {
    const gpu = gpuRequest(model) > 0;
    const hostNode = model.storage?.hostPath?.node;
    if (hostNode) add(hostNode, { ...model.nodeSelector }, gpu);
    const group = `${key(model.nodeSelector)}|${gpu}`;
    if (!groups.has(group)) {
      const name = `${prefix}-${gpu ? 'gpu' : 'cpu'}-${groups.size + 1}`;
      groups.set(group, name);
      add(name, { ...model.nodeSelector }, gpu);
    }
    if (model.platform === 'llm-d' && key(model.controlNodeSelector) !== key(model.nodeSelector)) {
      const control = `${key(model.controlNodeSelector)}|control`;
      if (!groups.has(control)) {
        const name = `${prefix}-control-${groups.size + 1}`;
        groups.set(control, name);
        add(name, { ...model.controlNodeSelector }, false);
      }
    }
  }
  return [...nodes.values()];
}

/** Whether a node's labels satisfy a selector. */
export function matches(labels: Readonly<Record<string, string>>, selector: Readonly<Record<string, string>>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

const ready = (o: any) => o?.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');

/** `GET` an object; null when it does not exist. */
async function get(cluster: TestCluster, path: string): Promise<any | null> {
  const res = await cluster.request('GET', path);
  if (res.status === 404) return null;
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  return res.body;
}

/**
 * What must be in the cluster once `pulumi up` of `plan` is done, checked against the API server:
 * every object the plan names, with its names, labels and placement; model pods Ready; each pull
 * Job Succeeded. Returns the problems (none: the deployment is what the plan says).
 */
export async function deployedProblems(cluster: TestCluster, plan: DeploymentPlan): Promise<string[]> {
  const problems: string[] = [];
  const nodes = new Map<string, Record<string, string>>((await list(cluster, '/api/v1/nodes')).map((n) => [n.metadata.name, n.metadata.labels ?? {}]));
  const expectObject = async (what: string, path: string, check?: (o: any) => string | null) => {
    const object = await get(cluster, path);
    if (!object) return problems.push(`${what}: missing (${path})`);
    const problem = check?.(object);
    if (problem) problems.push(`${what}: ${problem}`);
    return object;
  };
  const placed = async (what: string, namespace: string, selector: Record<string, string>, nodeSelector: Readonly<Record<string, string>>, count?: number) => {
    const query = Object.entries(selector).map(([k, v]) => `${k}=${v}`).join(',');
    const pods = (await list(cluster, `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(query)}`)).filter((p) => !p.metadata.deletionTimestamp);
    if (pods.length === 0) return problems.push(`${what}: no pods (${query})`);
    if (count !== undefined && pods.length !== count) problems.push(`${what}: ${pods.length} pods, the plan says ${count}`);
    for (const pod of pods) {
      const labels = nodes.get(pod.spec.nodeName) ?? {};
      if (!pod.spec.nodeName) problems.push(`${what}: pod ${pod.metadata.name} is not scheduled`);
      else if (!matches(labels, nodeSelector)) problems.push(`${what}: pod ${pod.metadata.name} runs on ${pod.spec.nodeName}, which lacks ${JSON.stringify(nodeSelector)}`);
      if (pod.status?.phase !== 'Succeeded' && !ready(pod)) problems.push(`${what}: pod ${pod.metadata.name} is not Ready`);
    }
    return pods;
  };
  for (const model of plan.models) {
    const ns = model.namespace;
    const managed = commonLabels(model.slug);
    await expectObject(`Namespace ${ns}`, `/api/v1/namespaces/${ns}`, (o) => (matches(o.metadata.labels ?? {}, managed) ? null : `labels ${JSON.stringify(o.metadata.labels)} lack ${JSON.stringify(managed)}`));
    if (model.pullSecret) await expectObject(`Secret ${ns}/${model.pullSecret}`, `/api/v1/namespaces/${ns}/secrets/${model.pullSecret}`, (o) => (o.type === 'kubernetes.io/dockerconfigjson' ? null : `type ${o.type}`));
    const storage = model.storage;
    if (storage) {
      await expectObject(`PVC ${ns}/${storage.pvc}`, `/api/v1/namespaces/${ns}/persistentvolumeclaims/${storage.pvc}`, (o) =>
        o.status?.phase !== 'Bound' ? `phase ${o.status?.phase}` : storage.pv && o.spec.volumeName !== storage.pv ? `bound to ${o.spec.volumeName}, not ${storage.pv}` : null,
      );
      if (storage.pv) await expectObject(`PV ${storage.pv}`, `/api/v1/persistentvolumes/${storage.pv}`, (o) => (o.status?.phase === 'Bound' ? null : `phase ${o.status?.phase}`));
      await expectObject(`Job ${ns}/${storage.job}`, `/apis/batch/v1/namespaces/${ns}/jobs/${storage.job}`, (o) => (o.status?.succeeded >= 1 ? null : `not Succeeded: ${JSON.stringify(o.status)}`));
      const jobNode = storage.hostPath ? { 'kubernetes.io/hostname': storage.hostPath.node } : model.nodeSelector;
      await placed(`pull Job ${storage.job}`, ns, { 'job-name': storage.job }, jobNode);
    }
    if (model.platform === 'llm-d') await llmdProblems(model, expectObject, placed, (name) => get(cluster, `/apis/apps/v1/namespaces/${ENVOY_GATEWAY_SYSTEM}/deployments/${name}`));
    else await kserveProblems(model, expectObject);
  }
  if (plan.endpoint) await endpointProblems(cluster, plan.endpoint, expectObject, placed);
  if (plan.kserve?.gateway.create) {
    const gw = plan.kserve.gateway;
    await expectObject(`Gateway ${gw.namespace}/${gw.name}`, `/apis/gateway.networking.k8s.io/v1/namespaces/${gw.namespace}/gateways/${gw.name}`, (o) =>
      o.spec.gatewayClassName === gw.className ? null : `class ${o.spec.gatewayClassName}`,
    );
  }
  return problems;
}

type ExpectObject = (what: string, path: string, check?: (o: any) => string | null) => Promise<unknown>;
type Placed = (what: string, namespace: string, selector: Record<string, string>, nodeSelector: Readonly<Record<string, string>>, count?: number) => Promise<unknown>;

async function llmdProblems(model: AnyLlmdModelPlan, expectObject: ExpectObject, placed: Placed, getProxy: (name: string) => Promise<unknown>): Promise<void> {
  const ns = model.namespace;
  if (model.gateway.kind === 'gateway') {
    await expectObject(`Gateway ${ns}/${model.gateway.name}`, `/apis/gateway.networking.k8s.io/v1/namespaces/${ns}/gateways/${model.gateway.name}`);
    if (model.gateway.parametersConfigMap) await expectObject(`ConfigMap ${ns}/${model.gateway.parametersConfigMap}`, `/api/v1/namespaces/${ns}/configmaps/${model.gateway.parametersConfigMap}`);
  }
  if (model.upstream === '2026-08' && model.router.gatewayClass === 'envoy') await envoyClassProblems(model, expectObject, placed, getProxy);
  // The alias points at the Service clients call (the gateway's, or the Router's proxy).
  await expectObject(`Service ${ns}/${model.gateway.alias}`, `/api/v1/namespaces/${ns}/services/${model.gateway.alias}`, (o) =>
    o.spec.externalName === model.gateway.host ? null : `points at ${o.spec.externalName}, not ${model.gateway.host}`,
  );
  await expectObject(`InferencePool ${ns}/${model.inferencePool.name}`, `/apis/inference.networking.k8s.io/v1/namespaces/${ns}/inferencepools/${model.inferencePool.name}`, (o) =>
    // The pool selects the model's pods: its selector is a non-empty part of their labels.
    Object.keys(o.spec.selector?.matchLabels ?? {}).length > 0 && matches(model.modelServer.podLabels, o.spec.selector?.matchLabels ?? {}) ? null : `selects ${JSON.stringify(o.spec.selector)}, the model's pods carry ${JSON.stringify(model.modelServer.podLabels)}`,
  );
  const epp = (await expectObject(`Deployment ${ns}/${model.inferencePool.epp}`, `/apis/apps/v1/namespaces/${ns}/deployments/${model.inferencePool.epp}`, (o) =>
    o.status?.readyReplicas >= 1 ? null : `not ready: ${JSON.stringify(o.status)}`,
  )) as any;
  if (epp?.spec) await placed(`EPP ${model.inferencePool.epp}`, ns, epp.spec.selector.matchLabels, model.controlNodeSelector);
  await expectObject(`Deployment ${ns}/${model.modelServer.decodeDeployment}`, `/apis/apps/v1/namespaces/${ns}/deployments/${model.modelServer.decodeDeployment}`, (o) =>
    o.status?.readyReplicas === model.modelServer.decodeReplicas ? (model.upstream === '2026-08' ? loraProblem(model, o) : null) : `${o.status?.readyReplicas ?? 0} ready replicas, the plan says ${model.modelServer.decodeReplicas}`,
  );
  await placed(`decode pods of ${model.name}`, ns, { ...model.modelServer.podLabels, 'llm-d.ai/role': 'decode' }, model.nodeSelector, model.modelServer.decodeReplicas);
  if (model.httpRoute && !(model.upstream === '2026-08' && model.router.gatewayClass === 'envoy')) {
    await expectObject(`HTTPRoute ${ns}/${model.httpRoute}`, `/apis/gateway.networking.k8s.io/v1/namespaces/${ns}/httproutes/${model.httpRoute}`, (o) => {
      const parent = o.spec.parentRefs?.[0]?.name;
      const backend = o.spec.rules?.[0]?.backendRefs?.[0];
      return parent === model.gateway.name && backend?.name === model.inferencePool.name && backend?.kind === 'InferencePool' ? null : `parent ${parent}, backend ${JSON.stringify(backend)}`;
    });
  }
  if (model.embeddingService) {
    await expectObject(`Service ${ns}/${model.embeddingService.name}`, `/api/v1/namespaces/${ns}/services/${model.embeddingService.name}`, (o) =>
      // The decode pods carry the plan's labels and the chart's role label: the Service must select them.
      o.spec.ports?.[0]?.port === model.embeddingService!.port && matches({ ...model.modelServer.podLabels, 'llm-d.ai/role': 'decode' }, o.spec.selector ?? {}) ? null : `ports ${JSON.stringify(o.spec.ports)}, selector ${JSON.stringify(o.spec.selector)}`,
    );
  }
}

/**
 * A 2026-08 llm-d model of class `envoy`: the Gateway of the stack's class, the EnvoyProxy placing
 * Envoy Gateway's proxy pods (placed as it says), and Envoy Gateway's form of the route — the
 * HTTPRoute to the Service of the pool's pods (which selects what the InferencePool selects, on its
 * target port), the EnvoyExtensionPolicy to the EPP's ext_proc port, the BackendTrafficPolicy with
 * the endpoint override — all on the route.
 */
async function envoyClassProblems(model: Extract<AnyLlmdModelPlan, { upstream: '2026-08' }>, expectObject: ExpectObject, placed: Placed, getProxy: (name: string) => Promise<unknown>): Promise<void> {
  const ns = model.namespace;
  const gatewayClass = model.manifests.gateway ? String((model.manifests.gateway as any).spec.gatewayClassName) : '';
  await expectObject(`Gateway ${ns}/${model.gateway.name}`, `/apis/gateway.networking.k8s.io/v1/namespaces/${ns}/gateways/${model.gateway.name}`, (o) => (o.spec.gatewayClassName === gatewayClass ? null : `class ${o.spec.gatewayClassName}`));
  const parameters = model.manifests.gatewayParameters as any;
  if (parameters) {
    await expectObject(`EnvoyProxy ${ns}/${parameters.metadata.name}`, `/apis/gateway.envoyproxy.io/v1alpha1/namespaces/${ns}/envoyproxies/${parameters.metadata.name}`);
    // Once Envoy Gateway (or its stand-in) has made the proxy, its pods are where the EnvoyProxy puts them.
    if (await getProxy(model.gateway.service)) {
      await placed(`Envoy Gateway's proxy of ${model.gateway.name}`, ENVOY_GATEWAY_SYSTEM, { 'gateway.envoyproxy.io/owning-gateway-name': model.gateway.name, 'gateway.envoyproxy.io/owning-gateway-namespace': ns }, model.controlNodeSelector);
    }
  }
  const route = model.manifests.envoyRoute;
  if (!route) return;
  const name = (o: any) => String(o.metadata.name);
  // What the Router chart renders from the values of this class: a pool that does not fail open, an EPP in plain gRPC.
  const pool = (await expectObject(`InferencePool ${ns}/${model.inferencePool.name}`, `/apis/inference.networking.k8s.io/v1/namespaces/${ns}/inferencepools/${model.inferencePool.name}`, (o) =>
    o.spec.endpointPickerRef?.failureMode === 'FailClose' ? null : `failureMode ${o.spec.endpointPickerRef?.failureMode}`,
  )) as any;
  await expectObject(`Deployment ${ns}/${model.inferencePool.epp}`, `/apis/apps/v1/namespaces/${ns}/deployments/${model.inferencePool.epp}`, (o) => {
    const args: string[] = o.spec.template.spec.containers.find((c: any) => c.name === 'epp')?.args ?? [];
    return args.includes('--secure-serving=false') ? null : `EPP args ${JSON.stringify(args)} lack --secure-serving=false`;
  });
  await expectObject(`Service ${ns}/${name(route.service)}`, `/api/v1/namespaces/${ns}/services/${name(route.service)}`, (o) => {
    // The Service is the pool's in Envoy Gateway's terms: the same selector, the pool's target port.
    const sameSelector = JSON.stringify(o.spec.selector) === JSON.stringify(pool?.spec?.selector?.matchLabels);
    const port = o.spec.ports?.[0];
    return sameSelector && port?.targetPort === pool?.spec?.targetPorts?.[0]?.number ? null : `selector ${JSON.stringify(o.spec.selector)} port ${JSON.stringify(port)}, the pool's ${JSON.stringify(pool?.spec?.selector)} ${JSON.stringify(pool?.spec?.targetPorts)}`;
  });
  const onRoute = (o: any) => (o.spec.targetRefs?.[0]?.kind === 'HTTPRoute' && o.spec.targetRefs?.[0]?.name === model.httpRoute ? null : `targets ${JSON.stringify(o.spec.targetRefs)}`);
  await expectObject(`EnvoyExtensionPolicy ${ns}/${name(route.extensionPolicy)}`, `/apis/gateway.envoyproxy.io/v1alpha1/namespaces/${ns}/envoyextensionpolicies/${name(route.extensionPolicy)}`, (o) => {
    const backend = o.spec.extProc?.[0]?.backendRefs?.[0];
    return onRoute(o) ?? (backend?.name === model.inferencePool.epp && backend?.port === 9002 ? null : `ext_proc to ${JSON.stringify(backend)}, not the EPP ${model.inferencePool.epp}:9002`);
  });
  await expectObject(`BackendTrafficPolicy ${ns}/${name(route.backendTrafficPolicy)}`, `/apis/gateway.envoyproxy.io/v1alpha1/namespaces/${ns}/backendtrafficpolicies/${name(route.backendTrafficPolicy)}`, (o) =>
    onRoute(o) ?? (o.spec.loadBalancer?.endpointOverride?.extractFrom?.[0]?.header === 'x-gateway-destination-endpoint' ? null : `loadBalancer ${JSON.stringify(o.spec.loadBalancer)}`),
  );
  await expectObject(`HTTPRoute ${ns}/${model.httpRoute}`, `/apis/gateway.networking.k8s.io/v1/namespaces/${ns}/httproutes/${model.httpRoute}`, (o) => {
    const parent = o.spec.parentRefs?.[0]?.name;
    const backend = o.spec.rules?.[0]?.backendRefs?.[0];
    return parent === model.gateway.name && backend?.name === name(route.service) && (backend?.kind ?? 'Service') === 'Service' ? null : `parent ${parent}, backend ${JSON.stringify(backend)}`;
  });
}

/** Every object of the stack's endpoint that the plan writes (those holding keys are the component's, from the secrets). */
export function endpointObjects(endpoint: EndpointPlan): any[] {
  const m = endpoint.manifests;
  return [
    m.namespace,
    m.gateway,
    m.gatewayParameters,
    m.clientTrafficPolicy,
    m.modelsFilter,
    m.notFoundFilter,
    m.bbrPolicy,
    m.entrySecurityPolicy,
    m.entryRoute,
    m.directResponseFilter,
    m.requestAuthentication,
    m.authorizationPolicy,
    ...m.routes.flatMap((r) => [r.referenceGrant, r.httpRoute, r.securityPolicy, r.backendTrafficPolicy]),
  ].filter((o) => o !== null);
}

/** Resource names by API group/version and kind, as each test cluster's API server serves them. */
const resourceNames = new WeakMap<TestCluster, Map<string, string>>();

/** The API server's path of an object, its resource name read from the server's discovery (`/apis/<group>/<version>`). */
export async function objectPath(cluster: TestCluster, o: any): Promise<string> {
  const apiVersion = String(o.apiVersion);
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  let names = resourceNames.get(cluster);
  if (!names) resourceNames.set(cluster, (names = new Map()));
  if (!names.has(`${base} ${o.kind}`)) {
    const found = await cluster.request('GET', base);
    for (const r of (found.status === 200 ? found.body.resources : []) as { name: string; kind: string }[]) if (!r.name.includes('/')) names.set(`${base} ${r.kind}`, r.name);
  }
  const resource = names.get(`${base} ${o.kind}`);
  if (!resource) throw new Error(`the API server serves no ${o.kind} in ${apiVersion} (${base})`);
  return `${base}${o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : ''}/${resource}/${o.metadata.name}`;
}

/** Where `want` is not part of `found` (every key of a map, every item of a list, in order; nothing wanted where it is undefined), as a path; null when it is (the API server only adds defaults). */
export function notPartOf(want: unknown, found: unknown, at = ''): string | null {
  if (want === undefined) return null;
  if (Array.isArray(want)) {
    if (!Array.isArray(found) || found.length !== want.length) return `${at || '.'}: ${JSON.stringify(found)?.slice(0, 200)}, the plan's ${JSON.stringify(want).slice(0, 200)}`;
    for (let i = 0; i < want.length; i += 1) {
      const problem = notPartOf(want[i], found[i], `${at}[${i}]`);
      if (problem) return problem;
    }
    return null;
  }
  if (typeof want === 'object' && want !== null) {
    if (typeof found !== 'object' || found === null || Array.isArray(found)) return `${at || '.'}: ${JSON.stringify(found)?.slice(0, 200)}, the plan's a map`;
    for (const [key, value] of Object.entries(want)) {
      const problem = notPartOf(value, (found as Record<string, unknown>)[key], `${at}.${key}`);
      if (problem) return problem;
    }
    return null;
  }
  return want === found ? null : `${at || '.'}: ${JSON.stringify(found)}, the plan's ${JSON.stringify(want)}`;
}

/**
 * The stack's endpoint: every object the plan writes is in the cluster as written (spec, data and
 * labels; the API server may only add defaults), and the body-based router's Deployment is Ready,
 * its pod placed by the stack's controlNodeSelector.
 */
async function endpointProblems(cluster: TestCluster, endpoint: EndpointPlan, expectObject: ExpectObject, placed: Placed): Promise<void> {
  for (const o of endpointObjects(endpoint)) {
    const where = `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
    await expectObject(where, await objectPath(cluster, o), (found) => notPartOf({ labels: o.metadata.labels ?? {}, spec: o.spec, data: o.data }, { labels: found.metadata.labels ?? {}, spec: found.spec, data: found.data }));
  }
  const ns = endpoint.namespace;
  const bbr = (await expectObject(`Deployment ${ns}/${endpoint.names.bbrService}`, `/apis/apps/v1/namespaces/${ns}/deployments/${endpoint.names.bbrService}`, (o) =>
    o.status?.readyReplicas >= 1 ? null : `not ready: ${JSON.stringify(o.status)}`,
  )) as any;
  if (bbr?.spec) await placed(`body-based router ${endpoint.names.bbrService}`, ns, bbr.spec.selector.matchLabels, endpoint.nodeSelector, 1);
}

/** The model server's vLLM gets exactly the plan's adapters: one `--lora-modules` with `<name>=<path>` each (features/adapters). */
function loraProblem(model: AnyLlmdModelPlan, deployment: any): string | null {
  const args: string[] = deployment.spec.template.spec.containers.find((c: any) => c.name === 'modelserver')?.args ?? [];
  const at = args.indexOf('--lora-modules');
  const after = at < 0 ? [] : args.slice(at + 1);
  const end = after.findIndex((a) => a.startsWith('--'));
  const modules = end < 0 ? after : after.slice(0, end);
  const wanted = model.adapters.map((a) => `${a.name}=${a.path}`);
  return JSON.stringify(modules) === JSON.stringify(wanted) && args.filter((a) => a === '--lora-modules').length === (wanted.length ? 1 : 0) ? null : `--lora-modules ${JSON.stringify(modules)}, the plan's adapters are ${JSON.stringify(wanted)}`;
}

async function kserveProblems(model: KserveModelPlan, expectObject: ExpectObject): Promise<void> {
  const ns = model.namespace;
  await expectObject(`LLMInferenceService ${ns}/${model.service}`, `/apis/${model.apiVersion}/namespaces/${ns}/llminferenceservices/${model.service}`, (o) => {
    // KServe writes vLLM's options from spec.model.lora: exactly the plan's adapters there.
    const names = ((o.spec.model?.lora?.adapters ?? []) as { name: string }[]).map((a) => a.name);
    return JSON.stringify(names) === JSON.stringify(model.adapters.map((a) => a.name)) ? null : `spec.model.lora.adapters ${JSON.stringify(names)}, the plan's are ${JSON.stringify(model.adapters.map((a) => a.name))}`;
  });
  await expectObject(`LLMInferenceServiceConfig ${ns}/${model.config}`, `/apis/${model.apiVersion}/namespaces/${ns}/llminferenceserviceconfigs/${model.config}`);
  await expectObject(`ServiceAccount ${ns}/${model.serviceAccount}`, `/api/v1/namespaces/${ns}/serviceaccounts/${model.serviceAccount}`);
  if (model.hfTokenSecret) await expectObject(`Secret ${ns}/${model.hfTokenSecret}`, `/api/v1/namespaces/${ns}/secrets/${model.hfTokenSecret}`);
}

/** The served model name of every model of a plan and of its LoRA adapters (what the local model server answers for). */
export function servedNames(plan: DeploymentPlan): string[] {
  return plan.models.flatMap((m) => [m.platform === 'llm-d' ? m.modelServer.servedModelName : m.servedModelName, ...m.adapters.map((a) => a.name)]);
}

/**
 * `app-serving verify --kubeconfig` of a deployed stack, with what it needs where no controller and
 * no container runs ({@link wireForVerify}): a local model server behind every pod, refusing what
 * the deployed access policies refuse at the gateway pods (./access.ts). Models are verified in
 * groups of the same credential (`APP_SERVING_VERIFY_TOKEN` is one per run): the failed checks of
 * all runs, their stderr and exit codes. The stack's endpoint is left out (`--no-endpoint`): its
 * checks need its gateway's routing by the body's model, which no stand-in here does — the
 * data-path tier runs them through the real Envoy (apps/data-path/test/endpoint.test.ts).
 */
export async function verifyDeployed(cluster: TestCluster, sut: Pick<StackUnderTest, 'file' | 'modelsDir' | 'plan' | 'credentials'>): Promise<{ failing: string[]; passed: string[]; stderr: string; codes: (number | null)[] }> {
  const names = servedNames(sut.plan);
  const servers: ModelServer[] = [];
  const serve = async (authorize?: ModelServerOptions['authorize']) => {
    const server = await startModelServer(names, authorize ? { authorize } : {});
    servers.push(server);
    return server.port;
  };
  try {
    const open = await serve();
    await wireForVerify(cluster, sut.plan, async (pod) => {
      const authorize = await gatewayAuthorizer(cluster, sut.plan, pod);
      return authorize ? serve(authorize) : open;
    });
    const groups = new Map<string | undefined, string[]>();
    for (const model of sut.plan.models) {
      const token = sut.credentials[model.name];
      groups.set(token, [...(groups.get(token) ?? []), model.name]);
    }
    const failing: string[] = [];
    const passed: string[] = [];
    let stderr = '';
    const codes: (number | null)[] = [];
    for (const [token, models] of groups) {
      const run = await appServing(
        ['verify', '--stack', sut.file, '--models-dir', sut.modelsDir, '--kubeconfig', cluster.kubeconfigPath, '--json', '--timeout', '20s', '--deadline', '180s', ...models.flatMap((m) => ['--model', m]), ...(sut.plan.endpoint ? ['--no-endpoint'] : [])],
        token === undefined ? {} : { env: { APP_SERVING_VERIFY_TOKEN: token } },
      );
      const report = JSON.parse(run.stdout || 'null');
      failing.push(...(report?.models ?? []).flatMap((m: any) => m.checks.filter((c: any) => c.status === 'fail').map((c: any) => `${m.name}/${c.name}: ${c.message}`)));
      passed.push(...(report?.models ?? []).flatMap((m: any) => m.checks.filter((c: any) => c.status === 'pass').map((c: any) => `${m.name}/${c.name}`)));
      stderr += run.stderr;
      codes.push(run.code);
    }
    return { failing, passed, stderr, codes };
  } finally {
    for (const server of servers) await server.close();
  }
}

/**
 * What verify needs where no controller and no container runs: the controllers' stand-ins (Istio's
 * gateway per llm-d model; KServe's workload, Envoy's proxy and the service's status), each Ready
 * pod's ports forwarded to the local port `serverFor` gives for the pod, and the weights marker in
 * each model-server pod's file system (as the pull Job left it on the volume).
 */
export async function wireForVerify(cluster: TestCluster, plan: DeploymentPlan, serverFor: (pod: any) => Promise<number>): Promise<void> {
  await standInControllers(cluster, plan);
  const envoy = plan.models.some((m) => m.platform === 'kserve' || (m.upstream === '2026-08' && m.router.gatewayClass === 'envoy' && m.manifests.gateway !== null));
  const namespaces = [...new Set([...plan.models.map((m) => m.namespace), ...(envoy ? [ENVOY_GATEWAY_SYSTEM] : [])])];
  for (const namespace of namespaces) {
    const pods = await waitForReadyPods(cluster, namespace);
    for (const pod of pods) {
      const ports = [...new Set(pod.spec.containers.flatMap((c: any) => (c.ports ?? []).map((p: any) => p.containerPort)))] as number[];
      const serverPort = ports.length > 0 ? await serverFor(pod) : 0;
      if (ports.length > 0) await forwardPodPorts(cluster, namespace, pod.metadata.name, ports, { port: serverPort });
      const model = plan.models.find((m) => m.namespace === namespace);
      if (model?.storage && isModelServerPod(model, pod)) await podFileSystem(cluster, namespace, pod.metadata.name, { [model.storage.marker]: '' });
    }
  }
}

/**
 * What the controllers that do not run here would make, from the objects in the cluster: Istio's
 * gateway for each llm-d model behind a Gateway of class istio; KServe's workload, Envoy's proxy and
 * the LLMInferenceService's status for each KServe model. Resolves once their pods are Ready.
 */
export async function standInControllers(cluster: TestCluster, plan: DeploymentPlan): Promise<void> {
  const standIns: KubeObject[] = [];
  for (const model of plan.models) {
    if (model.platform === 'llm-d') {
      // Istio's gateway (a Gateway of class istio); the Router's standalone proxy is the chart's own.
      if (model.gateway.kind !== 'gateway') continue;
      if (model.upstream === '2026-08' && model.router.gatewayClass === 'agentgateway') standIns.push(...(await agentgatewayStandIn(cluster, model.namespace, model.gateway.name)));
      else if (model.upstream === '2026-08' && model.router.gatewayClass === 'envoy') standIns.push(...(await envoyGatewayStandIn(cluster, model.namespace, model.gateway.name, model.gateway.service)));
      else standIns.push(...(await istioGatewayStandIn(cluster, model.namespace, model.gateway.name)));
    } else {
      standIns.push(...await kserveStandIns(cluster, {
        namespace: model.namespace,
        service: model.service,
        workload: model.workload,
        podLabels: model.podLabels,
        port: model.port,
        gateway: model.gateway,
        pathPrefix: model.pathPrefix,
        apiVersion: model.apiVersion,
      }));
    }
  }
  for (const d of standIns.filter((o) => o.kind === 'Deployment')) {
    await waitFor(cluster, `/apis/apps/v1/namespaces/${d.metadata.namespace}/deployments/${d.metadata.name}`, (o) => o.status?.readyReplicas >= (o.spec.replicas ?? 1) && o.status?.updatedReplicas >= (o.spec.replicas ?? 1), 120_000);
  }
}

/** Deletes what a stack put in the cluster (its namespaces, their PVs, its nodes) and waits until the namespaces are gone. */
export async function removeStack(cluster: TestCluster, plan: DeploymentPlan, nodePrefix?: string): Promise<void> {
  const namespaces = [...new Set(plan.models.map((m) => m.namespace))];
  for (const ns of namespaces) await cluster.request('DELETE', `/api/v1/namespaces/${ns}`);
  // Envoy Gateway's stand-in proxies of the llm-d Gateways (class envoy) live in its namespace.
  for (const model of plan.models) {
    if (model.platform !== 'llm-d' || model.upstream !== '2026-08' || model.router.gatewayClass !== 'envoy' || model.gateway.kind !== 'gateway') continue;
    await cluster.request('DELETE', `/apis/apps/v1/namespaces/${ENVOY_GATEWAY_SYSTEM}/deployments/${model.gateway.service}`);
    await cluster.request('DELETE', `/api/v1/namespaces/${ENVOY_GATEWAY_SYSTEM}/services/${model.gateway.service}`);
  }
  for (const pv of await list(cluster, '/api/v1/persistentvolumes')) {
    if (namespaces.includes(pv.spec.claimRef?.namespace)) await cluster.request('DELETE', `/api/v1/persistentvolumes/${pv.metadata.name}`);
  }
  for (const ns of namespaces) {
    const until = Date.now() + 180_000;
    while ((await cluster.request('GET', `/api/v1/namespaces/${ns}`)).status !== 404) {
      if (Date.now() > until) throw new Error(`namespace ${ns} not deleted`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  if (nodePrefix !== undefined) await cluster.request('DELETE', `/api/v1/nodes?labelSelector=${encodeURIComponent(`${SHAPE_LABEL}=${nodePrefix}`)}`);
}

function isModelServerPod(model: ModelPlan, pod: any): boolean {
  const labels = model.platform === 'llm-d' ? model.modelServer.podLabels : model.podLabels;
  return matches(pod.metadata.labels ?? {}, labels);
}

/** The namespace's pods once every one that is not a finished Job's is Ready (bounded: a hang guard). */
async function waitForReadyPods(cluster: TestCluster, namespace: string): Promise<any[]> {
  const until = Date.now() + 120_000;
  for (;;) {
    const pods = (await list(cluster, `/api/v1/namespaces/${namespace}/pods`)).filter((p) => !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded');
    if (pods.length > 0 && pods.every(ready)) return pods;
    if (Date.now() > until) throw new Error(`pods of ${namespace} not Ready: ${pods.map((p) => `${p.metadata.name} ${p.status?.phase}`).join(', ')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export type Action = 'create' | 'update' | 'replace' | 'delete';

/**
 * What the engine would do, per resource: plain resources by `<type>::<name>`; a chart by its own
 * name — `create` or `delete` when the chart itself comes or goes, else `objects` when any object it
 * renders changes (an update in place, or objects re-created under new names).
 */
export function engineVerdict(steps: readonly ResourceStep[]): Map<string, Action | 'objects'> {
  const out = new Map<string, Action | 'objects'>();
  for (const step of steps) {
    const action: Action | undefined =
      step.op === 'create' ? 'create' : step.op === 'update' ? 'update' : step.op === 'delete' ? 'delete' : ['replace', 'create-replacement', 'delete-replaced'].includes(step.op) ? 'replace' : undefined;
    if (!action) continue;
    const [, , chain = '', name = ''] = step.urn.split('::');
    const types = chain.split('$');
    const chartAt = types.indexOf('kubernetes:helm.sh/v4:Chart');
    if (chartAt >= 0 && chartAt < types.length - 1) {
      // An object the chart renders: its name is `<chart name>:<namespace>/<object>`.
      const key = `kubernetes:helm.sh/v4:Chart::${name.slice(0, name.indexOf(':'))}`;
      if (!out.has(key)) out.set(key, 'objects');
      continue;
    }
    if (!step.type.startsWith('kubernetes:') && !step.type.startsWith('pulumi:')) continue;
    if (step.type === 'kubernetes:helm.sh/v4:Chart' && action !== 'create' && action !== 'delete') {
      out.set(`${step.type}::${name}`, 'objects');
      continue;
    }
    out.set(`${step.type}::${name}`, action);
  }
  return out;
}

/** What `diff` says, per resource, in the same terms: a chart that stays changes its objects. */
export function diffVerdict(json: any): Map<string, Action | 'objects'> {
  const out = new Map<string, Action | 'objects'>();
  for (const r of [...json.stack.resources, ...json.models.flatMap((m: any) => m.resources)]) {
    const chart = r.type === 'kubernetes:helm.sh/v4:Chart';
    out.set(`${r.type}::${r.name}`, chart && (r.action === 'update' || r.action === 'replace') ? 'objects' : r.action);
  }
  return out;
}

/** A verdict map as a plain object sorted by key (for toEqual). */
export const sorted = (m: Map<string, string>): Record<string, string> => Object.fromEntries([...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));

/** Runs the built `app-serving` command; resolves with its exit code and output. */
export function appServing(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], { cwd: options.cwd ?? REPO_ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every object of the cluster that a stack may have left: namespaces, PVs and cluster-scoped objects labelled as ours. */
export async function leftovers(cluster: TestCluster, plan: DeploymentPlan): Promise<string[]> {
  const found: string[] = [];
  for (const model of plan.models) {
    const ns = await get(cluster, `/api/v1/namespaces/${model.namespace}`);
    if (ns) found.push(`Namespace ${model.namespace} (${ns.status?.phase})`);
    if (model.storage?.pv && (await get(cluster, `/api/v1/persistentvolumes/${model.storage.pv}`))) found.push(`PV ${model.storage.pv}`);
  }
  for (const pv of await list(cluster, '/api/v1/persistentvolumes')) {
    const claim = pv.spec.claimRef;
    if (claim && plan.models.some((m) => m.namespace === claim.namespace)) found.push(`PV ${pv.metadata.name} (claim ${claim.namespace}/${claim.name})`);
  }
  if (plan.endpoint && (await get(cluster, `/api/v1/namespaces/${plan.endpoint.namespace}`))) found.push(`Namespace ${plan.endpoint.namespace} (the endpoint's)`);
  if (plan.kserve?.gateway.create) {
    const gw = plan.kserve.gateway;
    if (await get(cluster, `/apis/gateway.networking.k8s.io/v1/namespaces/${gw.namespace}/gateways/${gw.name}`)) found.push(`Gateway ${gw.namespace}/${gw.name}`);
    if (await get(cluster, `/apis/gateway.networking.k8s.io/v1/gatewayclasses/${gw.className}`)) found.push(`GatewayClass ${gw.className}`);
  }
  return [...new Set(found)].sort();
}
