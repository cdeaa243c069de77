import { createHash } from 'node:crypto';
import type { ModelAccess } from '../../config/types.ts';

/**
 * Who may call a model (DESIGN §4, `access`): the rules, as pure functions of narrow inputs, so that
 * every generation of upstream (today's charts, the llm-d Router, KServe v0.20) calls the same ones.
 * The manifests that enforce it at each gateway are in `manifests.ts` beside this file.
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
