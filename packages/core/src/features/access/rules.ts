import { CATEGORIES, CONFIG_NAMESPACE } from '../../constants.ts';
import type { StackConfig } from '../../config/load.ts';
import type { Issue } from '../../errors.ts';
import { modelUpstream } from '../../upstream/select.ts';

/** Shortest API key accepted: its SHA-1 is stored unsalted, so the key itself must be unguessable (24 random characters are well over 128 bits). */
export const MIN_API_KEY_LENGTH = 24;

/**
 * Rules of `access` across keys: one mode per model, keys that exist, a JWKS that parses, what each
 * gateway can enforce. Every problem, with the key path.
 */
export function checkAccessRules(config: Pick<StackConfig, 'models' | 'platform' | 'apiKeys' | 'locate' | 'upstream'>): Issue[] {
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
            `cannot be enforced for an llm-d embedding model: clients reach it through the ClusterIP Service ms-<slug>-embeddings, straight to its pods, with no gateway to check credentials (${
              modelUpstream(config, entry) === '2026-02' ? "GAIE v1.2's endpoint picker rejects /v1/embeddings" : 'app-serving routes no embedding model through its gateway, on either set'
            }); remove apiKeys, jwt and rateLimit (access: {open: true} is allowed), or serve the model with platform: kserve`,
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
              ? "cannot be enforced: the model's gateway (Istio's, or Envoy Gateway's local rate limit) does not count LLM tokens; limit requestsPerMinute instead"
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

