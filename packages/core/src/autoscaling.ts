/**
 * Autoscaling on LLM signals (docs/autoscaling.md): the rules, the Prometheus queries, and the
 * objects that make it happen — KEDA ScaledObjects (Prometheus trigger) and TriggerAuthentication,
 * Prometheus Operator PodMonitors, the post-render patch that leaves `replicas` to the autoscaler,
 * and KServe's `scaling` block.
 *
 * Pure functions with narrow inputs (Deployment names, namespace, pod labels, the metrics port and
 * path, the EPP's name and labels), taken from a model's plan and never from a chart's internals, so
 * that every generation of upstream (today's llm-d charts, a plain model-server Deployment and the
 * llm-d Router, KServe) calls the same functions.
 */
import { LABEL_MANAGED_BY, MANAGED_BY } from './constants.ts';
import { durationSeconds } from './config/formats.ts';
import type { AutoscalingSignal, ModelAutoscaling, PrometheusSettings } from './config/types.ts';
import type { ValuesFile } from './discovery.ts';
import type { Issue } from './errors.ts';
import type { KubernetesObject, PostRenderPatch } from './patches.ts';
import { getPath, isValuesMap } from './values/merge.ts';

/** The signals a model can scale on. */
export const AUTOSCALING_SIGNALS = ['queue-depth', 'kv-cache', 'epp-queue', 'epp-kv-cache'] as const satisfies readonly AutoscalingSignal[];

/**
 * The defaults, and why a platform engineer would pick them:
 * - `minReplicas: 1` — a replica at zero costs a cold start of minutes (image, weights, vLLM's
 *   start-up), and GAIE v1.2's EPP answers 503 while the pool has no pod: zero is opt-in, where a
 *   request can wait for a replica.
 * - `signal: queue-depth` — `vllm:num_requests_waiting` is what users feel (requests the engine
 *   could not start yet); KEDA's and vLLM production-stack's guides scale on it.
 * - targets: 5 waiting requests per replica (a short queue absorbs bursts without over-provisioning
 *   GPUs); KV-cache utilisation 0.8 (vLLM starts preempting requests as the cache fills).
 * - `cooldown: 5m` — the HPA's own default scale-down window; a replica takes minutes to start, so
 *   removing it on a dip of seconds would cost more than it saves.
 * - `pollingInterval: 15s` — one Prometheus scrape interval (the PodMonitors scrape every 15 s).
 */
export const AUTOSCALING_DEFAULTS = { minReplicas: 1, signal: 'queue-depth', cooldown: '5m', pollingInterval: '15s' } as const;

/** The target per replica of each signal when the stack names none. */
export const DEFAULT_TARGETS: Readonly<Record<AutoscalingSignal, number>> = { 'queue-depth': 5, 'kv-cache': 0.8, 'epp-queue': 5, 'epp-kv-cache': 0.8 };

/** How often the PodMonitors scrape. */
export const SCRAPE_INTERVAL = '15s';

/**
 * vLLM's metrics (vLLM `vllm/v1/metrics/loggers.py`): requests waiting to be scheduled, and the
 * KV-cache usage (0–1) of the engine.
 */
export const VLLM_METRICS = { queue: 'vllm:num_requests_waiting', kvCache: 'vllm:kv_cache_usage_perc', path: '/metrics' } as const;

/** The EPP's pool-wide gauges and the label that names the pool. */
export interface EppMetricFacts {
  readonly queue: string;
  readonly kvCache: string;
  readonly poolLabel: string;
}

/**
 * The EPP of GAIE v1.2 (`pkg/epp/metrics/metrics.go`, subsystem `inference_pool`): the pool's average
 * queue size and KV-cache utilisation, labelled `name=<InferencePool>`. Its metrics are served on
 * the container port named `metrics` (9090, `epp-deployment.yaml`), without authentication unless
 * the chart's own Prometheus monitoring is on (`--metrics-endpoint-auth=false` otherwise).
 */
export const GAIE_EPP_METRICS: EppMetricFacts = { queue: 'inference_pool_average_queue_size', kvCache: 'inference_pool_average_kv_cache_utilization', poolLabel: 'name' };
export const GAIE_EPP_METRICS_PORT = 'metrics';

