/**
 * The plan of a model's autoscaling: its settings resolved, the Prometheus queries of its signal,
 * and the objects that make it happen (KEDA ScaledObjects and TriggerAuthentication, Prometheus
 * Operator PodMonitors, the dashboard), with the post-render patch that leaves `replicas` to the
 * autoscaler, and KServe's `scaling` block.
 *
 * Pure functions with narrow inputs (Deployment names, namespace, pod labels, the metrics port and
 * path, the EPP's name and labels), taken from a model's plan and never from a chart's internals, so
 * that every generation of upstream (today's llm-d charts, a plain model-server Deployment and the
 * llm-d Router, KServe) calls the same functions.
 */
import { LABEL_MANAGED_BY, MANAGED_BY } from '../../constants.ts';
import { durationSeconds } from '../../config/formats.ts';
import type { AutoscalingSignal, ModelAutoscaling, PrometheusSettings } from '../../config/types.ts';
import type { KubernetesObject, PostRenderPatch } from '../../patches.ts';
import { AUTOSCALING_DEFAULTS, DEFAULT_TARGETS, VLLM_METRICS, type EppMetricFacts } from './facts.ts';
import { dashboardConfigMap, grafanaDashboard, podMonitorManifest, promRegexLiteral, promString, scaledObjectManifest, triggerAuthenticationManifest } from './manifests.ts';

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
      const facts = source.eppMetrics;
      if (source.pool === undefined || facts === undefined) throw new Error(`signal ${signal} needs the InferencePool's name and its EPP's metrics`);
      const metric = signal === 'epp-queue' ? facts.queue : facts.kvCache;
      return { query: `max(${metric}{namespace="${promString(source.namespace)}",${facts.poolLabel}="${promString(source.pool)}"})`, metricType: 'Value' };
    }
  }
}

/**
 * A trigger that wakes a model from zero and keeps it up while it serves (a model whose
 * `minReplicas` is 0; the EPP's flow control holds its requests meanwhile), beside the model's own
 * signal. llm-d's KEDA recipe (llm-d/llm-d `guides/workload-autoscaling/keda-epp`) scales on the same
 * two gauges:
 * - `epp-flow-control`: requests waiting in the flow-control queue, summed (`AverageValue`): above 0
 *   KEDA activates the Deployment (0 → 1); from 1 up, ⌈waiting ÷ threshold⌉ replicas — with flow
 *   control on, the overflow waits in the EPP rather than in vLLM's queue;
 * - `epp-running`: whether the EPP has a request in flight (`clamp_max(…, 1)`, `AverageValue` 1):
 *   keeps the model above zero while it serves, and never asks for more than one replica.
 */
export interface WakeTrigger {
  readonly name: 'epp-flow-control' | 'epp-running';
  readonly query: SignalQuery;
  readonly threshold: number;
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
  readonly targets: readonly {
    readonly role: 'decode' | 'prefill';
    readonly deployment: string;
    readonly scaledObject: string;
    readonly query: SignalQuery;
    /** The triggers that wake the Deployment from zero ({@link WakeTrigger}); empty when minReplicas ≥ 1. */
    readonly wake: readonly WakeTrigger[];
  }[];
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
    /** The EPP's Deployment (its pods are `<deployment>-<hash>-<id>`): where a model at zero reads the running requests. */
    readonly deployment?: string | undefined;
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
  const wake = resolved.minReplicas === 0 ? wakeTriggers(resolved, input) : [];
  const targets = input.targets.map((target) => {
    const query = signalQuery(resolved.signal, { namespace: input.namespace, deployment: target.deployment, pool: input.epp?.pool, eppMetrics: input.epp?.metrics });
    return { ...target, scaledObject: target.deployment, query, wake };
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
        wake: target.wake,
        ...(auth && { auth: { modes: auth, triggerAuthentication: names.triggerAuthentication } }),
      }),
    );
  }
  const dashboard = grafanaDashboard({ slug: input.slug, namespace: input.namespace, plan: { ...resolved, targets }, pool: input.epp?.pool, eppMetrics: input.epp?.metrics, eppDeployment: input.epp?.deployment });
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

/**
 * The triggers of a model at zero ({@link WakeTrigger}), read from its EPP's flow control. The rules
 * refuse `minReplicas: 0` where the set has none; reaching here without it is a bug.
 */
export function wakeTriggers(resolved: Pick<ResolvedAutoscaling, 'signal' | 'target'>, input: Pick<AutoscalingPlanInput, 'slug' | 'namespace' | 'epp'>): WakeTrigger[] {
  const epp = input.epp;
  const flow = epp?.metrics.flowControl;
  if (!epp || !flow || !epp.deployment) throw new Error(`model ${input.slug}: minReplicas 0 needs an EPP with flow control (its metrics and Deployment)`);
  const namespace = `namespace="${promString(input.namespace)}"`;
  // Waiting requests per replica: the model's own target where its signal counts waiting requests.
  const perReplica = resolved.signal === 'queue-depth' || resolved.signal === 'epp-queue' ? resolved.target : DEFAULT_TARGETS['queue-depth'];
  return [
    { name: 'epp-flow-control', query: { query: `sum(${flow.queue}{${namespace},${flow.poolLabel}="${promString(epp.pool)}"})`, metricType: 'AverageValue' }, threshold: perReplica },
    {
      name: 'epp-running',
      query: { query: `clamp_max(sum(${flow.running}{${namespace},pod=~"${promRegexLiteral(epp.deployment)}-[a-z0-9]+-[a-z0-9]+"}), 1)`, metricType: 'AverageValue' },
      threshold: 1,
    },
  ];
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

/** One line for `plan`: the bounds, the signal and its target, the cool-down. */
export function describeAutoscaling(plan: Pick<ResolvedAutoscaling, 'minReplicas' | 'maxReplicas' | 'signal' | 'target' | 'cooldown'>): string {
  return `${plan.minReplicas}–${plan.maxReplicas} replicas on ${plan.signal} (target ${plan.target} per replica), cool-down ${plan.cooldown.text}`;
}

