/**
 * Fixed facts of the stack: chart references, ports, labels, paths and images.
 * Every package reads them from here; a second copy anywhere else is a bug.
 * Sources are in `shared/reference/upstream-charts.md` (chart versions, defaults, names).
 */

/** A Helm chart to deploy: an `oci://` reference, or a chart name plus a repository URL. */
export interface ChartRef {
  /** Chart name (with `repo`) or full `oci://` reference. */
  readonly chart: string;
  /** Exact chart version. */
  readonly version: string;
  /** Helm repository URL; absent for `oci://` charts. */
  readonly repo?: string;
}

/** Pinned chart versions whose values core was written against and checked for. */
export const DEFAULT_CHARTS = {
  /** llm-d-infra v1.3.10: the Istio Gateway and its parameters ConfigMap (values schema checked at this tag). */
  infra: { chart: 'llm-d-infra', version: 'v1.3.10', repo: 'https://llm-d-incubation.github.io/llm-d-infra/' },
  /** GAIE inferencepool v1.2.0: the EPP and the InferencePool. */
  gaie: { chart: 'oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool', version: 'v1.2.0' },
  /** llm-d-modelservice v0.4.12: the vLLM decode/prefill Deployments and routing sidecar. */
  modelService: { chart: 'llm-d-modelservice', version: 'v0.4.12', repo: 'https://llm-d-incubation.github.io/llm-d-modelservice/' },
} as const satisfies Record<'infra' | 'gaie' | 'modelService', ChartRef>;

export type ChartKey = keyof typeof DEFAULT_CHARTS;

/** The Istio GatewayClass llm-d-infra's Gateway uses; Istio names its Service `<gateway>-<class>`. */
export const ISTIO_GATEWAY_CLASS = 'istio';
/** The HTTP listener port of the llm-d-infra Gateway (chart default listener). */
export const GATEWAY_HTTP_PORT = 80;
/** The port clients use for an embedding model's ClusterIP Service (`ms-<slug>-embeddings`). */
export const EMBEDDINGS_SERVICE_PORT = 8200;
/** The Kubernetes cluster domain used to build in-cluster FQDNs. */
export const CLUSTER_DOMAIN = 'cluster.local';

/** Pod labels every model server carries; the InferencePool and the embeddings Service select on them. */
export const LABEL_INFERENCE_SERVING = 'llm-d.ai/inference-serving';
export const LABEL_MODEL = 'llm-d.ai/model';
/** Set by llm-d-modelservice on its pods: `decode` or `prefill`. */
export const LABEL_ROLE = 'llm-d.ai/role';
/** Labels app-serving puts on every object it creates itself. */
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'app-serving';
export const LABEL_PART_OF = 'app.kubernetes.io/part-of';

/** The `kubernetes.io/dockerconfigjson` Secret holding Harbor robot credentials, one per model namespace. */
export const HARBOR_PULL_SECRET = 'harbor-creds';

/** Where the model volume is mounted, in the pull Job and in the model server (modelservice `mountPath` default). */
export const MODEL_MOUNT_PATH = '/model-cache';
/** The file the pull Job writes last; its presence means the volume holds a complete model. */
export const PULLED_MARKER_FILE = '.pulled';
export const PULLED_MARKER_PATH = `${MODEL_MOUNT_PATH}/${PULLED_MARKER_FILE}`;
/** Default on-prem hostPath directory for a model's PV (`<slug>` is appended). */
export const DEFAULT_HOSTPATH_ROOT = '/var/lib/hostpath/models';
/** Storage class of PVCs on on-prem clusters when the stack names none. */
export const ON_PREM_STORAGE_CLASS = 'hostpath';

/** ORAS, which pulls model artifacts from Harbor. */
export const ORAS_VERSION = 'v1.3.1';
export const ORAS_IMAGE_PUBLIC = `ghcr.io/oras-project/oras:${ORAS_VERSION}`;
/** The Harbor project that holds the images app-serving itself runs (ORAS, the HF downloader). */
export const INFRA_MIRROR_PROJECT = 'images-infra';
/** The Harbor project `app-serving images` mirrors model-serving images into by default. */
export const DEFAULT_MIRROR_PROJECT = 'images-llm-d';

/**
 * The KServe release whose LLMInferenceService controller and well-known configs app-serving's
 * KServe facts are read from (`kserve/facts.ts`); `KSERVE_SUPPORTED_VERSIONS` lists the releases it supports.
 */
