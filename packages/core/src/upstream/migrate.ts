import { stringify } from 'yaml';
import { CATEGORIES, LABEL_INFERENCE_SERVING, LABEL_MODEL, type Category, type RouterGatewayClass } from '../constants.ts';
import { editStackText, type StackEdit } from '../config/edit.ts';
import type { StackConfig } from '../config/load.ts';
import { modelPlatform } from '../config/rules.ts';
import type { DiscoveredModel, ValuesFile } from '../discovery.ts';
import { StackError, summarizeNames, type Issue } from '../errors.ts';
import { mirrorReference, parseImage } from '../images.ts';
import { KSERVE_RELEASES } from '../kserve/releases.ts';
import type { DeploymentPlan, LlmdModelPlan, LlmdRouterModelPlan } from '../plan.ts';
import { GAIE_DEFAULTS, MODELSERVICE_ACCELERATORS, MODELSERVICE_DEFAULTS } from '../values/chart-facts.ts';
import { EPP_CONNECTION_POOL, MODEL_REF_ANNOTATION } from '../values/llmd.ts';
import { deepEqual, effectiveValues, getPath, isValuesMap, type Values } from '../values/merge.ts';
import { gpuToleration, type Toleration } from '../values/scheduling.ts';
import { ROUTER_CHARTS, ROUTER_EPP_IMAGE, VLLM_IMAGE } from './2026-08/facts.ts';
import { serverWeights } from './2026-08/server.ts';
import { CURRENT_UPSTREAM, modelUpstream } from './select.ts';

/**
 * `app-serving migrate`: the conversion of one llm-d model's 2026-02 values files
 * (`ms-<slug>`, `gaie-<slug>`, `infra-<slug>`) into the 2026-08 set's (`server-<slug>`, and
 * `router-<slug>` where the old files set something the Router carries), as pure functions: what
 * is written, and every value that could not be carried over, named by file and key.
 *
 * The rules follow what the 2026-02 charts made of the files (llm-d-modelservice v0.4.12
 * `templates/_helpers.tpl`: the command by `modelCommand`, the port by `routing`, the GPUs by
 * `accelerator` and `parallelism`; GAIE inferencepool v1.2.0 `values.yaml`), so that the model is
 * served the same: same served model name, port clients reach, replicas, resources and placement.
 */

/** One file the migration writes into a model folder. */
export interface MigratedFile {
  /** The values folder: `server-<slug>` or `router-<slug>`. */
  readonly folder: string;
  /** What the file holds. */
  readonly values: Values;
  /** The file's text: a header saying where it comes from, then the values. */
  readonly text: string;
}

/** The migration of one llm-d model. */
export interface ModelMigration {
  readonly name: string;
  readonly category: Category;
  readonly slug: string;
  /** The files to write (none when the folder has them already). */
  readonly files: readonly MigratedFile[];
  /** Values of the old files the new ones do not carry, each at its file, line and key. */
  readonly warnings: readonly Issue[];
  /** What changes on purpose (a deprecated image replaced, the routing sidecar dropped, …): for the review. */
  readonly notes: readonly string[];
}

/** What the migration of one llm-d model needs. */
export interface MigrateModelInput {
  /** The model as discovered on the 2026-02 set (its `modelService`, `gaie` and optional `infra` files). */
  readonly model: DiscoveredModel;
  /** Its 2026-02 plan. */
  readonly plan: LlmdModelPlan;
  /** The Router's mode on the stack after the migration. */
  readonly router: { readonly mode: 'gateway' | 'standalone'; readonly gatewayClass: RouterGatewayClass };
  /** The stack's GPU toleration (app-serving adds it on both sets: not repeated in the files). */
  readonly toleration: Toleration | undefined;
}

/** The upstream repository of llm-d's deprecated vLLM image, which the 2026-08 set replaces by {@link VLLM_IMAGE}. */
const LLM_D_CUDA = { registry: 'ghcr.io', repository: 'llm-d/llm-d-cuda' };
/** The EPP images of the 2026-02 set (GAIE's, and llm-d's inference scheduler), which the Router's own EPP replaces. */
const OLD_EPPS = [
  { registry: 'registry.k8s.io', repository: 'gateway-api-inference-extension/epp' },
  { registry: 'ghcr.io', repository: 'llm-d/llm-d-inference-scheduler' },
];
/** The keys llm-d-modelservice's container renders that the model server's own keys (or app-serving) set. */
const CONTAINER_OWN = new Set(['name', 'image', 'command', 'args', 'env', 'ports', 'resources']);
const PROBES = ['startupProbe', 'readinessProbe', 'livenessProbe'] as const;
/** Deprecated container keys of llm-d-modelservice that are plain container fields. */
const CONTAINER_FIELDS = ['securityContext', 'imagePullPolicy', 'workingDir', 'stdin', 'tty', 'volumeMounts'];
/** The pod fields app-serving sets from the stack (placement, pull secret) or owns (the container). */
const POD_OWN = new Set(['containers', 'affinity', 'tolerations', 'imagePullSecrets']);
/** `decode.<key>` → the pod field it renders (llm-d-modelservice `decode-deployment.yaml`, `modelPod`). */
const POD_FIELDS: Readonly<Record<string, string>> = {
  initContainers: 'initContainers',
  enableServiceLinks: 'enableServiceLinks',
  terminationGracePeriodSeconds: 'terminationGracePeriodSeconds',
  schedulerName: 'schedulerName',
  priorityClassName: 'priorityClassName',
  podSecurityContext: 'securityContext',
  volumes: 'volumes',
};
/** vLLM flags the pinned vLLM no longer has (it would stop on them): `--disable-log-requests`, deprecated by vllm#21739, removed by vllm#29402 (v0.12). */
const REMOVED_VLLM_FLAGS = ['--disable-log-requests'];
/** GAIE v1.2.0 EPP flags that the Router v0.10 EPP reads from its plugins instead (`core-metrics-extractor`, `metrics-data-source`). */
const METRIC_FLAGS = ['total-queued-requests-metric', 'total-running-requests-metric', 'kv-cache-usage-percentage-metric', 'lora-info-metric', 'cache-info-metric'];

