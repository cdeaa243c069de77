/**
 * The objects of a model's autoscaling, as pure builders: KEDA's ScaledObject and
 * TriggerAuthentication, the Prometheus Operator's PodMonitor, and the Grafana dashboard.
 */
import type { AutoscalingSignal } from '../../config/types.ts';
import type { KubernetesObject } from '../../patches.ts';
import { KEDA_API_VERSION, PROMETHEUS_OPERATOR_API_VERSION, SCRAPE_INTERVAL, VLLM_METRICS, type EppMetricFacts } from './facts.ts';
import type { AutoscalingPlan, SignalQuery, WakeTrigger } from './plan.ts';

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
  /** The triggers that wake the Deployment from zero (a model at zero), after the signal's. */
  readonly wake?: readonly WakeTrigger[];
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
  const trigger = (name: string, query: SignalQuery, threshold: number) => ({
    type: 'prometheus',
    name,
    metricType: query.metricType,
    metadata: {
      serverAddress: args.serverAddress,
      query: query.query,
      threshold: String(threshold),
      activationThreshold: '0',
      ignoreNullValues: 'true',
      ...(args.auth && { authModes: args.auth.modes }),
    },
    ...(args.auth && { authenticationRef: { name: args.auth.triggerAuthentication } }),
  });
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
      triggers: [trigger(args.signal, args.query, args.threshold), ...(args.wake ?? []).map((w) => trigger(w.name, w.query, w.threshold))],
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

/** The label Grafana's dashboard sidecar (kube-prometheus-stack) loads ConfigMaps by. */
export const GRAFANA_DASHBOARD_LABEL = 'grafana_dashboard';

/**
 * A Grafana dashboard of one model's autoscaling (schema 39, a Prometheus data source chosen by a
 * variable): the signal against its target, vLLM's waiting and running requests and KV cache per
 * pod, the EPP pool's averages, and the replicas the HPA holds (kube-state-metrics).
 */
export function grafanaDashboard(args: {
  slug: string;
  namespace: string;
  plan: Pick<AutoscalingPlan, 'targets' | 'target' | 'signal' | 'minReplicas' | 'maxReplicas'>;
  pool?: string | undefined;
  eppMetrics?: EppMetricFacts | undefined;
  /** The EPP's Deployment, whose pods export the running requests (an EPP with flow control). */
  eppDeployment?: string | undefined;
}): Record<string, unknown> {
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
  const epp = args.eppMetrics;
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
    ...(args.pool && epp
      ? [
          panel(5, 'EPP pool averages', [
            { expr: `${epp.queue}{namespace="${ns}",${epp.poolLabel}="${promString(args.pool)}"}`, legend: 'average queue' },
            { expr: `${epp.kvCache}{namespace="${ns}",${epp.poolLabel}="${promString(args.pool)}"}`, legend: 'average KV cache' },
          ], 16, 0),
          ...(epp.flowControl
            ? [
                panel(6, 'EPP flow control: requests waiting (wake from zero) and running', [
                  { expr: `sum(${epp.flowControl.queue}{namespace="${ns}",${epp.flowControl.poolLabel}="${promString(args.pool)}"})`, legend: 'waiting in the flow-control queue' },
                  ...(args.eppDeployment ? [{ expr: `sum(${epp.flowControl.running}{namespace="${ns}",pod=~"${promRegexLiteral(args.eppDeployment)}-[a-z0-9]+-[a-z0-9]+"})`, legend: 'running' }] : []),
                ], 16, 12),
              ]
            : []),
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

export function promString(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

/** A literal inside a PromQL regex (RE2): every metacharacter escaped. */
export function promRegexLiteral(value: string): string {
  return promString(value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
}
