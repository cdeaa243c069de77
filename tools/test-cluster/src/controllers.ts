/**
 * What the controllers we cannot run here would create, made from the objects really in the
 * cluster (the charts' output as Pulumi or Helm applied it), the way each controller makes them:
 *
 * - Istio's gateway deployment controller: for a Gateway of class `istio`, a Deployment and a
 *   Service `<gateway>-istio`, labelled `gateway.networking.k8s.io/gateway-name: <gateway>`, the
 *   Deployment overlaid with the `deployment` key of the Gateway's `spec.infrastructure.parametersRef`
 *   ConfigMap (Istio 1.28 `pilot/pkg/config/kube/gateway/deploymentcontroller.go`; the chart renders
 *   that ConfigMap and app-serving's post-render patch places the pods through it).
 * - KServe's LLMInferenceService controller: the model-server workload (a Deployment with the pod
 *   labels KServe gives it, placed by `spec.template`) and the service's `status.url`/`addresses`.
 * - Envoy Gateway: the proxy Deployment and Service of a Gateway in `envoy-gateway-system`,
 *   labelled with the owning Gateway (KServe's, and a 2026-08 llm-d model's of class `envoy`, placed
 *   by the EnvoyProxy its Gateway names).
 *
 * No container runs (kwok plays the pods); every image is a placeholder.
 */
import { parse } from 'yaml';
import type { TestCluster } from './cluster.ts';
import { applyObjects, type KubeObject } from './objects.ts';

type Values = Record<string, any>;

/** Marks what a stand-in controller made (so a test can tell and clean it). */
export const STAND_IN_LABEL = 'test-cluster.app-serving.io/stand-in';

const isMap = (v: unknown): v is Values => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A strategic merge patch, as Istio applies the parametersRef overlay to the Deployment it makes:
 * maps merge; lists of named items (containers, volumes, env, imagePullSecrets) merge by `name`;
 * other lists and scalars replace.
 */
function overlay(base: Values, patch: Values): Values {
  const out: Values = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    const current = out[k];
    if (isMap(v) && isMap(current)) out[k] = overlay(current, v);
    else if (Array.isArray(v) && Array.isArray(current) && [...v, ...current].every((item) => isMap(item) && typeof item.name === 'string')) {
      const merged = current.map((item: Values) => {
        const over = v.find((o: Values) => o.name === item.name);
        return over ? overlay(item, over) : item;
      });
      out[k] = [...merged, ...v.filter((o: Values) => !current.some((item: Values) => item.name === o.name))];
    } else out[k] = v;
  }
  return out;
}

function deployment(namespace: string, name: string, labels: Record<string, string>, pod: Values, replicas = 1): Values {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { ...labels, [STAND_IN_LABEL]: 'true' } },
    spec: { replicas, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: pod } },
  };
}

/**
 * Istio's Deployment and Service for a Gateway of the cluster (read from it), as Istio's gateway
 * controller makes them: ports from the listeners, pods placed by the parametersRef ConfigMap's
 * `deployment` overlay. Returns the objects (applied).
 */
export async function istioGatewayStandIn(cluster: TestCluster, namespace: string, gatewayName: string): Promise<KubeObject[]> {
  return gatewayStandIn(cluster, namespace, gatewayName, (className) => `${gatewayName}-${className}`, { name: 'istio-proxy', image: 'docker.io/istio/proxyv2:stand-in' });
}

/**
 * agentgateway's Deployment and Service for a Gateway of class agentgateway, as its controller makes
 * them: both named after the Gateway (agentgateway.dev: `kubectl get svc <gateway>`), ports from the
 * listeners. Returns the objects (applied).
 */
export async function agentgatewayStandIn(cluster: TestCluster, namespace: string, gatewayName: string): Promise<KubeObject[]> {
  return gatewayStandIn(cluster, namespace, gatewayName, () => gatewayName, { name: 'agentgateway', image: 'cr.agentgateway.dev/agentgateway:stand-in' });
}

