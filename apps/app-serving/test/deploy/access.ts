/**
 * Access control in the deploy tier, where no gateway runs: the gateway's stand-in refuses what the
 * deployed policies say it would, and verify gets the credential each model's access asks for.
 *
 * - The policies are read from the cluster, as the gateway would read them: Istio's EnvoyFilter
 *   (`basic_auth`'s htpasswd), RequestAuthentication and AuthorizationPolicy whose selectors match
 *   the gateway pod's labels; Envoy Gateway's SecurityPolicy (`basicAuth` and its Secret, `jwt`) in
 *   a KServe model's namespace, or in the namespace of the llm-d model (class envoy) whose Gateway
 *   owns the proxy pod. So a hash that does not match the key, or a selector that misses
 *   the gateway's pods, fails verify here as it would on a cluster.
 * - A JWT model's issuer is out of reach here, so the harness signs tokens itself: the stack under
 *   test is given the harness's public key as its inline `jwks` (as charts are pointed at the
 *   published packages), and verify a token the harness signed for the model's issuer and audience.
 */
import { createHash, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { DeploymentPlan, ModelPlan } from '@app-serving/core';
import { ENVOY_GATEWAY_SYSTEM, type Refusal, type TestCluster } from '@app-serving/test-cluster';

const KID = 'app-serving-deploy-test';
let keys: { publicKey: KeyObject; privateKey: KeyObject } | undefined;
const signingKeys = () => (keys ??= generateKeyPairSync('rsa', { modulusLength: 2048 }));

/** The harness's public key as a JWKS document (the text a stack's `access.jwt.jwks` holds). */
export function harnessJwks(): string {
  return JSON.stringify({ keys: [{ ...signingKeys().publicKey.export({ format: 'jwk' }), kid: KID, alg: 'RS256', use: 'sig' }] });
}

const base64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/** A token signed with the harness's key (RS256) for `issuer` and the first of `audiences`, valid for a day (or `expiresIn` seconds: negative for one already expired). */
export function harnessToken(issuer: string, audiences: readonly string[], options: { expiresIn?: number } = {}): string {
  return signedToken(issuer, audiences, options.expiresIn ?? 86_400, signingKeys().privateKey);
}

/** A token like {@link harnessToken}'s, with the harness's key id, signed by another key: a forgery the gateway must refuse. */
export function forgedToken(issuer: string, audiences: readonly string[]): string {
  return signedToken(issuer, audiences, 86_400, (forger ??= generateKeyPairSync('rsa', { modulusLength: 2048 })).privateKey);
}
let forger: { publicKey: KeyObject; privateKey: KeyObject } | undefined;

function signedToken(issuer: string, audiences: readonly string[], expiresIn: number, key: KeyObject): string {
  const now = Math.floor(Date.now() / 1000);
  const payload = { iss: issuer, sub: 'app-serving-verify', iat: now, exp: now + expiresIn, ...(audiences[0] !== undefined && { aud: audiences[0] }) };
  const data = `${base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: KID }))}.${base64url(JSON.stringify(payload))}`;
  return `${data}.${sign('sha256', Buffer.from(data), key).toString('base64url')}`;
}

/**
 * Points every JWT model of a stack's `app-serving:models` at the harness's key: `jwks` inline in
 * place of `jwksUri` or the stack's own keys (whose private halves the harness does not have).
 */
export function useHarnessKeys(config: Record<string, unknown>): void {
  const models = config['app-serving:models'] as Record<string, unknown[] | undefined> | undefined;
  for (const entry of Object.values(models ?? {}).flat()) {
    const access = (entry as { access?: { jwt?: Record<string, unknown> } } | null)?.access;
    if (!access?.jwt) continue;
    const { jwksUri: _uri, jwks: _jwks, ...rest } = access.jwt;
    access.jwt = { ...rest, jwks: harnessJwks() };
  }
}

/** What one gateway checks for one model: the htpasswd users (name → `{SHA}` hash) and/or the JWT rules. */
export interface Rule {
  readonly users?: ReadonlyMap<string, string>;
  readonly jwt?: readonly { readonly issuer: string; readonly audiences: readonly string[]; readonly jwks: string }[];
  /** The status of a request without a token where JWT is required: 403 (Istio's ALLOW policy), 401 (Envoy Gateway). */
  readonly anonymous: number;
}

/** The objects at a list path; none where the cluster does not serve the kind (its CRD is not installed). */
async function listServed(cluster: TestCluster, path: string): Promise<any[]> {
  const res = await cluster.request('GET', path);
  if (res.status === 404) return [];
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  return (res.body as { items: any[] }).items;
}

const subset = (selector: Readonly<Record<string, string>> | undefined, labels: Readonly<Record<string, string>>) =>
  selector !== undefined && Object.entries(selector).every(([k, v]) => labels[k] === v);

export function parseHtpasswd(text: string): Map<string, string> {
  return new Map(
    text
      .split('\n')
      .filter((line) => line.includes(':'))
      .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)] as const),
  );
}

