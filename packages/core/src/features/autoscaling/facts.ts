/**
 * Facts of autoscaling on LLM signals (docs/autoscaling.md): the defaults, the metrics each model
 * server and endpoint picker exports, the API versions and CRDs of KEDA and the Prometheus Operator.
 */
import type { AutoscalingSignal } from '../../config/types.ts';
export type { EppMetricFacts } from '../../upstream/generation.ts';

export { AUTOSCALING_SIGNALS } from '../../constants.ts';

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

/**
 * What the API server and KEDA accept of the values a model's autoscaling becomes, each with its
 * source (a test holds them against KEDA v2.20.2's ScaledObject CRD and the real API server):
 * - `cooldown` becomes the HPA's scale-down `stabilizationWindowSeconds` (llm-d: KEDA's
 *   `advanced.horizontalPodAutoscalerConfig`; KServe v0.18: `wva.hpa`), which Kubernetes caps at
 *   3600 s (`pkg/apis/autoscaling/validation`, `MaxStabilizationWindowSeconds`; KEDA's CRD says
 *   "less than or equal to 3600 (one hour)"), and KEDA's `cooldownPeriod`, an int32;
 * - `pollingInterval` becomes KEDA's `pollingInterval`, an int32 of at least 1 (the API server does not
 *   enforce the CRD's `format: int32` and stores more; KEDA's operator, whose Go field is an int32,
 *   cannot decode it);
 * - `target` becomes the trigger's `threshold`, which KEDA hands the HPA with three decimals
 *   (v2.20 `pkg/scalers/scaler.go`, `quantityFromFloat64`: `%.3f`): below 0.001 it is 0, a target
 *   the HPA refuses.
 */
export const AUTOSCALING_LIMITS = {
  cooldownSeconds: { seconds: 3600, what: "the HPA's scale-down stabilization window", source: 'Kubernetes pkg/apis/autoscaling/validation MaxStabilizationWindowSeconds; KEDA v2.20 ScaledObject CRD' },
  pollingIntervalSeconds: { seconds: 2_147_483_647, what: "KEDA's pollingInterval (an int32 of seconds)", source: 'KEDA v2.20 ScaledObject CRD, format int32' },
  minTarget: 0.001,
} as const;

/** The target per replica of each signal when the stack names none. */
export const DEFAULT_TARGETS: Readonly<Record<AutoscalingSignal, number>> = { 'queue-depth': 5, 'kv-cache': 0.8, 'epp-queue': 5, 'epp-kv-cache': 0.8 };

/** How often the PodMonitors scrape. */
export const SCRAPE_INTERVAL = '15s';

/**
 * vLLM's metrics (vLLM `vllm/v1/metrics/loggers.py`): requests waiting to be scheduled, and the
 * KV-cache usage (0–1) of the engine.
 */
export const VLLM_METRICS = { queue: 'vllm:num_requests_waiting', kvCache: 'vllm:kv_cache_usage_perc', path: '/metrics' } as const;

export const KEDA_API_VERSION = 'keda.sh/v1alpha1';
export const PROMETHEUS_OPERATOR_API_VERSION = 'monitoring.coreos.com/v1';

/** The CRDs an autoscaled model needs in the cluster (preflight checks them). */
export const AUTOSCALING_CRDS = {
  scaledObjects: { group: 'keda.sh', version: 'v1alpha1', plural: 'scaledobjects', kind: 'ScaledObject', from: 'KEDA' },
  triggerAuthentications: { group: 'keda.sh', version: 'v1alpha1', plural: 'triggerauthentications', kind: 'TriggerAuthentication', from: 'KEDA' },
  podMonitors: { group: 'monitoring.coreos.com', version: 'v1', plural: 'podmonitors', kind: 'PodMonitor', from: 'the Prometheus Operator' },
} as const;

