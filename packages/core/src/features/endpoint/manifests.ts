import { ENVOY_GATEWAY_API } from '../../envoy-gateway.ts';
import { gatewayParametersManifest } from '../../upstream/2026-08/gateway.ts';
import type { Values } from '../../values/merge.ts';
import { nodeAffinityFor, type Toleration } from '../../values/scheduling.ts';
import { BBR_MESSAGE_TIMEOUT, BBR_PORT, MODEL_HEADER, RULE_MAX_MATCHES } from './facts.ts';
import { endpointLabels, type EndpointNames } from './names.ts';
import type { EndpointAccessPlan, EndpointModel, EndpointModelList, EndpointPlan } from './plan.ts';

/**
 * The objects of the stack's endpoint, as pure builders of the plan (docs/endpoint.md has the same
 * per class). Every request enters one Gateway; the body-based router (GAIE's, its chart) names the
 * request's `model` in {@link MODEL_HEADER} and has the route chosen again; each model's HTTPRoute
 * matches its names (and its adapters') in that header and sends to the model's own pool, proxy or
 * Service.
 *
 * Envoy Gateway (class `envoy`), read in v1.8.1:
 * - Envoy Gateway enables each policy's filter per route, and Envoy creates a request's filter chain
 *   once, from the route chosen when its headers arrive (envoy `filter_chain_helper.cc`: a filter the
 *   route disables is not created): so everything that must run for every request — the key check,
 *   the body-based router — is on the route requests enter by, the entry route (`/` and `GET
 *   /v1/models`, both answered by the Gateway itself when no model's route takes the request: the
 *   model list, or the unknown-model error). After the router names the model, the model's route is
 *   chosen; what Envoy Gateway runs after the ext_proc filters reads the route again: RBAC (each
 *   model's grants: a SecurityPolicy `authorization` on its route) and the local rate limit (its
 *   BackendTrafficPolicy) — `internal/xds/translator/httpfilters.go`: api_key_auth 6, basic_auth 7,
 *   jwt_authn 9, ext_proc 100+, rbac 301, local_ratelimit 302. An EPP's ext_proc on a model's route
 *   would never be created for such a request: llm-d models are reached through the Router's own
 *   proxy (rules.ts).
 * - A client could name a model in the header itself and be routed before the router runs: a
 *   ClientTrafficPolicy removes the header before routing (`headers.earlyRequestHeaders`).
 * - `HTTPRouteFilter.directResponse` answers with a fixed body (a substitution format string: the
 *   names are held to a charset without `%`, facts.ts).
 *
 * Istio (class `istio`): the chart's EnvoyFilter puts the router first in the gateway's chain for
 * every request; Istio's own inference ext_proc is one listener-wide filter that each route points
 * at its pool's EPP (pilot `networking/core/route/route.go`, ExtProcPerRoute overrides, read when
 * the filter runs: after the router), so a model's route is an HTTPRoute to its InferencePool. Istio
 * has no direct response in Gateway API: a Lua filter (Istio's proxy builds `envoy.filters.http.lua`)
 * answers `GET /v1/models` and requests no route takes, before the router filter; access is Envoy's
 * basic_auth (first, from an EnvoyFilter) or Istio's JWT, and one AuthorizationPolicy with a rule per
 * key (or per model, for a JWT's claim) over the header the router set.
 */

/** What the endpoint's builders need of the access feature (the plan step passes it: a feature imports no other feature). */
export interface EndpointTools {
  /** The header the gateway sets to the authenticated caller (a key's name, a token's `sub`). */
  readonly clientHeader: string;
  /** The key of Envoy Gateway's `basicAuth` Secret holding the htpasswd text. */
  readonly htpasswdKey: string;
  /** The labels Istio gives the pods of a Gateway it deploys. */
  readonly istioGatewayPodLabels: (gateway: string) => Record<string, string>;
  readonly jwksProblem: (text: string) => string | null;
  /** Istio: the EnvoyFilter patch checking keys first in the gateway's chain (basic_auth over their hashes, the key's name in {@link clientHeader}). */
  readonly istioBasicAuthPatch: (htpasswd: string) => Values;
  /** Istio: the EnvoyFilter patch putting a filter just before the router. */
  readonly istioBeforeRouterPatch: (filter: Values) => Values;
}

