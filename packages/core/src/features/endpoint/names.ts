import { ENVOY_GATEWAY_NAMESPACE, LABEL_MANAGED_BY, LABEL_PART_OF, MANAGED_BY } from '../../constants.ts';
import { envoyProxyServiceName } from '../../envoy-gateway.ts';
import { serviceHost } from '../../names.ts';
import { BBR_NAME } from './facts.ts';

/** The label every object of the endpoint carries, with the endpoint's (its Gateway's) name. */
export const ENDPOINT_LABEL = 'app-serving.io/endpoint';

/** Labels of the endpoint's objects (and, with `slug`, of one model's route and its policies). */
export function endpointLabels(name: string, slug?: string): Record<string, string> {
  return { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_PART_OF]: 'app-serving', [ENDPOINT_LABEL]: name, ...(slug !== undefined && { 'app-serving.io/model': slug }) };
}

/**
 * Every name of the stack's endpoint, derived from its Gateway's name and namespace (`endpoint.name`,
 * `endpoint.namespace`), and of each model's route on it (from the model's slug). Each is at most
 * 63 + 34 + 20 characters (a DNS subdomain, ≤ 253, binds an HTTPRoute or a policy); the Service of
 * an Istio Gateway, `<name>-istio`, is checked against 63.
 */
export interface EndpointNames {
  readonly gateway: string;
  readonly namespace: string;
  /** The Gateway's parametersRef (Istio's ConfigMap, Envoy Gateway's EnvoyProxy): the Gateway's name. */
  readonly parameters: string;
  /** The body-based-routing chart's release; the chart names its Deployment and Service `body-based-router`. */
  readonly bbrRelease: string;
  readonly bbrService: string;
  /** The ServiceAccount the chart makes, `body-based-router-<release>`. */
  readonly bbrServiceAccount: string;
  /** Envoy Gateway: the route every request enters by (the body-based router, `/v1/models`, the unknown-model answer). */
  readonly entryRoute: string;
  readonly modelsFilter: string;
  readonly notFoundFilter: string;
  readonly bbrPolicy: string;
  readonly clientTrafficPolicy: string;
  readonly entrySecurityPolicy: string;
  /** The keys (Envoy Gateway: clear for Bearer, hashed for Basic). */
  readonly keysSecret: string;
  /** Istio: the EnvoyFilter answering `/v1/models` and unknown models, and the one checking keys and limits. */
  readonly directResponseFilter: string;
  readonly accessFilter: string;
  readonly requestAuthentication: string;
  readonly authorizationPolicy: string;
  /** A model's HTTPRoute on the endpoint (in the endpoint's namespace). */
  route(slug: string): string;
  routeSecurityPolicy(slug: string): string;
  routeTrafficPolicy(slug: string): string;
  /** The ReferenceGrant in each model's namespace that lets the endpoint's routes reach the model's Service or InferencePool. */
  readonly referenceGrant: string;
}

export function endpointNames(name: string, namespace: string): EndpointNames {
  const bbrRelease = `${name}-bbr`;
  return {
    gateway: name,
    namespace,
    parameters: name,
    bbrRelease,
    bbrService: BBR_NAME,
    bbrServiceAccount: `${BBR_NAME}-${bbrRelease}`,
    entryRoute: `${name}-entry`,
    modelsFilter: `${name}-models`,
    notFoundFilter: `${name}-not-found`,
    bbrPolicy: `${name}-body-based-router`,
    clientTrafficPolicy: `${name}-client-traffic`,
    entrySecurityPolicy: `${name}-entry-access`,
    keysSecret: `${name}-api-keys`,
    directResponseFilter: `${name}-answers`,
    accessFilter: `${name}-access`,
    requestAuthentication: `${name}-jwt`,
    authorizationPolicy: `${name}-access`,
    route: (slug) => `${name}-${slug}`,
    routeSecurityPolicy: (slug) => `${name}-${slug}-access`,
    routeTrafficPolicy: (slug) => `${name}-${slug}-rate-limit`,
    referenceGrant: `${namespace}-${name}`,
  };
}

/** The Service the Gateway's controller makes for the endpoint (what clients call), and its FQDN. */
export function endpointService(className: 'istio' | 'envoy', name: string, namespace: string): { readonly name: string; readonly namespace: string; readonly host: string } {
  const service = className === 'istio' ? { name: `${name}-istio`, namespace } : { name: envoyProxyServiceName(namespace, name), namespace: ENVOY_GATEWAY_NAMESPACE };
  return { ...service, host: serviceHost(service.name, service.namespace) };
}
