/**
 * @app-serving/core — every rule of an app-serving deployment, as pure functions:
 * the stack config schema and loaders, model discovery, names, the Helm values merge,
 * the deployment plan, post-render patches, plain Kubernetes manifests and the image inventory.
 */

// Errors and secrets
export { StackError, IssueList, isStackError, formatIssue, formatPath, summarizeNames, SUMMARY_NAMES, groupDigits } from './errors.ts';
export type { Issue, IssueCode, IssueUse, WarningCode } from './errors.ts';
export { Secret, isSecret, REDACTED_SECRET, redactedSecret, isRedactedSecret } from './secret.ts';

// Constants
export {
  DEFAULT_CHARTS,
  CATEGORIES,
  PLATFORMS,
  CONFIG_NAMESPACE,
  EMBEDDINGS_SERVICE_PORT,
  GATEWAY_HTTP_PORT,
  HARBOR_PULL_SECRET,
  LABEL_INFERENCE_SERVING,
  LABEL_MODEL,
  LABEL_ROLE,
  LIMITS,
  MODEL_MOUNT_PATH,
  PULLED_MARKER_PATH,
  PULLED_MARKER_FILE,
  ORAS_IMAGE_PUBLIC,
  ORAS_VERSION,
  KSERVE_VERSION,
  KSERVE_VLLM_PORT,
  ENVOY_GATEWAY_CONTROLLER,
  ENVOY_GATEWAY_NAMESPACE,
  ENVOY_LABEL_OWNING_GATEWAY_NAME,
  ENVOY_LABEL_OWNING_GATEWAY_NAMESPACE,
  KSERVE_API,
  HF_DOWNLOADER_IMAGE_PUBLIC,
  INFRA_MIRROR_PROJECT,
  DEFAULT_MIRROR_PROJECT,
  PULL_JOB_UID,
  PULUMI_TIMEOUT_ANNOTATION,
  PULUMI_SKIP_AWAIT_ANNOTATION,
  DEFAULT_READY_TIMEOUT,
  LABEL_NAMESPACE_NAME,
  CLUSTER_REQUIREMENTS,
  LORA_RANKS,
  DEFAULT_LORA_RANK,
  ADAPTERS_FOLDER,
} from './constants.ts';
export type { ChartRef, ChartKey, Platform, Category, Upstream, RouterGatewayClass } from './constants.ts';
export { UPSTREAMS, ROUTER_GATEWAY_CLASSES } from './constants.ts';

// Stack configuration
export { loadStackFile, parseStackFile, loadStackConfigFromMap, checkStackRules } from './stack.ts';
export { stackNameFromFile } from './config/load.ts';
export type { StackConfig, ConfigLocator, LoadOptions, LoadFromMapOptions } from './config/load.ts';
export { SECRET_KEYS, MAYBE_SECRET_KEYS, SECRET_MAP_KEYS, STACK_KEYS, configKeyPaths } from './config/keys.ts';
export { isLabelKey, isLabelValue, durationSeconds } from './config/formats.ts';
export type {
  StackConfigInput,
  ParsedStackConfig,
  ModelEntry,
  ModelEntryInput,
  ModelSource,
  ModelSourceInput,
  HuggingFaceSource,
  GpuToleration,
  GpuTolerationInput,
  ChartOverride,
  ChartOverrides,
  ModelGateway,
  RouterSettings,
  ModelAccess,
  JwtAccess,
  RateLimit,
  KserveGateway,
  KserveSettings,
  KserveSettingsInput,
  NodeSelector,
  AutoscalingSignal,
  ModelAutoscaling,
  ModelAutoscalingInput,
  PrometheusSettings,
  PrometheusSettingsInput,
  ModelAdapter,
  LoraRank,
  EndpointSettings,
  EndpointSettingsInput,
  EndpointAccess,
  EndpointAccessInput,
  EndpointJwtAccess,
  EndpointKeyFormat,
} from './config/types.ts';
export { checkConfigRules, modelPlatform } from './config/rules.ts';
export { FEATURES, checkFeatureRules, ENDPOINT_TOOLS } from './features/index.ts';
// The stack's endpoint (docs/endpoint.md)
export {
  BBR_CHART,
  BBR_IMAGE,
  BBR_GAIE_VERSION,
  BBR_NAME,
  BBR_PORT,
  MODEL_HEADER,
  ENDPOINT_LABEL,
  ENDPOINT_OWNER,
  ENDPOINT_JWT_PROVIDER,
  adaptersOf,
  endpointClass,
  endpointKeyFormat,
  endpointKeyObjects,
  endpointLabels,
  endpointNames,
  endpointService,
  luaAnswers,
  modelListBody,
  notFoundBody,
} from './features/endpoint/index.ts';
export type {
  EndpointAccessPlan,
  EndpointAdapter,
  EndpointBackend,
  EndpointManifests,
  EndpointModel,
  EndpointModelList,
  EndpointNames,
  EndpointRouteManifests,
  EndpointTools,
} from './features/endpoint/index.ts';
export type { Feature } from './features/types.ts';
export { stackFileJsonSchema } from './config/json-schema.ts';
export { MAX_READY_TIMEOUT_SECONDS } from './constants.ts';
export { parseStrictJson, StrictJsonError } from './strict-json.ts';
export type { StrictJson } from './strict-json.ts';
export { editStackText } from './config/edit.ts';
export type { StackEdit, EditedStack } from './config/edit.ts';