async function gatewayStandIn(
  cluster: TestCluster,
  namespace: string,
  gatewayName: string,
  nameOf: (className: string) => string,
  proxy: { readonly name: string; readonly image: string },
): Promise<KubeObject[]> {
  const res = await cluster.request('GET', `/apis/gateway.networking.k8s.io/v1/namespaces/${namespace}/gateways/${gatewayName}`);
  if (res.status !== 200) throw new Error(`Gateway ${namespace}/${gatewayName}: ${res.status} (has the chart created it?)`);
  const gateway = res.body as Values;
  const className: string = gateway.spec.gatewayClassName;
  const name = nameOf(className);
  const labels = { 'gateway.networking.k8s.io/gateway-name': gatewayName };
  let pod: Values = { containers: [{ ...proxy, ports: [{ containerPort: 80 }] }] };
  let service: Values = {};
  const ref = gateway.spec.infrastructure?.parametersRef;
  if (ref && ref.kind === 'ConfigMap') {
    const cm = await cluster.request('GET', `/api/v1/namespaces/${namespace}/configmaps/${ref.name}`);
    if (cm.status !== 200) throw new Error(`the parametersRef ConfigMap ${namespace}/${ref.name} of Gateway ${gatewayName} does not exist (Istio would refuse the Gateway)`);
    const data = (cm.body as Values).data ?? {};
    const deploymentOverlay = typeof data.deployment === 'string' ? (parse(data.deployment) as Values) : {};
    pod = overlay(pod, deploymentOverlay?.spec?.template?.spec ?? {});
    service = typeof data.service === 'string' ? ((parse(data.service) as Values) ?? {}) : {};
  }
  const ports = (gateway.spec.listeners as Values[]).map((l) => ({ name: `${String(l.protocol).toLowerCase()}-${l.port}`, port: l.port, targetPort: l.port }));
  const objects = [
    deployment(namespace, name, labels, pod),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace, labels: { ...labels, [STAND_IN_LABEL]: 'true' } },
      spec: overlay({ type: 'ClusterIP', selector: labels, ports }, service.spec ?? {}),
    },
  ] as KubeObject[];
  await applyObjects(cluster, objects);
  return objects;
}

/** The namespace Envoy Gateway runs a Gateway's proxies in (its default mode). */
export const ENVOY_GATEWAY_SYSTEM = 'envoy-gateway-system';

/**
 * Envoy Gateway's proxy Deployment and Service for a Gateway of an Envoy Gateway class (a 2026-08
 * llm-d model's, `router.gatewayClass: envoy`), as its Kubernetes provider makes them in its default
 * mode: in `envoy-gateway-system`, under `serviceName` (EG's hashed name, which the caller takes from
 * the plan), labelled with the owning Gateway; a Service port per listener, each to the container
 * port Envoy Gateway gives it (a listener port below 1024 plus 10000: 80 → 10080); the pods placed by
 * the `envoyDeployment.pod` affinity and tolerations of the EnvoyProxy the Gateway's
 * `spec.infrastructure.parametersRef` names. Returns the objects (applied).
 */
export async function envoyGatewayStandIn(cluster: TestCluster, namespace: string, gatewayName: string, serviceName: string): Promise<KubeObject[]> {
  const res = await cluster.request('GET', `/apis/gateway.networking.k8s.io/v1/namespaces/${namespace}/gateways/${gatewayName}`);
  if (res.status !== 200) throw new Error(`Gateway ${namespace}/${gatewayName}: ${res.status}`);
  const gateway = res.body as Values;
  let placement: Values = {};
  const ref = gateway.spec.infrastructure?.parametersRef;
  if (ref && ref.kind === 'EnvoyProxy') {
    const proxy = await cluster.request('GET', `/apis/gateway.envoyproxy.io/v1alpha1/namespaces/${namespace}/envoyproxies/${ref.name}`);
    if (proxy.status !== 200) throw new Error(`the EnvoyProxy ${namespace}/${ref.name} of Gateway ${gatewayName} does not exist (Envoy Gateway would not accept the Gateway)`);
    const pod: Values = (proxy.body as Values).spec?.provider?.kubernetes?.envoyDeployment?.pod ?? {};
    placement = Object.fromEntries(['affinity', 'tolerations', 'nodeSelector'].filter((k) => pod[k] !== undefined).map((k) => [k, pod[k]]));
  }
  const owner = { 'gateway.envoyproxy.io/owning-gateway-name': gatewayName, 'gateway.envoyproxy.io/owning-gateway-namespace': namespace };
  const listeners = gateway.spec.listeners as Values[];
  const containerPort = (port: number) => (port < 1024 ? port + 10000 : port);
  const envoy = deployment(ENVOY_GATEWAY_SYSTEM, serviceName, owner, {
    ...placement,
    containers: [{ name: 'envoy', image: 'envoyproxy/envoy:stand-in', ports: listeners.map((l) => ({ containerPort: containerPort(l.port) })) }],
  });
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: serviceName, namespace: ENVOY_GATEWAY_SYSTEM, labels: { ...owner, [STAND_IN_LABEL]: 'true' } },
    spec: { type: 'ClusterIP', selector: owner, ports: listeners.map((l) => ({ name: `${String(l.protocol).toLowerCase()}-${l.port}`, port: l.port, targetPort: containerPort(l.port) })) },
  };
  const objects = [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ENVOY_GATEWAY_SYSTEM } }, envoy, service] as KubeObject[];
  await applyObjects(cluster, objects);
  return objects;
}

