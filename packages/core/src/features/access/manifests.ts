import { CLIENT_HEADER, type AccessPlan } from './plan.ts';
import { commonLabels } from '../../manifests/common.ts';

/**
 * The objects that enforce a model's `access` at its gateway, as pure builders of narrow inputs (a
 * gateway's name and pod labels, a namespace, a route's name), so that any generation of upstream
 * that has such a gateway or route can call them.
 *
 * - Istio (llm-d): `RequestAuthentication` + `AuthorizationPolicy` for JWT, and one `EnvoyFilter`
 *   with Envoy's basic_auth (API keys, hashed) and local_ratelimit filters, all selecting the
 *   gateway's pods by label. Istio labels the pods of a Gateway it deploys
 *   `gateway.networking.k8s.io/gateway-name: <gateway>` (istio.io, tasks/traffic-management/ingress/gateway-api).
 * - Envoy Gateway (KServe, and 2026-08 llm-d models of class `envoy`): a `SecurityPolicy` (basicAuth
 *   or jwt) and a `BackendTrafficPolicy` (local rate limit) on the model's HTTPRoute, and the Secret
 *   with the keys' hashes; where the route has a BackendTrafficPolicy of its own, the rate limit goes
 *   into it ({@link envoyRateLimit}).
 *
 * Rate limits are local: each gateway pod (Envoy process) counts on its own, so N pods let N times
 * the limit through. Neither needs a rate-limit service or Redis.
 */

/** The gateway workload of an llm-d model: what the Istio objects select. */
export interface IstioGatewayRef {
  readonly namespace: string;
  /** The Gateway's name; names the access objects. */
  readonly name: string;
  /** Labels of the gateway's pods. */
  readonly podLabels: Readonly<Record<string, string>>;
}

/** The route of a model on an Envoy Gateway: what the Envoy Gateway policies target. */
export interface EnvoyRouteRef {
  readonly namespace: string;
  /** The HTTPRoute's name (KServe's `<service>-kserve-route`; a 2026-08 llm-d model's `<release>`). */
  readonly route: string;
  /**
   * The route has a BackendTrafficPolicy of its own (a 2026-08 llm-d model on class `envoy`: the
   * EPP's endpoint override), which takes the rate limit ({@link envoyRateLimit}): Envoy Gateway
   * attaches one BackendTrafficPolicy per route, so access makes none. @default false
   */
  readonly sharedBackendTraffic?: boolean;
}

/** The label Istio puts on the pods of a Gateway it deploys. */
export const ISTIO_GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';

/** Pod labels of an Istio-deployed Gateway's workload. */
export function istioGatewayPodLabels(gateway: string): Record<string, string> {
  return { [ISTIO_GATEWAY_NAME_LABEL]: gateway };
}

/** Names of the access objects of an Istio gateway (≤ 63 + 7 characters: the Gateway's name is checked ≤ 63). */
export function istioAccessNames(gateway: string) {
  return { requestAuthentication: `${gateway}-jwt`, authorizationPolicy: `${gateway}-access`, envoyFilter: `${gateway}-access` };
}

/** Names of the access objects of a KServe model's route. */
export function envoyAccessNames(route: string) {
  return { securityPolicy: `${route}-access`, backendTrafficPolicy: `${route}-rate-limit`, secret: `${route}-api-keys` };
}

/** The key of the Envoy Gateway `basicAuth` Secret that holds the htpasswd text (envoy-gateway-v1.8.1 CRD, SecurityPolicy `basicAuth.users`). */
export const HTPASSWD_SECRET_KEY = '.htpasswd';

const SIXTY_SECONDS = '60s';

/** A token bucket of `perMinute` requests, refilled whole every minute. */
function perMinuteBucket(perMinute: number) {
  return { max_tokens: perMinute, tokens_per_fill: perMinute, fill_interval: SIXTY_SECONDS };
}