export const KSERVE_VERSION = 'v0.18.1';
/** KServe's storage-initializer image: Python with huggingface_hub, used by the Hugging Face download Job. */
export const HF_DOWNLOADER_IMAGE_PUBLIC = `kserve/storage-initializer:${KSERVE_VERSION}`;
/** Controller name of Envoy Gateway's GatewayClass. */
export const ENVOY_GATEWAY_CONTROLLER = 'gateway.envoyproxy.io/gatewayclass-controller';
/** The LLMInferenceService API app-serving creates (served by KServe v0.16 and later). */
/** KServe's own namespace: its controller and the well-known LLMInferenceServiceConfigs (kserve/kserve v0.18.1 charts). */
export const KSERVE_NAMESPACE = 'kserve';
export const KSERVE_API = { group: 'serving.kserve.io', version: 'v1alpha1', plural: 'llminferenceservices' } as const;
/** Where Envoy Gateway runs the proxies of a Gateway (its default, non-namespaced deployment mode). */
export const ENVOY_GATEWAY_NAMESPACE = 'envoy-gateway-system';
/** Labels Envoy Gateway puts on a Gateway's proxy Service and pods. */
export const ENVOY_LABEL_OWNING_GATEWAY_NAME = 'gateway.envoyproxy.io/owning-gateway-name';
export const ENVOY_LABEL_OWNING_GATEWAY_NAMESPACE = 'gateway.envoyproxy.io/owning-gateway-namespace';
/** The port vLLM listens on in KServe's default template. */
export const KSERVE_VLLM_PORT = 8000;

/** UID/GID the pull Jobs run as (non-root, so the Job passes Pod Security "restricted"). */
export const PULL_JOB_UID = 65532;
/** Pull Job limits: retries and how long a finished Job stays before Kubernetes deletes it. */
export const PULL_JOB_BACKOFF_LIMIT = 3;
export const PULL_JOB_TTL_SECONDS = 86_400;

/**
 * The annotation the Pulumi Kubernetes provider reads for how long it awaits an object (seconds);
 * without it, a Deployment gets 10 minutes.
 * @see https://www.pulumi.com/registry/packages/kubernetes/api-docs/apps/v1/deployment/
 */
export const PULUMI_TIMEOUT_ANNOTATION = 'pulumi.com/timeoutSeconds';
/**
 * The annotation that tells the Pulumi Kubernetes provider not to await an object. Set on a claim
 * bound ahead to its own PersistentVolume (`volumeName`, the on-prem hostPath volume): the binding
 * is immediate and certain, and the provider's await of it sometimes missed the Bound claim on a
 * loaded cluster and stalled `up` for its fixed 5 minutes. The pull Job that mounts the claim is
 * awaited as before.
 *
 * Set too on the gateway alias (an ExternalName Service): there is nothing to await, and the
 * provider's Service await (v4.24) answers with the first object its shared informer replays, which
 * may be the Service from before the update — the new `externalName` was applied, but the state kept
 * the old one as the output, and the next preview planned an update of `spec` (in about half the runs
 * of the deploy tier's move behind Envoy Gateway). Not awaited, the output is the apply's own answer.
 * @see https://www.pulumi.com/registry/packages/kubernetes/api-docs/core/v1/persistentvolumeclaim/
 */
export const PULUMI_SKIP_AWAIT_ANNOTATION = 'pulumi.com/skipAwait';
/** How long `pulumi up` waits for a model's Deployments by default: a first pull of a CUDA image plus vLLM's start-up. */
export const DEFAULT_READY_TIMEOUT = '30m';
/** Kubernetes' label with a namespace's own name (set by the API server on every namespace). */
export const LABEL_NAMESPACE_NAME = 'kubernetes.io/metadata.name';

/** Kubernetes name limits (DNS-1123/1035 and Helm). */
export const LIMITS = {
  dnsLabel: 63,
  dnsSubdomain: 253,
  labelValue: 63,
  helmRelease: 53,
  /** modelservice truncates its fullname at 55 (room for `-prefill`). */
  modelServiceFullname: 55,
  /** GAIE truncates the release to 40 before appending `-epp`. */
  gaieEppBase: 40,
  /** GAIE's quoted ClusterRole name is cut at 84 characters (only with Prometheus monitoring on). */
  gaieClusterRoleQuoted: 84,
  /** Slug: the Istio Service `infra-<slug>-inference-gateway-istio` is 30 + len(slug) ≤ 63. */
  slug: 33,
} as const;