/**
 * Converts one llm-d model's 2026-02 values files into the 2026-08 set's. Pure: reads nothing,
 * writes nothing; `files` is what `app-serving migrate` writes into the model folder.
 */
export function migrateLlmdModel(input: MigrateModelInput): ModelMigration {
  const { model, plan } = input;
  const warnings: Issue[] = [];
  const notes: string[] = [];
  const server = serverValuesFrom(input, warnings, notes);
  const router = routerValuesFrom(input, warnings, notes);
  infraWarnings(model.values.infra, plan, warnings);
  const files: MigratedFile[] = [
    {
      folder: `server-${model.slug}`,
      values: server,
      text: fileText(server, [
        `The model server of ${model.entry.name} on the 2026-08 set (a Deployment app-serving creates; its keys: docs/configuration.md),`,
        `converted by \`app-serving migrate\` from ${folderOf(model.values.modelService!)}.`,
        ...notCarriedLines(warnings, model.values.modelService!),
      ]),
    },
  ];
  if (Object.keys(router).length > 0) {
    files.push({
      folder: `router-${model.slug}`,
      values: router,
      text: fileText(router, [
        `The llm-d Router chart's values for ${model.entry.name} on the 2026-08 set (every value under router.*),`,
        `converted by \`app-serving migrate\` from ${folderOf(model.values.gaie!)}; app-serving adds the pool's selector and port, the provider and the placement.`,
        ...notCarriedLines(warnings, model.values.gaie!),
      ]),
    });
  }
  return { name: model.entry.name, category: model.category, slug: model.slug, files, warnings, notes };
}

// The model server ------------------------------------------------------------------------------

