import type { AUTOSCALING_SIGNALS, LORA_RANKS, Platform, RouterGatewayClass, Upstream } from '../constants.ts';
import type { Secret } from '../secret.ts';

/**
 * The stack configuration's types, written out rather than inferred from the zod schema
 * (`schema.ts`), so that core's public declarations never reach zod's: zod's `.d.cts` files need
 * `esModuleInterop`, which Pulumi's older `module: commonjs` template does not set (TS1259). The
 * schema is held to these types at compile time (`schema.ts`), so neither can drift.
 *
 * `Parsed*` / unprefixed: what a parsed stack holds (defaults filled in).
 * `*Input`: what a stack file (or a caller of {@link StackConfigInput}) may write.
 */

/** Node labels, `{ <label key>: <value> }`. */
export type NodeSelector = Record<string, string>;

/** `modelSource.huggingFace`: download the weights from Hugging Face (kserve platform). */
export interface HuggingFaceSource {
  /** Repository id, e.g. `Qwen/Qwen3-0.6B`. */
  repo: string;
  /** Branch, tag or commit. Default: the repository's default branch. */
  revision?: string | undefined;
}

/** Where the model weights come from and the volume that holds them. */
export interface ModelSource {
  harborRef?: string | undefined;
  modelUri?: string | undefined;
  layout: 'hf-cache' | 'directory';
  storageSize: string;
  storageClass?: string | undefined;
  hostpathNode?: string | undefined;
  hostpathDir?: string | undefined;
  huggingFace?: HuggingFaceSource | undefined;
}

/** {@link ModelSource} as written: `layout` defaults to `hf-cache`. */
export interface ModelSourceInput extends Omit<ModelSource, 'layout'> {
  layout?: ModelSource['layout'] | undefined;
}

/** Toleration for the taint on GPU nodes. */
export interface GpuToleration {
  key: string;
  operator: 'Equal' | 'Exists';
  value?: string | undefined;
  effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' | undefined;
}

/** {@link GpuToleration} as written: `operator` defaults to `Equal`. */
export interface GpuTolerationInput extends Omit<GpuToleration, 'operator'> {
  operator?: GpuToleration['operator'] | undefined;
}

/** Override of a pinned chart (a mirror, or an upgrade). */
export interface ChartOverride {
  chart?: string | undefined;
  version?: string | undefined;
  repo?: string | undefined;
}

/** `charts`: overrides per chart. */
export interface ChartOverrides {
  infra?: ChartOverride | undefined;
  gaie?: ChartOverride | undefined;
  modelService?: ChartOverride | undefined;
  /** 2026-08: the llm-d Router chart of gateway mode. */
  routerGateway?: ChartOverride | undefined;
  /** 2026-08: the llm-d Router chart of standalone mode. */
  routerStandalone?: ChartOverride | undefined;
  /** The stack's endpoint: GAIE's body-based-routing chart (`endpoint`). */
  bodyBasedRouting?: ChartOverride | undefined;
}

/** `router`: how the llm-d models of the 2026-08 set are reached. */
export interface RouterSettings {
  /** `gateway`: a Gateway per model (Istio, agentgateway or Envoy Gateway) routes to the Router's pool; `standalone`: the Router's own Envoy proxy beside its EPP, no Gateway. */
  mode: 'gateway' | 'standalone';
  /** The GatewayClass of each model's Gateway in gateway mode. */
  gatewayClass: RouterGatewayClass;
}

/** What a model's autoscaler follows: vLLM's queue or KV cache on its pods, or the EPP's pool-wide averages. */
export type AutoscalingSignal = (typeof AUTOSCALING_SIGNALS)[number];

/**
 * `models.<category>[].autoscaling`: scale the model servers between two counts on an LLM signal.
 * Only `maxReplicas` is required; the defaults (`AUTOSCALING_DEFAULTS`) are filled in by the plan,
 * so that a key written in the stack file can be told from a default.
 */
export interface ModelAutoscaling {
  minReplicas?: number | undefined;
  maxReplicas: number;
  signal?: AutoscalingSignal | undefined;
  target?: number | undefined;
  cooldown?: string | undefined;
  pollingInterval?: string | undefined;
}

/** {@link ModelAutoscaling} as written (the same: no key has a schema default). */
export type ModelAutoscalingInput = ModelAutoscaling;

/** `prometheus`: the Prometheus the autoscalers query, and the labels its monitor selectors want. */
export interface PrometheusSettings {
  address: string;
  auth?: 'bearer' | 'basic' | undefined;
  username?: string | undefined;
  monitorLabels: NodeSelector;
}