/** The labels of the EPP's pods in GAIE v1.2 (`_helpers.tpl`, selectorLabels: `inferencepool: <release>-epp`). */
export function gaieEppPodLabels(epp: string): Record<string, string> {
  return { inferencepool: epp };
}

export const KEDA_API_VERSION = 'keda.sh/v1alpha1';
export const PROMETHEUS_OPERATOR_API_VERSION = 'monitoring.coreos.com/v1';

/** The CRDs an autoscaled model needs in the cluster (preflight checks them). */
export const AUTOSCALING_CRDS = {
  scaledObjects: { group: 'keda.sh', version: 'v1alpha1', plural: 'scaledobjects', kind: 'ScaledObject', from: 'KEDA' },
  triggerAuthentications: { group: 'keda.sh', version: 'v1alpha1', plural: 'triggerauthentications', kind: 'TriggerAuthentication', from: 'KEDA' },
  podMonitors: { group: 'monitoring.coreos.com', version: 'v1', plural: 'podmonitors', kind: 'PodMonitor', from: 'the Prometheus Operator' },
} as const;

/** A model's autoscaling with every default filled in. */
export interface ResolvedAutoscaling {
  readonly minReplicas: number;
  readonly maxReplicas: number;
  readonly signal: AutoscalingSignal;
  readonly target: number;
  readonly cooldown: { readonly text: string; readonly seconds: number };
  readonly pollingInterval: { readonly text: string; readonly seconds: number };
}

/** Fills in the defaults of a model's `autoscaling`. */
export function resolveAutoscaling(settings: ModelAutoscaling): ResolvedAutoscaling {
  const signal = settings.signal ?? AUTOSCALING_DEFAULTS.signal;
  const cooldown = settings.cooldown ?? AUTOSCALING_DEFAULTS.cooldown;
  const polling = settings.pollingInterval ?? AUTOSCALING_DEFAULTS.pollingInterval;
  return {
    minReplicas: settings.minReplicas ?? AUTOSCALING_DEFAULTS.minReplicas,
    maxReplicas: settings.maxReplicas,
    signal,
    target: settings.target ?? DEFAULT_TARGETS[signal],
    cooldown: { text: cooldown, seconds: durationSeconds(cooldown) ?? 300 },
    pollingInterval: { text: polling, seconds: durationSeconds(polling) ?? 15 },
  };
}

/** What a model's platform and upstream can do, for {@link autoscalingProblems}. */
export interface AutoscalingCapabilities {
  /** `llm-d` (KEDA) or `kserve` (the LLMInferenceService's `scaling`, WVA). */
  readonly platform: 'llm-d' | 'kserve';
  /**
   * Why a request can wait while the model has no replica, or null when it cannot (it fails at
   * once): scale to zero is refused then.
   */
  readonly requestBuffering: string | null;
  /** Why the model's traffic does not pass the EPP (an embedder's Service), or null when it does. */
  readonly noEpp: string | null;
}

/** One problem of a model's `autoscaling`: the key under `autoscaling` and the message. */
export interface AutoscalingProblem {
  readonly key: 'minReplicas' | 'maxReplicas' | 'signal' | 'target' | 'cooldown' | 'pollingInterval';
  readonly message: string;
}

