import type { ChartRef } from '../../constants.ts';
import type { KeyTree } from '../../values/chart-facts.ts';
import { freezeValues, type Values } from '../../values/merge.ts';
import type { AutoscalerKeys, EppMetricFacts, RequestBuffering } from '../generation.ts';

/**
 * What core knows of the 2026-08 llm-d set, read from upstream at the pinned versions and held
 * against the files in shared/upstream/current/ by drift tests (facts.test.ts):
 *
 * - the llm-d Router charts v0.10.0 (llm-d/llm-d-router `config/charts/`, published as
 *   `oci://ghcr.io/llm-d/charts/llm-d-router-{gateway,standalone}`): every value under `router.*`
 *   (the `routerlib` library chart, aliased `router`), the EPP `<trunc40(release)>-epp`, the
 *   InferencePool and (gateway chart) the HTTPRoute named after the release, the EPP pods labelled
 *   `llm-d-router-gateway: <epp>` (`llm-d-router-standalone: <epp>` when the chart makes no pool);
 * - the model server: llm-d's own recipe (llm-d/llm-d `guides/recipes/modelserver/`): a plain
 *   Deployment of `vllm/vllm-openai` (whose entrypoint is `vllm serve`), port 8000, readiness and
 *   startup on `/v1/models`, liveness on `/health`; `llm-d-cuda` is deprecated in its favour
 *   (llm-d `docs/api-reference/artifacts.md`).
 */

/** The Router charts, by mode. */
export const ROUTER_CHARTS = {
  /** EPP, InferencePool, the Istio DestinationRule and the HTTPRoute to a Gateway. */
  routerGateway: { chart: 'oci://ghcr.io/llm-d/charts/llm-d-router-gateway', version: 'v0.10.0' },
  /** EPP, InferencePool and an Envoy proxy beside the EPP: no Gateway. */
  routerStandalone: { chart: 'oci://ghcr.io/llm-d/charts/llm-d-router-standalone', version: 'v0.10.0' },
} as const satisfies Record<string, ChartRef>;
export type RouterChartKey = keyof typeof ROUTER_CHARTS;

/** The chart of each mode. */
export const ROUTER_CHART_OF = { gateway: 'routerGateway', standalone: 'routerStandalone' } as const satisfies Record<'gateway' | 'standalone', RouterChartKey>;

/** The EPP image the released charts pin (on a release tag `hack/push-chart.sh` sets it, `IfNotPresent`). */
export const ROUTER_EPP_IMAGE = 'ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0';
/** The standalone chart's proxy: Envoy, as a sidecar of the EPP pod (`router.proxy.mode: sidecar`). */
export const ROUTER_PROXY_IMAGE = 'docker.io/envoyproxy/envoy:distroless-v1.33.2';
/** The port of the standalone proxy on the EPP Service (`router.extraServicePorts`, name `http`). */
export const ROUTER_PROXY_PORT = 8081;
/** The routerlib's cut of the release name before `-epp` (`llm-d-router.name`: `trunc 40`). */
export const ROUTER_EPP_BASE = 40;
/**
 * The label of the EPP pods (`llm-d-router.selectorLabels`, value the EPP's name): chosen by
 * `router.inferencePool.create`, not by the chart — `llm-d-router-gateway` when the chart creates the
 * InferencePool (both charts do by default, so both modes here), `llm-d-router-standalone` when not.
 */
export const ROUTER_EPP_SELECTOR_KEY = { withPool: 'llm-d-router-gateway', withoutPool: 'llm-d-router-standalone' } as const;

/** The EPP pods' labels for the chart's effective values. */
export function routerEppPodLabels(epp: string, effective: Values): Record<string, string> {
  const pool = (effective.router as Values | undefined)?.inferencePool as Values | undefined;
  return { [pool?.create === false ? ROUTER_EPP_SELECTOR_KEY.withoutPool : ROUTER_EPP_SELECTOR_KEY.withPool]: epp };
}

