/**
 * Facts about KServe's LLMInferenceService controller at the pinned version ({@link KSERVE_VERSION}),
 * read from kserve/kserve at that tag. Each fact names its source; the tests hold them against
 * the upstream files in `../shared/upstream/` (CRDs and the well-known LLMInferenceServiceConfigs).
 */
import { KSERVE_VERSION } from '../constants.ts';
import type { AutoscalerKeys } from '../upstream/generation.ts';
import { getPath, isValuesMap, type Values } from '../values/merge.ts';

export { KSERVE_VERSION };

/**
 * The KServe versions app-serving supports: the versions whose LLMInferenceService controller and
 * well-known configs match the facts in this file. Older ones lack what the plan relies on —
 * v0.17's `kserve-config-llm-template` does not pass `VLLM_ADDITIONAL_ARGS` to vLLM (the model's
 * extra flags are silently dropped) and v0.16's CRD has no `router.scheduler.config`; newer ones
 * (v0.19, v0.20) ship other images in their well-known configs, so the image inventory would be wrong.
 */
export const KSERVE_SUPPORTED_VERSIONS: readonly string[] = ['v0.18.0', 'v0.18.1'];

/** Where a well-known config puts a pod spec (`spec.<section>`). */
export type KservePodSection = 'template' | 'worker' | 'prefill.template' | 'prefill.worker' | 'router.scheduler.template';

/** What an image of a well-known config runs. */
export type KserveImageRole = 'vllm' | 'routing-sidecar' | 'scheduler' | 'tokenizer';

/** One container image a well-known LLMInferenceServiceConfig sets. */
export interface KserveWellKnownImage {
  /** The LLMInferenceServiceConfig (in the `kserve` namespace). */
  readonly config: string;
  readonly section: KservePodSection;
  readonly list: 'containers' | 'initContainers';
  readonly container: string;
  readonly role: KserveImageRole;
  readonly image: string;
}

// Source: kserve/kserve v0.18.1 config/llmisvcconfig/*.yaml (identical at v0.18.0).
const VLLM = 'ghcr.io/llm-d/llm-d-cuda:v0.6.0';
const ROUTING_SIDECAR = 'ghcr.io/llm-d/llm-d-routing-sidecar:v0.7.1';
const SCHEDULER = 'ghcr.io/llm-d/llm-d-inference-scheduler:v0.7.1';
const TOKENIZER = 'ghcr.io/llm-d/llm-d-uds-tokenizer:v0.7.1';

function image(config: string, section: KservePodSection, list: 'containers' | 'initContainers', container: string, role: KserveImageRole, ref: string): KserveWellKnownImage {
  return { config, section, list, container, role, image: ref };
}

/**
 * Every image the well-known LLMInferenceServiceConfigs of {@link KSERVE_VERSION} set, by config,
 * pod section and container (source: kserve/kserve v0.18.1 config/llmisvcconfig/). KServe's Helm
 * chart `kserve-runtime-configs` installs them only with `kserve.llmisvcConfigs.enabled=true`.
 */
export const KSERVE_WELL_KNOWN_IMAGES: readonly KserveWellKnownImage[] = [
  image('kserve-config-llm-template', 'template', 'containers', 'main', 'vllm', VLLM),
  image('kserve-config-llm-scheduler', 'router.scheduler.template', 'containers', 'main', 'scheduler', SCHEDULER),
  image('kserve-config-llm-scheduler', 'router.scheduler.template', 'containers', 'tokenizer', 'tokenizer', TOKENIZER),
  image('kserve-config-llm-decode-template', 'template', 'containers', 'main', 'vllm', VLLM),
  image('kserve-config-llm-decode-template', 'template', 'initContainers', 'llm-d-routing-sidecar', 'routing-sidecar', ROUTING_SIDECAR),
  image('kserve-config-llm-prefill-template', 'prefill.template', 'containers', 'main', 'vllm', VLLM),
  image('kserve-config-llm-worker-data-parallel', 'template', 'containers', 'main', 'vllm', VLLM),
  image('kserve-config-llm-worker-data-parallel', 'worker', 'containers', 'main', 'vllm', VLLM),
  image('kserve-config-llm-decode-worker-data-parallel', 'template', 'containers', 'main', 'vllm', VLLM),
  image('kserve-config-llm-decode-worker-data-parallel', 'template', 'initContainers', 'llm-d-routing-sidecar', 'routing-sidecar', ROUTING_SIDECAR),
  image('kserve-config-llm-decode-worker-data-parallel', 'worker', 'containers', 'main', 'vllm', VLLM),
  image('kserve-config-llm-prefill-worker-data-parallel', 'prefill.template', 'containers', 'main', 'vllm', VLLM),
  image('kserve-config-llm-prefill-worker-data-parallel', 'prefill.worker', 'containers', 'main', 'vllm', VLLM),
];

