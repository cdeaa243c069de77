import { isIP } from 'node:net';
import { ENVOY_GATEWAY_NAMESPACE, ENVOY_LABEL_OWNING_GATEWAY_NAME, ENVOY_LABEL_OWNING_GATEWAY_NAMESPACE, type KserveModelPlan } from '@app-serving/core';
import { kubeErrorOf, labelSelector, type Cluster, type PodSummary, type ServiceSummary } from './cluster.ts';
import type { Endpoint } from './http.ts';

/** An endpoint that holds a port-forward until closed. */
export interface OpenEndpoint extends Endpoint {
  readonly via: string;
  close(): Promise<void>;
}

/** Why an endpoint could not be opened (no Service, no Ready pod, no port, API denied). */
export class EndpointError extends Error {
  override readonly name = 'EndpointError';
}

/** Envoy Gateway's labels on a Gateway's proxy Service and pods, and its proxies' default namespace (facts kept in core). */
export {
  ENVOY_LABEL_OWNING_GATEWAY_NAME as ENVOY_OWNING_GATEWAY_NAME,
  ENVOY_LABEL_OWNING_GATEWAY_NAMESPACE as ENVOY_OWNING_GATEWAY_NAMESPACE,
  ENVOY_GATEWAY_NAMESPACE as ENVOY_GATEWAY_SYSTEM_NAMESPACE,
} from '@app-serving/core';

/**
 * Port-forwards to a Service the way `kubectl port-forward svc/<name> <port>` does: reads the
 * Service, resolves `port` to its targetPort (a number, or a named port of the pod's containers),
 * picks the first Ready pod its selector matches, and opens a tunnel to that pod.
 */
export async function openServiceEndpoint(cluster: Cluster, namespace: string, service: string, port: number, signal: AbortSignal): Promise<OpenEndpoint> {
  let svc: ServiceSummary | null;
  try {
    svc = await cluster.readService(namespace, service, signal);
  } catch (error) {
    throw new EndpointError(kubeErrorOf(error, 'get', 'services', namespace, signal).message);
  }
  if (!svc) throw new EndpointError(`Service ${namespace}/${service} not found`);
  return openServicePods(cluster, svc, port, signal);
}

async function openServicePods(cluster: Cluster, svc: ServiceSummary, port: number, signal: AbortSignal): Promise<OpenEndpoint> {
  const { namespace, name } = svc;
  if (!svc.selector) throw new EndpointError(`Service ${namespace}/${name} has no selector: nothing to port-forward to`);
  const servicePort = svc.ports.find((p) => p.port === port);
  if (!servicePort) throw new EndpointError(`Service ${namespace}/${name} has no port ${port} (ports: ${svc.ports.map((p) => p.port).join(', ') || 'none'})`);
  let pods: PodSummary[];
  try {
    pods = await cluster.listPods(namespace, svc.selector, signal);
  } catch (error) {
    throw new EndpointError(kubeErrorOf(error, 'list', 'pods', namespace, signal).message);
  }
  const pod = pods.find((p) => p.ready);
  if (!pod) {
    const why = pods.length ? pods.slice(0, 3).map((p) => `${p.name}: ${p.problem ?? p.phase}`).join('; ') : 'no pods match';
    throw new EndpointError(`no Ready pod behind Service ${namespace}/${name} (selector ${labelSelector(svc.selector)}; ${why})`);
  }
  const target = resolveTargetPort(servicePort.targetPort, pod);
  if (target === null) throw new EndpointError(`Service ${namespace}/${name} port ${port} targets "${servicePort.targetPort}", which no container of pod ${pod.name} names`);
  const tunnel = await cluster.openTunnel(namespace, pod.name, target);
  return {
    url: tunnel.url,
    via: `port-forward svc/${name}:${port} → pod/${pod.name}:${target}`,
    transportProblem: () => tunnel.problem(),
    close: () => tunnel.close(),
  };
}

function resolveTargetPort(targetPort: number | string, pod: PodSummary): number | null {
  if (typeof targetPort === 'number') return targetPort;
  if (/^\d+$/.test(targetPort)) return Number(targetPort);
  for (const container of pod.containers) {
    const match = container.ports.find((p) => p.name === targetPort);
    if (match) return match.containerPort;
  }
  return null;
}