/**
 * The llm-d Router's EPP metrics, v0.10.0 (llm-d/llm-d-router `pkg/epp/metrics/llm_d_router_metrics.go`,
 * subsystem `llm_d_epp`; `docs/metrics.md` "Inference pool", "Flow control"). v0.10 emits each also
 * under its legacy GAIE name (`inference_pool_average_queue_size`, …, dual emission); v0.11 removes
 * the legacy ones (llm-d-router #2675, #2826), so only these names work on both:
 * - `llm_d_epp_average_queue_size{name}`, `llm_d_epp_average_kv_cache_utilization{name}`: the pool's
 *   mean model-server queue and KV-cache use, `name` = the InferencePool (`--pool-name`, the release);
 * - `llm_d_epp_flow_control_queue_size{fairness_id,priority,inference_pool,model_name,target_model_name}`:
 *   requests held in flow control's queue (only with the `flowControl` feature gate);
 * - `llm_d_epp_request_running{model_name,target_model_name,fairness_id,priority}`: requests in flight
 *   (no pool label: one EPP serves one pool, its pods select it).
 * Served on the EPP container's port `metrics` (9090) at `/metrics` (routerlib `_deployment.yaml`).
 */
export const ROUTER_EPP_METRICS: EppMetricFacts = {
  queue: 'llm_d_epp_average_queue_size',
  kvCache: 'llm_d_epp_average_kv_cache_utilization',
  poolLabel: 'name',
  flowControl: { queue: 'llm_d_epp_flow_control_queue_size', poolLabel: 'inference_pool', running: 'llm_d_epp_request_running' },
};
/** The EPP container's metrics port (routerlib `_deployment.yaml`: `name: metrics`, 9090). */
export const ROUTER_EPP_METRICS_PORT = 'metrics';

/**
 * The EPP config's feature gate of flow control (llm-d-router v0.10.0 `pkg/epp/flowcontrol/config.go`:
 * `FeatureGate = "flowControl"`, off by default: `cmd/epp/runner/runner.go` registers it `false`), given
 * only in the `EndpointPickerConfig` file (`featureGates`), whose `flowControl.defaultRequestTTL`
 * bounds a request's wait in the queue (default 60 s, `pkg/epp/flowcontrol/controller/config.go`;
 * "Scale-to-zero deployments should raise defaultRequestTTL above the expected cold-start time",
 * release note of #2123).
 */
export const ROUTER_FLOW_CONTROL = { featureGate: 'flowControl', configApiVersion: 'llm-d.ai/v1alpha1', configKind: 'EndpointPickerConfig', defaultRequestTtlSeconds: 60 } as const;

/**
 * The config file app-serving writes for an EPP whose flow control it turns on
 * (`router.epp.pluginsCustomConfig.<file>`, selected by `router.epp.pluginsConfigFile`).
 */
export const ROUTER_FLOW_CONTROL_CONFIG_FILE = 'app-serving-flow-control.yaml';

/**
 * Where requests wait while a 2026-08 model has no replica: in the Router's flow-control queue, which
 * v0.10 calls a "scale-from-zero waiting room" (`pkg/epp/flowcontrol/controller/internal/processor.go`).
 */
export const ROUTER_REQUEST_BUFFERING: RequestBuffering = {
  holds: true,
  how: "the llm-d Router's flow control (its EPP's flowControl feature gate, which app-serving turns on for a model at zero) holds requests while the model has no replica",
};
/** An embedding model on 2026-08: its Service bypasses the EPP, so nothing holds its requests. */
export const ROUTER_EMBEDDER_NO_BUFFERING: RequestBuffering = {
  holds: false,
  why: "an embedding model's requests go through its Service straight to the pods, not through the Router's EPP, so nothing holds a request while the model has no replica",
};

/** The Router chart defaults core reasons about (routerlib `values.yaml` and the parent charts'). */
export const ROUTER_DEFAULTS: Values = freezeValues({
  router: {
    epp: {
      image: { registry: 'ghcr.io/llm-d', repository: 'llm-d-router-endpoint-picker', tag: 'v0.10.0' },
      replicas: 1,
      extProcPort: 9002,
      metricsDataSource: { scheme: 'http', path: '/metrics', insecureSkipVerify: true },
      parsers: [],
      pluginsConfigFile: 'default-plugins.yaml',
    },
    modelServers: { type: 'vllm', protocol: 'http', targetPorts: [{ number: 8000 }] },
    inferencePool: { create: true, failureMode: 'FailOpen' },
    monitoring: { prometheus: { enabled: false, auth: { enabled: true } } },
    latencyPredictor: { enabled: false },
  },
  provider: { name: 'none' },
  httpRoute: { requestTimeout: '300s' },
});