/** {@link PrometheusSettings} as written: `monitorLabels` defaults to `{}`. */
export interface PrometheusSettingsInput extends Omit<PrometheusSettings, 'monitorLabels'> {
  monitorLabels?: NodeSelector | undefined;
}

/** `access.jwt`: tokens from one issuer. */
export interface JwtAccess {
  issuer: string;
  audiences?: string[] | undefined;
  jwksUri?: string | undefined;
  jwks?: string | undefined;
}

/** `access.rateLimit`. */
export interface RateLimit {
  requestsPerMinute?: number | undefined;
  tokensPerMinute?: number | undefined;
}

/** `access`: who may call a model (exactly one of apiKeys, jwt, open) and its rate limits. */
export interface ModelAccess {
  apiKeys?: string[] | undefined;
  jwt?: JwtAccess | undefined;
  open?: true | undefined;
  rateLimit?: RateLimit | undefined;
}

/**
 * `models.<category>[].adapters[]`: a LoRA adapter served beside the model under its own name. Its
 * source is exactly one of `harborRef` (an OCI artifact pulled into the model's volume, the
 * air-gapped way), `huggingFace` (a Hub repository) or `path` (a folder already on the model's
 * volume). features/adapters holds the rules and the plan.
 */
export interface ModelAdapter {
  /** The name clients send as `model`; unique across the stack. */
  name: string;
  harborRef?: string | undefined;
  huggingFace?: HuggingFaceSource | undefined;
  path?: string | undefined;
}

/** A value vLLM takes for `--max-lora-rank`. */
export type LoraRank = (typeof LORA_RANKS)[number];

/** One model of the stack (an entry of `models.generative` or `models.embedder`). */
export interface ModelEntry {
  name: string;
  enabled: boolean;
  nodeSelector: NodeSelector;
  nameSpace?: string | undefined;
  releaseName?: string | undefined;
  platform?: Platform | undefined;
  modelSource?: ModelSource | undefined;
  access?: ModelAccess | undefined;
  readyTimeout?: string | undefined;
  /** The set of upstream versions this model is deployed with; default: the stack's `upstream`. */
  upstream?: Upstream | undefined;
  autoscaling?: ModelAutoscaling | undefined;
  /** LoRA adapters the model server loads at start-up, each served under its own name. */
  adapters?: ModelAdapter[] | undefined;
  /** The largest rank of the model's adapters vLLM accepts (`--max-lora-rank`); default 16. */
  maxLoraRank?: LoraRank | undefined;
  /** The model's own gateway (its own Gateway, or KServe's route): `false` leaves the model to the stack's endpoint (and in-cluster clients). Default: true. */
  gateway?: boolean | undefined;
  /** Whether the stack's `endpoint` serves the model. Default: true when the stack has an endpoint. */
  endpoint?: boolean | undefined;
}

/** {@link ModelEntry} as written: `enabled` defaults to true, `nodeSelector` to `{}`. */
export interface ModelEntryInput extends Omit<ModelEntry, 'enabled' | 'nodeSelector' | 'modelSource' | 'autoscaling'> {
  enabled?: boolean | undefined;
  nodeSelector?: NodeSelector | undefined;
  modelSource?: ModelSourceInput | undefined;
  autoscaling?: ModelAutoscalingInput | undefined;
}

/** The Gateway of each llm-d model. */
export interface ModelGateway {
  routeNamespaces: 'Same' | 'All' | string[];
  /** 2026-02 only (llm-d-infra's Telemetry); absent means true there. */
  accessLogging?: boolean | undefined;
}

/** The Envoy Gateway KServe routes through. */
export interface KserveGateway {
  name: string;
  namespace: string;
  className: string;
  create: boolean;
}

/** KServe platform settings. */
export interface KserveSettings {
  gateway: KserveGateway;
  imageMirror?: string | undefined;
}

/** {@link KserveSettings} as written: every gateway key has a default. */
export interface KserveSettingsInput {
  gateway?: Partial<KserveGateway> | undefined;
  imageMirror?: string | undefined;
}

/** The endpoint's key formats: `bearer` (`Authorization: Bearer <key>`, what OpenAI clients send) or `basic` (`<name>:<key>` as HTTP Basic). */
export type EndpointKeyFormat = 'bearer' | 'basic';

