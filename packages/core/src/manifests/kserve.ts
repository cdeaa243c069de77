import type { KserveModelPlan, KserveStackPlan } from '../kserve/plan.ts';
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
export function llmInferenceServiceConfigManifest(model: Pick<KserveModelPlan, 'config' | 'namespace' | 'slug' | 'configSpec'>) {
  return {
    apiVersion: 'serving.kserve.io/v1alpha1',
    kind: 'LLMInferenceServiceConfig',
    metadata: { name: model.config, namespace: model.namespace, labels: commonLabels(model.slug) },
    spec: structuredClone(model.configSpec),
  };
}

/** The LLMInferenceService of a KServe model. */
export function llmInferenceServiceManifest(model: Pick<KserveModelPlan, 'service' | 'namespace' | 'slug' | 'spec'>) {
  return {
    apiVersion: 'serving.kserve.io/v1alpha1',
    kind: 'LLMInferenceService',
    metadata: { name: model.service, namespace: model.namespace, labels: commonLabels(model.slug) },
    spec: structuredClone(model.spec),
  };
}

/** The Envoy GatewayClass KServe's Gateway uses. */
export function envoyGatewayClassManifest(stack: KserveStackPlan) {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: stack.gateway.className, labels: { 'app.kubernetes.io/managed-by': 'app-serving' } },
    spec: { controllerName: stack.gateway.controllerName },
  };
}

/** The KServe ingress Gateway: one HTTP listener that accepts routes from every namespace. */
export function kserveGatewayManifest(stack: KserveStackPlan) {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: stack.gateway.name, namespace: stack.gateway.namespace, labels: { 'app.kubernetes.io/managed-by': 'app-serving' } },
    spec: {
      gatewayClassName: stack.gateway.className,
      listeners: [{ name: 'http', protocol: 'HTTP', port: stack.gateway.port, allowedRoutes: { namespaces: { from: 'All' } } }],
    },
  };
}