/**
 * Opens a KServe model's address (from its status) from outside the cluster. The URL's host is
 * cluster-internal: a Service DNS name (`<svc>.<ns>.svc…`) is port-forwarded as is; any other host
 * (a ClusterIP, a hostname) is reached through the Envoy Gateway proxy of the model's Gateway,
 * found by Envoy Gateway's owning-gateway labels in its controller namespace (or, in Gateway
 * namespace mode, the Gateway's own namespace). The request keeps the URL's path prefix and, for
 * a hostname, its Host header.
 */
export async function openKserveEndpoint(
  cluster: Cluster,
  model: Pick<KserveModelPlan, 'gateway'>,
  address: string,
  signal: AbortSignal,
  envoyNamespace: string = ENVOY_GATEWAY_NAMESPACE,
): Promise<OpenEndpoint> {
  const url = new URL(address);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const prefix = url.pathname.replace(/\/$/, '');
  const headers = isIP(url.hostname.replace(/^\[|\]$/g, '')) ? undefined : { host: url.host };
  const dns = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.svc(\.|$)/.exec(url.hostname);
  let opened: OpenEndpoint;
  if (dns) {
    opened = await openServiceEndpoint(cluster, dns[3]!, dns[1]!, port, signal);
  } else {
    const found = await findEnvoyGatewayService(cluster, model.gateway, port, signal, envoyNamespace);
    if ('problem' in found) throw new EndpointError(`${found.missing} to reach ${url.host}: ${found.why}; is Envoy Gateway running? Otherwise use --base-url`);
    opened = await openServicePods(cluster, found.service, port, signal);
  }
  return { ...opened, url: opened.url + prefix, ...(headers && { headers }), via: `${opened.via} (${url.host}${prefix})` };
}

/**
 * The Service Envoy Gateway made for a Gateway's proxy, with a port `port`: found by its
 * owning-gateway labels in its controller namespace (`envoy-gateway-system` unless told otherwise)
 * or, in Gateway namespace mode, the Gateway's own — whatever its name (EG hashes it; an EnvoyProxy
 * may name it). KServe's Gateway and a 2026-08 llm-d model's of class `envoy` are found alike.
 */
export async function findEnvoyGatewayService(
  cluster: Cluster,
  gateway: { readonly name: string; readonly namespace: string },
  port: number,
  signal: AbortSignal,
  envoyNamespace: string = ENVOY_GATEWAY_NAMESPACE,
): Promise<{ service: ServiceSummary } | { problem: string; missing: string; why: string }> {
  const selector = { [ENVOY_LABEL_OWNING_GATEWAY_NAME]: gateway.name, [ENVOY_LABEL_OWNING_GATEWAY_NAMESPACE]: gateway.namespace };
  const problems: string[] = [];
  for (const namespace of [...new Set([envoyNamespace, gateway.namespace])]) {
    try {
      const services = await cluster.listServices(namespace, selector, signal);
      const service = services.find((s) => s.ports.some((p) => p.port === port));
      if (service) return { service };
      problems.push(services.length ? `${namespace}: no Service with port ${port}` : `${namespace}: none`);
    } catch (error) {
      problems.push(kubeErrorOf(error, 'list', 'services', namespace, signal).message);
    }
  }
  const missing = `no Envoy Gateway Service for Gateway ${gateway.namespace}/${gateway.name} (labels ${labelSelector(selector)})`;
  return { problem: `${missing}: ${problems.join('; ')}`, missing, why: problems.join('; ') };
}

/**
 * Opens the gateway of a 2026-08 llm-d model of class `envoy` from outside the cluster: the
 * Service Envoy Gateway made for its Gateway ({@link findEnvoyGatewayService}), port-forwarded.
 */
export async function openEnvoyGatewayEndpoint(
  cluster: Cluster,
  gateway: { readonly name: string; readonly namespace: string },
  port: number,
  signal: AbortSignal,
  envoyNamespace: string = ENVOY_GATEWAY_NAMESPACE,
): Promise<OpenEndpoint> {
  const found = await findEnvoyGatewayService(cluster, gateway, port, signal, envoyNamespace);
  if ('problem' in found) throw new EndpointError(`${found.problem}; is Envoy Gateway running? Otherwise use --base-url`);
  return openServicePods(cluster, found.service, port, signal);
}