/** The contradictions in a model's `autoscaling`, given what its platform can do. */
export function autoscalingProblems(settings: ModelAutoscaling, capabilities: AutoscalingCapabilities): AutoscalingProblem[] {
  const problems: AutoscalingProblem[] = [];
  const min = settings.minReplicas ?? AUTOSCALING_DEFAULTS.minReplicas;
  if (min > settings.maxReplicas) {
    problems.push({ key: 'minReplicas', message: `is ${min}, more than maxReplicas (${settings.maxReplicas}): raise maxReplicas or lower minReplicas` });
  }
  if (capabilities.platform === 'kserve') {
    if (min === 0) {
      problems.push({
        key: 'minReplicas',
        message:
          "is 0, but KServe's LLMInferenceService allows no fewer than 1 (its CRD: scaling.minReplicas minimum 1, in v0.18 and v0.20; idle scale to zero is only on KServe's main branch): set minReplicas: 1 or more",
      });
    }
    for (const key of ['signal', 'target', 'pollingInterval'] as const) {
      if (settings[key] !== undefined) {
        problems.push({
          key,
          message: `is not used on KServe: its scaling is driven by the Workload Variant Autoscaler, which chooses the signal and its target itself (the CRD's scaling has no such field) — remove it`,
        });
      }
    }
    return problems;
  }
  if (min === 0 && capabilities.requestBuffering === null) {
    problems.push({
      key: 'minReplicas',
      message:
        "is 0, but nothing holds a request while the model has no replica: GAIE v1.2's EPP answers 503 at once when its pool is empty (it has no flow-control queue), so every request during a cold start would fail — set minReplicas: 1 or more (see docs/autoscaling.md, \"At zero\")",
    });
  }
  const signal = settings.signal ?? AUTOSCALING_DEFAULTS.signal;
  if (capabilities.noEpp !== null && (signal === 'epp-queue' || signal === 'epp-kv-cache')) {
    problems.push({ key: 'signal', message: `is ${signal}, but ${capabilities.noEpp}: use queue-depth or kv-cache (vLLM's own metrics)` });
  }
  if ((signal === 'kv-cache' || signal === 'epp-kv-cache') && settings.target !== undefined && settings.target > 1) {
    problems.push({ key: 'target', message: `is ${settings.target}, but KV-cache utilisation is a fraction from 0 to 1: use e.g. 0.8` });
  }
  return problems;
}

/** A Prometheus query a ScaledObject's trigger sends, and how the HPA reads its value. */
export interface SignalQuery {
  readonly query: string;
  /**
   * `AverageValue`: the query sums over the replicas, the HPA divides by their count (replicas =
   * ⌈sum / target⌉). `Value`: the query is already a per-replica average (replicas = ⌈current ×
   * value / target⌉).
   */
  readonly metricType: 'AverageValue' | 'Value';
}

/** Where a signal is read: the model-server Deployment's pods, or the EPP's pool. */
export interface SignalSource {
  readonly namespace: string;
  /** The Deployment whose pods serve the model (its pods are `<deployment>-<hash>-<id>`). */
  readonly deployment: string;
  /** The InferencePool, for the EPP's signals. */
  readonly pool?: string | undefined;
  readonly eppMetrics?: EppMetricFacts | undefined;
}

/**
 * The PromQL of a signal. vLLM's signals select the Deployment's pods by name (`pod=~"<deployment>-…"`,
 * whichever monitor scraped them: ours, or a chart's own); the EPP's by the pool's label.
 */
export function signalQuery(signal: AutoscalingSignal, source: SignalSource): SignalQuery {
  const pods = `namespace="${promString(source.namespace)}",pod=~"${promRegexLiteral(source.deployment)}-[a-z0-9]+-[a-z0-9]+"`;
  switch (signal) {
    case 'queue-depth':
      return { query: `sum(${VLLM_METRICS.queue}{${pods}})`, metricType: 'AverageValue' };
    case 'kv-cache':
      return { query: `avg(${VLLM_METRICS.kvCache}{${pods}})`, metricType: 'Value' };
    case 'epp-queue':
    case 'epp-kv-cache': {
      const facts = source.eppMetrics ?? GAIE_EPP_METRICS;
      if (source.pool === undefined) throw new Error(`signal ${signal} needs the InferencePool's name`);
      const metric = signal === 'epp-queue' ? facts.queue : facts.kvCache;
      return { query: `max(${metric}{namespace="${promString(source.namespace)}",${facts.poolLabel}="${promString(source.pool)}"})`, metricType: 'Value' };
    }
  }
}

