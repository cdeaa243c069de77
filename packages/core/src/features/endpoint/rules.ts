import { CATEGORIES, CONFIG_NAMESPACE, type Category } from '../../constants.ts';
import type { StackConfig } from '../../config/load.ts';
import type { EndpointAccess, EndpointKeyFormat, ModelAccess, ModelEntry } from '../../config/types.ts';
import type { Issue } from '../../errors.ts';
import { modelOnEndpoint, modelUpstream } from '../../upstream/select.ts';

/**
 * Rules of the stack's `endpoint` across keys (docs/endpoint.md): what a platform and set can put
 * behind one shared Gateway, and who may reach which model through it. Every problem, each at its
 * key path. The rules that need the model folders (served names, adapters, KServe's scheduler) are
 * the plan's (plan.ts).
 */

/** The one model entry the endpoint sees. */
export interface EndpointEntry {
  readonly category: Category;
  readonly index: number;
  readonly entry: ModelEntry;
}

/** What the endpoint's rules need of the other features (the plan step passes them: a feature imports no other feature). */
export interface EndpointRuleTools {
  /** Why an inline JWKS would not do, or null (access's rule). */
  readonly jwksProblem: (text: string) => string | null;
}

/** The endpoint's class: its own, else (gateway mode) the Router's gateway class when that is istio or envoy, else envoy. */
export function endpointClass(config: Pick<StackConfig, 'endpoint' | 'router'>): 'istio' | 'envoy' {
  const own = config.endpoint?.class;
  if (own) return own;
  if (config.router?.mode === 'standalone') return 'envoy';
  const router = config.router?.gatewayClass ?? 'istio';
  return router === 'istio' || router === 'envoy' ? router : 'envoy';
}

/** How clients send a key: the stack's `keyFormat`, else `bearer` on Envoy Gateway and `basic` on Istio (whose proxy has no API-key filter). */
export function endpointKeyFormat(config: Pick<StackConfig, 'endpoint' | 'router'>): EndpointKeyFormat {
  return config.endpoint?.access?.keyFormat ?? (endpointClass(config) === 'istio' ? 'basic' : 'bearer');
}

/** The mode of the endpoint's access (absent: open, by default). */
export function endpointAccessMode(access: EndpointAccess | undefined): 'apiKeys' | 'jwt' | 'open' {
  return access?.apiKeys ? 'apiKeys' : access?.jwt ? 'jwt' : 'open';
}

/** Every enabled model entry the endpoint serves, in stack order. */
export function endpointEntries(config: Pick<StackConfig, 'models' | 'endpoint'>): EndpointEntry[] {
  return CATEGORIES.flatMap((category) =>
    config.models[category].map((entry, index) => ({ category, index, entry })).filter(({ entry }) => entry.enabled && modelOnEndpoint(config, entry)),
  );
}

/**
 * Whether a model's own access lets an endpoint key reach it: open, or the key is one of its own;
 * a model protected by JWT is not reached by an API key. A message when not.
 */
export function keyReachProblem(key: string, access: ModelAccess | undefined): string | null {
  if (!access || (access.open && !access.apiKeys && !access.jwt)) return null;
  if (access.apiKeys) return access.apiKeys.includes(key) ? null : `its own access admits only the keys ${access.apiKeys.join(', ')}`;
  if (access.jwt) return `its own access asks for a JWT from ${access.jwt.issuer}, which an API key is not`;
  return null;
}

/** The model names a key grants, `*` expanded to every model of the endpoint its own access admits. */
export function grantedModels(key: string, grants: readonly string[], entries: readonly EndpointEntry[]): string[] {
  if (grants.includes('*')) return entries.filter(({ entry }) => keyReachProblem(key, entry.access) === null).map(({ entry }) => entry.name);
  return [...new Set(grants)].filter((name) => entries.some(({ entry }) => entry.name === name && keyReachProblem(key, entry.access) === null));
}

