import { Gateway } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway';
import { GatewayClass } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GatewayClass';
import { HTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { PersistentVolume } from 'kubernetes-models/v1/PersistentVolume';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { z } from 'zod';
import { isLabelKey, isLabelValue } from '@app-serving/core';

/**
 * Validation of the objects the components create: the upstream OpenAPI schemas
 * (kubernetes-models, Gateway API models) plus what those do not check — object names and
 * label syntax — and our own schema of the KServe custom resources' fields we set.
 */

type Validatable = { validate(): void };
const MODELS: Record<string, new (data: never) => Validatable> = {
  'v1/Namespace': Namespace,
  'v1/Secret': Secret,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'v1/PersistentVolume': PersistentVolume,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'batch/v1/Job': Job,
  'apps/v1/Deployment': Deployment,
  'gateway.networking.k8s.io/v1/HTTPRoute': HTTPRoute,
  'gateway.networking.k8s.io/v1/Gateway': Gateway,
  'gateway.networking.k8s.io/v1/GatewayClass': GatewayClass,
};

/**
 * Custom resources whose schemas are their CRDs (KEDA v2.20.2, Prometheus Operator v0.93.0, Envoy
 * Gateway v1.8.1): names and labels are checked here; the real API server admits them against the
 * CRDs in apps/app-serving/src/control-plane.test.ts, access.control-plane.test.ts and test/sets.
 */
const CRD_KINDS = new Set([
  'keda.sh/v1alpha1/ScaledObject',
  'keda.sh/v1alpha1/TriggerAuthentication',
  'monitoring.coreos.com/v1/PodMonitor',
  'gateway.envoyproxy.io/v1alpha1/SecurityPolicy',
  'gateway.envoyproxy.io/v1alpha1/BackendTrafficPolicy',
  'gateway.envoyproxy.io/v1alpha1/EnvoyExtensionPolicy',
  'gateway.envoyproxy.io/v1alpha1/EnvoyProxy',
  // The stack's endpoint (Envoy Gateway v1.8.1, Gateway API v1.5.1, Istio 1.28.5's CRDs): admitted in apps/app-serving/src/endpoint.control-plane.test.ts.
  'gateway.envoyproxy.io/v1alpha1/HTTPRouteFilter',
  'gateway.envoyproxy.io/v1alpha1/ClientTrafficPolicy',
  'gateway.networking.k8s.io/v1beta1/ReferenceGrant',
  'networking.istio.io/v1alpha3/EnvoyFilter',
  'security.istio.io/v1/AuthorizationPolicy',
  'security.istio.io/v1/RequestAuthentication',
]);

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Name rules per kind (what the API server enforces, and what the Job controller's pod label needs). */
function nameProblem(kind: string, name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0) return 'metadata.name is missing';
  const rule =
    kind === 'Namespace'
      ? { re: DNS_LABEL, max: 63, what: 'DNS-1123 label' }
      : kind === 'Service'
        ? { re: DNS_1035_LABEL, max: 63, what: 'DNS-1035 label' }
        : kind === 'Job'
          ? { re: DNS_LABEL, max: 63, what: 'DNS-1123 label (the job-name pod label)' }
          : { re: DNS_SUBDOMAIN, max: 253, what: 'DNS-1123 subdomain' };
  if (name.length > rule.max) return `name "${name}" is ${name.length} characters; a ${rule.what} has at most ${rule.max}`;
  if (!rule.re.test(name)) return `name "${name}" is not a ${rule.what}`;
  return undefined;
}

function labelProblems(labels: unknown, where: string): string[] {
  if (labels === undefined) return [];
  if (typeof labels !== 'object' || labels === null) return [`${where} must be a map`];
  const out: string[] = [];
  for (const [key, value] of Object.entries(labels)) {
    if (!isLabelKey(key)) out.push(`${where}: bad key "${key}"`);
    if (typeof value !== 'string' || !isLabelValue(value)) out.push(`${where}: bad value ${JSON.stringify(value)} for "${key}"`);
  }
  return out;
}

/**
 * Every problem of a plain Kubernetes object: the upstream schema's (thrown as the library's
 * validation error) plus names and labels. Returns [] for a valid object; throws for a kind
 * without a model (every kind the components create has one).
 */
export function kubernetesProblems(object: Record<string, unknown>): string[] {
  const key = `${object.apiVersion}/${object.kind}`;
  const Model = MODELS[key];
  if (!Model && !CRD_KINDS.has(key)) throw new Error(`no schema for ${key}`);
  const problems: string[] = [];
  try {
    if (Model) new Model(object as never).validate();
  } catch (error) {
    problems.push(`${key}: ${(error as Error).message}`);
  }
  const metadata = (object.metadata ?? {}) as Record<string, unknown>;
  const name = nameProblem(String(object.kind), metadata.name);
  if (name) problems.push(name);
  if (metadata.namespace !== undefined && (typeof metadata.namespace !== 'string' || !DNS_LABEL.test(metadata.namespace) || metadata.namespace.length > 63)) {
    problems.push(`namespace ${JSON.stringify(metadata.namespace)} is not a DNS-1123 label`);
  }
  problems.push(...labelProblems(metadata.labels, 'metadata.labels'));
  const template = (object.spec as { template?: { metadata?: { labels?: unknown } } } | undefined)?.template;
  problems.push(...labelProblems(template?.metadata?.labels, 'spec.template.metadata.labels'));
  return problems;
}

const name = z.string().regex(DNS_SUBDOMAIN).max(253);
const labels = z.record(z.string(), z.string().max(63));
const metadata = z.strictObject({ name, namespace: z.string().regex(DNS_LABEL).max(63), labels });
const pullSecrets = z.array(z.strictObject({ name }));
const toleration = z.strictObject({
  key: z.string().optional(),
  operator: z.enum(['Equal', 'Exists']).optional(),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
});
const container = z.looseObject({
  name: z.string().min(1),
  image: z.string().min(1).optional(),
  env: z.array(z.looseObject({ name: z.string().min(1), value: z.string().optional() })).optional(),
  resources: z.looseObject({ limits: z.record(z.string(), z.string()).optional(), requests: z.record(z.string(), z.string()).optional() }).optional(),
});
const template = z.looseObject({
  serviceAccountName: name.optional(),
  containers: z.array(container).optional(),
  tolerations: z.array(toleration).optional(),
  imagePullSecrets: pullSecrets.optional(),
  affinity: z.looseObject({}).optional(),
});

/**
 * The LLMInferenceService fields app-serving sets (serving.kserve.io/v1alpha1, KServe v0.18):
 * `model.{uri,name}`, `replicas`, `annotations`, `template` (serviceAccountName, containers,
 * tolerations, imagePullSecrets, affinity), `router.{gateway.refs, route, scheduler.{template,
 * annotations}}`, `baseRefs`.
 * @see https://github.com/kserve/kserve/blob/v0.18.1/pkg/apis/serving/v1alpha1/llm_inference_service_types.go
 */
export const llmInferenceServiceSchema = z.strictObject({
  apiVersion: z.literal('serving.kserve.io/v1alpha1'),
  kind: z.literal('LLMInferenceService'),
  metadata,
  spec: z.looseObject({
    model: z.looseObject({ uri: z.string().regex(/^(hf|pvc|oci|s3):\/\/./), name: z.string().min(1).optional() }),
    replicas: z.number().int().min(0).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    template: template.optional(),
    router: z.looseObject({
      gateway: z.strictObject({ refs: z.array(z.strictObject({ name, namespace: z.string().regex(DNS_LABEL) })).min(1) }).optional(),
      route: z.looseObject({}).optional(),
      scheduler: z.looseObject({ template: template.optional(), annotations: z.record(z.string(), z.string()).optional() }).optional(),
    }),
    baseRefs: z.array(z.strictObject({ name })).optional(),
  }),
});

/** The LLMInferenceServiceConfig fields app-serving sets: container env, and images (with `kserve.imageMirror`). */
export const llmInferenceServiceConfigSchema = z.strictObject({
  apiVersion: z.literal('serving.kserve.io/v1alpha1'),
  kind: z.literal('LLMInferenceServiceConfig'),
  metadata,
  spec: z.strictObject({
    router: z.strictObject({ scheduler: z.strictObject({ template }) }).optional(),
    template: template.optional(),
  }),
});
