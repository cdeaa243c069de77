import { CATEGORIES, CONFIG_NAMESPACE } from '../../constants.ts';
import type { StackConfig } from '../../config/load.ts';
import type { Issue } from '../../errors.ts';
import { parseStrictJson, StrictJsonError, type StrictJson } from '../../strict-json.ts';
import { keyStrength, type WeakPattern } from './key-strength.ts';
import { modelUpstream } from '../../upstream/select.ts';

/** Shortest API key accepted, in characters (code points): its SHA-1 is stored unsalted, so the key itself must be unguessable (24 random characters are well over 128 bits). */
export const MIN_API_KEY_LENGTH = 24;
/**
 * Fewest estimated bits an API key must have ({@link keyStrength}): 112, the lowest security
 * strength NIST accepts for new uses (SP 800-57 Part 1 Rev. 5, §5.6.2; SP 800-131A). A key's SHA-1
 * sits unsalted in a cluster object, so a guess costs an attacker one SHA-1: 2^112 of them is out of reach.
 */
export const MIN_API_KEY_BITS = 112;
/** Longest API key, in characters: a key is a header value, not a document. */
export const MAX_API_KEY_LENGTH = 4096;

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

/** Members of a JWK that hold private or secret key material (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2). */
export const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;
const PRIVATE_MEMBERS = new Set<string>(PRIVATE_JWK_MEMBERS);

const isJsonObject = (value: StrictJson | undefined): value is { [member: string]: StrictJson } => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The first private member anywhere inside a key (also inside `oth` or any nested member), or null. */
function privateMember(value: StrictJson): string | null {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = privateMember(item);
      if (found) return found;
    }
  } else if (isJsonObject(value)) {
    for (const [member, inner] of Object.entries(value)) {
      if (PRIVATE_MEMBERS.has(member)) return member;
      const found = privateMember(inner);
      if (found) return found;
    }
  }
  return null;
}

/**
 * Why an inline JWKS would not be accepted, or null: strict JSON first (a member named twice in one
 * object, or a member named `__proto__`, is refused before anything else reads it: `JSON.parse` and
 * the gateway keep the last of two, a check could read the first), then a JSON object whose only
 * member is a non-empty `keys` list (RFC 7517 §5) of keys with a `kty`, none of which holds a
 * private or secret member anywhere (`d`, `p`, `q`, `dp`, `dq`, `qi`, `oth`, `k`).
 */
export function jwksProblem(text: string): string | null {
  let doc: StrictJson;
  try {
    doc = parseStrictJson(text);
  } catch (error) {
    if (!(error instanceof StrictJsonError)) throw error;
    return `is not strict JSON: ${error.message}, at character ${error.offset + 1} — give the JWKS document, {"keys": [...]}`;
  }
  if (!isJsonObject(doc)) return 'must be a JWKS document: {"keys": [{"kty": …}, …]} with at least one key';
  const others = Object.keys(doc).filter((member) => member !== 'keys');
  if (others.length > 0) {
    const names = others.slice(0, 3).map((m) => JSON.stringify(m.length > 40 ? `${m.slice(0, 39)}…` : m));
    return `has members besides "keys" (${names.join(', ')}${others.length > 3 ? ', …' : ''}): a JWKS holds its keys under "keys" only — remove them`;
  }
  const keys = doc.keys;
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => isJsonObject(k) && typeof k.kty === 'string')) {
    return 'must be a JWKS document: {"keys": [{"kty": …}, …]} with at least one key';
  }
  for (const [index, key] of keys.entries()) {
    const member = privateMember(key);
    if (member) return `holds a private or symmetric key (keys[${index}] has "${member}"): give only the public keys, the gateway needs no more`;
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

const WEAKNESS: Readonly<Record<WeakPattern, string>> = {
  repeat: 'it repeats a character or a block',
  sequence: 'it holds a run of the alphabet or of digits',
  keyboard: 'it holds a walk along the keyboard',
  word: 'it holds a common word or password',
};

/**
 * Why a key's value would be refused, or null. The message names the key and the reason, never
 * the value (nor a part of it): shorter than {@link MIN_API_KEY_LENGTH} characters (code points:
 * 12 emoji are 12), a control, format or separator character (U+0085, U+200B, U+2028: invisible in
 * a terminal, mangled by a header), or fewer than {@link MIN_API_KEY_BITS} estimated bits
 * (repeated characters, dictionary words, keyboard runs, a small alphabet).
 */
export function apiKeyProblem(name: string, value: string): string | null {
  const key = `${CONFIG_NAMESPACE}:apiKeys.${name}`;
  const fix = 'make a random key, e.g. openssl rand -base64 32';
  const length = [...value].length;
  if (length < MIN_API_KEY_LENGTH) return `${key} is shorter than ${MIN_API_KEY_LENGTH} characters: the gateway keeps its SHA-1, so the key must be unguessable (${fix})`;
  if (length > MAX_API_KEY_LENGTH) return `${key} is longer than ${MAX_API_KEY_LENGTH} characters: a key is sent in a header (${fix})`;
  // Controls (C0, C1: U+0085), format characters (U+200B, bidirectional controls), separators and
  // spaces (U+2028, U+00A0), and a lone surrogate half (no UTF-8 for it).
  if (/[\p{Cc}\p{Cf}\p{Cs}\p{Z}]/u.test(value)) {
    return `${key} holds white space, a control, format or separator character (such as U+0085, U+200B, U+2028): clients cannot send it in a header, and a terminal does not show it (${fix})`;
  }
  const strength = keyStrength(value, [name]);
  if (strength.bits < MIN_API_KEY_BITS) {
    const why = strength.weakest ? WEAKNESS[strength.weakest] : 'it draws on too few different characters';
    return `${key} is too easy to guess: ${why} (about ${Math.floor(strength.bits)} bits; at least ${MIN_API_KEY_BITS} are needed, as the gateway keeps its SHA-1 unsalted) — ${fix}`;
  }
  return null;
}