/** The objects (and their names) of a model's autoscaling, built by {@link planAutoscaling}. */
export interface AutoscalingPlan extends ResolvedAutoscaling {
  /** The replicas each Deployment starts with before the autoscaler takes over: `max(minReplicas, 1)`. */
  readonly initialReplicas: number;
  readonly prometheus: {
    readonly address: string;
    readonly auth: 'bearer' | 'basic' | null;
    readonly username: string | null;
    /** The Secret holding the credentials (created from the `prometheusCredentials` secret), or null. */
    readonly secret: string | null;
    readonly triggerAuthentication: string | null;
  };
  /** Each autoscaled Deployment, its ScaledObject and the query it follows. */
  readonly targets: readonly { readonly role: 'decode' | 'prefill'; readonly deployment: string; readonly scaledObject: string; readonly query: SignalQuery }[];
  /** The PodMonitors app-serving creates (a chart's own monitor stands in for one when it is on). */
  readonly monitors: readonly string[];
  /** The ConfigMap holding the model's Grafana dashboard (label `grafana_dashboard: "1"`). */
  readonly dashboard: string;
  /** Every object to create, in order: TriggerAuthentication, PodMonitors, ScaledObjects, the dashboard ConfigMap (the Secret is not here: it holds the credentials). */
  readonly objects: readonly KubernetesObject[];
  /** Post-render patches for the model-server chart: `replicas` belongs to the autoscaler. */
  readonly patches: readonly PostRenderPatch[];
}

/** What {@link planAutoscaling} needs, all from a model's plan. */
export interface AutoscalingPlanInput {
  readonly slug: string;
  readonly namespace: string;
  readonly settings: ModelAutoscaling;
  readonly prometheus: PrometheusSettings;
  /** The Deployments to scale: decode, and prefill where the model has prefill pods. */
  readonly targets: readonly { readonly role: 'decode' | 'prefill'; readonly deployment: string }[];
  /** The model-server pods: their labels, and the port vLLM serves `/metrics` on. */
  readonly modelServer: { readonly podLabels: Readonly<Record<string, string>>; readonly metricsPort: number; readonly monitoredByChart: boolean };
  /** The EPP: its InferencePool, its pods' labels and metrics port; null for a model without one in its path. */
  readonly epp: {
    readonly pool: string;
    readonly podLabels: Readonly<Record<string, string>>;
    readonly metricsPort: string | number;
    readonly metrics: EppMetricFacts;
    readonly monitoredByChart: boolean;
  } | null;
}

/** Names of a model's autoscaling objects (the ScaledObjects are named after their Deployments). */
export function autoscalingNames(slug: string) {
  return { modelServerMonitor: `${slug}-model-server`, eppMonitor: `${slug}-epp`, credentials: `${slug}-prometheus`, triggerAuthentication: `${slug}-prometheus`, dashboard: `${slug}-dashboard` };
}

