import {
  LABEL_INFERENCE_SERVING,
  LABEL_MODEL,
  LABEL_ROLE,
  MODEL_MOUNT_PATH,
  PULUMI_TIMEOUT_ANNOTATION,
} from '../../constants.ts';
import type { ValuesFile } from '../../discovery.ts';
import type { Issue } from '../../errors.ts';
import { commonLabels } from '../../manifests/common.ts';
import type { StoragePlan } from '../../storage.ts';
import { didYouMean } from '../../suggest.ts';
import { MODEL_REF_ANNOTATION } from '../../values/llmd.ts';
import { isValuesMap, type Values } from '../../values/merge.ts';
import { nodeAffinityFor, type Toleration } from '../../values/scheduling.ts';
import { MODEL_SERVER_PORT, ROLE_DECODE } from './facts.ts';

/**
 * The model server of a 2026-08 llm-d model: a plain Deployment app-serving creates, as llm-d's
 * model-server recipe does (llm-d/llm-d `guides/recipes/modelserver/`), described by the model
 * folder's `server-<slug>/values.yaml` — app-serving's own small format, checked key by key:
 *
 * ```yaml
 * image: docker.io/vllm/vllm-openai:v0.30.0   # required
 * servedModelName: Qwen/Qwen3-0.6B            # required: the name clients send as `model`
 * launch: vllm        # vllm (default): args `<model> --served-model-name … --port …` + `args`,
 *                     # for the image's entrypoint `vllm serve`; image: the image's own entrypoint
 *                     # (or `command`) with `args` as written (simulators, other servers)
 * model: Qwen/Qwen3-0.6B   # launch vllm: what to load (default: servedModelName; with a
 *                          # modelSource, the weights on the volume)
 * port: 8000          # where the server listens; the InferencePool and the Service target it
 * replicas: 1
 * args: []            # more server arguments
 * command: []         # launch image only: replaces the entrypoint
 * env: []             # Kubernetes EnvVars
 * resources: {}       # requests and limits (nvidia.com/gpu here)
 * readinessProbe / startupProbe / livenessProbe:   # defaults: /v1/models, /v1/models, /health (vllm)
 * mountModelVolume: true   # with a modelSource: mount the weights volume at /model-cache
 * podAnnotations: {}
 * container: {}       # any other container field (securityContext, volumeMounts, …)
 * pod: {}             # any other pod field (volumes, priorityClassName, …)
 * ```
 */
export interface ServerValues {
  readonly image: string;
  readonly servedModelName: string;
  readonly launch: 'vllm' | 'image';
  readonly model?: string;
  readonly port: number;
  readonly replicas: number;
  readonly args: readonly string[];
  readonly command?: readonly string[];
  readonly env: readonly Values[];
  readonly resources?: Values;
  readonly readinessProbe?: Values;
  readonly startupProbe?: Values;
  readonly livenessProbe?: Values;
  readonly mountModelVolume: boolean;
  readonly podAnnotations: Readonly<Record<string, string>>;
  readonly container: Values;
  readonly pod: Values;
}

/** Every key of a server values file, for "did you mean". */
export const SERVER_KEYS = [
  'image',
  'servedModelName',
  'launch',
  'model',
  'port',
  'replicas',
  'args',
  'command',
  'env',
  'resources',
  'readinessProbe',
  'startupProbe',
  'livenessProbe',
  'mountModelVolume',
  'podAnnotations',
  'container',
  'pod',
] as const;

/** Container and pod fields the model server's own keys (or app-serving) set: not in `container` / `pod`. */
const OWN_CONTAINER_FIELDS = ['name', 'image', 'command', 'args', 'env', 'ports', 'resources', 'readinessProbe', 'startupProbe', 'livenessProbe'];
const OWN_POD_FIELDS = ['containers', 'affinity', 'tolerations', 'imagePullSecrets'];

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const isPort = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535;

/**
 * Reads a server values file: every key known and of the right kind, or an issue at its line.
 * Returns the values with their defaults, or undefined when the file has a problem.
 */