/** One model's objects on the endpoint. */
export interface EndpointRouteManifests {
  readonly model: string;
  /** In the model's namespace: lets the endpoint's routes reach its Service or InferencePool. */
  readonly referenceGrant: Record<string, unknown>;
  readonly httpRoute: Record<string, unknown>;
  /** Envoy Gateway: the key check and the model's grants on its route. */
  readonly securityPolicy: Record<string, unknown> | null;
  /** Envoy Gateway: the rate limit per caller on its route. */
  readonly backendTrafficPolicy: Record<string, unknown> | null;
}

/** The endpoint's objects, in the order they are applied; none holds a key (see {@link endpointKeyObjects}). */
export interface EndpointManifests {
  readonly namespace: Record<string, unknown>;
  readonly gateway: Record<string, unknown>;
  readonly gatewayParameters: Record<string, unknown> | null;
  /** Envoy Gateway: the header removed before routing. */
  readonly clientTrafficPolicy: Record<string, unknown> | null;
  /** Envoy Gateway: the answers of `GET /v1/models` and of an unknown model. */
  readonly modelsFilter: Record<string, unknown> | null;
  readonly notFoundFilter: Record<string, unknown> | null;
  /** Envoy Gateway: the body-based router on the entry route. */
  readonly bbrPolicy: Record<string, unknown> | null;
  /** Envoy Gateway: the key or token check on the entry route (null when open). */
  readonly entrySecurityPolicy: Record<string, unknown> | null;
  readonly entryRoute: Record<string, unknown> | null;
  /** Istio: the Lua filter answering `GET /v1/models` and unknown models. */
  readonly directResponseFilter: Record<string, unknown> | null;
  /** Istio: the JWT check and the grants. */
  readonly requestAuthentication: Record<string, unknown> | null;
  readonly authorizationPolicy: Record<string, unknown> | null;
  readonly routes: readonly EndpointRouteManifests[];
}

type PlanCore = Omit<EndpointPlan, 'manifests'>;

const GATEWAY_API = 'gateway.networking.k8s.io';
const EG = `${ENVOY_GATEWAY_API.group}/${ENVOY_GATEWAY_API.version}`;
/** The JWT provider's name on Envoy Gateway: the key its payload is kept under for the grants (authorization.go reads `jwt_authn` metadata by provider name). */
export const ENDPOINT_JWT_PROVIDER = 'app-serving';
/** The header clients send a key in (Bearer). */
const AUTHORIZATION = 'Authorization';

/** The OpenAI error body of a request no model of the endpoint takes. */
export function notFoundBody(): string {
  return JSON.stringify({
    error: {
      message: 'The model in the request is not served by this endpoint, or the request names none: GET /v1/models lists the models it serves.',
      type: 'invalid_request_error',
      param: 'model',
      code: 'model_not_found',
    },
  });
}

/** The annotation naming the models an answer lists: what `app-serving diff` shows when a model comes or goes (the body itself is JSON cut short). */
export const MODELS_ANNOTATION = 'app-serving.io/models';

function listAnnotation(list: EndpointModelList): Record<string, string> {
  return { [MODELS_ANNOTATION]: list.data.map((d) => d.id).join(', ') };
}

/** The body of `GET /v1/models`. */
export function modelListBody(list: EndpointModelList): string {
  return JSON.stringify(list);
}