/** Plans the autoscaling of one model: ScaledObjects, TriggerAuthentication, PodMonitors and patches. */
export function planAutoscaling(input: AutoscalingPlanInput): AutoscalingPlan {
  const resolved = resolveAutoscaling(input.settings);
  const names = autoscalingNames(input.slug);
  const labels = { [LABEL_MANAGED_BY]: MANAGED_BY, 'llm-d.ai/model': input.slug };
  const auth = input.prometheus.auth ?? null;
  const objects: KubernetesObject[] = [];
  if (auth) objects.push(triggerAuthenticationManifest({ name: names.triggerAuthentication, namespace: input.namespace, labels, secret: names.credentials, auth }));
  const monitors: string[] = [];
  const monitorLabels = { ...input.prometheus.monitorLabels, ...labels };
  if (!input.modelServer.monitoredByChart) {
    monitors.push(names.modelServerMonitor);
    objects.push(
      podMonitorManifest({ name: names.modelServerMonitor, namespace: input.namespace, labels: monitorLabels, selector: input.modelServer.podLabels, port: input.modelServer.metricsPort, path: VLLM_METRICS.path }),
    );
  }
  if (input.epp && !input.epp.monitoredByChart) {
    monitors.push(names.eppMonitor);
    objects.push(podMonitorManifest({ name: names.eppMonitor, namespace: input.namespace, labels: monitorLabels, selector: input.epp.podLabels, port: input.epp.metricsPort, path: '/metrics' }));
  }
  const targets = input.targets.map((target) => {
    const query = signalQuery(resolved.signal, { namespace: input.namespace, deployment: target.deployment, pool: input.epp?.pool, eppMetrics: input.epp?.metrics });
    return { ...target, scaledObject: target.deployment, query };
  });
  for (const target of targets) {
    objects.push(
      scaledObjectManifest({
        name: target.scaledObject,
        namespace: input.namespace,
        labels,
        deployment: target.deployment,
        minReplicas: resolved.minReplicas,
        maxReplicas: resolved.maxReplicas,
        cooldownSeconds: resolved.cooldown.seconds,
        pollingIntervalSeconds: resolved.pollingInterval.seconds,
        serverAddress: input.prometheus.address,
        query: target.query,
        threshold: resolved.target,
        signal: resolved.signal,
        ...(auth && { auth: { modes: auth, triggerAuthentication: names.triggerAuthentication } }),
      }),
    );
  }
  const dashboard = grafanaDashboard({ slug: input.slug, namespace: input.namespace, plan: { ...resolved, targets }, pool: input.epp?.pool, eppMetrics: input.epp?.metrics });
  objects.push(dashboardConfigMap({ name: names.dashboard, namespace: input.namespace, labels, dashboard, slug: input.slug }));
  return {
    ...resolved,
    initialReplicas: Math.max(resolved.minReplicas, 1),
    dashboard: names.dashboard,
    prometheus: {
      address: input.prometheus.address,
      auth,
      username: input.prometheus.username ?? null,
      secret: auth ? names.credentials : null,
      triggerAuthentication: auth ? names.triggerAuthentication : null,
    },
    targets,
    monitors,
    objects,
    patches: targets.map((t) => ({ kind: 'autoscaled-replicas' as const, deployment: t.deployment })),
  };
}

/** What a ScaledObject is built from. */
export interface ScaledObjectArgs {
  readonly name: string;
  readonly namespace: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly deployment: string;
  readonly minReplicas: number;
  readonly maxReplicas: number;
  readonly cooldownSeconds: number;
  readonly pollingIntervalSeconds: number;
  readonly serverAddress: string;
  readonly query: SignalQuery;
  readonly threshold: number;
  readonly signal: AutoscalingSignal;
  readonly auth?: { readonly modes: 'bearer' | 'basic'; readonly triggerAuthentication: string };
}

/**
 * A KEDA ScaledObject with one Prometheus trigger (KEDA v2.20 `pkg/scalers/prometheus_scaler.go`:
 * `serverAddress`, `query`, `threshold`, `activationThreshold`, `ignoreNullValues`, `authModes`).
 * KEDA owns the Deployment's `replicas` through the HPA it creates (`keda-hpa-<name>`): between 1
 * and the maximum the HPA scales on the trigger's value; to and from 0 KEDA itself does, when the
 * value has been at or below `activationThreshold` for `cooldownPeriod`, or rises above it. The
 * HPA's scale-down window is the cool-down too, so a replica is never removed on a short dip.
 */
export function scaledObjectManifest(args: ScaledObjectArgs): KubernetesObject {
  return {
    apiVersion: KEDA_API_VERSION,
    kind: 'ScaledObject',
    metadata: { name: args.name, namespace: args.namespace, ...(args.labels && { labels: { ...args.labels } }) },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: args.deployment },
      minReplicaCount: args.minReplicas,
      maxReplicaCount: args.maxReplicas,
      pollingInterval: args.pollingIntervalSeconds,
      cooldownPeriod: args.cooldownSeconds,
      advanced: { horizontalPodAutoscalerConfig: { behavior: { scaleDown: { stabilizationWindowSeconds: args.cooldownSeconds } } } },
      triggers: [
        {
          type: 'prometheus',
          name: args.signal,
          metricType: args.query.metricType,
          metadata: {
            serverAddress: args.serverAddress,
            query: args.query.query,
            threshold: String(args.threshold),
            activationThreshold: '0',
            ignoreNullValues: 'true',
            ...(args.auth && { authModes: args.auth.modes }),
          },
          ...(args.auth && { authenticationRef: { name: args.auth.triggerAuthentication } }),
        },
      ],
    },
  };
}

