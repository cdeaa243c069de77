import { stringify } from 'yaml';
import { commonLabels } from '../../manifests/common.ts';
import { gatewayListener, type RouteNamespaces } from '../../values/llmd.ts';
import type { NodeAffinity, Toleration } from '../../values/scheduling.ts';

/**
 * The model's Gateway in gateway mode: app-serving creates it (llm-d's guides no longer install
 * llm-d-infra; `docs/infrastructure/gateway/{istio,agentgateway}.md`), one per model as on
 * 2026-02, with the same single HTTP listener and the same placement of the gateway pods.
 *
 * Istio (1.29+; llm-d v0.10 tests 1.29.x): the label `istio.io/enable-inference-extproc: "true"`
 * (as llm-d-infra v1.3.10 `gateway.yaml` set it for class istio) and the pods placed through
 * `spec.infrastructure.parametersRef`, a ConfigMap whose `deployment` key Istio merges into the
 * Deployment it makes (a ConfigMap in the model namespace; Istio reads class defaults only in
 * istio-system). agentgateway: no parameters here (its own AgentgatewayParameters CRD places its
 * pods), so its pods land where the cluster's defaults put them.
 */
export interface GatewayInput {
  readonly name: string;
  readonly namespace: string;
  readonly slug: string;
  readonly className: 'istio' | 'agentgateway';
  readonly routeNamespaces: RouteNamespaces;
  readonly affinity: NodeAffinity | undefined;
  readonly tolerations: readonly Toleration[];
  readonly pullSecret: string | null;
}

/** Whether the gateway pods get a parameters ConfigMap (Istio, and anything to place or pull with). */
export function hasGatewayParameters(input: GatewayInput): boolean {
  return input.className === 'istio' && (input.affinity !== undefined || input.tolerations.length > 0 || input.pullSecret !== null);
}

/** The Gateway (gateway.networking.k8s.io/v1). */
export function gatewayManifest(input: GatewayInput): Record<string, unknown> {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      labels: { ...commonLabels(input.slug), ...(input.className === 'istio' && { 'istio.io/enable-inference-extproc': 'true' }) },
    },
    spec: {
      gatewayClassName: input.className,
      listeners: [gatewayListener(input.namespace, input.routeNamespaces)],
      ...(hasGatewayParameters(input) && { infrastructure: { parametersRef: { group: '', kind: 'ConfigMap', name: input.name } } }),
    },
  };
}

/** The Istio parameters ConfigMap placing the gateway pods (null when there is nothing to place). */
export function gatewayParametersManifest(input: GatewayInput): Record<string, unknown> | null {
  if (!hasGatewayParameters(input)) return null;
  const spec = {
    ...(input.affinity && { affinity: input.affinity }),
    ...(input.tolerations.length > 0 && { tolerations: [...input.tolerations] }),
    ...(input.pullSecret && { imagePullSecrets: [{ name: input.pullSecret }] }),
  };
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: input.name, namespace: input.namespace, labels: commonLabels(input.slug) },
    data: { deployment: stringify({ spec: { template: { spec } } }, { lineWidth: 0 }) },
  };
}