/** The endpoint's objects (see {@link EndpointManifests}). */
export function endpointManifests(plan: PlanCore, tools: EndpointTools): EndpointManifests {
  const { names } = plan;
  const meta = (name: string, slug?: string) => ({ name, namespace: plan.namespace, labels: endpointLabels(plan.name, slug) });
  const gatewayRef = { group: GATEWAY_API, kind: 'Gateway', name: names.gateway };
  const routeRef = (name: string) => ({ group: GATEWAY_API, kind: 'HTTPRoute', name });
  const envoy = plan.class === 'envoy';
  const parameters = gatewayParametersManifest({
    name: names.parameters,
    namespace: plan.namespace,
    slug: '',
    labels: endpointLabels(plan.name),
    className: plan.class,
    gatewayClassName: plan.gatewayClassName,
    routeNamespaces: 'Same',
    affinity: nodeAffinityFor(plan.nodeSelector),
    tolerations: plan.tolerations as Toleration[],
    pullSecret: plan.pullSecret,
  });
  const gateway = {
    apiVersion: `${GATEWAY_API}/v1`,
    kind: 'Gateway',
    metadata: { ...meta(names.gateway), labels: { ...endpointLabels(plan.name), ...(!envoy && { 'istio.io/enable-inference-extproc': 'true' }) } },
    spec: {
      gatewayClassName: plan.gatewayClassName,
      listeners: [{ name: 'http', protocol: 'HTTP', port: plan.port, ...(plan.hostname !== null && { hostname: plan.hostname }), allowedRoutes: { namespaces: { from: 'Same' } } }],
      ...(parameters && { infrastructure: { parametersRef: envoy ? { group: ENVOY_GATEWAY_API.group, kind: 'EnvoyProxy', name: names.parameters } : { group: '', kind: 'ConfigMap', name: names.parameters } } }),
    },
  };
  const access = plan.access;
  const secured = access.mode !== 'open';
  const routes = plan.models.map((model) => routeManifests(plan, model, tools));

  if (!envoy) {
    return {
      namespace: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: plan.namespace, labels: endpointLabels(plan.name) } },
      gateway,
      gatewayParameters: parameters,
      clientTrafficPolicy: null,
      modelsFilter: null,
      notFoundFilter: null,
      bbrPolicy: null,
      entrySecurityPolicy: null,
      entryRoute: null,
      directResponseFilter: {
        apiVersion: 'networking.istio.io/v1alpha3',
        kind: 'EnvoyFilter',
        metadata: { ...meta(names.directResponseFilter), annotations: listAnnotation(plan.list) },
        spec: {
          targetRefs: [gatewayRef],
          configPatches: [
            {
              applyTo: 'HTTP_FILTER',
              match: { context: 'GATEWAY', listener: { filterChain: { filter: { name: 'envoy.filters.network.http_connection_manager', subFilter: { name: 'envoy.filters.http.router' } } } } },
              patch: {
                operation: 'INSERT_BEFORE',
                value: { name: 'envoy.filters.http.lua', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua', default_source_code: { inline_string: luaAnswers(plan) } } },
              },
            },
          ],
        },
      },
      requestAuthentication:
        access.mode === 'jwt'
          ? {
              apiVersion: 'security.istio.io/v1',
              kind: 'RequestAuthentication',
              metadata: meta(names.requestAuthentication),
              spec: {
                targetRefs: [gatewayRef],
                jwtRules: [
                  {
                    issuer: access.jwt!.issuer,
                    ...(access.jwt!.audiences.length > 0 && { audiences: [...access.jwt!.audiences] }),
                    ...(access.jwt!.jwksUri !== null ? { jwksUri: access.jwt!.jwksUri } : { jwks: access.jwt!.jwks! }),
                    outputClaimToHeaders: [{ header: tools.clientHeader, claim: 'sub' }],
                  },
                ],
              },
            }
          : null,
      authorizationPolicy: secured ? { apiVersion: 'security.istio.io/v1', kind: 'AuthorizationPolicy', metadata: meta(names.authorizationPolicy), spec: { targetRefs: [gatewayRef], action: 'ALLOW', rules: istioRules(plan, tools) } } : null,
      routes,
    };
  }

  const filter = (name: string, status: number, body: string, annotate = false) => ({
    apiVersion: EG,
    kind: 'HTTPRouteFilter',
    metadata: { ...meta(name), ...(annotate && { annotations: listAnnotation(plan.list) }) },
    spec: { directResponse: { contentType: 'application/json', statusCode: status, body: { type: 'Inline', inline: body } } },
  });
  const extensionRef = (name: string) => ({ type: 'ExtensionRef', extensionRef: { group: ENVOY_GATEWAY_API.group, kind: 'HTTPRouteFilter', name } });
  return {
    namespace: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: plan.namespace, labels: endpointLabels(plan.name) } },
    gateway,
    gatewayParameters: parameters,
    clientTrafficPolicy: {
      apiVersion: EG,
      kind: 'ClientTrafficPolicy',
      metadata: meta(names.clientTrafficPolicy),
      spec: { targetRefs: [gatewayRef], headers: { earlyRequestHeaders: { remove: [MODEL_HEADER] } } },
    },
    modelsFilter: filter(names.modelsFilter, 200, modelListBody(plan.list), true),
    notFoundFilter: filter(names.notFoundFilter, 404, notFoundBody()),
    bbrPolicy: {
      apiVersion: EG,
      kind: 'EnvoyExtensionPolicy',
      metadata: meta(names.bbrPolicy),
      spec: {
        targetRefs: [routeRef(names.entryRoute)],
        extProc: [
          {
            backendRefs: [{ group: '', kind: 'Service', name: names.bbrService, port: BBR_PORT }],
            // Headers then the whole body to the router, which answers the headers (with the model's
            // header and clear_route_cache) once it has read the body: the chart's --streaming.
            processingMode: { request: { body: 'FullDuplexStreamed' } },
            failOpen: false,
            messageTimeout: BBR_MESSAGE_TIMEOUT,
          },
        ],
      },
    },
    entrySecurityPolicy: secured ? { apiVersion: EG, kind: 'SecurityPolicy', metadata: meta(names.entrySecurityPolicy), spec: { targetRefs: [routeRef(names.entryRoute)], ...envoyAuthentication(plan, tools) } } : null,
    entryRoute: {
      apiVersion: `${GATEWAY_API}/v1`,
      kind: 'HTTPRoute',
      metadata: meta(names.entryRoute),
      spec: {
        parentRefs: [gatewayRef],
        rules: [
          { matches: [{ path: { type: 'Exact', value: '/v1/models' }, method: 'GET' }], filters: [extensionRef(names.modelsFilter)] },
          { matches: [{ path: { type: 'PathPrefix', value: '/' } }], filters: [extensionRef(names.notFoundFilter)] },
        ],
      },
    },
    directResponseFilter: null,
    requestAuthentication: null,
    authorizationPolicy: null,
    routes,
  };
}

