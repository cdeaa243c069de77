import { createHash } from 'node:crypto';
import { CATEGORIES, CONFIG_NAMESPACE } from './constants.ts';
import type { StackConfig } from './config/load.ts';
import type { ModelAccess } from './config/types.ts';
import type { Issue } from './errors.ts';

/**
 * Who may call a model (DESIGN §4, `access`): the rules, as pure functions of narrow inputs, so that
 * every generation of upstream (today's charts, the llm-d Router, KServe v0.20) calls the same ones.
 * The manifests that enforce it at each gateway are in `manifests/access.ts`.
 *
 * Modes:
 * - `apiKeys`: HTTP Basic, `Authorization: Basic base64(<key name>:<key>)`, checked by Envoy's
 *   basic_auth filter against SHA-1 hashes (htpasswd `{SHA}`): the gateways never hold a key, only
 *   its hash. It is the one key check both gateways run without an external service that takes
 *   hashes: Istio 1.28's proxy has `envoy.filters.http.basic_auth` but not `api_key_auth`
 *   (istio/proxy 1.28.5 `bazel/extension_config/extensions_build_config.bzl`); Envoy Gateway's
 *   `apiKeyAuth` keeps keys in clear in its Secret, its `basicAuth` takes `{SHA}` hashes
 *   (envoy-gateway-v1.8.1 CRD, SecurityPolicy `basicAuth.users`).
 * - `jwt`: `Authorization: Bearer <jwt>` from one issuer, checked against its JWKS.
 * - `open`: anyone who reaches the gateway (the default, which validate warns about).
 */

/** The header the gateway sets to the caller's identity once it is authenticated (key name, or the token's `sub`); rate limits count per value. */
export const CLIENT_HEADER = 'x-app-serving-client';

/** Shortest API key accepted: its SHA-1 is stored unsalted, so the key itself must be unguessable (24 random characters are well over 128 bits). */
export const MIN_API_KEY_LENGTH = 24;

/** Who may call one model, as the plan holds it (never a key's value). */
export interface AccessPlan {
  readonly mode: 'open' | 'apiKeys' | 'jwt';
  /** True when the stack says so; false for a model open by default. */
  readonly explicit: boolean;
  /** Names of `app-serving:apiKeys` the model accepts (mode apiKeys), sorted. */
  readonly apiKeys: readonly string[];
  readonly jwt: {
    readonly issuer: string;
    readonly audiences: readonly string[];
    readonly jwksUri: string | null;
    /** The JWKS document inline (public keys only). */
    readonly jwks: string | null;
  } | null;
  /** Requests per minute: per key (apiKeys), per token subject (jwt), for all callers together (open). Per gateway pod. */
  readonly requestsPerMinute: number | null;
}

/** The access plan of one model entry. */
export function accessPlan(access: ModelAccess | undefined): AccessPlan {
  const requestsPerMinute = access?.rateLimit?.requestsPerMinute ?? null;
  if (access?.apiKeys) return { mode: 'apiKeys', explicit: true, apiKeys: [...new Set(access.apiKeys)].sort(), jwt: null, requestsPerMinute };
  if (access?.jwt) {
    const { issuer, audiences, jwksUri, jwks } = access.jwt;
    return { mode: 'jwt', explicit: true, apiKeys: [], jwt: { issuer, audiences: audiences ?? [], jwksUri: jwksUri ?? null, jwks: jwks ?? null }, requestsPerMinute };
  }
  return { mode: 'open', explicit: access?.open === true, apiKeys: [], jwt: null, requestsPerMinute };
}

/** True when the model's gateway needs objects of ours (authentication or a rate limit). */
export function accessEnforced(access: AccessPlan): boolean {
  return access.mode !== 'open' || access.requestsPerMinute !== null;
}

/** One line for `plan`: the mode, the keys or issuer, the limit and its scope. */
export function describeAccess(access: AccessPlan): string {
  const mode =
    access.mode === 'apiKeys'
      ? `API keys ${access.apiKeys.join(', ')}`
      : access.mode === 'jwt'
        ? `JWT from ${access.jwt!.issuer}${access.jwt!.audiences.length ? ` for ${access.jwt!.audiences.join(', ')}` : ''}${access.jwt!.jwks !== null ? ' (inline JWKS)' : ''}`
        : access.explicit
          ? 'open'
          : 'open (default)';
  if (access.requestsPerMinute === null) return mode;
  const per = access.mode === 'apiKeys' ? 'per key' : access.mode === 'jwt' ? 'per token subject' : 'for all callers';
  return `${mode}; ${access.requestsPerMinute} requests/min ${per}, per gateway pod`;
}

/**
 * Rules of `access` across keys: one mode per model, keys that exist, a JWKS that parses, what each
 * gateway can enforce. Every problem, with the key path.
 */
