import { freezeValues, type Values } from './merge.ts';

/**
 * What core knows of the pinned charts' own defaults and value schemas (read from the charts at
 * the pinned versions; see shared/reference/upstream-charts.md §1–§3). Used to compute what a chart
 * will really do (which port vLLM listens on, which images are pulled) and to reject keys the
 * charts' strict schemas would reject at install time.
 */

/** llm-d-modelservice v0.4.12 defaults that core reasons about. */
export const MODELSERVICE_DEFAULTS: Values = freezeValues({
  modelArtifacts: {
    name: 'random/model',
    labels: { 'llm-d.ai/inference-serving': 'true' },
    mountPath: '/model-cache',
    readOnly: true,
  },
  routing: {
    servicePort: 8000,
    proxy: { enabled: true, image: 'ghcr.io/llm-d/llm-d-routing-sidecar:latest', targetPort: 8200 },
  },
  decode: {
    create: true,
    replicas: 1,
    containers: [{ name: 'vllm', image: 'ghcr.io/llm-d/llm-d-inference-sim:latest', modelCommand: 'imageDefault' }],
  },
  prefill: {
    create: true,
    replicas: 0,
    containers: [{ name: 'vllm', image: 'ghcr.io/llm-d/llm-d-inference-sim:latest', modelCommand: 'imageDefault' }],
  },
  requester: { enable: false, image: 'ghcr.io/llm-d-incubation/llm-d-fast-model-actuation/requester:latest' },
  multinode: false,
});

/**
 * llm-d-modelservice v0.4.12's accelerators (values.yaml `accelerator`, read by `_helpers.tpl`
 * `acceleratorResource` / `acceleratorEnv`): the default type, the device-plugin resource of each
 * type (a type not listed asks for `nvidia.com/gpu`; `cpu` and the simulator image ask for none) and
 * the environment each type adds. The chart asks for `tensor × dataLocal` of the resource in both
 * limits and requests unless the container's limits name it.
 */
export const MODELSERVICE_ACCELERATORS = {
  defaultType: 'nvidia',
  resources: {
    nvidia: 'nvidia.com/gpu',
    'intel-i915': 'gpu.intel.com/i915',
    'intel-xe': 'gpu.intel.com/xe',
    'intel-gaudi': 'habana.ai/gaudi',
    amd: 'amd.com/gpu',
    google: 'google.com/tpu',
    'rebellions-atom': 'rebellions.ai/ATOM',
  } as Readonly<Record<string, string>>,
  env: {
    'intel-i915': [
      { name: 'VLLM_USE_V1', value: '1' },
      { name: 'TORCH_LLM_ALLREDUCE', value: '1' },
      { name: 'VLLM_WORKER_MULTIPROC_METHOD', value: 'spawn' },
    ],
    'intel-xe': [{ name: 'VLLM_WORKER_MULTIPROC_METHOD', value: 'spawn' }],
  } as Readonly<Record<string, readonly { readonly name: string; readonly value: string }[]>>,
} as const;

/** GAIE inferencepool v1.2.0 defaults that core reasons about. */
export const GAIE_DEFAULTS: Values = freezeValues({
  inferenceExtension: {
    image: { hub: 'registry.k8s.io/gateway-api-inference-extension', name: 'epp', tag: 'v1.2.0' },
    sidecar: { enabled: false },
    monitoring: { prometheus: { enabled: false } },
  },
  inferencePool: { targetPorts: [{ number: 8000 }], apiVersion: 'inference.networking.k8s.io/v1' },
  provider: { name: 'none' },
});

/** llm-d-infra v1.3.10 defaults that core reasons about. */
export const INFRA_DEFAULTS: Values = freezeValues({
  gateway: {
    enabled: true,
    gatewayClassName: 'istio',
    gatewayParameters: { enabled: true },
    destinationRule: { enabled: false, host: 'localhost' },
    service: { type: 'ClusterIP' },
  },
});

/**
 * A block of a chart's values whose schema rejects keys it does not list (`additionalProperties: false`).
 * A `[]` segment of `path` stands for every item of a list.
 */
export interface StrictBlock {
  readonly path: readonly string[];
  readonly keys: readonly string[];
}

const PARALLELISM = ['data', 'dataLocal', 'tensor', 'workers'];
const ACCELERATOR_TYPES = ['labelKey', 'labelValues'];
const PODMONITOR = ['annotations', 'enabled', 'interval', 'labels', 'metricRelabelings', 'path', 'portName', 'relabelings'];
const ENV_VAR = ['name', 'value'];
const CLAIM_TEMPLATE = ['class', 'match', 'name', 'selectors'];
const CLAIM_TEMPLATE_TYPES = ['amd', 'google', 'intel', 'intel-gaudi', 'intel-i915', 'intel-xe', 'nvidia'];

