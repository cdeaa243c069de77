import { KSERVE_API } from '../constants.ts';

/** apiVersion and kind of an object app-serving creates. */
export interface ResourceType {
  readonly apiVersion: string;
  readonly kind: string;
}

const KSERVE = `${KSERVE_API.group}/${KSERVE_API.version}`;

/**
 * The custom resource types app-serving creates (a Pulumi CustomResource needs them when it is
 * constructed, before the manifest's other inputs are known).
 */
export const RESOURCE_TYPES = {
  httpRoute: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute' },
  gateway: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway' },
  gatewayClass: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass' },
  llmInferenceService: { apiVersion: KSERVE, kind: 'LLMInferenceService' },
  llmInferenceServiceConfig: { apiVersion: KSERVE, kind: 'LLMInferenceServiceConfig' },
  requestAuthentication: { apiVersion: 'security.istio.io/v1', kind: 'RequestAuthentication' },
  authorizationPolicy: { apiVersion: 'security.istio.io/v1', kind: 'AuthorizationPolicy' },
  envoyFilter: { apiVersion: 'networking.istio.io/v1alpha3', kind: 'EnvoyFilter' },
  securityPolicy: { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'SecurityPolicy' },
  backendTrafficPolicy: { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'BackendTrafficPolicy' },
  envoyExtensionPolicy: { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'EnvoyExtensionPolicy' },
  envoyProxy: { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'EnvoyProxy' },
  httpRouteFilter: { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'HTTPRouteFilter' },
  clientTrafficPolicy: { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'ClientTrafficPolicy' },
  referenceGrant: { apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant' },
} as const satisfies Record<string, ResourceType>;