/** The keys of the credentials Secret a TriggerAuthentication reads (KEDA's Prometheus scaler parameters). */
export function credentialKeys(auth: 'bearer' | 'basic'): readonly string[] {
  return auth === 'bearer' ? ['bearerToken'] : ['username', 'password'];
}

/** The credentials Secret's data: the token, or the user name and password. */
export function credentialsData(auth: 'bearer' | 'basic', secretValue: string, username: string | null): Record<string, string> {
  return auth === 'bearer' ? { bearerToken: secretValue } : { username: username ?? '', password: secretValue };
}

/** A KEDA TriggerAuthentication reading the Prometheus credentials from a Secret of the namespace. */
export function triggerAuthenticationManifest(args: { name: string; namespace: string; labels?: Readonly<Record<string, string>>; secret: string; auth: 'bearer' | 'basic' }): KubernetesObject {
  return {
    apiVersion: KEDA_API_VERSION,
    kind: 'TriggerAuthentication',
    metadata: { name: args.name, namespace: args.namespace, ...(args.labels && { labels: { ...args.labels } }) },
    spec: { secretTargetRef: credentialKeys(args.auth).map((key) => ({ parameter: key, name: args.secret, key })) },
  };
}

/** A Prometheus Operator PodMonitor: scrape `path` on a port (a container port's name or number) of the selected pods. */
export function podMonitorManifest(args: {
  name: string;
  namespace: string;
  labels?: Readonly<Record<string, string>>;
  selector: Readonly<Record<string, string>>;
  port: string | number;
  path: string;
  interval?: string;
}): KubernetesObject {
  return {
    apiVersion: PROMETHEUS_OPERATOR_API_VERSION,
    kind: 'PodMonitor',
    metadata: { name: args.name, namespace: args.namespace, ...(args.labels && { labels: { ...args.labels } }) },
    spec: {
      selector: { matchLabels: { ...args.selector } },
      podMetricsEndpoints: [{ ...(typeof args.port === 'number' ? { portNumber: args.port } : { port: args.port }), path: args.path, interval: args.interval ?? SCRAPE_INTERVAL }],
    },
  };
}

/**
 * The LLMInferenceService's `scaling` (KServe v0.18 and v0.20, `LLMInferenceServiceSpec.Scaling`):
 * `minReplicas`/`maxReplicas`, and the Workload Variant Autoscaler with its actuator — the HPA
 * (v0.18's default path) or KEDA (v0.20) — whose scale-down window (or KEDA cool-down) is the
 * model's cool-down. The CRD's rules hold: `wva` with exactly one actuator, min ≤ max, min ≥ 1, and
 * no `replicas` beside `scaling`.
 */
export function kserveScaling(settings: ModelAutoscaling, actuator: 'hpa' | 'keda'): Record<string, unknown> {
  const resolved = resolveAutoscaling(settings);
  const wva =
    actuator === 'hpa'
      ? { hpa: { behavior: { scaleDown: { stabilizationWindowSeconds: resolved.cooldown.seconds } } } }
      : { keda: { cooldownPeriod: resolved.cooldown.seconds, pollingInterval: resolved.pollingInterval.seconds } };
  return { minReplicas: resolved.minReplicas, maxReplicas: resolved.maxReplicas, wva };
}

/** Where a values file could fix a replica count or bring its own autoscaler, for {@link valuesAutoscalerConflicts}. */
export interface AutoscalerKeys {
  /** Key paths of fixed replica counts (llm-d-modelservice: `decode.replicas`; KServe: `replicas`). */
  readonly replicas: readonly (readonly string[])[];
  /** Key paths that switch on a chart's own autoscaler (or hold one: KServe's `scaling`). */
  readonly autoscalers: readonly (readonly string[])[];
  /** A list of extra objects the chart renders as they are (llm-d-modelservice: `extraObjects`). */
  readonly extraObjects?: readonly string[];
}

