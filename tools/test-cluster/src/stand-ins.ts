/**
 * Stand-ins for the objects that charts and controllers create in a real cluster and that cannot be
 * produced here (the chart templates are not available; no Istio controller runs). Each takes the
 * values we hand to the chart and places them where the template puts them, as traced in the
 * templates at the pinned tags (shared/reference/upstream-charts.md §1, §2, §3.3, §4b):
 *
 * - modelservice v0.4.12 decode Deployment: pod labels = `modelArtifacts.labels` + `llm-d.ai/role`;
 *   `decode.extraConfig` pasted into the pod spec, then `decode.tolerations` and `decode.nodeSelector`;
 *   `decode.replicas`.
 * - GAIE v1.2.0 EPP Deployment `<pool>-epp`: `inferenceExtension.tolerations` and
 *   `inferenceExtension.affinity` into the pod spec; nothing else places it.
 * - Istio's Deployment and Service `<gateway>-istio` for a Gateway, labelled
 *   `gateway.networking.k8s.io/gateway-name: <gateway>`, placed by the parametersRef ConfigMap's
 *   `deployment` overlay (given here as a pod-spec fragment).
 *
 * The images are never pulled (kwok runs no containers); what the scheduler and the controllers do
 * with these objects is real.
 */
import type { KubeObject } from './objects.ts';

type Values = Record<string, any>;

const APP_LABEL = 'test-cluster.app-serving.io/stand-in';

function deployment(namespace: string, name: string, labels: Record<string, string>, replicas: number, podSpec: Values, annotations: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { [APP_LABEL]: name } },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: { metadata: { labels, annotations }, spec: podSpec },
    },
  };
}

const placement = (v: Values | undefined): Values => ({
  ...(v?.tolerations && { tolerations: v.tolerations }),
  ...(v?.nodeSelector && { nodeSelector: v.nodeSelector }),
  ...(v?.affinity && { affinity: v.affinity }),
});

/** The modelservice chart's decode Deployment for the merged `modelService` values. */
export function decodeDeployment(args: {
  namespace: string;
  name: string;
  values: Values;
  /** Container ports of the pod: the routing proxy's and the server's. */
  ports: readonly number[];
  annotations?: Record<string, string>;
}): KubeObject {
  const decode = (args.values.decode ?? {}) as Values;
  const labels = { ...(args.values.modelArtifacts?.labels ?? {}), 'llm-d.ai/role': 'decode' } as Record<string, string>;
  const image = decode.containers?.[0]?.image ?? 'ghcr.io/llm-d/llm-d-cuda:stand-in';
  return deployment(args.namespace, args.name, labels, decode.replicas ?? 1, {
    // The chart pastes `decode.extraConfig` into the pod spec, then adds its own keys.
    ...(decode.extraConfig ?? {}),
    ...placement(decode),
    ...(args.values.imagePullSecrets && { imagePullSecrets: args.values.imagePullSecrets }),
    containers: [{ name: 'vllm', image, ports: args.ports.map((p) => ({ containerPort: p })) }],
  }, args.annotations);
}

/** GAIE's EPP Deployment for the merged `gaie` values. */
export function eppDeployment(args: { namespace: string; name: string; pool: string; values: Values; annotations?: Record<string, string> }): KubeObject {
  const ext = (args.values.inferenceExtension ?? {}) as Values;
  const labels = { 'inferencepool': `${args.pool}-epp` };
  return deployment(args.namespace, args.name, labels, ext.replicas ?? 1, {
    ...placement(ext),
    containers: [{ name: 'epp', image: ext.image?.name ? `${ext.image.hub ?? 'registry.k8s.io'}/${ext.image.name}:${ext.image.tag ?? 'stand-in'}` : 'registry.k8s.io/gateway-api-inference-extension/epp:stand-in', ports: [{ containerPort: 9002 }] }],
  }, args.annotations);
}

/** The EPP's Service (GAIE names it `<pool>-epp`, gRPC on 9002). */
export function eppService(args: { namespace: string; name: string; pool: string }): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: args.name, namespace: args.namespace },
    spec: { selector: { inferencepool: `${args.pool}-epp` }, ports: [{ name: 'grpc-ext-proc', port: 9002, targetPort: 9002 }] },
  };
}

/**
 * Istio's Deployment and Service for a Gateway (`<gateway>-istio`, port `port` → 80 in the pod),
 * placed by the `deployment` overlay of the Gateway's parametersRef ConfigMap: here, the plan's
 * `gateway-pod-placement` post-render patch of the llm-d-infra release (affinity, tolerations, pull
 * secrets), which is what ends up in that overlay.
 */
export function istioGateway(args: { namespace: string; gateway: string; service: string; port: number; patches?: ReadonlyArray<{ kind: string }>; annotations?: Record<string, string> }): KubeObject[] {
  const labels = { 'gateway.networking.k8s.io/gateway-name': args.gateway };
  const placement = (args.patches ?? []).find((p) => p.kind === 'gateway-pod-placement') as Values | undefined;
  return [
    deployment(args.namespace, args.service, labels, 1, {
      ...(placement?.affinity && { affinity: placement.affinity }),
      ...(placement?.tolerations && { tolerations: placement.tolerations }),
      ...(placement?.imagePullSecrets && { imagePullSecrets: placement.imagePullSecrets }),
      containers: [{ name: 'istio-proxy', image: 'docker.io/istio/proxyv2:stand-in', ports: [{ containerPort: 80 }] }],
    }, args.annotations),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: args.service, namespace: args.namespace, labels },
      spec: { type: 'ClusterIP', selector: labels, ports: [{ name: 'http', port: args.port, targetPort: 80 }] },
    },
  ];
}

/** The parts of an llm-d model's plan (core's `LlmdModelPlan`) that the stand-ins are built from. */
export interface StandInModel {
  readonly category: string;
  readonly namespace: string;
  readonly modelServer: { readonly decodeDeployment: string; readonly port: number; readonly servicePort: number };
  readonly embeddingService: { readonly targetPort: number } | null;
  readonly inferencePool: { readonly name: string; readonly epp: string };
  readonly gateway: { readonly name: string; readonly service: string; readonly port: number };
  readonly values: { readonly modelService: object; readonly gaie: object };
  readonly patches: { readonly infra: ReadonlyArray<{ kind: string }> };
}

/**
 * Every stand-in of one llm-d model: the decode Deployment (its `decode` values replaced by
 * `decode` when given), and for a generative model the EPP with its Service and Istio's gateway.
 */
export function modelStandIns(model: StandInModel, options: { decode?: Values } = {}): KubeObject[] {
  const values = { ...(model.values.modelService as Values), ...(options.decode && { decode: options.decode }) };
  const ports = [...new Set([model.modelServer.port, model.modelServer.servicePort, model.embeddingService?.targetPort].filter((p): p is number => typeof p === 'number'))];
  const out = [decodeDeployment({ namespace: model.namespace, name: model.modelServer.decodeDeployment, values, ports })];
  if (model.category === 'generative') {
    const pool = { namespace: model.namespace, name: model.inferencePool.epp, pool: model.inferencePool.name };
    out.push(eppDeployment({ ...pool, values: model.values.gaie as Values }), eppService(pool));
    out.push(...istioGateway({ namespace: model.namespace, gateway: model.gateway.name, service: model.gateway.service, port: model.gateway.port, patches: model.patches.infra }));
  }
  return out;
}