/** `endpoint.access.jwt`: tokens from one issuer, with the models they grant in a claim. */
export interface EndpointJwtAccess extends JwtAccess {
  /** The claim that lists the model names a token grants. */
  modelsClaim: string;
}

/** {@link EndpointJwtAccess} as written: `modelsClaim` defaults to `models`. */
export interface EndpointJwtAccessInput extends JwtAccess {
  modelsClaim?: string | undefined;
}

/** `endpoint.access`: who may call which model through the endpoint (exactly one of apiKeys, jwt, open), and how often. */
export interface EndpointAccess {
  /** Key name (of `app-serving:apiKeys`) → the names of the models it grants (`models.<category>[].name`), or `["*"]`. */
  apiKeys?: Record<string, string[]> | undefined;
  jwt?: EndpointJwtAccess | undefined;
  open?: true | undefined;
  /** How clients send a key. Default: `bearer` on Envoy Gateway, `basic` on Istio (its proxy has no API-key filter). */
  keyFormat?: EndpointKeyFormat | undefined;
  rateLimit?: { requestsPerMinute?: number | undefined } | undefined;
}

/** {@link EndpointAccess} as written. */
export interface EndpointAccessInput extends Omit<EndpointAccess, 'jwt'> {
  jwt?: EndpointJwtAccessInput | undefined;
}

/** `endpoint.bbr`: the body-based router's image and replicas. */
export interface EndpointBbr {
  image?: string | undefined;
  replicas?: number | undefined;
}

/** `endpoint`: one OpenAI endpoint for every model of the stack (docs/endpoint.md). */
export interface EndpointSettings {
  enabled: boolean;
  /** The endpoint's Gateway. */
  name: string;
  namespace: string;
  /** The Gateway's class: `istio` or `envoy` (Envoy Gateway, the stack's Envoy GatewayClass). Default: `router.gatewayClass` when that is one of them, else `envoy`. */
  class?: 'istio' | 'envoy' | undefined;
  /** The listener's hostname (clients' `Host`); default: any. */
  hostname?: string | undefined;
  access?: EndpointAccess | undefined;
  bbr?: EndpointBbr | undefined;
}

/** {@link EndpointSettings} as written: `enabled`, `name` and `namespace` have defaults. */
export interface EndpointSettingsInput extends Omit<EndpointSettings, 'enabled' | 'name' | 'namespace' | 'access'> {
  enabled?: boolean | undefined;
  name?: string | undefined;
  namespace?: string | undefined;
  access?: EndpointAccessInput | undefined;
}

/** The `app-serving:*` keys of a parsed stack, defaults filled in. */
export interface ParsedStackConfig {
  cloudProvider: 'cloud' | 'on-prem';
  platform: Platform;
  /** The set of upstream versions; absent: `2026-02` (the seed's pins). */
  upstream?: Upstream | undefined;
  /** 2026-08 llm-d: gateway or standalone mode, and the gateway class. */
  router?: RouterSettings | undefined;
  models: { generative: ModelEntry[]; embedder: ModelEntry[] };
  gpuToleration?: GpuToleration | undefined;
  controlNodeSelector?: NodeSelector | undefined;
  modelGateway: ModelGateway;
  kubeconfig?: string | Secret | undefined;
  harborHostname?: string | undefined;
  harborUser?: string | undefined;
  harborToken?: Secret | undefined;
  hfToken?: Secret | undefined;
  apiKeys?: Record<string, Secret> | undefined;
  charts?: ChartOverrides | undefined;
  kserve?: KserveSettings | undefined;
  prometheus?: PrometheusSettings | undefined;
  prometheusCredentials?: Secret | undefined;
  /** One OpenAI endpoint for the whole stack; absent: none. */
  endpoint?: EndpointSettings | undefined;
}

/** The `app-serving:*` keys as a stack file writes them (the keys with defaults may be left out). */
export interface StackConfigInput
  extends Omit<ParsedStackConfig, 'platform' | 'models' | 'gpuToleration' | 'modelGateway' | 'kserve' | 'router' | 'prometheus' | 'endpoint'> {
  platform?: Platform | undefined;
  models: { generative?: ModelEntryInput[] | undefined; embedder?: ModelEntryInput[] | undefined };
  gpuToleration?: GpuTolerationInput | undefined;
  modelGateway?: Partial<ModelGateway> | undefined;
  kserve?: KserveSettingsInput | undefined;
  router?: Partial<RouterSettings> | undefined;
  prometheus?: PrometheusSettingsInput | undefined;
  endpoint?: EndpointSettingsInput | undefined;
}