function serverValuesFrom({ model, plan, toleration }: MigrateModelInput, warnings: Issue[], notes: string[]): Values {
  const file = model.values.modelService!;
  const ms = file.values;
  const effective = effectiveValues(MODELSERVICE_DEFAULTS, ms);
  const lost = (path: (string | number)[], why: string) => warnings.push(file.source.issue('warning.not-carried', path, `not carried over to server-${model.slug}/values.yaml: ${why}`));
  const decode = (getPath(effective, ['decode']) ?? {}) as Values;
  const containers = (Array.isArray(decode.containers) ? decode.containers : []) as Values[];
  const c = containers[0] ?? {};
  const image = String(c.image ?? '');
  const modelCommand = typeof c.modelCommand === 'string' ? c.modelCommand : 'custom';
  const proxy = getPath(effective, ['routing', 'proxy', 'enabled']) !== false;
  const storage = plan.storage;
  const out: Values = {};

  // The image and how it starts. llm-d-cuda is deprecated in favour of upstream vLLM (llm-d
  // docs/api-reference/artifacts.md), whose entrypoint is `vllm serve` (launch: vllm).
  const cuda = copyOf(image, LLM_D_CUDA);
  let launch: 'vllm' | 'image' = 'image';
  let newImage = image;
  if (modelCommand === 'vllmServe' && cuda !== undefined) {
    launch = 'vllm';
    newImage = cuda === null ? VLLM_IMAGE : mirrorReference(VLLM_IMAGE, cuda);
    notes.push(`${image} → ${newImage}: llm-d-cuda is deprecated in favour of upstream vLLM (mirror it first on an air-gapped cluster: app-serving images)`);
  } else if (modelCommand === 'vllmServe' && /(^|\/)vllm\/vllm-openai$/.test(parseImage(image).repository)) {
    launch = 'vllm';
  }

  // The port: vLLM and the image's default command listened where the chart said (behind the
  // routing sidecar on routing.proxy.targetPort); the model server now listens on the port clients
  // and the pool reached (routing.servicePort). A custom command keeps the port its arguments name.
  const port = modelCommand === 'custom' ? plan.modelServer.port : plan.modelServer.servicePort;
  if (proxy) {
    notes.push(
      `the routing sidecar is not deployed on 2026-08 (the Router's EPP picks the pod; P/D disaggregation is not supported yet): ${modelCommand === 'custom' ? `the server is reached on its own port ${port}` : `the server now listens on ${port} itself`}`,
    );
  }

  const parallel = parallelismArgs(getPath(decode, ['parallelism']));
  const servedModelName = plan.modelServer.servedModelName;
  const modelArg = modelArgument(ms, storage, lost);
  let args = Array.isArray(c.args) ? (c.args as unknown[]).map(String) : [];
  if (launch === 'vllm') {
    const removed = args.filter((a) => REMOVED_VLLM_FLAGS.some((flag) => a === flag || a.startsWith(`${flag}=`)));
    if (removed.length > 0) {
      args = args.filter((a) => !removed.includes(a));
      notes.push(`${removed.join(', ')} dropped: vLLM removed the flag in v0.12 (vllm-project/vllm#29402); it logs no requests unless --enable-log-requests is given`);
    }
  }
  out.image = newImage;
  out.servedModelName = servedModelName;
  if (launch === 'vllm') {
    if (!storage && modelArg !== undefined) out.model = modelArg;
    if (storage && c.mountModelVolume !== true) out.mountModelVolume = false;
    out.args = [...parallel, ...args];
  } else {
    out.launch = 'image';
    if (modelCommand === 'vllmServe') {
      // Another vLLM image: the chart ran `vllm serve` in it; so does the model server.
      out.command = ['vllm', 'serve'];
      out.args = [...(modelArg !== undefined ? [modelArg] : []), '--port', String(port), ...parallel, '--served-model-name', servedModelName, ...args];
      notes.push(`${image} is kept, started as the chart started it (vllm serve); with vllm/vllm-openai, launch: vllm writes the arguments`);
    } else if (modelCommand === 'imageDefault') {
      out.args = [...(modelArg !== undefined ? ['--model', modelArg] : []), '--port', String(port), ...parallel, '--served-model-name', servedModelName, ...args];
    } else {
      if (Array.isArray(c.command)) out.command = (c.command as unknown[]).map(String);
      out.args = args;
    }
    if (storage && c.mountModelVolume !== true) out.mountModelVolume = false;
  }
  if ((out.args as unknown[]).length === 0) delete out.args;
  out.port = port;
  if (plan.modelServer.decodeReplicas !== 1) out.replicas = plan.modelServer.decodeReplicas;

  // Environment: the container's, the accelerator's, the Hugging Face token; not what app-serving
  // sets itself for weights on the volume (HF_HUB_OFFLINE, HF_HUB_CACHE).
  const ownEnv = storage ? serverWeights(storage).env : [];
  const env: Values[] = [];
  const addEnv = (e: Values) => {
    if (ownEnv.some((o) => o.name === e.name && deepEqual(o, e))) return;
    if (!env.some((x) => x.name === e.name)) env.push(e);
  };
  for (const e of (Array.isArray(c.env) ? c.env : []) as Values[]) addEnv(e);
  const accelerator = String(getPath(effective, ['accelerator', 'type']) ?? MODELSERVICE_ACCELERATORS.defaultType);
  for (const e of MODELSERVICE_ACCELERATORS.env[accelerator] ?? []) addEnv({ ...e });
  const secret = getPath(effective, ['modelArtifacts', 'authSecretName']);
  if (typeof secret === 'string' && secret !== '') addEnv({ name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: secret, key: 'HF_TOKEN' } } });
  // An hf:// model the chart downloaded into an emptyDir at the mount path (HF_HOME there): the same
  // volume, so that the weights outlive a restart of the container as before.
  const hubDownload = !storage && c.mountModelVolume === true && String(getPath(ms, ['modelArtifacts', 'uri']) ?? '').startsWith('hf://');
  const mountPath = String(getPath(effective, ['modelArtifacts', 'mountPath']));
  if (hubDownload) addEnv({ name: 'HF_HOME', value: mountPath });
  // vLLM v0.20 and later need USER set (torch 2.11); llm-d's model-server recipes set it (as the example model folders do).
  if (newImage !== image && !env.some((e) => e.name === 'USER')) env.push({ name: 'USER', value: 'llm-d' });
  if (env.length > 0) out.env = env;

  // Resources: the container's, with the accelerators the chart added (tensor × dataLocal).
  const resources = gpuResources(c, effective, decode, image, lost);
  if (resources) out.resources = resources;

  // Probes: to the server's port, by name (the port number may have changed).
  const oldPorts = new Set<unknown>([plan.modelServer.port, ...((Array.isArray(c.ports) ? c.ports : []) as Values[]).filter((p) => p.containerPort === plan.modelServer.port).map((p) => p.name)]);
  const extra = isValuesMap(c.extraConfig) ? c.extraConfig : {};
  const container: Values = {};
  for (const probe of PROBES) {
    const value = extra[probe] ?? c[probe];
    if (isValuesMap(value)) out[probe] = probeToServer(value, oldPorts);
  }
  for (const [key, value] of Object.entries(extra)) {
    if ((PROBES as readonly string[]).includes(key)) continue;
    if (CONTAINER_OWN.has(key)) lost(['decode', 'containers', 0, 'extraConfig', key], `the model server's own key sets the container's ${key}${key === 'ports' ? ' (one port, modelserver)' : ''}`);
    else container[key] = value;
  }
  for (const key of CONTAINER_FIELDS) if (c[key] !== undefined && container[key] === undefined) container[key] = c[key];

  // The container keys the chart reads and the model server has no place for.
  const ports = (Array.isArray(c.ports) ? c.ports : []) as Values[];
  ports.forEach((p, i) => {
    if (p.containerPort !== plan.modelServer.port) lost(['decode', 'containers', 0, 'ports', i], `the model server's container has one port (modelserver, ${port}); add a Service of your own for port ${String(p.containerPort)}`);
  });
  const known = new Set([...CONTAINER_OWN, ...PROBES, ...CONTAINER_FIELDS, 'modelCommand', 'mountModelVolume', 'extraConfig']);
  for (const key of Object.keys(c)) if (!known.has(key)) lost(['decode', 'containers', 0, key], 'llm-d-modelservice read it; the model server has no such key');
  containers.slice(1).forEach((other, i) => lost(['decode', 'containers', i + 1], `the model server's pod has one container, the server (${String(other.name ?? 'this one')} was a second one): run it as a native sidecar in pod.initContainers (restartPolicy: Always)`));
  const size = getPath(ms, ['modelArtifacts', 'size']);
  const pod: Values = {};
  if (hubDownload) {
    container.volumeMounts = [...((container.volumeMounts as Values[] | undefined) ?? []), { name: 'model-storage', mountPath }];
    pod.volumes = [{ name: 'model-storage', emptyDir: typeof size === 'string' || typeof size === 'number' ? { sizeLimit: String(size) } : {} }];
  }
  if (Object.keys(container).length > 0) out.container = container;

  // Pod fields.
  const podAnnotations: Record<string, string> = {};
  const podExtra = isValuesMap(decode.extraConfig) ? decode.extraConfig : {};
  for (const [key, value] of Object.entries(podExtra)) {
    if (!POD_OWN.has(key)) pod[key] = value;
    else if (key === 'imagePullSecrets') {
      // app-serving adds the Harbor pull secret itself; others cannot be given.
      const others = (Array.isArray(value) ? value : []).filter((s) => !(isValuesMap(s) && s.name === plan.pullSecret));
      if (others.length > 0) lost(['decode', 'extraConfig', key], 'app-serving gives the model server the stack\'s pull secret only; put other registries\' credentials on the namespace\'s default ServiceAccount');
    } else if (key === 'affinity') {
      if (!isStackAffinity(value, plan)) lost(['decode', 'extraConfig', key], "app-serving places the model server by the stack's nodeSelector; write the labels there");
    } else lost(['decode', 'extraConfig', key], 'app-serving sets it');
  }
  for (const [key, field] of Object.entries(POD_FIELDS)) {
    const value = decode[key];
    if (value === undefined || (key === 'priorityClassName' && typeof value === 'string' && value.toLowerCase() === 'none')) continue;
    if (key === 'volumes' && Array.isArray(value) && value.length === 0) continue;
    if (key === 'initContainers' && Array.isArray(value) && value.length === 0) continue;
    pod[field] = field === 'volumes' && Array.isArray(pod.volumes) ? [...(value as Values[]), ...(pod.volumes as Values[])] : value;
  }
  const serviceAccount = getPath(effective, ['serviceAccountOverride']);
  if (typeof serviceAccount === 'string' && serviceAccount !== '') pod.serviceAccountName = serviceAccount;
  if (isValuesMap(decode.podAnnotations)) {
    for (const [key, value] of Object.entries(decode.podAnnotations)) if (key !== MODEL_REF_ANNOTATION && typeof value === 'string') podAnnotations[key] = value;
  }
  if (Object.keys(podAnnotations).length > 0) out.podAnnotations = podAnnotations;
  if (Object.keys(pod).length > 0) out.pod = pod;

  // What the Deployment and the chart did that the model server does not.
  const tolerations = Array.isArray(decode.tolerations) ? decode.tolerations : [];
  if (tolerations.some((t) => !deepEqual(t, toleration))) lost(['decode', 'tolerations'], "app-serving gives the model server the stack's gpuToleration only");
  for (const key of ['nodeSelector', 'acceleratorTypes'] as const) {
    if (decode[key] !== undefined && !(isValuesMap(decode[key]) && Object.keys(decode[key]).length === 0)) lost(['decode', key], "app-serving places the model server by the stack's nodeSelector; write the labels there");
  }
  if (decode.imagePullSecrets !== undefined) lost(['decode', 'imagePullSecrets'], "app-serving gives the model server the stack's pull secret only");
  for (const key of ['strategy', 'annotations'] as const) if (decode[key] !== undefined) lost(['decode', key], `the model server's values have no Deployment ${key}`);
  if (getPath(decode, ['monitoring', 'podmonitor', 'enabled']) === true) lost(['decode', 'monitoring', 'podmonitor'], 'the model server has no PodMonitor; scrape its /metrics with a PodMonitor of your own (label llm-d.ai/model)');
  if (getPath(decode, ['autoscaling', 'enabled']) === true) lost(['decode', 'autoscaling'], 'autoscaling is not part of the 2026-08 set yet');
  const decodeKnown = new Set(['create', 'replicas', 'containers', 'parallelism', 'extraConfig', 'podAnnotations', 'tolerations', 'nodeSelector', 'acceleratorTypes', 'imagePullSecrets', 'strategy', 'annotations', 'monitoring', 'autoscaling', ...Object.keys(POD_FIELDS)]);
  for (const key of Object.keys(getPath(ms, ['decode']) as Values ?? {})) if (!decodeKnown.has(key)) lost(['decode', key], 'llm-d-modelservice read it; the model server has no such key');
  if (plan.modelServer.prefillReplicas > 0) {
    lost(['prefill'], `P/D disaggregation (${plan.modelServer.prefillReplicas} prefill pods) is not supported on 2026-08 yet: the model is served by decode pods only — keep it on 2026-02 (upstream: 2026-02 on its entry) until it is`);
  }
  const labels = getPath(ms, ['modelArtifacts', 'labels']);
  if (isValuesMap(labels)) {
    for (const key of Object.keys(labels)) if (key !== LABEL_INFERENCE_SERVING && key !== LABEL_MODEL) lost(['modelArtifacts', 'labels', key], 'the model server\'s pods carry the labels app-serving gives them only');
  }
  if (getPath(effective, ['tracing', 'enabled']) === true) lost(['tracing'], 'the model server has no tracing key: add the OpenTelemetry arguments and OTEL_* variables to args and env');
  if (getPath(effective, ['accelerator', 'dra']) === true) lost(['accelerator', 'dra'], 'Dynamic Resource Allocation is not part of the 2026-08 set yet: ask for the device plugin\'s resource in resources.limits');
  const rootKnown = new Set(['modelArtifacts', 'routing', 'accelerator', 'decode', 'prefill', 'multinode', 'requester', 'tracing', 'serviceAccountOverride']);
  for (const key of Object.keys(ms)) if (!rootKnown.has(key)) lost([key], 'llm-d-modelservice read it; the model server has no such key');
  return out;
}