/** What KServe and Envoy Gateway would make for one LLMInferenceService. */
export interface KserveStandInArgs {
  readonly namespace: string;
  /** The LLMInferenceService. */
  readonly service: string;
  /** KServe's workload Deployment name and its pods' labels. */
  readonly workload: string;
  readonly podLabels: Readonly<Record<string, string>>;
  /** The port vLLM listens on. */
  readonly port: number;
  /** The Gateway the service attaches to. */
  readonly gateway: { readonly name: string; readonly namespace: string };
  /** The path KServe routes: `/<namespace>/<name>`. */
  readonly pathPrefix: string;
  /** The LLMInferenceService's API version. @default "serving.kserve.io/v1alpha1" (KServe v0.18; v0.20 stores v1alpha2) */
  readonly apiVersion?: string;
}

/**
 * KServe's workload for a service (placed by the service's `spec.template`, read from the cluster),
 * Envoy Gateway's proxy for its Gateway, and the service's status (`url`, `addresses`, Ready) as
 * KServe reports it once the route is programmed. Returns the objects applied.
 */
export async function kserveStandIns(cluster: TestCluster, args: KserveStandInArgs): Promise<KubeObject[]> {
  const path = `/apis/${args.apiVersion ?? 'serving.kserve.io/v1alpha1'}/namespaces/${args.namespace}/llminferenceservices/${args.service}`;
  const res = await cluster.request('GET', path);
  if (res.status !== 200) throw new Error(`LLMInferenceService ${args.namespace}/${args.service}: ${res.status}`);
  const spec = (res.body as Values).spec ?? {};
  const template: Values = spec.template ?? {};
  const placement: Values = Object.fromEntries(['nodeSelector', 'affinity', 'tolerations', 'imagePullSecrets', 'serviceAccountName'].filter((k) => template[k] !== undefined).map((k) => [k, template[k]]));
  const workload = deployment(args.namespace, args.workload, { ...args.podLabels }, {
    ...placement,
    containers: [{ name: 'main', image: 'vllm/vllm-openai:stand-in', ports: [{ containerPort: args.port }] }],
  }, spec.replicas ?? 1);
  const owner = { 'gateway.envoyproxy.io/owning-gateway-name': args.gateway.name, 'gateway.envoyproxy.io/owning-gateway-namespace': args.gateway.namespace };
  const envoyName = `envoy-${args.gateway.namespace}-${args.gateway.name}`.slice(0, 63).replace(/-+$/, '');
  const envoy = deployment(ENVOY_GATEWAY_SYSTEM, envoyName, owner, { containers: [{ name: 'envoy', image: 'envoyproxy/envoy:stand-in', ports: [{ containerPort: 10080 }] }] });
  const envoyService = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: envoyName, namespace: ENVOY_GATEWAY_SYSTEM, labels: { ...owner, [STAND_IN_LABEL]: 'true' } },
    spec: { type: 'ClusterIP', selector: owner, ports: [{ name: 'http-80', port: 80, targetPort: 10080 }] },
  };
  const objects = [workload, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ENVOY_GATEWAY_SYSTEM } }, envoy, envoyService] as KubeObject[];
  await applyObjects(cluster, objects);
  const url = `http://${envoyName}.${ENVOY_GATEWAY_SYSTEM}.svc.cluster.local${args.pathPrefix}`;
  const now = new Date().toISOString();
  const status = await cluster.request(
    'PATCH',
    `${path}/status`,
    { status: { url, addresses: [{ url }], conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }] } },
    { contentType: 'application/merge-patch+json' },
  );
  if (status.status >= 300) throw new Error(`status of LLMInferenceService ${args.namespace}/${args.service}: ${status.status} ${JSON.stringify(status.body).slice(0, 500)}`);
  return objects;
}
