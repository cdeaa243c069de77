import { EMBEDDINGS_SERVICE_PORT, GATEWAY_HTTP_PORT, LABEL_ROLE, PULUMI_SKIP_AWAIT_ANNOTATION } from '../constants.ts';
import { commonLabels } from './common.ts';
import { RESOURCE_TYPES } from './types.ts';

/** The HTTPRoute of a generative model: every path of its Gateway to its InferencePool. */
export function httpRouteManifest(args: { name: string; namespace: string; slug: string; gateway: string; inferencePool: string }) {
  return {
    ...RESOURCE_TYPES.httpRoute,
    metadata: { name: args.name, namespace: args.namespace, labels: commonLabels(args.slug) },
    spec: {
      parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: args.gateway }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          backendRefs: [{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: args.inferencePool }],
        },
      ],
    },
  };
}

/**
 * The ClusterIP Service of an embedding model, straight to its decode pods (the EPP of GAIE
 * v1.2 rejects `/v1/embeddings`). Clients use port 8200; it forwards to the port the server
 * really listens on (`targetPort`: 8200 behind the routing sidecar, `routing.servicePort` without it).
 */
export function embeddingsServiceManifest(args: { name: string; namespace: string; slug: string; podLabels: Readonly<Record<string, string>>; targetPort: number }) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: args.name, namespace: args.namespace, labels: commonLabels(args.slug) },
    spec: {
      type: 'ClusterIP',
      selector: { ...args.podLabels, [LABEL_ROLE]: 'decode' },
      ports: [{ name: 'http', port: EMBEDDINGS_SERVICE_PORT, targetPort: args.targetPort, protocol: 'TCP' }],
    },
  };
}

/** The ExternalName Service `llmd-gateway-<slug>`: a stable in-namespace alias of the Istio gateway Service. */
export function gatewayAliasManifest(args: { name: string; namespace: string; slug: string; gatewayHost: string }) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    // Nothing to await (PULUMI_SKIP_AWAIT_ANNOTATION says why it matters for this Service).
    metadata: { name: args.name, namespace: args.namespace, labels: commonLabels(args.slug), annotations: { [PULUMI_SKIP_AWAIT_ANNOTATION]: 'true' } },
    spec: {
      type: 'ExternalName',
      externalName: args.gatewayHost,
      ports: [{ name: 'http', port: GATEWAY_HTTP_PORT, targetPort: GATEWAY_HTTP_PORT, protocol: 'TCP' }],
    },
  };
}