/**
 * What `vllm serve` (or the image) was given as the model (`argsByProtocol`): the Hub id of an
 * `hf://` URI, or with a modelSource the weights on the volume. Undefined when nothing names one.
 */
function modelArgument(ms: Values, storage: LlmdModelPlan['storage'], lost: (path: (string | number)[], why: string) => void): string | undefined {
  if (storage) return serverWeights(storage).model;
  const uri = getPath(ms, ['modelArtifacts', 'uri']);
  if (typeof uri !== 'string' || uri === '') return undefined;
  const [protocol, rest = ''] = uri.split('://');
  if (protocol === 'hf') return rest;
  lost(['modelArtifacts', 'uri'], `a ${protocol}:// model is not mounted by the model server: give the weights to the stack as modelSource (app-serving mounts them), or mount them with pod.volumes and container.volumeMounts and name the path in model`);
  return undefined;
}

/** The `--tensor-parallel-size` / `--data-parallel-size[-local]` arguments the chart wrote. */
function parallelismArgs(parallelism: unknown): string[] {
  const p = isValuesMap(parallelism) ? parallelism : {};
  const tensor = Number(p.tensor ?? 1);
  const data = Number(p.data ?? 1);
  const local = dataLocal(p);
  return [
    ...(tensor > 1 ? ['--tensor-parallel-size', String(tensor)] : []),
    ...(data > 1 ? ['--data-parallel-size', String(data)] : []),
    ...(local > 1 ? ['--data-parallel-size-local', String(local)] : []),
  ];
}