/**
 * Envoy's local_ratelimit filter (envoy `extensions.filters.http.local_ratelimit.v3.LocalRateLimit`,
 * Envoy 1.36 as in Istio 1.28.5's proxy; fields read from go-control-plane envoy v1.36.0).
 * Open: one bucket for everyone. Otherwise one bucket per value of {@link CLIENT_HEADER}, which
 * the authentication filter before it sets: named descriptors for the known keys, a wildcard
 * descriptor (dynamic, an LRU of `max_dynamic_descriptors` subjects) for JWT subjects.
 */
export function localRateLimitFilter(access: AccessPlan) {
  const perMinute = access.requestsPerMinute!;
  const full = { numerator: 100, denominator: 'HUNDRED' };
  const base = {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit',
    stat_prefix: 'app_serving_rate_limit',
    // Both default to 0%: without them the filter neither counts nor refuses.
    filter_enabled: { runtime_key: 'app_serving_rate_limit_enabled', default_value: full },
    filter_enforced: { runtime_key: 'app_serving_rate_limit_enforced', default_value: full },
    token_bucket: perMinuteBucket(perMinute),
    enable_x_ratelimit_headers: 'DRAFT_VERSION_03',
  };
  if (access.mode === 'open') return { name: 'envoy.filters.http.local_ratelimit', typed_config: base };
  const descriptors =
    access.mode === 'apiKeys'
      ? access.apiKeys.map((key) => ({ entries: [{ key: 'client', value: key }], token_bucket: perMinuteBucket(perMinute) }))
      : [{ entries: [{ key: 'client' }], token_bucket: perMinuteBucket(perMinute) }];
  return {
    name: 'envoy.filters.http.local_ratelimit',
    typed_config: {
      ...base,
      // The default bucket only for requests without a client (there are none once authenticated).
      always_consume_default_token_bucket: false,
      descriptors,
      rate_limits: [{ actions: [{ request_headers: { header_name: CLIENT_HEADER, descriptor_key: 'client' } }] }],
      ...(access.mode === 'jwt' && { max_dynamic_descriptors: 1000 }),
    },
  };
}

/**
 * The Istio objects of a model's access, for its gateway: none for an open model without a limit.
 * `htpasswd` is the keys' hashes ({@link htpasswd}), required in mode apiKeys; pass it as the
 * secret it is derived from.
 */
export function istioAccessManifests(gateway: IstioGatewayRef, slug: string, access: AccessPlan, htpasswd?: string): Record<string, unknown>[] {
  const names = istioAccessNames(gateway.name);
  const meta = (name: string) => ({ name, namespace: gateway.namespace, labels: commonLabels(slug) });
  const selector = { matchLabels: { ...gateway.podLabels } };
  const objects: Record<string, unknown>[] = [];
  if (access.mode === 'jwt') {
    const jwt = access.jwt!;
    objects.push({
      apiVersion: 'security.istio.io/v1',
      kind: 'RequestAuthentication',
      metadata: meta(names.requestAuthentication),
      spec: {
        selector,
        jwtRules: [
          {
            issuer: jwt.issuer,
            ...(jwt.audiences.length > 0 && { audiences: [...jwt.audiences] }),
            ...(jwt.jwksUri !== null ? { jwksUri: jwt.jwksUri } : { jwks: jwt.jwks! }),
            // The subject, for the per-client rate limit; Envoy's jwt_authn writes it after verifying the token.
            outputClaimToHeaders: [{ header: CLIENT_HEADER, claim: 'sub' }],
          },
        ],
      },
    });
    // A RequestAuthentication alone lets requests without a token through; this ALLOW policy
    // admits only requests whose token verified (a request principal `<iss>/<sub>`), so any other
    // is refused with 403 (istio.io, security/authorization: "require a valid token").
    objects.push({
      apiVersion: 'security.istio.io/v1',
      kind: 'AuthorizationPolicy',
      metadata: meta(names.authorizationPolicy),
      spec: { selector, action: 'ALLOW', rules: [{ from: [{ source: { requestPrincipals: [`${jwt.issuer}/*`] } }] }] },
    });
  }
  const patches: Record<string, unknown>[] = [];
  // After the authentication filters (basic_auth first, Istio's jwt_authn and rbac), so a refused request costs no one's tokens.
  if (access.requestsPerMinute !== null) patches.push(istioBeforeRouterPatch(localRateLimitFilter(access)));
  if (access.mode === 'apiKeys') {
    if (htpasswd === undefined) throw new Error(`the API keys of ${gateway.namespace}/${gateway.name} need their htpasswd text`);
    patches.push(istioBasicAuthPatch(htpasswd));
  }
  if (patches.length > 0) {
    objects.push({
      apiVersion: 'networking.istio.io/v1alpha3',
      kind: 'EnvoyFilter',
      metadata: meta(names.envoyFilter),
      spec: { workloadSelector: { labels: { ...gateway.podLabels } }, configPatches: patches },
    });
  }
  return objects;
}

