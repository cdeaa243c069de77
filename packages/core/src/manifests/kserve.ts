import type { KserveModelPlan, KserveStackPlan } from '../kserve/plan.ts';
import { RESOURCE_TYPES } from './types.ts';
import { commonLabels } from './common.ts';

/** The Secret holding the Hugging Face token under key `HF_TOKEN` (what KServe and the download Job read). */
export function hfTokenSecretManifest(args: { name: string; namespace: string; slug: string; token: string }) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: args.name, namespace: args.namespace, labels: commonLabels(args.slug) },
    type: 'Opaque',
    stringData: { HF_TOKEN: args.token },
  } as const;
}

/** The ServiceAccount of a KServe model: it carries the HF token Secret and the image pull secret. */
export function kserveServiceAccountManifest(model: Pick<KserveModelPlan, 'serviceAccount' | 'namespace' | 'slug' | 'hfTokenSecret' | 'pullSecret'>) {
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: model.serviceAccount, namespace: model.namespace, labels: commonLabels(model.slug) },
    ...(model.hfTokenSecret && { secrets: [{ name: model.hfTokenSecret }] }),
    ...(model.pullSecret && { imagePullSecrets: [{ name: model.pullSecret }] }),
  };
}

/** The LLMInferenceServiceConfig a KServe model references through `baseRefs`. */
export function llmInferenceServiceConfigManifest(model: Pick<KserveModelPlan, 'config' | 'namespace' | 'slug' | 'configSpec' | 'apiVersion'>) {
  return {
    apiVersion: model.apiVersion,
    kind: RESOURCE_TYPES.llmInferenceServiceConfig.kind,
    metadata: { name: model.config, namespace: model.namespace, labels: commonLabels(model.slug) },
    spec: structuredClone(model.configSpec),
  };
}

/** The LLMInferenceService of a KServe model. */
export function llmInferenceServiceManifest(model: Pick<KserveModelPlan, 'service' | 'namespace' | 'slug' | 'spec' | 'apiVersion'>) {
  return {
    apiVersion: model.apiVersion,
    kind: RESOURCE_TYPES.llmInferenceService.kind,
    metadata: { name: model.service, namespace: model.namespace, labels: commonLabels(model.slug) },
    spec: structuredClone(model.spec),
  };
}

type StackGateway = KserveStackPlan['gateway'];

/** The Envoy GatewayClass KServe's Gateway uses (`plan.kserve.gateway`). */
export function envoyGatewayClassManifest(gateway: Pick<StackGateway, 'className' | 'controllerName'>) {
  return {
    ...RESOURCE_TYPES.gatewayClass,
    metadata: { name: gateway.className, labels: { 'app.kubernetes.io/managed-by': 'app-serving' } },
    spec: { controllerName: gateway.controllerName },
  };
}

/** The KServe ingress Gateway (`plan.kserve.gateway`): one HTTP listener that accepts routes from every namespace. */
export function kserveGatewayManifest(gateway: Pick<StackGateway, 'name' | 'namespace' | 'className' | 'port'>) {
  return {
    ...RESOURCE_TYPES.gateway,
    metadata: { name: gateway.name, namespace: gateway.namespace, labels: { 'app.kubernetes.io/managed-by': 'app-serving' } },
    spec: {
      gatewayClassName: gateway.className,
      listeners: [{ name: 'http', protocol: 'HTTP', port: gateway.port, allowedRoutes: { namespaces: { from: 'All' } } }],
    },
  };
}