/** The endpoint's rules across keys. */
export function checkEndpointRules(config: StackConfig, tools: EndpointRuleTools): Issue[] {
  const issues: Issue[] = [];
  const { locate } = config;
  const endpoint = config.endpoint;
  const at = (category: Category, index: number, ...rest: (string | number)[]) => ['models', category, index, ...rest];

  // The model's own gateway, on or off (`models[].gateway`), wherever the stack has an endpoint or not.
  for (const category of CATEGORIES) {
    config.models[category].forEach((entry, index) => {
      if (!entry.enabled || entry.gateway !== false) return;
      const platform = entry.platform ?? config.platform;
      if (platform === 'kserve') {
        issues.push(locate('config.contradiction', at(category, index, 'gateway'), "has no meaning for a KServe model: KServe routes it on the stack's KServe Gateway (kserve.gateway), which it shares; remove it"));
      } else if (modelUpstream(config, entry) === '2026-02') {
        issues.push(locate('config.contradiction', at(category, index, 'gateway'), 'cannot be false on the 2026-02 set: llm-d-infra always deploys the model\'s Gateway; move the model to the 2026-08 set (upstream: 2026-08), where it runs the llm-d Router\'s own proxy instead'));
      }
    });
  }

  if (!endpoint || !endpoint.enabled) return issues;

  const className = endpointClass(config);
  const entries = endpointEntries(config);

  for (const { category, index, entry } of entries) {
    const platform = entry.platform ?? config.platform;
    const upstream = modelUpstream(config, entry);
    if (upstream === '2026-02') {
      issues.push(
        locate(
          'config.contradiction',
          at(category, index, 'name'),
          `cannot be served by the stack's endpoint: it is on the 2026-02 set (${platform === 'kserve' ? 'KServe v0.18' : 'GAIE v1.2 and llm-d-infra'}), which the endpoint does not support — its body-based router is GAIE v1.5's, written against the 2026-08 set; move the model to upstream: 2026-08, or set endpoint: false for it`,
        ),
      );
      continue;
    }
    if (platform !== 'llm-d' || category !== 'generative') continue;
    // A generative llm-d model reached through its own Gateway: the endpoint routes to its
    // InferencePool, which only Istio's Gateway calls the EPP for after the body-based router.
    const ownGateway = entry.gateway !== false && (config.router?.mode ?? 'gateway') === 'gateway';
    if (!ownGateway) continue;
    const modelClass = config.router?.gatewayClass ?? 'istio';
    if (className === 'envoy') {
      issues.push(
        locate(
          'config.contradiction',
          at(category, index, 'gateway'),
          "must be false for this model to be on an Envoy Gateway endpoint: Envoy Gateway turns on an endpoint picker per route when the request arrives, before the body-based router has named the model, so the model's EPP would never run on the shared Gateway — with gateway: false the model runs the llm-d Router's own proxy (EPP included), which the endpoint routes to; or set endpoint.class: istio (with router.gatewayClass: istio), or endpoint: false",
        ),
      );
    } else if (modelClass !== 'istio') {
      issues.push(
        locate(
          'config.contradiction',
          at(category, index, 'gateway'),
          `must be false for this model to be on an Istio endpoint: its own Gateway is of class ${modelClass}, whose EPP the endpoint's Istio gateway does not call the way Istio does (TLS through the chart's DestinationRule) — with gateway: false it runs the llm-d Router's own proxy, which the endpoint routes to; or set router.gatewayClass: istio, or endpoint: false`,
        ),
      );
    }
  }

  issues.push(...accessRules(config, entries, className, tools));
  return issues;
}

/**
 * The endpoint's warnings (what deploys, but perhaps not as meant): an endpoint open by default,
 * keys held in clear (Bearer on Envoy Gateway, not said), a key format without keys, an endpoint
 * serving no model, and `models[].endpoint` without an endpoint.
 */