export function readServerValues(file: ValuesFile, issues: Issue[]): ServerValues | undefined {
  const v = file.values as Record<string, unknown>;
  const before = issues.length;
  const bad = (path: (string | number)[], message: string) => issues.push(file.source.issue('values.invalid', path, message));
  for (const key of Object.keys(v)) {
    if (!(SERVER_KEYS as readonly string[]).includes(key)) {
      issues.push(file.source.issue('values.unknown-key', [key], `is not a key of the model server's values${didYouMean(key, [...SERVER_KEYS])}; the keys are: ${SERVER_KEYS.join(', ')}`));
    }
  }
  if (typeof v.image !== 'string' || v.image === '') bad(['image'], 'is required: the model server image, e.g. docker.io/vllm/vllm-openai:v0.30.0');
  if (typeof v.servedModelName !== 'string' || v.servedModelName === '') bad(['servedModelName'], 'is required: the model name clients send (the `model` of an OpenAI request)');
  if (v.launch !== undefined && v.launch !== 'vllm' && v.launch !== 'image') bad(['launch'], 'must be vllm (app-serving writes the vllm serve arguments) or image (the image runs as it is, with args as written)');
  if (v.model !== undefined && (typeof v.model !== 'string' || v.model === '')) bad(['model'], 'must be a model id or path');
  if (v.port !== undefined && !isPort(v.port)) bad(['port'], 'must be a port number (1–65535)');
  if (v.replicas !== undefined && !(Number.isInteger(v.replicas) && (v.replicas as number) >= 0)) bad(['replicas'], 'must be a whole number ≥ 0');
  if (v.args !== undefined && !isStrings(v.args)) bad(['args'], 'must be a list of strings (quote numbers: "8192")');
  if (v.command !== undefined && !isStrings(v.command)) bad(['command'], 'must be a list of strings');
  if (v.command !== undefined && (v.launch ?? 'vllm') === 'vllm') bad(['command'], 'is only for launch: image (launch: vllm runs the image\'s own `vllm serve`)');
  if (v.model !== undefined && v.launch === 'image') bad(['model'], 'is only for launch: vllm (with launch: image, name the model in args)');
  if (v.env !== undefined && !(Array.isArray(v.env) && v.env.every((e) => isValuesMap(e) && typeof e.name === 'string'))) bad(['env'], 'must be a list of environment variables ({ name, value } or { name, valueFrom })');
  for (const key of ['resources', 'readinessProbe', 'startupProbe', 'livenessProbe', 'container', 'pod', 'podAnnotations'] as const) {
    if (v[key] !== undefined && !isValuesMap(v[key])) bad([key], 'must be a mapping');
  }
  if (v.mountModelVolume !== undefined && typeof v.mountModelVolume !== 'boolean') bad(['mountModelVolume'], 'must be true or false');
  if (isValuesMap(v.podAnnotations) && !Object.values(v.podAnnotations).every((x) => typeof x === 'string')) bad(['podAnnotations'], 'must map annotation names to strings');
  for (const [key, own] of [['container', OWN_CONTAINER_FIELDS], ['pod', OWN_POD_FIELDS]] as const) {
    const given = v[key];
    if (!isValuesMap(given)) continue;
    for (const field of own) {
      if (given[field] !== undefined) {
        issues.push(file.source.issue('values.conflict', [key, field], `is set by ${key === 'container' ? 'the server values (or app-serving)' : 'app-serving from the stack (placement, pull secret)'}; use ${OWN_CONTAINER_FIELDS.includes(field) && field !== 'name' && field !== 'ports' ? `the top-level ${field}` : 'the stack keys'} instead`));
      }
    }
  }
  if (issues.length > before) return undefined;
  return {
    image: v.image as string,
    servedModelName: v.servedModelName as string,
    launch: (v.launch as 'vllm' | 'image' | undefined) ?? 'vllm',
    ...(v.model !== undefined && { model: v.model as string }),
    port: (v.port as number | undefined) ?? MODEL_SERVER_PORT,
    replicas: (v.replicas as number | undefined) ?? 1,
    args: (v.args as string[] | undefined) ?? [],
    ...(v.command !== undefined && { command: v.command as string[] }),
    env: (v.env as Values[] | undefined) ?? [],
    ...(v.resources !== undefined && { resources: v.resources as Values }),
    ...(v.readinessProbe !== undefined && { readinessProbe: v.readinessProbe as Values }),
    ...(v.startupProbe !== undefined && { startupProbe: v.startupProbe as Values }),
    ...(v.livenessProbe !== undefined && { livenessProbe: v.livenessProbe as Values }),
    mountModelVolume: (v.mountModelVolume as boolean | undefined) ?? true,
    podAnnotations: (v.podAnnotations as Record<string, string> | undefined) ?? {},
    container: (v.container as Values | undefined) ?? {},
    pod: (v.pod as Values | undefined) ?? {},
  };
}