/**
 * The EPP's TLS switch (`router.epp.flags.secure-serving`, rendered `--secure-serving=<v>`): on by
 * default, and then the EPP serves ext_proc over TLS with a certificate it makes itself at start
 * unless `--cert-path` names one (GAIE v1.5.0 `pkg/epp/server/runserver.go`: "If not set, and
 * secureServing is enabled, then a self-signed certificate is used"). Istio's DestinationRule talks
 * TLS to it without verifying (insecureSkipVerify, the chart's `istio.yaml`); the standalone chart
 * turns it off for agentgateway (`_deployment.yaml`).
 */
export const ROUTER_EPP_SECURE_SERVING_FLAG = 'secure-serving';

/**
 * The header the EPP names its pick in (`<pod IP>:<port>`), for the gateway to send the request
 * there: GAIE v1.5.0 `pkg/epp/metadata/consts.go` DestinationEndpointKey. Envoy Gateway reads it
 * with a BackendTrafficPolicy's `loadBalancer.endpointOverride` (Envoy's override_host policy).
 */
export const EPP_DESTINATION_HEADER = 'x-gateway-destination-endpoint';

/**
 * How long Envoy waits for each ext_proc answer: as the llm-d Router's own Envoy does
 * (`llm-d-router-standalone` values.yaml, `message_timeout: 1000s`). Envoy applies no message
 * timeout in FULL_DUPLEX_STREAMED mode (envoy `ext_proc.proto`, message_timeout); this bounds the
 * exchange should that change, and the HTTPRoute's request timeout bounds the request before it.
 */
export const EXT_PROC_MESSAGE_TIMEOUT = '1000s';

/**
 * The keys the Router charts read (for "no effect" warnings: the charts have no values schema).
 * `true` marks a key whose subtree is free-form. A leftover top-level `inferenceExtension` or
 * `experimentalHttpRoute` (GAIE's names) makes the install fail (routerlib `_helpers.tpl`).
 */
export const ROUTER_KEYS: KeyTree = {
  router: {
    extraServicePorts: true,
    clusterDomain: true,
    epp: {
      replicas: true,
      image: true,
      extProcPort: true,
      grpcHealthPort: true,
      parsers: true,
      metricsDataSource: true,
      flags: true,
      env: true,
      pluginsConfigFile: true,
      pluginsCustomConfig: true,
      extraContainerPorts: true,
      resources: true,
      affinity: true,
      tolerations: true,
      podAnnotations: true,
    },
    proxy: true,
    tokenizer: true,
    monitoring: true,
    tracing: true,
    inferencePool: true,
    inferenceObjectives: true,
    modelServers: true,
    latencyPredictor: true,
  },
  provider: true,
  httpRoute: true,
};

/** The model server's listening port by default (vLLM's, and llm-d's recipe's `modelserver` port). */
export const MODEL_SERVER_PORT = 8000;
/** The vLLM image llm-d's recipes name for GPU nodes (`components/images/gpu-vllm/release`, as of the 2026-08 guides). */
export const VLLM_IMAGE = 'docker.io/vllm/vllm-openai:v0.30.0';
/** The role label llm-d's recipes put on model-server pods. */
export const ROLE_DECODE = 'decode';

/**
 * InferencePool CRD fields the Router chart v0.10.0 renders that GAIE v1.2.0's CRD lacks (GAIE
 * v1.6.0's `inference.networking.k8s.io_inferencepools.yaml` has them): preflight refuses a cluster
 * whose InferencePool CRD is still the older one.
 */
export const ROUTER_POOL_CRD_FIELDS: readonly (readonly string[])[] = [['spec', 'appProtocol']];

/** A 2026-08 model server's values (`server-<slug>/values.yaml`: `replicas`). */
export const SERVER_AUTOSCALER_KEYS: AutoscalerKeys = {
  replicas: [['replicas']],
  autoscalers: [],
};