/**
 * What a cluster needs for llm-d models (apps/app-serving/README.md and docs/deployment-flow.md
 * list them; a test holds the docs and the GAIE CRDs to these facts).
 */
export const CLUSTER_REQUIREMENTS = {
  /**
   * The floor of both: Istio 1.28 supports Kubernetes 1.30 to 1.34 (istio.io's support status of
   * Istio releases); the routing proxy of llm-d-modelservice is a sidecar init container
   * (`restartPolicy: Always`, Kubernetes ≥ 1.29).
   */
  kubernetes: '1.30',
  /** Istio serves the Gateway and the InferencePool (`ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true`). */
  istio: '1.28',
  /** GAIE v1.2.0 CRDs: the pool, and the objectives its EPP watches (`controller_manager.go`). */
  gaieCrds: [
    { group: 'inference.networking.k8s.io', version: 'v1', kind: 'InferencePool' },
    { group: 'inference.networking.x-k8s.io', version: 'v1alpha2', kind: 'InferenceObjective' },
  ],
} as const;

/**
 * The sets of upstream versions a model can be deployed with (see upstream/sets.ts):
 * - `2026-02`, the seed's pins: llm-d-infra v1.3.10 (Istio Gateway), GAIE `inferencepool` v1.2.0
 *   (EPP, InferencePool), llm-d-modelservice v0.4.12 (vLLM pods), KServe v0.18;
 * - `2026-08`, upstream as of August 2026: the llm-d Router chart v0.10.0 (EPP, InferencePool,
 *   HTTPRoute) beside a plain model-server Deployment and a Gateway app-serving creates, KServe v0.20.
 * A stack that names none keeps `2026-02`: no upgrade happens by surprise.
 */
export const UPSTREAMS = ['2026-02', '2026-08'] as const;
export type Upstream = (typeof UPSTREAMS)[number];

/** Platforms a model can be served on. */
export const PLATFORMS = ['llm-d', 'kserve'] as const;
export type Platform = (typeof PLATFORMS)[number];

/**
 * The GatewayClasses a 2026-08 llm-d model's Gateway can be of (`router.gatewayClass`): Istio's and
 * agentgateway's route to the Router's InferencePool; Envoy Gateway's (`envoy`) cannot, so
 * app-serving writes its own form beside it (upstream/2026-08/envoy.ts).
 */
export const ROUTER_GATEWAY_CLASSES = ['istio', 'agentgateway', 'envoy'] as const;
export type RouterGatewayClass = (typeof ROUTER_GATEWAY_CLASSES)[number];

/** Model categories: folder names under `models/` and keys under `models:` in the stack. */
export const CATEGORIES = ['generative', 'embedder'] as const;
export type Category = (typeof CATEGORIES)[number];

/** The config namespace of every stack key: `app-serving:<key>`. */
export const CONFIG_NAMESPACE = 'app-serving';

/**
 * The signals a model can scale on (the stack's `autoscaling.signal`; features/autoscaling reads
 * them). Here, not in the schema, so that what imports them does not import zod.
 */
export const AUTOSCALING_SIGNALS = ['queue-depth', 'kv-cache', 'epp-queue', 'epp-kv-cache'] as const;

/**
 * The values vLLM takes for `--max-lora-rank` (vLLM `vllm/config/lora.py`, `MaxLoRARanks`: the same
 * list from v0.26 to v0.32), and its default. A model's `maxLoraRank` is one of them: every adapter's
 * rank (`r` in its adapter_config.json) must be at most that.
 */
export const LORA_RANKS = [1, 8, 16, 32, 64, 128, 256, 320, 512] as const;
export const DEFAULT_LORA_RANK = 16;
/** Where the pull Job puts each pulled adapter on the model volume: `<folder>/<adapter name>/`. */
export const ADAPTERS_FOLDER = 'adapters';

/**
 * The most seconds `pulumi.com/timeoutSeconds` can say: the Kubernetes provider reads it with Go's
 * `strconv.Atoi` and multiplies it into a `time.Duration` (int64 nanoseconds), so past 9,223,372,036
 * seconds it wraps, and a number Atoi cannot read is ignored — the default 10 minutes applies
 * (pulumi-kubernetes v4 `pkg/metadata/overrides.go`, TimeoutDuration).
 * Here, not in the schema, so that what imports it does not import zod.
 */
export const MAX_READY_TIMEOUT_SECONDS = 9_223_372_036;
