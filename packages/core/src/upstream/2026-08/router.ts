import { parse, stringify } from 'yaml';
import type { ValuesFile } from '../../discovery.ts';
import type { Issue } from '../../errors.ts';
import type { PostRenderPatch } from '../../patches.ts';
import { EPP_CONNECTION_POOL, findUnreadKeys } from '../../values/llmd.ts';
import { effectiveValues, getPath, isValuesMap, mergeAll, type Values } from '../../values/merge.ts';
import { findConflicts, findTypeProblems, requirementValues, unionList, type Forbidden, type Requirement } from '../../values/requirements.ts';
import type { NodeAffinity, Toleration } from '../../values/scheduling.ts';
import type { RouterGatewayClass } from '../../constants.ts';
import { ROUTER_DEFAULTS, ROUTER_EPP_SECURE_SERVING_FLAG, ROUTER_FLOW_CONTROL, ROUTER_FLOW_CONTROL_CONFIG_FILE, ROUTER_KEYS } from './facts.ts';
import type { RouterNames } from './names.ts';

/** Everything the Router chart's values of one model are built from. */
export interface RouterValuesInput {
  readonly names: RouterNames;
  readonly mode: 'gateway' | 'standalone';
  readonly gatewayClass: RouterGatewayClass;
  /** The model's `router-<slug>/values.yaml`, when it has one. */
  readonly file: ValuesFile | undefined;
  /** What the InferencePool selects, and the port of the model server. */
  readonly poolSelector: Readonly<Record<string, string>>;
  readonly serverPort: number;
  /** A generative model's requests go through the Gateway's HTTPRoute (gateway mode); an embedder's do not. */
  readonly route: boolean;
  readonly controlAffinity: NodeAffinity | undefined;
  readonly toleration: Toleration | undefined;
  readonly pullSecret: string | null;
  readonly readyTimeoutSeconds: number;
  /** The chart as named in messages (`llm-d-router-gateway v0.10.0`). */
  readonly chart: string;
  /**
   * What the model's autoscaling needs of the EPP: its metrics scraped by app-serving's PodMonitor
   * (`monitor`), and flow control on, with requests held up to `flowControlTtlSeconds`, for a model
   * at zero (else null). Null when the model is not autoscaled or its requests bypass the EPP.
   */
  readonly autoscaling?: { readonly monitor: boolean; readonly flowControlTtlSeconds: number | null } | null;
}

export interface RouterValues {
  /** What Helm receives (file + programmatic). */
  readonly values: Values;
  /** What the chart ends up with (its known defaults + values). */
  readonly effective: Values;
  readonly patches: readonly PostRenderPatch[];
  readonly issues: readonly Issue[];
  readonly warnings: readonly Issue[];
  /** Whether the chart's own monitoring is on (`router.monitoring.prometheus.enabled`: its ServiceMonitor scrapes the EPP). */
  readonly chartMonitoring: boolean;
}

const TYPES = [
  { path: ['router', 'epp', 'tolerations'], ok: Array.isArray, want: 'a list of tolerations' },
  { path: ['router', 'epp', 'affinity'], ok: isValuesMap, want: 'a Kubernetes affinity mapping' },
] as const;

/** A Gateway API duration (HTTPRoute `timeouts.request`): `^([0-9]{1,5}(h|m|s|ms)){1,4}$`. */
const GATEWAY_DURATION = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;

/** What class `envoy` reads from the Router values to write its own route and EnvoyExtensionPolicy. */
const ENVOY_TYPES = [
  { path: ['router', 'epp', 'extProcPort'], ok: (v: unknown) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535, want: 'a port number (1–65535)' },
  { path: ['httpRoute', 'requestTimeout'], ok: (v: unknown) => typeof v === 'string' && GATEWAY_DURATION.test(v), want: 'a Gateway API duration such as "300s" or "1h"' },
] as const;

/**
 * The Router chart's values for one model: the model's file plus what wires the Router to the
 * model server and the Gateway — the pool's selector and target port, the provider (Istio renders
 * the DestinationRule of the EPP), the HTTPRoute to the model's Gateway, the EPP's placement — with
 * every contradiction between the file and what the stack depends on reported as an issue.
 */