function dataLocal(p: Values): number {
  if (p.dataLocal !== undefined) return Number(p.dataLocal);
  if (p.data !== undefined && p.workers !== undefined) return Math.floor(Number(p.data) / Number(p.workers));
  if (p.data !== undefined) return Number(p.data);
  return 1;
}

/** The container's resources with the accelerators the chart added (`resources` helper), in limits. */
function gpuResources(c: Values, effective: Values, decode: Values, image: string, lost: (path: (string | number)[], why: string) => void): Values | undefined {
  const given = isValuesMap(c.resources) ? structuredClone(c.resources) : {};
  if (getPath(effective, ['accelerator', 'dra']) === true) return Object.keys(given).length > 0 ? given : undefined;
  const type = String(getPath(effective, ['accelerator', 'type']) ?? MODELSERVICE_ACCELERATORS.defaultType);
  const map = { ...MODELSERVICE_ACCELERATORS.resources, ...((getPath(effective, ['accelerator', 'resources']) as Record<string, string> | undefined) ?? {}) };
  const resource = image.includes('llm-d-inference-sim') || type === 'cpu' ? '' : (map[type] ?? 'nvidia.com/gpu');
  const p = isValuesMap(decode.parallelism) ? decode.parallelism : {};
  const count = dataLocal(p) * Number(p.tensor ?? 1);
  if (resource !== '' && count >= 1) {
    const limits = isValuesMap(given.limits) ? given.limits : {};
    // Kubernetes takes an extended resource's request from its limit: the limit alone asks for it.
    if (limits[resource] === undefined) given.limits = { ...limits, [resource]: String(count) };
  }
  if (p.workers !== undefined && Number(p.workers) > 1) lost(['decode', 'parallelism', 'workers'], 'multi-node serving is not supported on 2026-08 yet');
  return Object.keys(given).length > 0 ? given : undefined;
}

/** A probe aimed at the model server's port (by number or by the old port's name) is aimed at `modelserver`. */
function probeToServer(probe: Values, oldPorts: ReadonlySet<unknown>): Values {
  const out = structuredClone(probe);
  for (const handler of ['httpGet', 'tcpSocket'] as const) {
    const h = out[handler];
    if (isValuesMap(h) && oldPorts.has(h.port)) h.port = 'modelserver';
  }
  return out;
}