/** The labels of every model-server pod: what the InferencePool and the embeddings Service select, and llm-d's role. */
export function serverPodLabels(slug: string): Record<string, string> {
  return { [LABEL_INFERENCE_SERVING]: 'true', [LABEL_MODEL]: slug, [LABEL_ROLE]: ROLE_DECODE };
}

/** The labels the InferencePool selects on (the role is left out: a prefill role would be in the pool too). */
export function poolSelector(slug: string): Record<string, string> {
  return { [LABEL_INFERENCE_SERVING]: 'true', [LABEL_MODEL]: slug };
}

/** Where the server finds the weights on the volume, and what vLLM must be told. */
export interface ServerWeights {
  /** The argument `vllm serve` loads. */
  readonly model: string;
  /** Environment the server needs to read the volume (the Hub cache's place; offline). */
  readonly env: readonly Values[];
  /** Whether the volume is mounted read-only (a Hub cache needs writes: locks and refs). */
  readonly readOnly: boolean;
}

/**
 * The weights of a model with a `modelSource`, as llm-d-modelservice reads a PVC (so both sets load
 * the same volume the same way): the Hub cache layout (`<hub cache path…>/<org>/<model>`) gives
 * `HF_HUB_CACHE=/model-cache/<hub cache path…>` and the model id `<org>/<model>`; the directory
 * layout gives `/model-cache/<modelUri>` and writable caches elsewhere. Offline either way: the
 * weights are on the volume.
 */
export function serverWeights(storage: Pick<StoragePlan, 'modelUri' | 'layout'>): ServerWeights {
  const offline = { name: 'HF_HUB_OFFLINE', value: '1' };
  if (storage.layout === 'hf-cache') {
    const parts = storage.modelUri.split('/').filter(Boolean);
    const cache = parts.slice(0, -2).join('/');
    return { model: parts.slice(-2).join('/'), env: [{ name: 'HF_HUB_CACHE', value: cache ? `${MODEL_MOUNT_PATH}/${cache}` : MODEL_MOUNT_PATH }, offline], readOnly: false };
  }
  return {
    model: `${MODEL_MOUNT_PATH}/${storage.modelUri}`.replace(/\/+$/, ''),
    env: [offline, { name: 'HF_HOME', value: '/tmp/hf-home' }, { name: 'VLLM_CACHE_ROOT', value: '/tmp/vllm-cache' }],
    readOnly: true,
  };
}

/** Everything the model-server Deployment is built from (all of it in the plan). */
export interface ModelServerInput {
  readonly name: string;
  readonly namespace: string;
  readonly slug: string;
  readonly server: ServerValues;
  readonly podLabels: Readonly<Record<string, string>>;
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly tolerations: readonly Toleration[];
  readonly pullSecret: string | null;
  /** The weights volume (with a modelSource): claim, and what the pull Job wrote. */
  readonly storage: { readonly pvc: string; readonly ref: string; readonly weights: ServerWeights } | null;
  readonly readyTimeoutSeconds: number;
  /** Replicas to start with, when an autoscaler owns the count (else the values file's `replicas`). */
  readonly replicas?: number;
  /**
   * The model's LoRA adapters (features/adapters): vLLM's options, written after the values file's
   * `args` (launch vllm), and the pod annotation that names their sources.
   */
  readonly adapters?: { readonly args: readonly string[]; readonly podAnnotations: Readonly<Record<string, string>> };
}