export function routerValues(input: RouterValuesInput): RouterValues {
  const { names, file } = input;
  const issues: Issue[] = [];
  const warnings: Issue[] = [];
  const istio = input.mode === 'gateway' && input.gatewayClass === 'istio';
  const envoy = input.mode === 'gateway' && input.gatewayClass === 'envoy';
  const required: Requirement[] = [
    ...Object.entries(input.poolSelector).map(([key, value]) => ({
      path: ['router', 'modelServers', 'matchLabels', key],
      value,
      reason: 'the InferencePool selects the model-server pods by the labels app-serving puts on them',
    })),
    { path: ['router', 'modelServers', 'targetPorts'], value: [{ number: input.serverPort }], reason: `the pool must target the model server's port (${input.serverPort})` },
    {
      path: ['provider', 'name'],
      value: istio ? 'istio' : 'none',
      reason: istio ? "the model's Gateway is an Istio Gateway: the chart renders the EPP's DestinationRule for it" : 'no Istio Gateway routes to this pool',
    },
  ];
  if (envoy) {
    // Envoy Gateway's own form of the route (envoy.ts): the chart's HTTPRoute would send to the
    // InferencePool, which Envoy Gateway refuses as a backend (ResolvedRefs False, InvalidKind).
    required.push(
      { path: ['httpRoute', 'create'], value: false, reason: "Envoy Gateway takes no InferencePool backend: app-serving writes the model's HTTPRoute to a Service of the pool's pods itself" },
      {
        path: ['router', 'epp', 'flags', ROUTER_EPP_SECURE_SERVING_FLAG],
        value: false,
        reason: "Envoy Gateway calls the EPP in plain gRPC: it verifies a TLS backend only against a CA, and the EPP's certificate is self-signed at start",
      },
      {
        path: ['router', 'inferencePool', 'failureMode'],
        value: 'FailClose',
        reason: "Envoy Gateway calls the EPP with failOpen: false — its EnvoyExtensionPolicy cannot fail open with FullDuplexStreamed bodies, which the EPP needs",
      },
    );
  } else if (input.mode === 'gateway') {
    required.push({ path: ['httpRoute', 'create'], value: input.route, reason: input.route ? "clients reach the model through its Gateway's HTTPRoute" : 'clients reach an embedding model through its embeddings Service' });
    if (input.route) required.push({ path: ['httpRoute', 'inferenceGatewayName'], value: names.gateway, reason: "the HTTPRoute attaches to the model's own Gateway" });
  }
  if (input.controlAffinity) {
    required.push({
      path: ['router', 'epp', 'affinity', 'nodeAffinity', 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms'],
      value: input.controlAffinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms,
      reason: 'the EPP runs where the stack places the control pods',
    });
  }
  const chartMonitoring = getPath(file?.values, ['router', 'monitoring', 'prometheus', 'enabled']) === true;
  if (input.autoscaling?.monitor && !chartMonitoring) {
    // routerlib `_deployment.yaml`: `--metrics-endpoint-auth=false` only when auth is off; on, the
    // EPP's /metrics wants a token whose account may get it (the chart's ServiceMonitor brings both).
    required.push({
      path: ['router', 'monitoring', 'prometheus', 'auth', 'enabled'],
      value: false,
      reason:
        "the PodMonitor app-serving creates for the autoscaled model scrapes the EPP's /metrics without a token (or turn on router.monitoring.prometheus.enabled: the chart's ServiceMonitor then scrapes it with its service account's token)",
    });
  }
  const flowControl = input.autoscaling?.flowControlTtlSeconds ?? null;
  if (flowControl !== null) issues.push(...flowControlProblems(file));
  const forbidden: Forbidden[] = [
    // GAIE's top-level blocks: the Router's charts fail the install on them (routerlib `_helpers.tpl`).
    { path: ['inferenceExtension'], reason: 'GAIE\'s name: the Router chart reads router.epp.* and fails on this key' },
    { path: ['inferencePool'], reason: "GAIE's name: the Router chart reads router.modelServers.* and router.inferencePool.*" },
    { path: ['experimentalHttpRoute'], reason: "GAIE's name: the Router chart reads httpRoute.* and fails on this key" },
  ];
  if (envoy) {
    // The chart's route settings that app-serving's own route does not carry.
    for (const key of ['headerMatches', 'baseModel', 'inferenceGatewayName', 'inferenceGatewayNamespace']) {
      forbidden.push({ path: ['httpRoute', key], reason: `app-serving writes the HTTPRoute itself on an Envoy Gateway (router.gatewayClass: envoy) and does not carry httpRoute.${key}` });
    }
  }
  issues.push(...findConflicts(file, required, forbidden));
  if (file) issues.push(...findTypeProblems(file, (envoy ? [...TYPES, ...ENVOY_TYPES] : TYPES) as never));
  warnings.push(...findUnreadKeys(file, ROUTER_KEYS, input.chart));

  const defaults: Values = istio ? { provider: { istio: { destinationRule: { trafficPolicy: { connectionPool: EPP_CONNECTION_POOL } } } } } : {};
  // The EPP tolerates the GPU taint: on a cluster whose every node carries it, it would stay Pending.
  const lists: Values = input.toleration ? { router: { epp: { tolerations: unionList(getPath(file?.values, ['router', 'epp', 'tolerations']), [input.toleration]) } } } : {};
  const values0 = mergeAll(defaults, file?.values ?? {}, requirementValues(required), lists);
  // Flow control on (a model at zero), unless the file brings an EPP config of its own (checked above).
  const values =
    flowControl !== null && getPath(file?.values, ['router', 'epp', 'pluginsConfigFile']) === undefined
      ? mergeAll(values0, {
          router: {
            epp: {
              pluginsConfigFile: ROUTER_FLOW_CONTROL_CONFIG_FILE,
              pluginsCustomConfig: { [ROUTER_FLOW_CONTROL_CONFIG_FILE]: flowControlConfig(effectiveValues(ROUTER_DEFAULTS, values0), flowControl) },
            },
          },
        })
      : values0;
  const effective = effectiveValues(ROUTER_DEFAULTS, values);
  // A label the pool selects that the model-server pods do not carry: the pool would select nothing.
  const matchLabels = getPath(effective, ['router', 'modelServers', 'matchLabels']);
  if (file && isValuesMap(matchLabels)) {
    for (const [key, value] of Object.entries(matchLabels)) {
      if (input.poolSelector[key] !== value && getPath(file.values, ['router', 'modelServers', 'matchLabels', key]) !== undefined) {
        issues.push(
          file.source.issue(
            'values.conflict',
            ['router', 'modelServers', 'matchLabels', key],
            `the model-server pods do not carry ${key}=${JSON.stringify(value)}; the InferencePool would select no pods — remove it (app-serving labels the pods ${Object.entries(input.poolSelector).map(([k, v]) => `${k}=${v}`).join(', ')})`,
          ),
        );
      }
    }
  }

  // The EPP pod takes no pull secret value: its ServiceAccount carries it (as for GAIE v1.2.0). Its
  // Deployment is awaited for the model's readyTimeout, like the model server's.
  const patches: PostRenderPatch[] = [
    ...(input.pullSecret ? [{ kind: 'service-account-pull-secret' as const, serviceAccount: names.epp, imagePullSecrets: [{ name: input.pullSecret }] }] : []),
    { kind: 'await-timeout', deployment: names.epp, seconds: input.readyTimeoutSeconds },
  ];
  return { values, effective, patches, issues, warnings, chartMonitoring };
}

/** Keys whose effect on the chart's default EPP config {@link flowControlConfig} does not reproduce. */
const EPP_CONFIG_KEYS = [
  ['router', 'epp', 'parsers'],
  ['router', 'modelServers', 'type'],
  ['router', 'modelServers', 'protocol'],
  ['router', 'latencyPredictor', 'enabled'],
] as const;

/**
 * A model at zero needs its EPP's flow control on. app-serving turns it on by writing the EPP's
 * config; a file that brings its own (`router.epp.pluginsConfigFile`) must turn it on itself, and one
 * that changes what the chart's default config holds must bring its own.
 */
function flowControlProblems(file: ValuesFile | undefined): Issue[] {
  if (!file) return [];
  const gate = ROUTER_FLOW_CONTROL.featureGate;
  const howTo = `router.epp.pluginsCustomConfig.<file> holding an EndpointPickerConfig with featureGates: [${gate}] and flowControl.defaultRequestTTL above the model's cold start, named by router.epp.pluginsConfigFile`;
  const chosen = getPath(file.values, ['router', 'epp', 'pluginsConfigFile']);
  if (chosen !== undefined) {
    const text = getPath(file.values, ['router', 'epp', 'pluginsCustomConfig', String(chosen)]);
    let config: unknown;
    try {
      config = typeof text === 'string' ? parse(text, { maxAliasCount: 100 }) : undefined;
    } catch {
      config = undefined;
    }
    const gates = isValuesMap(config) && Array.isArray(config.featureGates) ? config.featureGates : [];
    if (gates.some((g) => g === gate || (typeof g === 'string' && g.replace(/\s/g, '').toLowerCase() === `${gate.toLowerCase()}=true`))) return [];
    return [
      file.source.issue(
        'values.conflict',
        ['router', 'epp', 'pluginsConfigFile'],
        `selects the EPP config ${JSON.stringify(chosen)}, which does not turn on flow control, but the model scales to zero (autoscaling.minReplicas: 0) and only the Router's flow control holds its requests meanwhile: add featureGates: [${gate}] to ${typeof text === 'string' ? `router.epp.pluginsCustomConfig.${String(chosen)}` : `an EPP config of your own (${howTo})`}, or remove router.epp.pluginsConfigFile (app-serving then writes one)`,
      ),
    ];
  }
  return EPP_CONFIG_KEYS.filter((path) => getPath(file.values, path) !== undefined).map((path) =>
    file.source.issue(
      'values.conflict',
      [...path],
      `changes the EPP's default config, which app-serving rewrites to turn on flow control for a model at zero (autoscaling.minReplicas: 0): remove it, or bring the EPP's whole config yourself (${howTo})`,
    ),
  );
}

/**
 * The EPP config of a model at zero: the chart's `default-plugins.yaml` for a vLLM pool over HTTP
 * (routerlib `_config.yaml`, v0.10.0: the three scorers, the metrics data source and extractor, one
 * profile) with the flow-control feature gate on and its queue TTL (drift-tested against the chart
 * rendered by real Helm).
 */
export function flowControlConfig(effective: Values, ttlSeconds: number): string {
  const source = (getPath(effective, ['router', 'epp', 'metricsDataSource']) ?? {}) as Values;
  return stringify({
    apiVersion: ROUTER_FLOW_CONTROL.configApiVersion,
    kind: ROUTER_FLOW_CONTROL.configKind,
    featureGates: [ROUTER_FLOW_CONTROL.featureGate],
    flowControl: { defaultRequestTTL: `${ttlSeconds}s` },
    plugins: [
      { type: 'queue-scorer' },
      { type: 'kv-cache-utilization-scorer' },
      { type: 'prefix-cache-scorer' },
      { type: 'metrics-data-source', parameters: { scheme: source.scheme ?? 'http', path: source.path ?? '/metrics', insecureSkipVerify: source.insecureSkipVerify ?? true } },
      { type: 'core-metrics-extractor' },
    ],
    schedulingProfiles: [
      {
        name: 'default',
        plugins: [
          { pluginRef: 'queue-scorer', weight: 2 },
          { pluginRef: 'kv-cache-utilization-scorer', weight: 2 },
          { pluginRef: 'prefix-cache-scorer', weight: 3 },
        ],
      },
    ],
  });
}

/** The EPP image the Router chart runs for these values (`router.epp.image.{registry,repository,tag}`). */
export function routerEppImage(effective: Values): string {
  const image = getPath(effective, ['router', 'epp', 'image']) as Values | undefined;
  return `${String(image?.registry)}/${String(image?.repository)}:${String(image?.tag)}`;
}