// Discovery
export { discoverModels, collectModels, listModelFolders, readValuesFile, VALUES_FOLDERS } from './discovery.ts';
export type { DiscoveredModel, ValuesFile, ValuesFolder, InlineValues, InlineModels } from './discovery.ts';

// Names
export { SLUG_PATTERN, slugProblem, llmdNames, kserveNames, storageNames, serviceHost, checkLlmdNames } from './names.ts';
export type { LlmdNames, KserveNames, NameOverrides, NameProblem } from './names.ts';

// Values
export { mergeValues, mergeAll, effectiveValues, stripNulls, getPath, isValuesMap, deepEqual, leaves } from './values/merge.ts';
export type { Values } from './values/merge.ts';
export { llmdValues, modelArtifactsUri, gatewayListener, findUnreadKeys, EPP_CONNECTION_POOL, MODEL_REF_ANNOTATION } from './values/llmd.ts';
export type { LlmdValues, LlmdValuesInput, ModelArtifactsSource, RouteNamespaces, GatewayListener } from './values/llmd.ts';
export { nodeAffinityFor, gpuToleration } from './values/scheduling.ts';
export type { Toleration, NodeAffinity } from './values/scheduling.ts';
export {
  MODELSERVICE_DEFAULTS,
  MODELSERVICE_ACCELERATORS,
  GAIE_DEFAULTS,
  INFRA_DEFAULTS,
  MODELSERVICE_STRICT,
  INFRA_STRICT,
  GAIE_KEYS,
  GAIE_TEMPLATE_ONLY_KEYS,
  MODELSERVICE_POD_FIELDS,
} from './values/chart-facts.ts';
export type { StrictBlock, KeyTree } from './values/chart-facts.ts';
export { simulatorArgWarnings, isSimulatorImage, SIMULATOR_DURATION_FLAGS } from './values/simulator.ts';

// Post-render patches
export { applyPatches, patchApplies, patchTarget, patchResourceOptions } from './patches.ts';
export type { PostRenderPatch, GatewayPodPlacementPatch, ServiceAccountPullSecretPatch, AwaitTimeoutPatch, AutoscaledReplicasPatch, KubernetesObject } from './patches.ts';

// Autoscaling on LLM signals
export {
  AUTOSCALING_CRDS,
  AUTOSCALING_DEFAULTS,
  AUTOSCALING_LIMITS,
  AUTOSCALING_SIGNALS,
  DEFAULT_TARGETS,
  VLLM_METRICS,
  autoscalingNames,
  autoscalingProblems,
  credentialKeys,
  credentialsData,
  dashboardConfigMap,
  describeAutoscaling,
  grafanaDashboard,
  kserveScaling,
  planAutoscaling,
  podMonitorManifest,
  requestBufferingOf,
  resolveAutoscaling,
  scaledObjectManifest,
  signalQuery,
  triggerAuthenticationManifest,
  wakeTriggers,
} from './features/autoscaling/index.ts';
export { GAIE_EPP_METRICS, GAIE_NO_REQUEST_BUFFERING, MODELSERVICE_AUTOSCALER_KEYS } from './upstream/2026-02.ts';
export { SERVER_AUTOSCALER_KEYS, ROUTER_EPP_METRICS, ROUTER_EPP_METRICS_PORT, ROUTER_FLOW_CONTROL, ROUTER_REQUEST_BUFFERING, routerEppPodLabels } from './upstream/2026-08/facts.ts';
export { KSERVE_AUTOSCALER_KEYS } from './kserve/facts.ts';
export type { AutoscalingCapabilities, AutoscalerKeys, AutoscalingPlan, AutoscalingPlanInput, AutoscalingProblem, EppMetricFacts, RequestBuffering, ResolvedAutoscaling, ScaledObjectArgs, SignalQuery, SignalSource, WakeTrigger } from './features/autoscaling/index.ts';

