import type { Values } from './merge.ts';

/**
 * What core knows of the pinned charts' own defaults and value schemas (read from the charts at
 * the pinned versions; see shared/reference/upstream-charts.md §1–§3). Used to compute what a chart
 * will really do (which port vLLM listens on, which images are pulled) and to reject keys the
 * charts' strict schemas would reject at install time.
 */

/** llm-d-modelservice v0.4.12 defaults that core reasons about. */
export const MODELSERVICE_DEFAULTS: Values = {
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
};

/** GAIE inferencepool v1.2.0 defaults that core reasons about. */
export const GAIE_DEFAULTS: Values = {
  inferenceExtension: {
    image: { hub: 'registry.k8s.io/gateway-api-inference-extension', name: 'epp', tag: 'v1.2.0' },
    sidecar: { enabled: false },
    monitoring: { prometheus: { enabled: false } },
  },
  inferencePool: { targetPorts: [{ number: 8000 }], apiVersion: 'inference.networking.k8s.io/v1' },
  provider: { name: 'none' },
};

/** llm-d-infra v1.3.10 defaults that core reasons about. */
export const INFRA_DEFAULTS: Values = {
  gateway: {
    enabled: true,
    gatewayClassName: 'istio',
    gatewayParameters: { enabled: true },
    destinationRule: { enabled: false, host: 'localhost' },
    service: { type: 'ClusterIP' },
  },
};

/** A block of a chart's values whose schema rejects keys it does not list (`additionalProperties: false`). */
export interface StrictBlock {
  readonly path: readonly string[];
  readonly keys: readonly string[];
}

const PARALLELISM = ['data', 'dataLocal', 'tensor', 'workers'];
const ACCELERATOR_TYPES = ['labelKey', 'labelValues'];

/** Strict blocks of llm-d-modelservice v0.4.12's values.schema.json. */
export const MODELSERVICE_STRICT: readonly StrictBlock[] = [
  { path: ['modelArtifacts'], keys: ['authSecretName', 'labels', 'mountPath', 'name', 'readOnly', 'size', 'uri'] },
  { path: ['routing'], keys: ['proxy', 'servicePort'] },
  { path: ['accelerator'], keys: ['dra', 'env', 'resourceClaimTemplates', 'resources', 'type'] },
  { path: ['tracing'], keys: ['enabled', 'otlpEndpoint', 'sampling', 'serviceNames', 'vllm'] },
  { path: ['decode', 'parallelism'], keys: PARALLELISM },
  { path: ['prefill', 'parallelism'], keys: PARALLELISM },
  { path: ['decode', 'acceleratorTypes'], keys: ACCELERATOR_TYPES },
  { path: ['prefill', 'acceleratorTypes'], keys: ACCELERATOR_TYPES },
  { path: ['decode', 'autoscaling'], keys: ['enabled'] },
  { path: ['prefill', 'autoscaling'], keys: ['enabled'] },
];

/** Strict blocks of llm-d-infra v1.3.10's values.schema.json (the root itself is strict). */
export const INFRA_STRICT: readonly StrictBlock[] = [
  { path: [], keys: ['clusterDomain', 'common', 'commonAnnotations', 'commonLabels', 'extraDeploy', 'fullnameOverride', 'gateway', 'global', 'ingress', 'kubeVersion', 'nameOverride'] },
  {
    path: ['gateway'],
    keys: ['annotations', 'destinationRule', 'enabled', 'fullnameOverride', 'gatewayClassName', 'gatewayParameters', 'labels', 'listeners', 'nameOverride', 'service', 'tls'],
  },
  { path: ['gateway', 'gatewayParameters'], keys: ['accessLogging', 'enabled', 'floatingUserId', 'logLevel', 'resources'] },
  { path: ['gateway', 'service'], keys: ['loadBalancerClass', 'ports', 'type'] },
  { path: ['ingress'], keys: ['annotations', 'enabled', 'extraHosts', 'extraTls', 'host', 'ingressClassName', 'path', 'rules', 'tls'] },
];