const AUTOSCALER_KINDS = new Set(['HorizontalPodAutoscaler', 'ScaledObject', 'VerticalPodAutoscaler']);

/**
 * A values file of an autoscaled model that also fixes the replica count or brings its own
 * autoscaler: two owners of `replicas` would fight (each scaling undoing the other). One issue per key.
 */
export function valuesAutoscalerConflicts(file: ValuesFile | undefined, keys: AutoscalerKeys): Issue[] {
  if (!file) return [];
  const issues: Issue[] = [];
  for (const path of keys.replicas) {
    if (getPath(file.values, path) === undefined || getPath(file.values, path) === null) continue;
    issues.push(
      file.source.issue(
        'values.conflict',
        path,
        `fixes the replica count, but the stack autoscales this model (models[].autoscaling): the autoscaler owns replicas — remove it (autoscaling.minReplicas and maxReplicas bound the count)`,
      ),
    );
  }
  for (const path of keys.autoscalers) {
    const value = getPath(file.values, path);
    if (value === undefined || value === null || value === false) continue;
    issues.push(
      file.source.issue(
        'values.conflict',
        path,
        `turns on an autoscaler of its own, but the stack already autoscales this model (models[].autoscaling): two autoscalers would fight over replicas — remove it, or remove autoscaling from the stack`,
      ),
    );
  }
  if (keys.extraObjects) {
    const extra = getPath(file.values, keys.extraObjects);
    if (Array.isArray(extra)) {
      extra.forEach((object, index) => {
        const kind = isValuesMap(object) ? object.kind : undefined;
        if (typeof kind === 'string' && AUTOSCALER_KINDS.has(kind)) {
          issues.push(
            file.source.issue(
              'values.conflict',
              [...keys.extraObjects!, index, 'kind'],
              `is a ${kind}, but the stack already autoscales this model (models[].autoscaling): two autoscalers would fight over replicas — remove this object, or remove autoscaling from the stack`,
            ),
          );
        }
      });
    }
  }
  return issues;
}

/** llm-d-modelservice v0.4.12's keys (values.yaml: `decode.replicas`, `decode.autoscaling.enabled`, `extraObjects`). */
export const MODELSERVICE_AUTOSCALER_KEYS: AutoscalerKeys = {
  replicas: [['decode', 'replicas']],
  autoscalers: [['decode', 'autoscaling', 'enabled'], ['prefill', 'autoscaling', 'enabled']],
  extraObjects: ['extraObjects'],
};

/** The LLMInferenceService overlay's keys (`replicas`, `scaling`, and the same under `prefill`). */
export const KSERVE_AUTOSCALER_KEYS: AutoscalerKeys = {
  replicas: [['replicas'], ['prefill', 'replicas']],
  autoscalers: [['scaling'], ['prefill', 'scaling']],
};

/** A 2026-08 model server's values (`server-<slug>/values.yaml`: `replicas`). */
export const SERVER_AUTOSCALER_KEYS: AutoscalerKeys = {
  replicas: [['replicas']],
  autoscalers: [],
};

/** The label Grafana's dashboard sidecar (kube-prometheus-stack) loads ConfigMaps by. */
export const GRAFANA_DASHBOARD_LABEL = 'grafana_dashboard';

/**
 * A Grafana dashboard of one model's autoscaling (schema 39, a Prometheus data source chosen by a
 * variable): the signal against its target, vLLM's waiting and running requests and KV cache per
 * pod, the EPP pool's averages, and the replicas the HPA holds (kube-state-metrics).
 */