/** One model's route on the endpoint, its grant in the model's namespace and (Envoy Gateway) its policies. */
function routeManifests(plan: PlanCore, model: EndpointModel, tools: EndpointTools): EndpointRouteManifests {
  const labels = endpointLabels(plan.name, model.slug);
  const route = model.route;
  const matches = model.names.map((name) => ({ path: { type: 'PathPrefix', value: '/' }, headers: [{ type: 'Exact', name: MODEL_HEADER, value: name }] }));
  const backendRef = {
    group: model.backend.group,
    kind: model.backend.kind,
    name: model.backend.name,
    namespace: model.backend.namespace,
    ...(model.backend.port !== null && { port: model.backend.port }),
  };
  const rules = [];
  for (let i = 0; i < matches.length; i += RULE_MAX_MATCHES) rules.push({ matches: matches.slice(i, i + RULE_MAX_MATCHES), backendRefs: [backendRef], timeouts: { request: model.requestTimeout } });
  const envoy = plan.class === 'envoy';
  const targetRefs = [{ group: GATEWAY_API, kind: 'HTTPRoute', name: route }];
  const access = plan.access;
  return {
    model: model.model,
    referenceGrant: {
      apiVersion: `${GATEWAY_API}/v1beta1`,
      kind: 'ReferenceGrant',
      metadata: { name: plan.names.referenceGrant, namespace: model.namespace, labels },
      spec: { from: [{ group: GATEWAY_API, kind: 'HTTPRoute', namespace: plan.namespace }], to: [{ group: model.backend.group, kind: model.backend.kind, name: model.backend.name }] },
    },
    httpRoute: { apiVersion: `${GATEWAY_API}/v1`, kind: 'HTTPRoute', metadata: { name: route, namespace: plan.namespace, labels }, spec: { parentRefs: [{ group: GATEWAY_API, kind: 'Gateway', name: plan.names.gateway }], rules } },
    securityPolicy:
      envoy && access.mode !== 'open'
        ? {
            apiVersion: EG,
            kind: 'SecurityPolicy',
            metadata: { name: model.securityPolicy, namespace: plan.namespace, labels },
            spec: { targetRefs, ...envoyAuthentication(plan, tools), authorization: envoyGrants(access, model, tools) },
          }
        : null,
    backendTrafficPolicy:
      envoy && model.requestsPerMinute !== null
        ? {
            apiVersion: EG,
            kind: 'BackendTrafficPolicy',
            metadata: { name: model.trafficPolicy, namespace: plan.namespace, labels },
            spec: {
              targetRefs,
              rateLimit: {
                type: 'Local',
                local: {
                  rules: [
                    access.mode === 'open'
                      ? { limit: { requests: model.requestsPerMinute, unit: 'Minute' } }
                      : { clientSelectors: [{ headers: [{ name: tools.clientHeader, type: 'Distinct' }] }], limit: { requests: model.requestsPerMinute, unit: 'Minute' } },
                  ],
                },
              },
            },
          }
        : null,
  };
}