/**
 * Every strict block of llm-d-modelservice v0.4.12's values.schema.json (the root and
 * decode/prefill themselves accept any key). A drift test derives this list from the schema.
 */
export const MODELSERVICE_STRICT: readonly StrictBlock[] = [
  { path: ['modelArtifacts'], keys: ['authSecretName', 'labels', 'mountPath', 'name', 'readOnly', 'size', 'uri'] },
  { path: ['routing'], keys: ['proxy', 'servicePort'] },
  { path: ['accelerator'], keys: ['dra', 'env', 'resourceClaimTemplates', 'resources', 'type'] },
  { path: ['accelerator', 'env'], keys: ['intel-i915', 'intel-xe'] },
  { path: ['accelerator', 'env', 'intel-i915', '[]'], keys: ENV_VAR },
  { path: ['accelerator', 'env', 'intel-xe', '[]'], keys: ENV_VAR },
  { path: ['accelerator', 'resourceClaimTemplates'], keys: CLAIM_TEMPLATE_TYPES },
  ...CLAIM_TEMPLATE_TYPES.map((type) => ({ path: ['accelerator', 'resourceClaimTemplates', type], keys: CLAIM_TEMPLATE })),
  { path: ['accelerator', 'resources'], keys: ['amd', 'google', 'intel-gaudi', 'intel-i915', 'intel-xe', 'nvidia', 'rebellions-atom'] },
  { path: ['tracing'], keys: ['enabled', 'otlpEndpoint', 'sampling', 'serviceNames', 'vllm'] },
  { path: ['tracing', 'sampling'], keys: ['sampler', 'samplerArg'] },
  { path: ['tracing', 'serviceNames'], keys: ['routingProxy', 'vllmDecode', 'vllmPrefill'] },
  { path: ['tracing', 'vllm'], keys: ['collectDetailedTraces'] },
  { path: ['requester', 'port'], keys: ['probes', 'spi'] },
  { path: ['requester', 'readinessProbe'], keys: ['initialDelaySeconds', 'periodSeconds'] },
  { path: ['requester', 'resources'], keys: ['limits'] },
  { path: ['requester', 'resources', 'limits'], keys: ['cpus', 'gpus', 'memory'] },
  ...(['decode', 'prefill'] as const).flatMap((role) => [
    { path: [role, 'parallelism'], keys: PARALLELISM },
    { path: [role, 'acceleratorTypes'], keys: ACCELERATOR_TYPES },
    { path: [role, 'autoscaling'], keys: ['enabled'] },
    { path: [role, 'monitoring', 'podmonitor'], keys: PODMONITOR },
  ]),
];

/** Every strict block of llm-d-infra v1.3.10's values.schema.json (the root itself is strict). */
export const INFRA_STRICT: readonly StrictBlock[] = [
  { path: [], keys: ['clusterDomain', 'common', 'commonAnnotations', 'commonLabels', 'extraDeploy', 'fullnameOverride', 'gateway', 'global', 'ingress', 'kubeVersion', 'nameOverride'] },
  {
    path: ['gateway'],
    keys: ['annotations', 'destinationRule', 'enabled', 'fullnameOverride', 'gatewayClassName', 'gatewayParameters', 'labels', 'listeners', 'nameOverride', 'service', 'tls'],
  },
  { path: ['gateway', 'gatewayParameters'], keys: ['accessLogging', 'enabled', 'floatingUserId', 'logLevel', 'resources'] },
  { path: ['gateway', 'service'], keys: ['loadBalancerClass', 'ports', 'type'] },
  { path: ['gateway', 'tls'], keys: ['referenceGrant', 'servingCertSecretName'] },
  { path: ['gateway', 'tls', 'referenceGrant'], keys: ['enabled', 'name', 'secretName', 'secretNamespace'] },
  { path: ['ingress'], keys: ['annotations', 'enabled', 'extraHosts', 'extraTls', 'host', 'ingressClassName', 'path', 'rules', 'tls'] },
  { path: ['ingress', 'tls'], keys: ['enabled', 'secretName'] },
];

/**
 * The keys a chart reads, as a tree: a nested tree, or `true` for a value of any shape that is
 * passed through whole (a free-form map, a list, a scalar).
 */
export interface KeyTree {
  readonly [key: string]: KeyTree | true;
}

const DESTINATION_RULE: KeyTree = {
  host: true,
  // templates/istio.yaml copies only trafficPolicy.connectionPool; TLS is hard-coded (SIMPLE, insecureSkipVerify).
  trafficPolicy: { connectionPool: true },
};