export function grafanaDashboard(args: { slug: string; namespace: string; plan: Pick<AutoscalingPlan, 'targets' | 'target' | 'signal' | 'minReplicas' | 'maxReplicas'>; pool?: string | undefined; eppMetrics?: EppMetricFacts | undefined }): Record<string, unknown> {
  const ds = { type: 'prometheus', uid: '${datasource}' };
  const ns = promString(args.namespace);
  const panel = (id: number, title: string, exprs: { expr: string; legend: string }[], y: number, x: number, unit = 'short') => ({
    id,
    type: 'timeseries',
    title,
    datasource: ds,
    gridPos: { h: 8, w: 12, x, y },
    fieldConfig: { defaults: { unit }, overrides: [] },
    targets: exprs.map((e, i) => ({ refId: String.fromCharCode(65 + i), datasource: ds, expr: e.expr, legendFormat: e.legend })),
  });
  const decode = args.plan.targets[0];
  const pods = decode ? `namespace="${ns}",pod=~"${promRegexLiteral(decode.deployment)}-[a-z0-9]+-[a-z0-9]+"` : `namespace="${ns}"`;
  const epp = args.eppMetrics ?? GAIE_EPP_METRICS;
  const panels = [
    panel(1, `Autoscaling signal (${args.plan.signal}) and target`, [
      ...args.plan.targets.map((t) => ({ expr: t.query.query, legend: `${t.role} signal` })),
      { expr: `vector(${args.plan.target})`, legend: 'target per replica' },
    ], 0, 0),
    panel(2, `Replicas (${args.plan.minReplicas}–${args.plan.maxReplicas})`, args.plan.targets.flatMap((t) => [
      { expr: `kube_horizontalpodautoscaler_status_current_replicas{namespace="${ns}",horizontalpodautoscaler="keda-hpa-${promString(t.scaledObject)}"}`, legend: `${t.role} current` },
      { expr: `kube_horizontalpodautoscaler_status_desired_replicas{namespace="${ns}",horizontalpodautoscaler="keda-hpa-${promString(t.scaledObject)}"}`, legend: `${t.role} desired` },
    ]), 0, 12),
    panel(3, 'Requests waiting and running (vLLM, per pod)', [
      { expr: `${VLLM_METRICS.queue}{${pods}}`, legend: 'waiting {{pod}}' },
      { expr: `vllm:num_requests_running{${pods}}`, legend: 'running {{pod}}' },
    ], 8, 0),
    panel(4, 'KV-cache utilisation (vLLM, per pod)', [{ expr: `${VLLM_METRICS.kvCache}{${pods}}`, legend: '{{pod}}' }], 8, 12, 'percentunit'),
    ...(args.pool
      ? [
          panel(5, 'EPP pool averages', [
            { expr: `${epp.queue}{namespace="${ns}",${epp.poolLabel}="${promString(args.pool)}"}`, legend: 'average queue' },
            { expr: `${epp.kvCache}{namespace="${ns}",${epp.poolLabel}="${promString(args.pool)}"}`, legend: 'average KV cache' },
          ], 16, 0),
        ]
      : []),
  ];
  return {
    title: `app-serving ${args.slug}: autoscaling`,
    uid: `app-serving-${args.slug}`.slice(0, 40),
    tags: ['app-serving', 'autoscaling', args.slug],
    schemaVersion: 39,
    time: { from: 'now-1h', to: 'now' },
    refresh: '30s',
    templating: { list: [{ name: 'datasource', type: 'datasource', query: 'prometheus', label: 'Prometheus' }] },
    panels,
  };
}

/** The dashboard as a ConfigMap Grafana's sidecar picks up (label `grafana_dashboard: "1"`). */
export function dashboardConfigMap(args: { name: string; namespace: string; labels?: Readonly<Record<string, string>>; dashboard: Record<string, unknown>; slug: string }): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: args.name, namespace: args.namespace, labels: { ...args.labels, [GRAFANA_DASHBOARD_LABEL]: '1' } },
    data: { [`app-serving-${args.slug}.json`]: `${JSON.stringify(args.dashboard, null, 2)}\n` },
  };
}

/** One line for `plan`: the bounds, the signal and its target, the cool-down. */
export function describeAutoscaling(plan: Pick<ResolvedAutoscaling, 'minReplicas' | 'maxReplicas' | 'signal' | 'target' | 'cooldown'>): string {
  return `${plan.minReplicas}–${plan.maxReplicas} replicas on ${plan.signal} (target ${plan.target} per replica), cool-down ${plan.cooldown.text}`;
}

function promString(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

/** A literal inside a PromQL regex (RE2): every metacharacter escaped. */
function promRegexLiteral(value: string): string {
  return promString(value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
}
