import { HF_DOWNLOADER_IMAGE_PUBLIC, KSERVE_API, KSERVE_VERSION, type Upstream } from '../constants.ts';
import { KSERVE_SUPPORTED_VERSIONS, KSERVE_WELL_KNOWN_IMAGES, type KserveImageRole, type KservePodSection, type KserveWellKnownImage } from './facts.ts';

/**
 * One KServe release app-serving deploys LLMInferenceServices for: the API version it writes, the
 * images of its well-known LLMInferenceServiceConfigs (what `images` lists and the model pulls),
 * the Hugging Face downloader, and the CRD fields that tell it from the release before (preflight).
 * Two sets of upstream versions, two releases: v0.18 (2026-02) and v0.20 (2026-08). Each is held
 * against its own upstream files (facts.test.ts): shared/upstream/kserve/v0.18.1-llmisvcconfig and
 * shared/upstream/current/kserve/v0.20.0-llmisvcconfig, and the CRDs of each.
 */
export interface KserveRelease {
  readonly upstream: Upstream;
  /** The release whose configs and controller the facts were read from. */
  readonly version: string;
  /** The releases these facts hold for (what preflight accepts). */
  readonly supportedVersions: readonly string[];
  /** The LLMInferenceService API app-serving writes. */
  readonly api: { readonly group: 'serving.kserve.io'; readonly version: 'v1alpha1' | 'v1alpha2'; readonly plural: 'llminferenceservices' };
  /** Every image the release's well-known configs set. */
  readonly wellKnownImages: readonly KserveWellKnownImage[];
  /**
   * The Envoy AI Gateway release KServe installs with (its `kserve-deps.env`,
   * ENVOY_AI_GATEWAY_VERSION): Envoy Gateway's extension that routes the HTTPRoute's InferencePool
   * backend (a model with the scheduler).
   */
  readonly envoyAiGatewayVersion: string;
  /** KServe's storage-initializer of this release: the Hugging Face download Job's image. */
  readonly downloaderImage: string;
  /**
   * CRD fields (under the LLMInferenceService's served version) this release has and older ones
   * lack: preflight refuses a cluster without them.
   */
  readonly crdFields: readonly (readonly string[])[];
}

/** KServe v0.18 (v0.18.0, v0.18.1): LLMInferenceService v1alpha1 (served; v1alpha2 is the stored version). */
export const KSERVE_V0_18: KserveRelease = {
  upstream: '2026-02',
  version: KSERVE_VERSION,
  supportedVersions: KSERVE_SUPPORTED_VERSIONS,
  api: KSERVE_API,
  wellKnownImages: KSERVE_WELL_KNOWN_IMAGES,
  // Source: kserve/kserve v0.18.1 kserve-deps.env.
  envoyAiGatewayVersion: 'v0.5.0',
  downloaderImage: HF_DOWNLOADER_IMAGE_PUBLIC,
  // v0.17 has spec.scaling too; sectionName is the one field v0.18.0 added (KServe's git diff v0.17.0..v0.18.0).
  crdFields: [['spec', 'scaling'], ['spec', 'router', 'gateway', 'refs', '[]', 'sectionName']],
};

// Source: kserve/kserve v0.20.0 config/llmisvcconfig/*.yaml (shared/upstream/current/kserve/v0.20.0-llmisvcconfig).
const V020 = {
  vllm: 'ghcr.io/llm-d/llm-d-cuda:v0.8.0',
  sidecar: 'ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.9.0',
  scheduler: 'ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0',
  tokenizer: 'ghcr.io/llm-d/llm-d-uds-tokenizer:vllm-v0.19.1',
  trainingServer: 'ghcr.io/llm-d/llm-d-latency-predictor-training-server:v0.8.0',
  predictionServer: 'ghcr.io/llm-d/llm-d-latency-predictor-prediction-server:v0.8.0',
} as const;

const image = (config: string, section: KservePodSection, list: 'containers' | 'initContainers', container: string, role: KserveImageRole, ref: string): KserveWellKnownImage => ({
  config,
  section,
  list,
  container,
  role,
  image: ref,
});

/**
 * KServe v0.20: LLMInferenceService v1alpha2 (the stored version; v1alpha1 is only served), Gateway
 * API v1.5.1, GIE v1.5, Envoy Gateway v1.8.1 and Envoy AI Gateway v1.0+ (kserve `kserve-deps.env`);
 * the scheduler is the llm-d Router's endpoint picker, the sidecar the Router's disagg sidecar.
 */
export const KSERVE_V0_20: KserveRelease = {
  upstream: '2026-08',
  version: 'v0.20.0',
  supportedVersions: ['v0.20.0'],
  api: { group: 'serving.kserve.io', version: 'v1alpha2', plural: 'llminferenceservices' },
  wellKnownImages: [
    image('kserve-config-llm-template', 'template', 'containers', 'main', 'vllm', V020.vllm),
    image('kserve-config-llm-scheduler', 'router.scheduler.template', 'containers', 'main', 'scheduler', V020.scheduler),
    image('kserve-config-llm-scheduler', 'router.scheduler.template', 'containers', 'tokenizer', 'tokenizer', V020.tokenizer),
    image('kserve-config-llm-scheduler-latency-predictor', 'router.scheduler.template', 'containers', 'training-server', 'scheduler', V020.trainingServer),
    image('kserve-config-llm-scheduler-latency-predictor', 'router.scheduler.template', 'containers', 'prediction-server', 'scheduler', V020.predictionServer),
    image('kserve-config-llm-decode-template', 'template', 'containers', 'main', 'vllm', V020.vllm),
    image('kserve-config-llm-decode-template', 'template', 'initContainers', 'llm-d-routing-sidecar', 'routing-sidecar', V020.sidecar),
    image('kserve-config-llm-prefill-template', 'prefill.template', 'containers', 'main', 'vllm', V020.vllm),
    image('kserve-config-llm-worker-data-parallel', 'template', 'containers', 'main', 'vllm', V020.vllm),
    image('kserve-config-llm-worker-data-parallel', 'worker', 'containers', 'main', 'vllm', V020.vllm),
    image('kserve-config-llm-decode-worker-data-parallel', 'template', 'containers', 'main', 'vllm', V020.vllm),
    image('kserve-config-llm-decode-worker-data-parallel', 'template', 'initContainers', 'llm-d-routing-sidecar', 'routing-sidecar', V020.sidecar),
    image('kserve-config-llm-decode-worker-data-parallel', 'worker', 'containers', 'main', 'vllm', V020.vllm),
    image('kserve-config-llm-prefill-worker-data-parallel', 'prefill.template', 'containers', 'main', 'vllm', V020.vllm),
    image('kserve-config-llm-prefill-worker-data-parallel', 'prefill.worker', 'containers', 'main', 'vllm', V020.vllm),
  ],
  // Source: kserve/kserve v0.20.0 kserve-deps.env.
  envoyAiGatewayVersion: 'v1.0.0',
  downloaderImage: 'kserve/storage-initializer:v0.20.0',
  // v1alpha2's kvCacheOffloading is new in v0.20 against v0.18.1 (git diff v0.18.1 v0.20.0 -- pkg/apis/serving;
  // whether v0.19 has it is not confirmed).
  crdFields: [['spec', 'kvCacheOffloading']],
};

/** The KServe release of each set of upstream versions. */
export const KSERVE_RELEASES: Readonly<Record<Upstream, KserveRelease>> = { '2026-02': KSERVE_V0_18, '2026-08': KSERVE_V0_20 };