/** The match of an Istio gateway's HTTP connection manager (an EnvoyFilter's `HTTP_FILTER` patches). */
const ISTIO_GATEWAY_HCM = { context: 'GATEWAY', listener: { filterChain: { filter: { name: 'envoy.filters.network.http_connection_manager' } } } };

/**
 * An EnvoyFilter patch putting Envoy's basic_auth first in an Istio gateway's HTTP chain: the keys'
 * hashes (`htpasswd`), the authenticated key's name forwarded in {@link CLIENT_HEADER} (overwriting
 * whatever the caller sent under that name). A model's gateway and the stack's endpoint check keys so.
 */
export function istioBasicAuthPatch(htpasswd: string): Record<string, unknown> {
  return {
    applyTo: 'HTTP_FILTER',
    match: ISTIO_GATEWAY_HCM,
    patch: {
      operation: 'INSERT_FIRST',
      value: {
        name: 'envoy.filters.http.basic_auth',
        typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.basic_auth.v3.BasicAuth', users: { inline_string: htpasswd }, forward_username_header: CLIENT_HEADER },
      },
    },
  };
}

/** An EnvoyFilter patch putting `filter` just before the router, which every HTTP chain of an Istio gateway has. */
export function istioBeforeRouterPatch(filter: Record<string, unknown>): Record<string, unknown> {
  const hcm = ISTIO_GATEWAY_HCM.listener.filterChain.filter;
  return {
    applyTo: 'HTTP_FILTER',
    match: { ...ISTIO_GATEWAY_HCM, listener: { filterChain: { filter: { ...hcm, subFilter: { name: 'envoy.filters.http.router' } } } } },
    patch: { operation: 'INSERT_BEFORE', value: filter },
  };
}

/** The Secret of an Envoy Gateway `basicAuth`: the keys' hashes under `.htpasswd`. */
export function htpasswdSecretManifest(route: EnvoyRouteRef, slug: string, htpasswd: string) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: envoyAccessNames(route.route).secret, namespace: route.namespace, labels: commonLabels(slug) },
    type: 'Opaque',
    stringData: { [HTPASSWD_SECRET_KEY]: htpasswd },
  } as const;
}

/**
 * The Envoy Gateway policies of a model's access, on its HTTPRoute: a SecurityPolicy (basicAuth
 * with the Secret of {@link htpasswdSecretManifest}, or jwt) and a BackendTrafficPolicy (local rate
 * limit; none where the route's own takes it, `sharedBackendTraffic`). None for an open model
 * without a limit.
 */