/** Istio's checks for a gateway pod: the policies of its namespace whose selectors match its labels. */
async function istioRule(cluster: TestCluster, namespace: string, labels: Readonly<Record<string, string>>): Promise<Rule | undefined> {
  const filters = await listServed(cluster, `/apis/networking.istio.io/v1alpha3/namespaces/${namespace}/envoyfilters`);
  const users = new Map<string, string>();
  for (const filter of filters.filter((f) => subset(f.spec?.workloadSelector?.labels, labels))) {
    for (const patch of filter.spec.configPatches ?? []) {
      if (patch.patch?.value?.name !== 'envoy.filters.http.basic_auth') continue;
      for (const [user, hash] of parseHtpasswd(String(patch.patch.value.typed_config?.users?.inline_string ?? ''))) users.set(user, hash);
    }
  }
  const authentications = await listServed(cluster, `/apis/security.istio.io/v1/namespaces/${namespace}/requestauthentications`);
  const jwt = authentications
    .filter((a) => subset(a.spec?.selector?.matchLabels, labels))
    .flatMap((a) => a.spec.jwtRules ?? [])
    .map((r: any) => ({ issuer: String(r.issuer), audiences: (r.audiences ?? []) as string[], jwks: String(r.jwks ?? '') }));
  if (users.size === 0 && jwt.length === 0) return undefined;
  // Without an ALLOW policy requiring a request principal, Istio lets a request without a token through.
  const policies = await listServed(cluster, `/apis/security.istio.io/v1/namespaces/${namespace}/authorizationpolicies`);
  const required = policies.some((p) => subset(p.spec?.selector?.matchLabels, labels) && p.spec.action === 'ALLOW' && JSON.stringify(p.spec.rules ?? []).includes('requestPrincipals'));
  return { ...(users.size > 0 && { users }), ...(jwt.length > 0 && { jwt }), anonymous: required ? 403 : 0 };
}

/** Envoy Gateway's checks for a KServe model: the SecurityPolicies of its namespace. */
async function envoyRule(cluster: TestCluster, namespace: string): Promise<Rule | undefined> {
  const policies = await listServed(cluster, `/apis/gateway.envoyproxy.io/v1alpha1/namespaces/${namespace}/securitypolicies`);
  const users = new Map<string, string>();
  const jwt: { issuer: string; audiences: string[]; jwks: string }[] = [];
  for (const policy of policies) {
    const secretName = policy.spec?.basicAuth?.users?.name;
    if (secretName) {
      const secret = (await cluster.request('GET', `/api/v1/namespaces/${namespace}/secrets/${secretName}`)).body;
      for (const [user, hash] of parseHtpasswd(Buffer.from(String(secret?.data?.['.htpasswd'] ?? ''), 'base64').toString('utf8'))) users.set(user, hash);
    }
    for (const provider of policy.spec?.jwt?.providers ?? []) jwt.push({ issuer: provider.issuer, audiences: provider.audiences ?? [], jwks: String(provider.localJWKS?.inline ?? '') });
  }
  if (users.size === 0 && jwt.length === 0) return undefined;
  return { ...(users.size > 0 && { users }), ...(jwt.length > 0 && { jwt }), anonymous: 401 };
}

/**
 * What Envoy's jwt_authn makes of a token: valid; `invalid` (malformed, expired, not signed by the
 * issuer's keys: 401); `audience` (signed and current, for another audience: 403, Envoy's
 * JwtAudienceNotAllowed — seen from the real Envoy in the data-path tier).
 */