/**
 * The key or token check of a SecurityPolicy on the endpoint: Envoy's api_key_auth (Bearer; the
 * key's name forwarded in the client header, the key removed before the request goes on), basic_auth
 * (hashes; the name forwarded), or jwt_authn (the token's `sub` forwarded; its payload kept under
 * {@link ENDPOINT_JWT_PROVIDER} for the grants).
 */
function envoyAuthentication(plan: PlanCore, tools: EndpointTools): Values {
  const access = plan.access;
  const secret = { name: plan.names.keysSecret };
  if (access.mode === 'apiKeys') {
    return access.keyFormat === 'bearer'
      ? { apiKeyAuth: { credentialRefs: [{ group: '', kind: 'Secret', ...secret }], extractFrom: [{ headers: [AUTHORIZATION] }], forwardClientIDHeader: tools.clientHeader, sanitize: true } }
      : { basicAuth: { users: secret, forwardUsernameHeader: tools.clientHeader } };
  }
  const jwt = access.jwt!;
  return {
    jwt: {
      providers: [
        {
          name: ENDPOINT_JWT_PROVIDER,
          issuer: jwt.issuer,
          ...(jwt.audiences.length > 0 && { audiences: [...jwt.audiences] }),
          ...(jwt.jwksUri !== null ? { remoteJWKS: { uri: jwt.jwksUri } } : { localJWKS: { type: 'Inline', inline: jwt.jwks! } }),
          claimToHeaders: [{ header: tools.clientHeader, claim: 'sub' }],
        },
      ],
    },
  };
}