export function checkAccessRules(config: Pick<StackConfig, 'models' | 'platform' | 'apiKeys' | 'locate'>): Issue[] {
  const issues: Issue[] = [];
  const { locate } = config;
  const used = new Set<string>();
  for (const category of CATEGORIES) {
    config.models[category].forEach((entry, index) => {
      if (!entry.enabled || !entry.access) return;
      const at = (...rest: (string | number)[]) => ['models', category, index, 'access', ...rest];
      const access = entry.access;
      const modes = (['apiKeys', 'jwt', 'open'] as const).filter((mode) => access[mode] !== undefined);
      if (modes.length === 0) {
        issues.push(locate('config.missing-key', at(), 'says no mode: set one of apiKeys (a list of key names), jwt (issuer and keys) or open: true'));
      } else if (modes.length > 1) {
        issues.push(locate('config.contradiction', at(modes[1]!), `sets ${modes.join(' and ')}: a model has one mode; keep one of them`));
      }
      const platform = entry.platform ?? config.platform;
      if (platform === 'llm-d' && category === 'embedder' && (modes.some((m) => m !== 'open') || access.rateLimit?.requestsPerMinute !== undefined)) {
        issues.push(
          locate(
            'config.contradiction',
            at(),
            'cannot be enforced for an llm-d embedding model: clients reach it through the ClusterIP Service ms-<slug>-embeddings, straight to its pods (GAIE v1.2\'s endpoint picker rejects /v1/embeddings), with no gateway to check credentials; remove access, or serve the model with platform: kserve',
          ),
        );
      }
      for (const [i, name] of (access.apiKeys ?? []).entries()) {
        used.add(name);
        if (config.apiKeys?.[name] === undefined) {
          issues.push(
            locate(
              'config.missing-credential',
              at('apiKeys', i),
              `names the key "${name}", which ${CONFIG_NAMESPACE}:apiKeys does not hold: pulumi config set --secret --path '${CONFIG_NAMESPACE}:apiKeys.${name}' <key>`,
            ),
          );
        }
      }
      if ((access.apiKeys ?? []).length !== new Set(access.apiKeys ?? []).size) issues.push(locate('config.invalid', at('apiKeys'), 'names a key twice; list each once'));
      const jwt = access.jwt;
      if (jwt) {
        if ((jwt.jwksUri === undefined) === (jwt.jwks === undefined)) {
          issues.push(locate(jwt.jwksUri === undefined ? 'config.missing-key' : 'config.contradiction', at('jwt'), 'needs exactly one of jwksUri (the gateway fetches the keys) or jwks (the keys inline, for an air-gapped cluster)'));
        }
        if (jwt.jwksUri !== undefined && !jwt.jwksUri.startsWith('https://')) {
          issues.push(locate('config.invalid', at('jwt', 'jwksUri'), 'must be an https:// URL: keys fetched in clear could be swapped on the way'));
        }
        if (jwt.jwks !== undefined) {
          const problem = jwksProblem(jwt.jwks);
          if (problem) issues.push(locate('config.invalid', at('jwt', 'jwks'), problem));
        }
      }
      if (access.rateLimit?.tokensPerMinute !== undefined) {
        issues.push(
          locate(
            'values.unsupported',
            at('rateLimit', 'tokensPerMinute'),
            platform === 'llm-d'
              ? "cannot be enforced: Istio's gateway does not count LLM tokens; limit requestsPerMinute instead"
              : "cannot be enforced yet: Envoy AI Gateway counts tokens only on its own AIGatewayRoute (QuotaPolicy, llmRequestCosts) and a global rate limit service, while KServe routes the model through its own HTTPRoute; limit requestsPerMinute instead (docs/access.md)",
          ),
        );
      }
    });
  }
  return issues;
}

/** Why an inline JWKS would not be accepted, or null: a JSON object with a non-empty `keys` list of public keys. */
export function jwksProblem(text: string): string | null {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return 'is not JSON: give the JWKS document, {"keys": [...]}';
  }
  const keys = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? (doc as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => typeof k === 'object' && k !== null && typeof (k as { kty?: unknown }).kty === 'string')) {
    return 'must be a JWKS document: {"keys": [{"kty": …}, …]} with at least one key';
  }
  // A private key (d, p, q …) or a shared secret (oct `k`) must never sit in a cluster object.
  if (keys.some((k) => ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'].some((field) => field in (k as object)))) {
    return 'holds a private or symmetric key (d, p, q or k): give only the public keys, the gateway needs no more';
  }
  return null;
}

/**
 * One warning per stack that has models open by default: anyone who reaches their gateway can call
 * them. A model that says `open: true` is not counted.
 */
export function openModelsWarning(config: Pick<StackConfig, 'models' | 'locate'>): Issue | null {
  const open = CATEGORIES.flatMap((category) =>
    config.models[category].map((entry, index) => ({ category, entry, index })).filter(({ entry }) => entry.enabled && entry.access === undefined),
  );
  if (open.length === 0) return null;
  const first = open[0]!;
  const names = open.map(({ entry }) => entry.name).join(', ');
  return config.locate(
    'warning.open-access',
    ['models', first.category, first.index, 'name'],
    `${open.length === 1 ? 'this model is' : `${open.length} models are`} open to anyone who reaches the gateway (${names}): set access.apiKeys or access.jwt, or access.open: true to say so (docs/access.md)`,
  );
}

/** Why a key's value would be refused (its name only, never its value), or null. */
export function apiKeyProblem(name: string, value: string): string | null {
  if (value.length < MIN_API_KEY_LENGTH) {
    return `${CONFIG_NAMESPACE}:apiKeys.${name} is shorter than ${MIN_API_KEY_LENGTH} characters: the gateway keeps its SHA-1, so the key must be unguessable (e.g. openssl rand -base64 32)`;
  }
  if (/[\s\u0000-\u001f\u007f]/.test(value)) return `${CONFIG_NAMESPACE}:apiKeys.${name} holds white space or control characters: clients cannot send it in a header`;
  return null;
}

/**
 * The htpasswd text of a model's keys, `<name>:{SHA}<base64 SHA-1 of the key>` per line, sorted by
 * name: what Envoy's basic_auth filter and Envoy Gateway's `basicAuth` compare a caller's key with.
 * SHA-1 is the only scheme both take (envoy-gateway-v1.8.1 CRD: "only SHA hash algorithm is
 * supported"; Envoy `basic_auth.v3.BasicAuth.users`). Handle the result as a secret all the same.
 */
export function htpasswd(keys: readonly { readonly name: string; readonly key: string }[]): string {
  return [...keys]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map(({ name, key }) => `${name}:{SHA}${createHash('sha1').update(key, 'utf8').digest('base64')}`)
    .join('\n');
}