function jwtVerdict(token: string, rules: NonNullable<Rule['jwt']>): 'valid' | 'invalid' | 'audience' {
  const [header, payload, signature] = token.split('.');
  if (!header || !payload || !signature) return 'invalid';
  try {
    const head = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (head.alg !== 'RS256' || typeof claims.exp !== 'number' || claims.exp * 1000 < Date.now()) return 'invalid';
    const audience: string[] = Array.isArray(claims.aud) ? claims.aud : claims.aud === undefined ? [] : [claims.aud];
    const signed = rules.filter((rule) => {
      if (claims.iss !== rule.issuer) return false;
      const jwks = JSON.parse(rule.jwks || '{"keys":[]}') as { keys: Record<string, unknown>[] };
      return jwks.keys
        .filter((k) => head.kid === undefined || k.kid === undefined || k.kid === head.kid)
        .some((k) => verify('sha256', Buffer.from(`${header}.${payload}`), createPublicKey({ key: k as any, format: 'jwk' }), Buffer.from(signature, 'base64url')));
    });
    if (signed.length === 0) return 'invalid';
    return signed.some((rule) => rule.audiences.length === 0 || audience.some((a) => rule.audiences.includes(a))) ? 'valid' : 'audience';
  } catch {
    return 'invalid';
  }
}

/** The answer a gateway with `rule` gives a request: a refusal, or undefined to let it through. */
export function check(rule: Rule, req: Pick<IncomingMessage, 'headers'>): Refusal | undefined {
  const header = req.headers.authorization ?? '';
  if (rule.users) {
    const basic = /^Basic (.+)$/.exec(header);
    const decoded = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8') : '';
    const at = decoded.indexOf(':');
    const hash = at > 0 ? rule.users.get(decoded.slice(0, at)) : undefined;
    if (hash === undefined || hash !== `{SHA}${createHash('sha1').update(decoded.slice(at + 1), 'utf8').digest('base64')}`) return { status: 401, message: 'User authentication failed' };
  }
  if (rule.jwt) {
    const bearer = /^Bearer (.+)$/.exec(header);
    if (!bearer) return rule.anonymous ? { status: rule.anonymous, message: 'RBAC: access denied' } : undefined;
    const verdict = jwtVerdict(bearer[1]!, rule.jwt);
    if (verdict === 'invalid') return { status: 401, message: 'Jwt verification fails' };
    if (verdict === 'audience') return { status: 403, message: 'Audiences in Jwt are not allowed' };
  }
  return undefined;
}

/**
 * What the gateway pod `pod` would refuse, from the policies in the cluster: Istio's for a gateway
 * pod of an llm-d model, Envoy Gateway's (by the request's path prefix) for the Envoy proxy in front
 * of KServe models; undefined where nothing is checked.
 */
export async function gatewayAuthorizer(cluster: TestCluster, plan: DeploymentPlan, pod: any): Promise<((req: IncomingMessage) => Refusal | undefined) | undefined> {
  const namespace: string = pod.metadata.namespace;
  const labels: Record<string, string> = pod.metadata.labels ?? {};
  // The proxy of an llm-d model's Gateway of class envoy: the SecurityPolicies of that model's namespace (its route's).
  const owner = plan.models.find(
    (m) => m.platform === 'llm-d' && m.upstream === '2026-08' && m.router.gatewayClass === 'envoy' && labels['gateway.envoyproxy.io/owning-gateway-name'] === m.gateway.name && labels['gateway.envoyproxy.io/owning-gateway-namespace'] === m.namespace,
  );
  if (namespace === ENVOY_GATEWAY_SYSTEM && owner) {
    const rule = await envoyRule(cluster, owner.namespace);
    return rule ? (req) => check(rule, req) : undefined;
  }
  if (namespace === ENVOY_GATEWAY_SYSTEM) {
    const routes: { prefix: string; rule: Rule }[] = [];
    for (const model of plan.models.filter((m): m is Extract<ModelPlan, { platform: 'kserve' }> => m.platform === 'kserve')) {
      const rule = await envoyRule(cluster, model.namespace);
      if (rule) routes.push({ prefix: `${model.pathPrefix.replace(/\/$/, '')}/`, rule });
    }
    if (routes.length === 0) return undefined;
    return (req) => {
      const route = routes.find((r) => (req.url ?? '').startsWith(r.prefix));
      return route ? check(route.rule, req) : undefined;
    };
  }
  const rule = await istioRule(cluster, namespace, pod.metadata.labels ?? {});
  return rule ? (req) => check(rule, req) : undefined;
}