export function endpointWarnings(config: StackConfig): Issue[] {
  const warnings: Issue[] = [];
  const { locate } = config;
  const endpoint = config.endpoint;
  if (!endpoint || !endpoint.enabled) {
    for (const category of CATEGORIES) {
      config.models[category].forEach((entry, index) => {
        if (entry.enabled && entry.endpoint !== undefined) {
          warnings.push(locate('warning.no-effect', ['models', category, index, 'endpoint'], `has no effect: the stack has no endpoint${endpoint ? ' (endpoint.enabled is false)' : ''}`));
        }
      });
    }
    return warnings;
  }
  const entries = endpointEntries(config);
  if (entries.length === 0) {
    warnings.push(locate('warning.no-effect', ['endpoint'], 'serves no model: every enabled model says endpoint: false (or none is enabled); the endpoint would answer /v1/models with an empty list'));
  }
  const access = endpoint.access;
  if (!access) {
    warnings.push(
      locate(
        'warning.open-access',
        ['endpoint'],
        `the endpoint is open to anyone who reaches its Gateway${entries.length ? ` (${entries.map((e) => e.entry.name).join(', ')})` : ''}: set endpoint.access.apiKeys or endpoint.access.jwt, or endpoint.access.open: true to say so (docs/endpoint.md)`,
      ),
    );
  }
  const mode = endpointAccessMode(access);
  if (access?.keyFormat !== undefined && mode !== 'apiKeys') warnings.push(locate('warning.no-effect', ['endpoint', 'access', 'keyFormat'], 'has no effect without apiKeys'));
  if (mode === 'apiKeys' && access?.keyFormat === undefined && endpointKeyFormat(config) === 'bearer') {
    warnings.push(
      locate(
        'warning.keys-in-clear',
        ['endpoint', 'access', 'apiKeys'],
        `the endpoint's keys are checked as Authorization: Bearer <key> (what OpenAI clients send), so Envoy Gateway holds them in clear in the Secret ${endpoint.namespace}/${endpoint.name}-api-keys (its apiKeyAuth compares keys, not hashes): whoever may read Secrets there can use them. Set endpoint.access.keyFormat: bearer to say so, or basic to keep only SHA-1 hashes (clients then send HTTP Basic <name>:<key>)`,
      ),
    );
  }
  return warnings;
}

