import { ENVOY_GATEWAY_NAMESPACE, HARBOR_PULL_SECRET, LIMITS, type RouterGatewayClass } from '../../constants.ts';
import { envoyProxyServiceName } from '../../envoy-gateway.ts';
import { serviceHost, storageNames, type NameOverrides, type NameProblem } from '../../names.ts';
import { ROUTER_EPP_BASE } from './facts.ts';

/**
 * Every Kubernetes and Helm name of one llm-d model on the 2026-08 set, derived from its slug.
 * The Router chart derives its own from the release name (routerlib `llm-d-router.name`: the
 * release cut at 40, then `-epp`; InferencePool and HTTPRoute named after the release), and the
 * Gateway controllers name the Service of a Gateway: Istio `<gateway>-istio`, agentgateway
 * `<gateway>` (agentgateway.dev, "KServe" integration: `kubectl get svc <gateway>`), Envoy Gateway
 * `envoy-<namespace>-<gateway>-<hash>` in its own namespace ({@link envoyProxyServiceName}).
 *
 * Kept from 2026-02 on purpose, so that a model moved across keeps them: the namespace, the
 * storage objects, the pull secret, the gateway alias `llmd-gateway-<slug>` and the embeddings
 * Service `ms-<slug>-embeddings` (clients that use those two see no change).
 */
export interface RouterNames {
  readonly slug: string;
  readonly namespace: string;
  /** The Router chart's release: `router-<slug>` (or the stack's `releaseName`). */
  readonly release: string;
  readonly inferencePool: string;
  readonly httpRoute: string;
  readonly epp: string;
  readonly eppHost: string;
  /** The model's Gateway (gateway mode): `<release>-gateway`; also its parametersRef (Istio's ConfigMap, Envoy Gateway's EnvoyProxy). */
  readonly gateway: string;
  /**
   * Class `envoy`: app-serving's own HTTPRoute, `<release>-route` — not the chart's name, so that a
   * model moving between classes never has two objects of one name (the chart's route is deleted
   * after the new one is created; with one name the provider refuses the create, AlreadyExists).
   */
  readonly envoyHttpRoute: string;
  /** Class `envoy`: the Service of the pool's pods the HTTPRoute sends to, `<release>-pool`. */
  readonly poolService: string;
  /** Class `envoy`: the EnvoyExtensionPolicy that calls the EPP, `<release>-endpoint-picker`. */
  readonly extProcPolicy: string;
  /** Class `envoy`: the route's BackendTrafficPolicy (the EPP's pick, the rate limit), `<release>-backend-traffic`. */
  readonly backendTrafficPolicy: string;
  readonly gatewayAlias: string;
  /** The model-server Deployment: `server-<slug>`. */
  readonly modelServer: string;
  readonly embeddingsService: string;
  readonly storage: { readonly pvc: string; readonly pv: string; readonly job: string };
  readonly pullSecret: string;
}

/** Derives every name of a 2026-08 llm-d model. */
export function routerNames(slug: string, overrides: NameOverrides = {}): RouterNames {
  const namespace = overrides.nameSpace ?? `llm-d-${slug}`;
  const release = overrides.releaseName ?? `router-${slug}`;
  const epp = `${release.toLowerCase().trim().slice(0, ROUTER_EPP_BASE)}-epp`;
  return {
    slug,
    namespace,
    release,
    inferencePool: release,
    httpRoute: release,
    epp,
    eppHost: serviceHost(epp, namespace),
    gateway: `${release}-gateway`,
    envoyHttpRoute: `${release}-route`,
    poolService: `${release}-pool`,
    extProcPolicy: `${release}-endpoint-picker`,
    backendTrafficPolicy: `${release}-backend-traffic`,
    gatewayAlias: `llmd-gateway-${slug}`,
    modelServer: `server-${slug}`,
    embeddingsService: `ms-${slug}-embeddings`,
    storage: storageNames(slug),
    pullSecret: HARBOR_PULL_SECRET,
  };
}

/** The Service Istio or agentgateway makes for a Gateway of `className` (in the Gateway's namespace); see {@link gatewayService} for every class. */
export function gatewayServiceName(gateway: string, className: 'istio' | 'agentgateway'): string {
  return className === 'istio' ? `${gateway}-istio` : gateway;
}

/** The Service a Gateway controller makes for a Gateway of `className`, and its namespace. */
export function gatewayService(gateway: string, namespace: string, className: RouterGatewayClass): { readonly name: string; readonly namespace: string } {
  if (className === 'envoy') return { name: envoyProxyServiceName(namespace, gateway), namespace: ENVOY_GATEWAY_NAMESPACE };
  return { name: gatewayServiceName(gateway, className), namespace };
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Checks every derived name against the limit that binds it (the slug's own limit of 33 is
 * checked with the slug): Helm's 53 for the release, 63 for every Service (DNS-1035 labels), the
 * namespace (DNS-1123 label), and the generated gateway Service. Envoy Gateway's Service needs no
 * check: it cuts `<namespace>-<gateway>` at 48 before its hash, so it is at most 63 characters.
 */
export function checkRouterNames(names: RouterNames, className: RouterGatewayClass | null, overrides: NameOverrides = {}): NameProblem[] {
  const problems: NameProblem[] = [];
  const rule = (object: string, name: string, limit: number, pattern: RegExp, kind: string, key?: 'nameSpace' | 'releaseName', why = '') => {
    if (name.length > limit) problems.push({ ...(key && { key }), message: `${object} "${name}" is ${name.length} characters; a ${kind} may have at most ${limit}${why}` });
    else if (!pattern.test(name)) problems.push({ ...(key && { key }), message: `${object} "${name}" is not a valid ${kind}` });
  };
  const releaseKey = overrides.releaseName !== undefined ? 'releaseName' : undefined;
  rule('namespace', names.namespace, LIMITS.dnsLabel, DNS_LABEL, 'DNS-1123 label', overrides.nameSpace !== undefined ? 'nameSpace' : undefined);
  rule('the Router release', names.release, LIMITS.helmRelease, DNS_SUBDOMAIN, 'Helm release name', releaseKey);
  rule('the EPP Service', names.epp, LIMITS.dnsLabel, DNS_1035_LABEL, 'Service name (DNS-1035 label)', releaseKey);
  rule('the embeddings Service', names.embeddingsService, LIMITS.dnsLabel, DNS_1035_LABEL, 'Service name (DNS-1035 label)');
  rule('the model-server Deployment', names.modelServer, LIMITS.dnsLabel, DNS_LABEL, 'Deployment name whose pods are labelled with it');
  if (className === 'envoy') {
    rule('the Service of the pool\'s pods', names.poolService, LIMITS.dnsLabel, DNS_1035_LABEL, 'Service name (DNS-1035 label)', releaseKey);
  } else if (className !== null) {
    const service = gatewayService(names.gateway, names.namespace, className).name;
    rule(
      `the Service ${className === 'istio' ? 'Istio' : 'agentgateway'} creates for the Gateway`,
      service,
      LIMITS.dnsLabel,
      DNS_1035_LABEL,
      'Service name (DNS-1035 label)',
      releaseKey,
      ': the Gateway would never be Programmed',
    );
  }
  return problems;
}