/** Whether an affinity is the one app-serving derives from the stack's nodeSelector (what 2026-02 required in the file, if set). */
function isStackAffinity(value: unknown, plan: LlmdModelPlan): boolean {
  const terms = getPath(value, ['nodeAffinity', 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms']);
  const keys = Object.keys(plan.nodeSelector).sort();
  const expected = [{ matchExpressions: keys.map((key) => ({ key, operator: 'In', values: [plan.nodeSelector[key]] })) }];
  return isValuesMap(value) && Object.keys(value).length === 1 && deepEqual(terms, expected);
}

// The Router ------------------------------------------------------------------------------------

function routerValuesFrom({ model, router, toleration }: MigrateModelInput, warnings: Issue[], notes: string[]): Values {
  const file = model.values.gaie!;
  const gaie = file.values;
  const lost = (path: (string | number)[], why: string) => warnings.push(file.source.issue('warning.not-carried', path, `not carried over to router-${model.slug}/values.yaml: ${why}`));
  const CONFIG = 'the EPP config changed (llm-d.ai/v1alpha1 EndpointPickerConfig, renamed plugins): write it again for the Router in router.epp.pluginsCustomConfig';
  // Every value of the Router charts sits under router.* (their library chart is aliased `router`).
  const r: Values = {};
  const epp: Values = {};
  const ext = isValuesMap(gaie.inferenceExtension) ? gaie.inferenceExtension : {};

  for (const [key, value] of Object.entries(ext)) {
    switch (key) {
      case 'replicas':
        if (value !== 1) epp.replicas = value;
        break;
      case 'image': {
        const image = eppImage(effectiveValues(GAIE_DEFAULTS, gaie));
        const prefix = OLD_EPPS.map((e) => copyOf(image, e)).find((p) => p !== undefined);
        const pullPolicy = getPath(value, ['pullPolicy']);
        if (prefix === undefined) {
          lost(['inferenceExtension', 'image'], `${image} is not GAIE's EPP: the Router runs its own endpoint picker (${ROUTER_EPP_IMAGE}); set router.epp.image to a build of it`);
        } else if (prefix !== null) {
          // The mirror that held the old EPP holds the new one: `<mirror>/llm-d/llm-d-router-endpoint-picker:<tag>`.
          const mirrored = mirrorReference(ROUTER_EPP_IMAGE, prefix);
          const { tag } = parseImage(mirrored);
          const path = mirrored.slice(0, mirrored.lastIndexOf(':'));
          const slash = path.lastIndexOf('/');
          epp.image = { registry: path.slice(0, slash), repository: path.slice(slash + 1), tag: tag!, ...(pullPolicy !== undefined && { pullPolicy }) };
          notes.push(`${image} → ${mirrored}: the Router's endpoint picker, from the same mirror (copy it there first: app-serving images)`);
        } else if (pullPolicy !== undefined && pullPolicy !== 'IfNotPresent') {
          epp.image = { pullPolicy };
        }
        break;
      }
      case 'flags': {
        const flags: Values = {};
        for (const [flag, v] of Object.entries(isValuesMap(value) ? value : {})) {
          // Log verbosity: the Router chart documents `router.epp.flags.v` (routerlib values.yaml).
          if (flag === 'v') flags.v = v;
          else if (METRIC_FLAGS.includes(flag)) {
            lost(['inferenceExtension', 'flags', flag], "the Router's EPP reads the model servers' metrics through its core-metrics-extractor plugin (router.modelServers.type names the engine); for other metric names write an EPP config in router.epp.pluginsCustomConfig");
          } else lost(['inferenceExtension', 'flags', flag], 'not known to be a flag of the Router v0.10 EPP (an unknown flag stops it): if it still is one, add it under router.epp.flags');
        }
        if (Object.keys(flags).length > 0) epp.flags = flags;
        break;
      }
      case 'env':
      case 'extProcPort':
      case 'extraContainerPorts':
      case 'resources':
        if (!(Array.isArray(value) && value.length === 0)) epp[key] = value;
        break;
      case 'extraServicePorts':
        if (!(Array.isArray(value) && value.length === 0)) r.extraServicePorts = value;
        break;
      case 'failureMode':
        r.inferencePool = { failureMode: value };
        break;
      case 'affinity':
        // app-serving sets it from the stack on both sets (2026-02 required the file to agree).
        break;
      case 'tolerations': {
        const own = (Array.isArray(value) ? value : []).filter((t) => !deepEqual(t, toleration));
        if (own.length > 0) epp.tolerations = own;
        break;
      }
      case 'monitoring': {
        const prometheus = getPath(value, ['prometheus']);
        if (isValuesMap(prometheus) && prometheus.enabled !== undefined) r.monitoring = { prometheus: { enabled: prometheus.enabled } };
        for (const sub of Object.keys(isValuesMap(value) ? value : {})) if (sub !== 'prometheus') lost(['inferenceExtension', 'monitoring', sub], 'see router.monitoring.* of the Router chart');
        for (const sub of Object.keys(isValuesMap(prometheus) ? prometheus : {})) if (sub !== 'enabled') lost(['inferenceExtension', 'monitoring', 'prometheus', sub], 'see router.monitoring.prometheus.* of the Router chart');
        break;
      }
      case 'pluginsConfigFile':
        if (value !== 'default-plugins.yaml') lost(['inferenceExtension', key], CONFIG);
        break;
      case 'pluginsCustomConfig':
        lost(['inferenceExtension', key], CONFIG);
        break;
      default:
        lost(['inferenceExtension', key], "see the Router chart's router.* values");
    }
  }
  if (ext.resources === undefined) {
    notes.push(`the Router's EPP asks for 8 CPUs and 8Gi by default (GAIE v1.2.0's asked for nothing): set router.epp.resources in router-${model.slug}/values.yaml if its nodes are smaller`);
  }
  if (Object.keys(epp).length > 0) r.epp = epp;

  const pool = isValuesMap(gaie.inferencePool) ? gaie.inferencePool : {};
  for (const [key, value] of Object.entries(pool)) {
    // The pool's target port, selector and API version are app-serving's on both sets.
    if (key === 'modelServerType') r.modelServers = { type: value };
    else if (!['targetPorts', 'targetPortNumber', 'apiVersion', 'modelServers'].includes(key)) lost(['inferencePool', key], 'see router.modelServers.* and router.inferencePool.* of the Router chart');
  }
  const out: Values = Object.keys(r).length > 0 ? { router: r } : {};
  for (const at of [['provider'], ['istio']]) {
    const connectionPool = getPath(gaie, [...at, ...(at[0] === 'provider' ? ['istio'] : []), 'destinationRule', 'trafficPolicy', 'connectionPool']);
    if (connectionPool === undefined || deepEqual(connectionPool, EPP_CONNECTION_POOL)) continue;
    if (router.mode === 'gateway' && router.gatewayClass === 'istio') out.provider = { istio: { destinationRule: { trafficPolicy: { connectionPool } } } };
    else lost([...at, ...(at[0] === 'provider' ? ['istio'] : []), 'destinationRule', 'trafficPolicy', 'connectionPool'], `no Istio DestinationRule for the EPP in ${router.mode === 'standalone' ? 'standalone mode' : `a Gateway of class ${router.gatewayClass}`}`);
  }
  for (const key of Object.keys(gaie)) {
    if (!['inferenceExtension', 'inferencePool', 'provider', 'istio'].includes(key)) lost([key], "GAIE inferencepool read it; see the Router chart's router.* values");
  }
  return out;
}

function eppImage(effective: Values): string {
  const image = (getPath(effective, ['inferenceExtension', 'image']) ?? {}) as Values;
  return `${String(image.hub)}/${String(image.name)}:${String(image.tag)}`;
}

/** llm-d-infra's values: the Gateway is app-serving's own on 2026-08; what the stack decided is carried by the stack. */
function infraWarnings(file: ValuesFile | undefined, plan: LlmdModelPlan, warnings: Issue[]): void {
  if (!file) return;
  const expected: Values = {
    gateway: {
      enabled: true,
      gatewayClassName: 'istio',
      service: { type: 'ClusterIP' },
      destinationRule: { enabled: false },
      gatewayParameters: { enabled: true, accessLogging: plan.gateway.accessLogging },
    },
  };
  const walk = (values: unknown, at: string[]) => {
    if (!isValuesMap(values)) return;
    for (const [key, value] of Object.entries(values)) {
      const path = [...at, key];
      if (path.join('.') === 'gateway.listeners') continue;
      if (isValuesMap(value) && isValuesMap(getPath(expected, path))) walk(value, path);
      else if (!deepEqual(value, getPath(expected, path))) {
        warnings.push(file.source.issue('warning.not-carried', path, "not carried over: llm-d-infra is not deployed on 2026-08 — app-serving creates the model's Gateway itself (its class: the stack's router.gatewayClass)"));
      }
    }
  };
  walk(file.values, []);
}

// Shared ----------------------------------------------------------------------------------------

/**
 * Whether `image` is a copy of the upstream repository `of`: undefined when it is not; null when it
 * is the upstream itself; else the `<registry>[/<project>]` it was mirrored under.
 */
function copyOf(image: string, of: { registry: string; repository: string }): string | null | undefined {
  if (image === '') return undefined;
  const { registry, repository } = parseImage(image);
  if (repository === of.repository) return registry === of.registry ? null : registry;
  if (repository.endsWith(`/${of.repository}`)) return `${registry}/${repository.slice(0, -(of.repository.length + 1))}`;
  return undefined;
}

function folderOf(file: ValuesFile): string {
  return file.file.split('/').slice(-2).join('/');
}

function notCarriedLines(warnings: readonly Issue[], file: ValuesFile): string[] {
  const mine = warnings.filter((w) => w.file === file.file);
  if (mine.length === 0) return [];
  return ['Not carried over (see the warnings of app-serving migrate):', ...mine.map((w) => `  ${w.path}`)];
}

/** The keys a values tree sets, as dotted paths up to three deep (`router.epp.image`). */
function valuePaths(values: Values, at: string[] = []): string[] {
  return Object.entries(values).flatMap(([key, value]) => (isValuesMap(value) && at.length < 2 && Object.keys(value).length > 0 ? valuePaths(value, [...at, key]) : [[...at, key].join('.')]));
}

function fileText(values: Values, header: readonly string[]): string {
  return `${header.map((line) => `# ${line}`).join('\n')}\n${stringify(values, { lineWidth: 0 })}`;
}

/**
 * What differs between a model's 2026-02 plan and its 2026-08 plan in what clients and the cluster
 * see: the served model name, the port the model server is reached on, replicas and placement.
 * Empty when the migration serves the model the same.
 */
export function migratedDifferences(old: LlmdModelPlan, now: LlmdRouterModelPlan): string[] {
  const out: string[] = [];
  const differ = (what: string, a: unknown, b: unknown) => {
    if (!deepEqual(a, b)) out.push(`${what}: ${JSON.stringify(a)} → ${JSON.stringify(b)}`);
  };
  differ('served model name', old.modelServer.servedModelName, now.modelServer.servedModelName);
  differ('port of the model server (what the InferencePool targets)', old.modelServer.servicePort, now.modelServer.servicePort);
  differ('replicas', old.modelServer.decodeReplicas, now.modelServer.decodeReplicas);
  differ('nodeSelector', old.nodeSelector, now.nodeSelector);
  differ('tolerations', old.tolerations, now.tolerations);
  differ('controlNodeSelector', old.controlNodeSelector, now.controlNodeSelector);
  differ('namespace', old.namespace, now.namespace);
  differ('weights', old.storage && { pvc: old.storage.pvc, modelUri: old.storage.modelUri }, now.storage && { pvc: now.storage.pvc, modelUri: now.storage.modelUri });
  differ('embeddings Service', old.embeddingService && { name: old.embeddingService.name, port: old.embeddingService.port }, now.embeddingService && { name: now.embeddingService.name, port: now.embeddingService.port });
  differ('gateway alias', old.gateway.alias, now.gateway.alias);
  return out;
}

// The stack -------------------------------------------------------------------------------------

/** What `app-serving migrate` needs to know about the stack as it is. */
export interface StackMigrationInput {
  readonly config: StackConfig;
  /** The stack file's text. */
  readonly text: string;
  /** The stack's plan as it is (every enabled model planned). */
  readonly plan: DeploymentPlan;
  /** The enabled models as discovered now (their values files, for the conversion's messages). */
  readonly models: readonly DiscoveredModel[];
  /**
   * The values folders of the current set a model folder has already (`<category>/<name>` → prefixes
   * found), never overwritten; with the text of its server values file, when there is one.
   */
  readonly existing: ReadonlyMap<string, { readonly server: boolean; readonly router: boolean; readonly serverText?: string | undefined }>;
  /** Move only these models (entry names), by their own `upstream`; all of the stack when absent. */
  readonly only?: readonly string[] | undefined;
}

/** One model whose folder is not converted, and why. */
export interface ModelKept {
  readonly name: string;
  readonly category: Category;
  readonly reason: string;
}

/** The whole migration of a stack: the edited stack file and every file to write. */
export interface StackMigration {
  /** The stack file's new text. */
  readonly stackText: string;
  /** True when the stack file had to be written out by the YAML library (see config/edit.ts). */
  readonly rewritten: boolean;
  /** The stack edits, as `key: value` lines for people (`app-serving:upstream: 2026-08`, `models.generative[0].upstream: (removed)`). */
  readonly changes: readonly string[];
  /** The llm-d models converted. */
  readonly models: readonly ModelMigration[];
  /** llm-d models that move without new files (their folders have them), and models left where they are. */
  readonly kept: readonly ModelKept[];
  /** What the move means for the stack as a whole (KServe's new release, the gateway, access logs). */
  readonly notes: readonly string[];
}

/** The comment written above `app-serving:upstream` when migrate adds it. */
export const UPSTREAM_COMMENT = `The set of upstream versions (docs/upgrading.md): ${CURRENT_UPSTREAM} is the llm-d Router v0.10 and KServe v0.20.`;

/**
 * Plans `app-serving migrate --to 2026-08` for a stack: which stack keys change (the stack's
 * `upstream`, or with `only` the models' own), and the new values folders of every enabled llm-d
 * model that moves and has none yet. Throws a StackError when nothing is left to move.
 */
export function planStackMigration(input: StackMigrationInput): StackMigration {
  const { config, plan } = input;
  const to = CURRENT_UPSTREAM;
  const entries = CATEGORIES.flatMap((category) => config.models[category].map((entry, index) => ({ category, index, entry })));
  const old = entries.filter(({ entry }) => entry.enabled && modelUpstream(config, entry) !== to);
  const moving = input.only ? old.filter(({ entry }) => input.only!.includes(entry.name)) : old;
  if (moving.length === 0) {
    const issue = input.only
      ? config.locate('migrate.nothing-to-do', ['models'], `${summarizeNames([...input.only])} ${input.only.length === 1 ? 'is' : 'are'} on ${to} already: nothing to migrate`)
      : config.locate('migrate.nothing-to-do', config.upstream !== undefined ? ['upstream'] : ['models'], `the stack is on ${to} already (every enabled model): nothing to migrate`);
    throw new StackError([issue]);
  }

  const edits: StackEdit[] = [];
  const changes: string[] = [];
  if (input.only) {
    for (const { category, index, entry } of moving) {
      if (config.upstream === to) {
        edits.push({ kind: 'delete-model', category, index, key: 'upstream' });
        changes.push(`models.${category}[${index}] (${entry.name}): upstream: ${entry.upstream} removed (the stack is on ${to})`);
      } else {
        edits.push({ kind: 'set-model', category, index, key: 'upstream', value: to });
        changes.push(`models.${category}[${index}] (${entry.name}): upstream: ${to}`);
      }
    }
  } else {
    if (config.upstream !== to) {
      edits.push({ kind: 'set-stack', key: 'upstream', value: to, comment: UPSTREAM_COMMENT });
      changes.push(`upstream: ${to}${config.upstream !== undefined ? ` (was ${config.upstream})` : ''}`);
    }
    for (const { category, index, entry } of moving) {
      if (entry.upstream !== undefined) {
        edits.push({ kind: 'delete-model', category, index, key: 'upstream' });
        changes.push(`models.${category}[${index}] (${entry.name}): upstream: ${entry.upstream} removed`);
      }
    }
  }
  const edited = editStackText(input.text, edits);

  const names = new Set(moving.map(({ entry }) => entry.name));
  const settings = { mode: config.router?.mode ?? 'gateway', gatewayClass: config.router?.gatewayClass ?? 'istio' } as const;
  const toleration = gpuToleration(config.gpuToleration);
  const models: ModelMigration[] = [];
  const kept: ModelKept[] = [];
  const notes: string[] = [];
  for (const model of input.models) {
    if (!names.has(model.entry.name)) continue;
    const modelPlan = plan.models.find((m) => m.name === model.entry.name && m.category === model.category);
    if (model.platform !== 'llm-d' || !modelPlan || modelPlan.platform !== 'llm-d' || modelPlan.upstream !== '2026-02') continue;
    const found = input.existing.get(`${model.category}/${model.entry.name}`);
    const migration = migrateLlmdModel({ model, plan: modelPlan, router: settings, toleration });
    if (found?.server) {
      const server = migration.files.find((f) => f.folder.startsWith('server-'))!;
      const router = migration.files.find((f) => f.folder.startsWith('router-'));
      if (router && !found.router && found.serverText === server.text) {
        // What this run writes, without its router folder: left by a run of an earlier version
        // stopped between the two. Finished, so that no router value is lost.
        kept.push({ name: model.entry.name, category: model.category, reason: `${model.folder}/${server.folder} holds what migrate writes (an interrupted run left it): kept, and ${router.folder} is written` });
        models.push({ ...migration, files: [router] });
        continue;
      }
      const lost = router && !found.router ? `; no ${router.folder}/ is written either: the conversion of its ${folderOf(model.values.gaie!).split('/')[0]} values would set ${summarizeNames(valuePaths(router.values))} — add what you need` : '';
      kept.push({ name: model.entry.name, category: model.category, reason: `${model.folder} has a server-* folder already: kept as it is${lost}` });
      continue;
    }
    const files = found?.router ? migration.files.filter((f) => !f.folder.startsWith('router-')) : migration.files;
    if (found?.router) kept.push({ name: model.entry.name, category: model.category, reason: `${model.folder} has a router-* folder already: kept as it is (only server-${model.slug} is written)` });
    models.push({ ...migration, files });
  }
  for (const { category, entry } of entries) {
    if (!entry.enabled && modelUpstream(config, entry) !== to && modelPlatform(config, entry) === 'llm-d' && !input.only) {
      kept.push({ name: entry.name, category, reason: `disabled: its folder is not converted; before enabling it, add a server-<slug>/ folder (app-serving new-model shows one)` });
    }
    if (input.only && entry.enabled && modelUpstream(config, entry) !== to && !names.has(entry.name)) {
      kept.push({ name: entry.name, category, reason: `stays on ${modelUpstream(config, entry)}` });
    }
  }

  const kserve = plan.models.filter((m) => m.platform === 'kserve' && names.has(m.name));
  if (kserve.length > 0) {
    notes.push(
      `KServe: ${summarizeNames(kserve.map((m) => m.name))} ${kserve.length === 1 ? 'moves' : 'move'} to ${KSERVE_RELEASES[to].version} — LLMInferenceService ${KSERVE_RELEASES[to].api.group}/${KSERVE_RELEASES[to].api.version} (no files to write: the kserve-<slug> overlay is read as it is); the cluster needs KServe ${KSERVE_RELEASES[to].version} and its images (app-serving preflight, app-serving images) before pulumi up`,
    );
  }
  if (models.length > 0 || kept.some((k) => k.reason.includes('server-*'))) {
    if (config.router === undefined) notes.push(`the llm-d Router runs in gateway mode with an Istio Gateway per model (what the stack had); set app-serving:router (mode: standalone, or gatewayClass: agentgateway or envoy) to change that (docs/upgrading.md)`);
    if (config.modelGateway?.accessLogging !== false && settings.mode === 'gateway') notes.push("the gateway's access logs (llm-d-infra's Istio Telemetry on 2026-02) are Istio's own setting on 2026-08 (meshConfig.accessLogFile)");
    const oldCharts = (['infra', 'gaie', 'modelService'] as const).filter((key) => config.charts?.[key] !== undefined);
    if (oldCharts.length > 0) {
      const key = settings.mode === 'gateway' ? 'routerGateway' : 'routerStandalone';
      const chart = ROUTER_CHARTS[key];
      notes.push(
        `charts.${oldCharts.join(', charts.')} ${oldCharts.length === 1 ? 'is' : 'are'} for the 2026-02 charts; the models that move use ${chart.chart} ${chart.version}: mirror it like the others and set charts.${key} to the mirror`,
      );
    }
  }
  return { stackText: edited.text, rewritten: edited.rewritten, changes, models, kept, notes };
}