/** A model's grants on its route (Envoy Gateway's RBAC, after the router named the model): the keys granted it, or a token whose claim names it. */
function envoyGrants(access: EndpointAccessPlan, model: EndpointModel, tools: EndpointTools): Values {
  if (access.mode === 'apiKeys') {
    return {
      defaultAction: 'Deny',
      rules: model.keys.length > 0 ? [{ name: 'granted-keys', action: 'Allow', principal: { headers: [{ name: tools.clientHeader, values: [...model.keys] }] } }] : [],
    };
  }
  const claim = access.jwt!.modelsClaim;
  // A list claim (StringArray: one of its items) or a single name (String).
  return {
    defaultAction: 'Deny',
    rules: (['StringArray', 'String'] as const).map((valueType) => ({
      name: `granted-claim-${valueType.toLowerCase()}`,
      action: 'Allow',
      principal: { jwt: { provider: ENDPOINT_JWT_PROVIDER, claims: [{ name: claim, valueType, values: [model.servedName] }] } },
    })),
  };
}

/** Istio's grants: one ALLOW policy; a request no rule allows is refused (403). */
function istioRules(plan: PlanCore, tools: EndpointTools): Values[] {
  const access = plan.access;
  const header = (name: string) => `request.headers[${name.toLowerCase()}]`;
  const allNames = plan.models.flatMap((m) => m.names);
  const listRule = (from: Values[] | undefined, when: Values[] | undefined) => ({ ...(from && { from }), to: [{ operation: { methods: ['GET'], paths: ['/v1/models'] } }], ...(when && { when }) });
  // A request no model's route takes is let through to the Lua filter's 404 (it reaches no model).
  const unknown = (from: Values[] | undefined, when: Values[]) => ({ ...(from && { from }), when: [...when, ...(allNames.length ? [{ key: header(MODEL_HEADER), notValues: allNames }] : [])] });
  if (access.mode === 'apiKeys') {
    const keys = Object.keys(access.grants).sort();
    const client = { key: header(tools.clientHeader), values: keys };
    return [
      ...keys.flatMap((key) => {
        const models = plan.models.filter((m) => m.keys.includes(key));
        return models.length ? [{ when: [{ key: header(tools.clientHeader), values: [key] }, { key: header(MODEL_HEADER), values: models.flatMap((m) => m.names) }] }] : [];
      }),
      listRule(undefined, [client]),
      unknown(undefined, [client]),
    ];
  }
  const jwt = access.jwt!;
  const from = [{ source: { requestPrincipals: [`${jwt.issuer}/*`] } }];
  const claim = `request.auth.claims[${jwt.modelsClaim.split('.').join('][')}]`;
  return [
    ...plan.models.map((m) => ({ from, when: [{ key: claim, values: [m.servedName] }, { key: header(MODEL_HEADER), values: [...m.names] }] })),
    listRule(from, undefined),
    unknown(from, []),
  ];
}

/**
 * The Lua filter of an Istio endpoint: `GET /v1/models` answered with the list, and a request whose
 * model no route takes (the router left the header unset, or named no model here) with the OpenAI
 * 404. The names are held to a charset without `]` (facts.ts `ENDPOINT_NAME`): Lua long brackets hold them.
 */
export function luaAnswers(plan: Pick<PlanCore, 'list' | 'models'>): string {
  const names = plan.models.flatMap((m) => m.names);
  return [
    `local MODELS = [==[${modelListBody(plan.list)}]==]`,
    `local NOT_FOUND = [==[${notFoundBody()}]==]`,
    'local SERVED = {}',
    `for _, name in ipairs({ ${names.map((n) => `[==[${n}]==]`).join(', ')} }) do SERVED[name] = true end`,
    'function envoy_on_request(handle)',
    '  local headers = handle:headers()',
    '  local path = headers:get(":path") or ""',
    '  if headers:get(":method") == "GET" and (path == "/v1/models" or string.sub(path, 1, 11) == "/v1/models?") then',
    '    handle:respond({ [":status"] = "200", ["content-type"] = "application/json" }, MODELS)',
    '    return',
    '  end',
    `  local model = headers:get("${MODEL_HEADER.toLowerCase()}")`,
    '  if model == nil or SERVED[model] == nil then',
    '    handle:respond({ [":status"] = "404", ["content-type"] = "application/json" }, NOT_FOUND)',
    '  end',
    'end',
    '',
  ].join('\n');
}

