import { stringify } from 'yaml';
import type { RouterGatewayClass } from '../../constants.ts';
import { ENVOY_GATEWAY_API } from '../../envoy-gateway.ts';
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
 *
 * Envoy Gateway (`envoy`): the Gateway is of the stack's Envoy GatewayClass (`gatewayClassName`,
 * envoy-gateway.ts), and its proxy pods — in Envoy Gateway's own namespace — are placed through an
 * `EnvoyProxy` of the Gateway's namespace named in `spec.infrastructure.parametersRef`
 * (`provider.kubernetes.envoyDeployment.pod.{affinity,tolerations}`), with `mergeType:
 * StrategicMerge` so that it adds to the class's and Envoy Gateway's own defaults (image, Service
 * type) instead of replacing them (v1.8.0+; without it a Gateway's EnvoyProxy replaces the rest).
 * No pull secret: the proxy pods run in Envoy Gateway's namespace, where the model's Secret is not;
 * the proxy image is Envoy Gateway's to mirror.
 */
export interface GatewayInput {
  readonly name: string;
  readonly namespace: string;
  readonly slug: string;
  /** The objects' labels. @default commonLabels(slug) */
  readonly labels?: Readonly<Record<string, string>>;
  readonly className: RouterGatewayClass;
  /** The GatewayClass object the Gateway names: the class itself, or (class `envoy`) the stack's Envoy GatewayClass. */
  readonly gatewayClassName: string;
  readonly routeNamespaces: RouteNamespaces;
  readonly affinity: NodeAffinity | undefined;
  readonly tolerations: readonly Toleration[];
  readonly pullSecret: string | null;
}

/** Whether the gateway pods get parameters: Istio's ConfigMap (anything to place or pull with), Envoy Gateway's EnvoyProxy (anything to place). */
export function hasGatewayParameters(input: GatewayInput): boolean {
  const place = input.affinity !== undefined || input.tolerations.length > 0;
  if (input.className === 'istio') return place || input.pullSecret !== null;
  return input.className === 'envoy' && place;
}

function labelsOf(input: GatewayInput): Record<string, string> {
  return input.labels ? { ...input.labels } : commonLabels(input.slug);
}

/** The kind of the Gateway's parametersRef, by class. */
function parametersRef(input: GatewayInput) {
  return input.className === 'envoy' ? { group: ENVOY_GATEWAY_API.group, kind: 'EnvoyProxy', name: input.name } : { group: '', kind: 'ConfigMap', name: input.name };
}

/** The Gateway (gateway.networking.k8s.io/v1). */
export function gatewayManifest(input: GatewayInput): Record<string, unknown> {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      labels: { ...labelsOf(input), ...(input.className === 'istio' && { 'istio.io/enable-inference-extproc': 'true' }) },
    },
    spec: {
      gatewayClassName: input.gatewayClassName,
      listeners: [gatewayListener(input.namespace, input.routeNamespaces)],
      ...(hasGatewayParameters(input) && { infrastructure: { parametersRef: parametersRef(input) } }),
    },
  };
}

/** The parameters placing the gateway pods: Istio's ConfigMap or Envoy Gateway's EnvoyProxy (null when there is nothing to place). */
export function gatewayParametersManifest(input: GatewayInput): Record<string, unknown> | null {
  if (!hasGatewayParameters(input)) return null;
  if (input.className === 'envoy') {
    const pod = { ...(input.affinity && { affinity: input.affinity }), ...(input.tolerations.length > 0 && { tolerations: [...input.tolerations] }) };
    return {
      apiVersion: `${ENVOY_GATEWAY_API.group}/${ENVOY_GATEWAY_API.version}`,
      kind: 'EnvoyProxy',
      metadata: { name: input.name, namespace: input.namespace, labels: labelsOf(input) },
      spec: { mergeType: 'StrategicMerge', provider: { type: 'Kubernetes', kubernetes: { envoyDeployment: { pod } } } },
    };
  }
  const spec = {
    ...(input.affinity && { affinity: input.affinity }),
    ...(input.tolerations.length > 0 && { tolerations: [...input.tolerations] }),
    ...(input.pullSecret && { imagePullSecrets: [{ name: input.pullSecret }] }),
  };
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: input.name, namespace: input.namespace, labels: labelsOf(input) },
    data: { deployment: stringify({ spec: { template: { spec } } }, { lineWidth: 0 }) },
  };
}