function accessRules(config: StackConfig, entries: readonly EndpointEntry[], className: 'istio' | 'envoy', tools: EndpointRuleTools): Issue[] {
  const issues: Issue[] = [];
  const { locate } = config;
  const access = config.endpoint?.access;
  const here = (...rest: (string | number)[]) => ['endpoint', 'access', ...rest];
  const modelAt = (e: EndpointEntry) => ['models', e.category, e.index, 'access'];
  const modes = (['apiKeys', 'jwt', 'open'] as const).filter((mode) => access?.[mode] !== undefined);
  if (access && modes.length === 0) issues.push(locate('config.missing-key', here(), 'says no mode: set one of apiKeys (key name → models), jwt (issuer, keys and the models claim) or open: true'));
  if (modes.length > 1) issues.push(locate('config.contradiction', here(modes[1]!), `sets ${modes.join(' and ')}: the endpoint has one mode; keep one of them`));
  const mode = endpointAccessMode(access);

  if (mode === 'apiKeys' && endpointKeyFormat(config) === 'bearer' && className === 'istio') {
    issues.push(
      locate(
        'config.contradiction',
        here('keyFormat'),
        "is bearer, but the endpoint is an Istio gateway, whose proxy has no API-key filter (istio/proxy builds basic_auth, not api_key_auth, up to 1.31): clients send HTTP Basic <name>:<key> there — set keyFormat: basic, or endpoint.class: envoy",
      ),
    );
  }

  if (mode === 'apiKeys') {
    for (const [key, grants] of Object.entries(access!.apiKeys!)) {
      if (config.apiKeys?.[key] === undefined) {
        issues.push(locate('config.missing-credential', here('apiKeys', key), `names the key "${key}", which ${CONFIG_NAMESPACE}:apiKeys does not hold: pulumi config set --secret --path '${CONFIG_NAMESPACE}:apiKeys.${key}' <key>`));
      }
      if (grants.includes('*') && grants.length > 1) issues.push(locate('config.contradiction', here('apiKeys', key), 'grants "*" (every model) and names models too: keep one'));
      grants.forEach((name, i) => {
        if (name === '*') return;
        const target = entries.find((e) => e.entry.name === name);
        if (!target) {
          issues.push(
            locate(
              'config.invalid',
              here('apiKeys', key, i),
              `names the model "${name}", which the endpoint does not serve (not an enabled model of the stack, or it says endpoint: false); name it as in models.<category>[].name`,
            ),
          );
          return;
        }
        const problem = keyReachProblem(key, target.entry.access);
        if (problem) {
          issues.push(
            locate(
              'config.contradiction',
              here('apiKeys', key, i),
              `grants ${name} to the key "${key}", but ${problem}: the endpoint keeps a model's own access, so this key would still be refused there — add "${key}" to that model's access.apiKeys, or remove the model here`,
            ),
          );
        }
      });
      // A model named and refused is reported above; "*" that reaches nothing is reported here.
      if (grants.includes('*') && grantedModels(key, grants, entries).length === 0) {
        issues.push(locate('config.invalid', here('apiKeys', key), `names no model the key "${key}" may reach through the endpoint (each model's own access must admit the key, or be open): grant it a model, or remove it`));
      }
    }
    for (const e of entries) {
      if (e.entry.access?.jwt) {
        issues.push(
          locate(
            'config.contradiction',
            modelAt(e),
            "asks for a JWT, but the endpoint checks API keys: the endpoint cannot protect this model as its own access says — use endpoint.access.jwt with the same issuer, or set endpoint: false for the model",
          ),
        );
      }
    }
  } else if (mode === 'jwt') {
    const jwt = access!.jwt!;
    if ((jwt.jwksUri === undefined) === (jwt.jwks === undefined)) {
      issues.push(locate(jwt.jwksUri === undefined ? 'config.missing-key' : 'config.contradiction', here('jwt'), 'needs exactly one of jwksUri (the gateway fetches the keys) or jwks (the keys inline, for an air-gapped cluster)'));
    }
    if (jwt.jwksUri !== undefined && !jwt.jwksUri.startsWith('https://')) issues.push(locate('config.invalid', here('jwt', 'jwksUri'), 'must be an https:// URL: keys fetched in clear could be swapped on the way'));
    if (jwt.jwks !== undefined) {
      const problem = tools.jwksProblem(jwt.jwks);
      if (problem) issues.push(locate('config.invalid', here('jwt', 'jwks'), problem));
    }
    for (const e of entries) {
      const own = e.entry.access;
      if (own?.apiKeys) {
        issues.push(
          locate('config.contradiction', modelAt(e), 'asks for API keys, but the endpoint checks JWTs: the endpoint cannot protect this model as its own access says — set endpoint: false for the model, or give it jwt access from the endpoint\'s issuer'),
        );
      } else if (own?.jwt && own.jwt.issuer !== jwt.issuer) {
        issues.push(
          locate(
            'config.contradiction',
            modelAt(e),
            `asks for JWTs from ${own.jwt.issuer}, but the endpoint accepts those of ${jwt.issuer}: the endpoint cannot protect this model as its own access says — use one issuer, or set endpoint: false for the model`,
          ),
        );
      } else if (own?.jwt?.audiences && !(jwt.audiences ?? ['(any)']).every((a) => own.jwt!.audiences!.includes(a))) {
        issues.push(
          locate(
            'config.contradiction',
            modelAt(e),
            `accepts JWTs for the audiences ${own.jwt.audiences.join(', ')} only, but the endpoint accepts ${jwt.audiences ? jwt.audiences.join(', ') : 'any audience'}: a token the model refuses would reach it through the endpoint — give endpoint.access.jwt.audiences among the model's, or set endpoint: false for the model`,
          ),
        );
      }
    }
  } else {
    for (const e of entries) {
      const own = e.entry.access;
      if (own && (own.apiKeys || own.jwt)) {
        issues.push(
          locate(
            'config.contradiction',
            modelAt(e),
            `asks for ${own.apiKeys ? 'API keys' : 'a JWT'}, but the endpoint is open: it would reach the model without credentials — set endpoint.access (apiKeys or jwt), or endpoint: false for the model`,
          ),
        );
      }
    }
  }
  return issues;
}