// Storage
export { storagePlan, expectedPath, sourceRef, orasPullScript, huggingFaceDownloadScript } from './storage.ts';
export type { StoragePlan, VolumeAdapters, WeightsSource } from './storage.ts';

// Charts
export { chartRefProblem, chartRefs, isLocalChart, localChartPath, readLocalChart, checkLocalCharts, expectedChartName, describeChart, LOCAL_CHART_LIMITS } from './charts.ts';
export type { ChartRefProblem, LocalChart } from './charts.ts';

// The plan
export { planDeployment, expandHome, withModelFolderIssues, modelReleases } from './plan.ts';
export type { DeploymentPlan, ModelPlan, LlmdModelPlan, LlmdRouterModelPlan, LlmdModelPlanBase, AnyLlmdModelPlan, PlanOptions, ModelRelease, EndpointPlan } from './plan.ts';

// Sets of upstream versions (2026-02: the seed's pins; 2026-08: the llm-d Router, KServe v0.20)
export { UPSTREAM_SETS, upstreamSetOf, migrationCommand } from './upstream/sets.ts';
export type { UpstreamSet } from './upstream/sets.ts';
export { DEFAULT_UPSTREAM, CURRENT_UPSTREAM, modelUpstream, LLMD_VALUES_FOLDERS, slugProblemOn } from './upstream/select.ts';
export type { LlmdGeneration, LlmdModelInput } from './upstream/generation.ts';
export { ROUTER_CHARTS, ROUTER_CHART_OF, ROUTER_EPP_IMAGE, ROUTER_PROXY_IMAGE, ROUTER_PROXY_PORT, ROUTER_EPP_SELECTOR_KEY, ROUTER_KEYS, ROUTER_DEFAULTS, MODEL_SERVER_PORT, VLLM_IMAGE } from './upstream/2026-08/facts.ts';
export type { RouterChartKey } from './upstream/2026-08/facts.ts';
export { routerNames, gatewayServiceName, gatewayService, checkRouterNames } from './upstream/2026-08/names.ts';
export type { RouterNames } from './upstream/2026-08/names.ts';
export { readServerValues, modelServerDeployment, serverPodLabels, poolSelector, serverWeights, SERVER_KEYS } from './upstream/2026-08/server.ts';
export type { ServerValues, ServerWeights, ModelServerInput } from './upstream/2026-08/server.ts';
export { gatewayManifest, gatewayParametersManifest } from './upstream/2026-08/gateway.ts';
export type { GatewayInput } from './upstream/2026-08/gateway.ts';
export { envoyRouteManifests } from './upstream/2026-08/envoy.ts';
export type { EnvoyRouteInput, EnvoyRouteManifests } from './upstream/2026-08/envoy.ts';
export {
  ENVOY_GATEWAY_VERSION,
  ENVOY_GATEWAY_MIN_FOR_POOLS,
  ENVOY_GATEWAY_API,
  ENVOY_CRD_FACTS,
  envoyGatewayClassOf,
  envoyProxyServiceName,
  envoyHashedName,
} from './envoy-gateway.ts';
export type { EnvoyGatewayClassPlan, EnvoyCrdFact } from './envoy-gateway.ts';
export { routerValues, routerEppImage, flowControlConfig } from './upstream/2026-08/router.ts';
export { migrateLlmdModel, planStackMigration, migratedDifferences, UPSTREAM_COMMENT } from './upstream/migrate.ts';
export type { MigratedFile, ModelMigration, MigrateModelInput, StackMigration, StackMigrationInput, ModelKept } from './upstream/migrate.ts';
export { KSERVE_RELEASES, KSERVE_V0_18, KSERVE_V0_20 } from './kserve/releases.ts';
export type { KserveRelease } from './kserve/releases.ts';
export { preflightChecks, gpuRequest, formatCrdField, LLMD_CRDS, KSERVE_CRDS, routerCrds, kserveCrds, MODEL_LABEL, GPU_RESOURCE, ENVOY_GATEWAY_CONFIG, ISTIO } from './preflight.ts';
export type { PreflightCheck, PreflightCheckType, PreflightSeverity, CrdRequirement } from './preflight.ts';
export { planKserveModel, kserveStackPlan, kserveConfigSpec, KSERVE_STRICT, KSERVE_STRICT_V1ALPHA2 } from './kserve/plan.ts';
export {
  KSERVE_SUPPORTED_VERSIONS,
  KSERVE_WELL_KNOWN_IMAGES,
  KSERVE_POOL_PATHS,
  KSERVE_REPLICAS_SCALING_RULE,
  kserveWellKnownConfigs,
  type KserveWellKnownImage,
  type KservePodSection,
  type KserveImageRole,
} from './kserve/facts.ts';
export type { KserveModelPlan, KserveStackPlan } from './kserve/plan.ts';
export { kserveSizing, parseModelSize, KSERVE_SIZING_TABLE } from './kserve/sizing.ts';
export type { KserveSizing } from './kserve/sizing.ts';