/**
 * Every key GAIE inferencepool v1.2.0 reads. The chart has no values schema, so Helm accepts any
 * key and a misspelt one does nothing: core warns on keys outside this tree. It is the chart's
 * values.yaml (a drift test derives it from there) plus {@link GAIE_TEMPLATE_ONLY_KEYS}.
 */
export const GAIE_KEYS: KeyTree = {
  inferenceExtension: {
    replicas: true,
    image: { name: true, hub: true, tag: true, pullPolicy: true },
    extProcPort: true,
    env: true,
    pluginsConfigFile: true,
    pluginsCustomConfig: true,
    extraContainerPorts: true,
    extraServicePorts: true,
    flags: true,
    affinity: true,
    tolerations: true,
    failureMode: true,
    metricsPort: true,
    sidecar: {
      enabled: true,
      name: true,
      image: true,
      command: true,
      args: true,
      env: true,
      ports: true,
      livenessProbe: true,
      readinessProbe: true,
      resources: true,
      volumeMounts: true,
      volumes: true,
      configMap: { name: true, data: true },
    },
    monitoring: {
      interval: true,
      prometheus: { enabled: true, auth: { enabled: true, secretName: true }, extraLabels: true },
      gke: { enabled: true },
    },
    tracing: { enabled: true, otelExporterEndpoint: true, sampling: { sampler: true, samplerArg: true } },
  },
  inferencePool: { targetPorts: true, modelServerType: true, apiVersion: true, modelServers: { matchLabels: true }, targetPortNumber: true },
  provider: { name: true, gke: { autopilot: true }, istio: { destinationRule: DESTINATION_RULE } },
  // Deprecated in v1.2.0 in favour of provider.istio, still read.
  istio: { destinationRule: DESTINATION_RULE },
};

/**
 * Keys of {@link GAIE_KEYS} that GAIE v1.2.0's templates read although its values.yaml does not
 * define them (they are only commented there, or absent), read from `templates/*.yaml` at v1.2.0.
 */
export const GAIE_TEMPLATE_ONLY_KEYS: readonly (readonly string[])[] = [
  ['inferenceExtension', 'pluginsCustomConfig'],
  ['inferenceExtension', 'failureMode'],
  ['inferenceExtension', 'metricsPort'],
  ['inferenceExtension', 'sidecar', 'name'],
  ['inferenceExtension', 'sidecar', 'image'],
  ['inferenceExtension', 'sidecar', 'command'],
  ['inferenceExtension', 'sidecar', 'args'],
  ['inferenceExtension', 'sidecar', 'env'],
  ['inferenceExtension', 'sidecar', 'ports'],
  ['inferenceExtension', 'sidecar', 'livenessProbe'],
  ['inferenceExtension', 'sidecar', 'readinessProbe'],
  ['inferenceExtension', 'sidecar', 'resources'],
  ['inferenceExtension', 'sidecar', 'volumeMounts'],
  ['inferenceExtension', 'sidecar', 'volumes'],
  ['inferenceExtension', 'sidecar', 'configMap'],
  ['inferencePool', 'modelServers'],
  ['provider', 'istio', 'destinationRule', 'trafficPolicy', 'connectionPool'],
  ['istio', 'destinationRule', 'trafficPolicy', 'connectionPool'],
];

/**
 * Pod-spec fields llm-d-modelservice v0.4.12 renders itself into a decode/prefill pod, next to
 * `<role>.extraConfig` which it pastes into the same pod spec (`_helpers.tpl` `modelPod`,
 * `decode-deployment.yaml`). Setting one of them in extraConfig as well yields a duplicate YAML
 * key, and one of the two values is lost. `from` lists the values that make the chart render it
 * (relative to the role, or `/`-rooted for a top-level key); `always` means the chart always does.
 */
export const MODELSERVICE_POD_FIELDS: readonly { readonly field: string; readonly from: readonly string[]; readonly always?: true }[] = [
  { field: 'tolerations', from: ['tolerations'] },
  { field: 'nodeSelector', from: ['nodeSelector'] },
  // DEPRECATED in the chart in favour of extraConfig.imagePullSecrets, still rendered.
  { field: 'imagePullSecrets', from: ['imagePullSecrets'] },
  { field: 'schedulerName', from: ['schedulerName', '/schedulerName'] },
  { field: 'priorityClassName', from: ['priorityClassName'] },
  { field: 'securityContext', from: ['podSecurityContext'] },
  { field: 'affinity', from: ['acceleratorTypes.labelKey'] },
  { field: 'enableServiceLinks', from: ['enableServiceLinks'] },
  { field: 'terminationGracePeriodSeconds', from: ['terminationGracePeriodSeconds'] },
  { field: 'initContainers', from: ['initContainers'] },
  { field: 'containers', from: ['containers'] },
  { field: 'serviceAccountName', from: [], always: true },
  { field: 'volumes', from: [], always: true },
];