/**
 * The model-server Deployment (apps/v1): llm-d's recipe (container `modelserver` on `port`,
 * readiness and startup on `/v1/models`, liveness on `/health` for vLLM) with the stack's placement,
 * pull secret and weights volume, and `pulumi.com/timeoutSeconds` = the model's readyTimeout.
 */
export function modelServerDeployment(input: ModelServerInput): Record<string, unknown> {
  const { server } = input;
  const vllm = server.launch === 'vllm';
  const model = input.storage && server.mountModelVolume ? input.storage.weights.model : (server.model ?? server.servedModelName);
  const args = vllm ? [model, '--served-model-name', server.servedModelName, '--port', String(server.port), ...server.args, ...(input.adapters?.args ?? [])] : [...server.args];
  const httpGet = (path: string) => ({ httpGet: { path, port: 'modelserver' } });
  const withVolume = input.storage !== null && server.mountModelVolume;
  const env = [...(withVolume ? input.storage!.weights.env.filter((e) => !server.env.some((own) => own.name === e.name)) : []), ...server.env];
  const affinity = nodeAffinityFor(input.nodeSelector);
  const container: Values = {
    ...server.container,
    name: 'modelserver',
    image: server.image,
    ...(server.command && { command: [...server.command] }),
    ...(args.length > 0 && { args }),
    ...(env.length > 0 && { env }),
    ports: [{ name: 'modelserver', containerPort: server.port, protocol: 'TCP' }],
    // A server that exits on a bad argument or a model it cannot load says why in its pod's status
    // (the kubelet keeps the end of its log as the termination message): `verify` shows that line.
    terminationMessagePolicy: server.container.terminationMessagePolicy ?? 'FallbackToLogsOnError',
    ...(server.resources && { resources: server.resources }),
    readinessProbe: server.readinessProbe ?? { ...httpGet('/v1/models'), periodSeconds: 5 },
    startupProbe: server.startupProbe ?? { ...httpGet('/v1/models'), periodSeconds: 10, failureThreshold: 180 },
    ...(server.livenessProbe ? { livenessProbe: server.livenessProbe } : vllm ? { livenessProbe: { ...httpGet('/health'), periodSeconds: 10 } } : {}),
    ...(withVolume && {
      volumeMounts: [...((server.container.volumeMounts as Values[] | undefined) ?? []), { name: 'model-storage', mountPath: MODEL_MOUNT_PATH, readOnly: input.storage!.weights.readOnly }],
    }),
  };
  const volumes = [
    ...((server.pod.volumes as Values[] | undefined) ?? []),
    ...(withVolume ? [{ name: 'model-storage', persistentVolumeClaim: { claimName: input.storage!.pvc, readOnly: input.storage!.weights.readOnly } }] : []),
  ];
  const annotations = { ...server.podAnnotations, ...(input.storage && { [MODEL_REF_ANNOTATION]: input.storage.ref }), ...input.adapters?.podAnnotations };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      labels: { ...commonLabels(input.slug), ...input.podLabels },
      annotations: { [PULUMI_TIMEOUT_ANNOTATION]: String(input.readyTimeoutSeconds) },
    },
    spec: {
      replicas: input.replicas ?? server.replicas,
      selector: { matchLabels: { ...input.podLabels } },
      template: {
        metadata: { labels: { ...input.podLabels }, ...(Object.keys(annotations).length > 0 && { annotations }) },
        spec: {
          ...server.pod,
          containers: [container],
          ...(volumes.length > 0 && { volumes }),
          ...(affinity && { affinity }),
          ...(input.tolerations.length > 0 && { tolerations: [...input.tolerations] }),
          ...(input.pullSecret && { imagePullSecrets: [{ name: input.pullSecret }] }),
        },
      },
    },
  };
}