export function envoyGatewayAccessManifests(route: EnvoyRouteRef, slug: string, access: AccessPlan): Record<string, unknown>[] {
  const names = envoyAccessNames(route.route);
  const meta = (name: string) => ({ name, namespace: route.namespace, labels: commonLabels(slug) });
  const targetRefs = [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: route.route }];
  const objects: Record<string, unknown>[] = [];
  if (access.mode === 'apiKeys') {
    objects.push({
      apiVersion: 'gateway.envoyproxy.io/v1alpha1',
      kind: 'SecurityPolicy',
      metadata: meta(names.securityPolicy),
      spec: { targetRefs, basicAuth: { users: { name: names.secret }, forwardUsernameHeader: CLIENT_HEADER } },
    });
  } else if (access.mode === 'jwt') {
    const jwt = access.jwt!;
    objects.push({
      apiVersion: 'gateway.envoyproxy.io/v1alpha1',
      kind: 'SecurityPolicy',
      metadata: meta(names.securityPolicy),
      spec: {
        targetRefs,
        jwt: {
          providers: [
            {
              name: 'app-serving',
              issuer: jwt.issuer,
              ...(jwt.audiences.length > 0 && { audiences: [...jwt.audiences] }),
              ...(jwt.jwksUri !== null ? { remoteJWKS: { uri: jwt.jwksUri } } : { localJWKS: { type: 'Inline', inline: jwt.jwks! } }),
              claimToHeaders: [{ header: CLIENT_HEADER, claim: 'sub' }],
            },
          ],
        },
      },
    });
  }
  const rateLimit = envoyRateLimit(access);
  if (rateLimit && !route.sharedBackendTraffic) {
    objects.push({
      apiVersion: 'gateway.envoyproxy.io/v1alpha1',
      kind: 'BackendTrafficPolicy',
      metadata: meta(names.backendTrafficPolicy),
      spec: { targetRefs, rateLimit },
    });
  }
  return objects;
}

/** The API resource (plural) of each kind the builders above make. */
const ACCESS_RESOURCES: Readonly<Record<string, string>> = {
  RequestAuthentication: 'requestauthentications',
  AuthorizationPolicy: 'authorizationpolicies',
  EnvoyFilter: 'envoyfilters',
  SecurityPolicy: 'securitypolicies',
  BackendTrafficPolicy: 'backendtrafficpolicies',
  Secret: 'secrets',
};

/**
 * The API group and resource of every object that enforces `access` at a model's gateway — what
 * the deploying identity must be allowed to create (preflight's permission checks): derived from
 * the builders themselves, so that a new object is a new permission check too.
 */
export function accessResources(gateway: 'istio' | 'envoy-gateway', access: AccessPlan): Array<{ readonly group: string; readonly resource: string }> {
  const objects =
    gateway === 'istio'
      ? istioAccessManifests({ namespace: 'ns', name: 'gateway', podLabels: {} }, 'slug', access, '')
      : [...(access.mode === 'apiKeys' ? [htpasswdSecretManifest({ namespace: 'ns', route: 'route' }, 'slug', '')] : []), ...envoyGatewayAccessManifests({ namespace: 'ns', route: 'route' }, 'slug', access)];
  return objects.map((object) => {
    const { apiVersion, kind } = object as { apiVersion: string; kind: string };
    const resource = ACCESS_RESOURCES[kind];
    if (resource === undefined) throw new Error(`accessResources: no resource known for kind ${kind}`);
    return { group: apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '', resource };
  });
}

/**
 * A model's rate limit as an Envoy Gateway BackendTrafficPolicy's `rateLimit` (local: each proxy
 * pod counts on its own), or null without one. Per value of {@link CLIENT_HEADER} once
 * authenticated; for everyone together on an open model. Envoy Gateway orders basic_auth and
 * jwt_authn before local_ratelimit (envoyproxy/gateway internal/xds/translator/httpfilters.go,
 * newOrderedHTTPFilter), so the client header is the authenticated one when the limit counts it.
 */
export function envoyRateLimit(access: AccessPlan): Record<string, unknown> | null {
  if (access.requestsPerMinute === null) return null;
  const limit = { requests: access.requestsPerMinute, unit: 'Minute' };
  const rule = access.mode === 'open' ? { limit } : { clientSelectors: [{ headers: [{ name: CLIENT_HEADER, type: 'Distinct' }] }], limit };
  return { type: 'Local', local: { rules: [rule] } };
}