// Images
export { parseImage, inventory, imageWarnings, mirrorReference, mirrorSteps, INFRA_IMAGES } from './images.ts';
export type { ImageUse, ImageSource, MirrorStep } from './images.ts';

// Manifests
export {
  commonLabels,
  namespaceManifest,
  dockerConfigJson,
  pullSecretManifest,
  persistentVolumeManifest,
  persistentVolumeClaimManifest,
  modelJobManifest,
} from './manifests/common.ts';
export type { ModelJobArgs } from './manifests/common.ts';
export { httpRouteManifest, embeddingsServiceManifest, gatewayAliasManifest } from './manifests/llmd.ts';
export { RESOURCE_TYPES } from './manifests/types.ts';
export {
  ISTIO_GATEWAY_NAME_LABEL,
  HTPASSWD_SECRET_KEY,
  envoyAccessNames,
  envoyGatewayAccessManifests,
  envoyRateLimit,
  htpasswdSecretManifest,
  istioAccessManifests,
  istioAccessNames,
  istioGatewayPodLabels,
  localRateLimitFilter,
} from './features/access/manifests.ts';
export type { EnvoyRouteRef, IstioGatewayRef } from './features/access/manifests.ts';
export {
  CLIENT_HEADER,
  MIN_API_KEY_LENGTH,
  MIN_API_KEY_BITS,
  MAX_API_KEY_LENGTH,
  PRIVATE_JWK_MEMBERS,
  accessEnforced,
  accessPlan,
  apiKeyProblem,
  checkAccessRules,
  describeAccess,
  htpasswd,
  jwksProblem,
  openModelsWarning,
} from './features/access/index.ts';
export type { AccessPlan } from './features/access/index.ts';

// LoRA adapters served as models
export {
  ADAPTERS_ANNOTATION,
  KSERVE_LORA_MOUNT_ROOT,
  LORA_FLAGS,
  adapterPlans,
  adapterRef,
  describeAdapterSource,
  describeAdapters,
  kserveLoraSpec,
  loraSizes,
  parseAdapterOption,
  planModelAdapters,
  vllmLoraArgs,
} from './features/adapters/index.ts';
export type { AdapterPlan, AdapterSource, LoraSizes, ModelAdapters, ModelAdaptersInput } from './features/adapters/index.ts';
export type { ResourceType } from './manifests/types.ts';
export {
  hfTokenSecretManifest,
  kserveServiceAccountManifest,
  llmInferenceServiceConfigManifest,
  llmInferenceServiceManifest,
  envoyGatewayClassManifest,
  kserveGatewayManifest,
} from './manifests/kserve.ts';

// Utilities
export { displayPath } from './paths.ts';

// Output safety: image references, shell commands, credentials in URLs, terminal control characters
export { imageReferenceProblem, mirrorTargetProblem, MAX_IMAGE_NAME_LENGTH } from './oci-reference.ts';
export { shellQuote, shellCommand } from './shell.ts';
export { redactUrlCredentials, hasUrlCredentials, withoutUrlCredentials, isSecretParameter } from './redact.ts';
export { escapeControlChars, INVISIBLE_FORMAT_CHARS } from './terminal.ts';
export { readTextFile, decodeText, readBoundedFile, readBoundedFileSync, FileLimitError, formatLimit, describeErrno, MAX_STACK_FILE_BYTES, MAX_VALUES_FILE_BYTES } from './text-file.ts';
export type { FileLimitReason } from './text-file.ts';
export { closest, didYouMean } from './suggest.ts';

// Diff of two revisions
export { diffDeployments, describeObject } from './diff/deployment.ts';
export { resourceIdentity, TYPE_ALIASES } from './diff/identity.ts';
export type {
  DeploymentDiff,
  DiffOptions,
  DiffResource,
  DiffSide,
  DiffSummary,
  DiffWarning,
  DiffWarningCode,
  ImagesDiff,
  ModelDiff,
  ReleaseValuesDiff,
  ResourceAction,
  ResourceChange,
} from './diff/deployment.ts';
export { diffValues, pathCovers } from './diff/values.ts';
export type { ValueChange } from './diff/values.ts';
export { FORCE_NEW_FIELDS, replaceVerdict } from './diff/replace.ts';
export type { ReplaceVerdict, ReplaceContext } from './diff/replace.ts';
export { stackSecretFingerprints } from './diff/secrets.ts';