/**
 * The paths of KServe's managed HTTPRoute that go to the InferencePool (and so through the
 * scheduler's endpoint picker); every other path under `/<namespace>/<name>` takes the catch-all
 * rule straight to the Service `<name>-kserve-workload-svc` (source: kserve/kserve v0.18.1
 * config/llmisvcconfig/config-llm-router-route.yaml).
 */
export const KSERVE_POOL_PATHS: readonly string[] = ['/v1/completions', '/v1/chat/completions', '/v1/responses'];

/** The label key and value of the node a pod runs on: the scheduler pod is co-located by it. */
export const HOSTNAME_TOPOLOGY_KEY = 'kubernetes.io/hostname';

/**
 * The well-known configs KServe's controller merges under an LLMInferenceService spec, in its
 * order (source: kserve/kserve v0.18.1 pkg/controller/v1alpha2/llmisvc/config_merge.go,
 * `combineBaseRefsConfig`): the scheduler config when `router.scheduler` is set without a pool
 * reference, the route config when `router.route` is set without HTTPRoute references, then the
 * workload template by deployment pattern (single node, data-parallel workers, prefill/decode).
 * Pipeline-parallel patterns name configs KServe v0.18 does not ship; they are left out.
 */
export function kserveWellKnownConfigs(spec: Values): string[] {
  const refs: string[] = [];
  const scheduler = getPath(spec, ['router', 'scheduler']);
  if (isValuesMap(scheduler) && !hasName(getPath(scheduler, ['pool', 'ref']))) refs.push('kserve-config-llm-scheduler');
  const route = getPath(spec, ['router', 'route']);
  if (isValuesMap(route) && !nonEmptyList(getPath(route, ['http', 'refs']))) refs.push('kserve-config-llm-router-route');
  const dataParallel = (parallelism: unknown) => positive(getPath(parallelism, ['data'])) || positive(getPath(parallelism, ['dataLocal']));
  const worker = isValuesMap(getPath(spec, ['worker']));
  const prefill = getPath(spec, ['prefill']);
  if (isValuesMap(prefill)) {
    if (!isValuesMap(getPath(prefill, ['worker']))) refs.push('kserve-config-llm-prefill-template');
    else if (dataParallel(getPath(prefill, ['parallelism']))) refs.push('kserve-config-llm-prefill-worker-data-parallel');
    if (!worker) refs.push('kserve-config-llm-decode-template');
    else if (dataParallel(getPath(spec, ['parallelism']))) refs.push('kserve-config-llm-decode-worker-data-parallel');
  } else if (!worker) refs.push('kserve-config-llm-template');
  else if (dataParallel(getPath(spec, ['parallelism']))) refs.push('kserve-config-llm-worker-data-parallel');
  return refs;
}

function hasName(value: unknown): boolean {
  return isValuesMap(value) && typeof value.name === 'string' && value.name !== '';
}

function nonEmptyList(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}

function positive(value: unknown): boolean {
  return typeof value === 'number' && value > 0;
}

/**
 * The CRD's own rule (CEL, on `spec` and on `spec.prefill`): "replicas and scaling are mutually
 * exclusive" (source: kserve/kserve v0.18.1 config/crd/full/llmisvc/serving.kserve.io_llminferenceservices.yaml).
 */
export const KSERVE_REPLICAS_SCALING_RULE = '!(has(self.replicas) && has(self.scaling))';

/** The LLMInferenceService overlay's keys (`replicas`, `scaling`, and the same under `prefill`). */
export const KSERVE_AUTOSCALER_KEYS: AutoscalerKeys = {
  replicas: [['replicas'], ['prefill', 'replicas']],
  autoscalers: [['scaling'], ['prefill', 'scaling']],
};