/**
 * The objects that hold the endpoint's keys, from their secret text: Envoy Gateway's Secret (the
 * keys in clear under their names for Bearer, the htpasswd text for Basic), or Istio's EnvoyFilter
 * (basic_auth with the hashes first in the chain, and the local rate limit before the router).
 * `keys` is the Secret's data for Bearer, `htpasswd` the hashed text for Basic. None for JWT or an
 * open endpoint without a limit. Pass what they return as the secrets they are.
 */
export function endpointKeyObjects(plan: EndpointPlan, tools: EndpointTools, secrets: { readonly keys?: Readonly<Record<string, string>>; readonly htpasswd?: string }): Record<string, unknown>[] {
  const access = plan.access;
  const meta = (name: string) => ({ name, namespace: plan.namespace, labels: endpointLabels(plan.name) });
  if (plan.class === 'envoy') {
    if (access.mode !== 'apiKeys') return [];
    const data = access.keyFormat === 'bearer' ? { ...(secrets.keys ?? {}) } : { [tools.htpasswdKey]: secrets.htpasswd ?? '' };
    return [{ apiVersion: 'v1', kind: 'Secret', metadata: meta(plan.names.keysSecret), type: 'Opaque', stringData: data }];
  }
  const patches: Values[] = [];
  const limited = plan.models.filter((m) => m.requestsPerMinute !== null);
  if (limited.length > 0) patches.push(tools.istioBeforeRouterPatch(istioRateLimit(plan, limited, tools)));
  if (access.mode === 'apiKeys') patches.push(tools.istioBasicAuthPatch(secrets.htpasswd ?? ''));
  if (patches.length === 0) return [];
  // Applied after the body-based router's EnvoyFilter (priority 0): INSERT_FIRST then puts the key check before it.
  return [{ apiVersion: 'networking.istio.io/v1alpha3', kind: 'EnvoyFilter', metadata: meta(plan.names.accessFilter), spec: { targetRefs: [{ group: GATEWAY_API, kind: 'Gateway', name: plan.names.gateway }], priority: 10, configPatches: patches } }];
}

/** Envoy's local_ratelimit for an Istio endpoint: a bucket per caller (key or subject; all together when open) and model name, each model's size. */
function istioRateLimit(plan: EndpointPlan, limited: readonly EndpointModel[], tools: EndpointTools): Values {
  const bucket = (n: number) => ({ max_tokens: n, tokens_per_fill: n, fill_interval: '60s' });
  const full = { numerator: 100, denominator: 'HUNDRED' };
  const perCaller = plan.access.mode !== 'open';
  const fallback = plan.access.requestsPerMinute ?? Math.max(...limited.map((m) => m.requestsPerMinute!));
  return {
    name: 'envoy.filters.http.local_ratelimit',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit',
      stat_prefix: 'app_serving_endpoint_rate_limit',
      filter_enabled: { runtime_key: 'app_serving_endpoint_rate_limit_enabled', default_value: full },
      filter_enforced: { runtime_key: 'app_serving_endpoint_rate_limit_enforced', default_value: full },
      // Requests no model's route takes (answered 404, or the list) share this bucket.
      token_bucket: bucket(fallback),
      always_consume_default_token_bucket: false,
      enable_x_ratelimit_headers: 'DRAFT_VERSION_03',
      descriptors: limited.flatMap((m) =>
        m.names.map((name) => ({ entries: [...(perCaller ? [{ key: 'client' }] : []), { key: 'model', value: name }], token_bucket: bucket(m.requestsPerMinute!) })),
      ),
      rate_limits: [
        {
          actions: [
            ...(perCaller ? [{ request_headers: { header_name: tools.clientHeader, descriptor_key: 'client' } }] : []),
            { request_headers: { header_name: MODEL_HEADER.toLowerCase(), descriptor_key: 'model' } },
          ],
        },
      ],
      ...(perCaller && { max_dynamic_descriptors: 1000 }),
    },
  };
}
