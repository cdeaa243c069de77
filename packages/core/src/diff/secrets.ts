import { createHash } from 'node:crypto';
import { parse } from 'yaml';
import { CONFIG_NAMESPACE } from '../constants.ts';
import { MAYBE_SECRET_KEYS, SECRET_KEYS, SECRET_MAP_KEYS } from '../config/keys.ts';

const KEYS = new Set<string>([...SECRET_KEYS, ...MAYBE_SECRET_KEYS]);
const MAP_KEYS = new Set<string>(SECRET_MAP_KEYS);

/**
 * A fingerprint of each secret of a stack file (`harborToken`, `hfToken`, a secret `kubeconfig`):
 * a SHA-256 of its `secure:` ciphertext, never the value, which no one here can decrypt anyway. Two
 * revisions whose fingerprints differ have a changed secret — or the same value encrypted again
 * (Pulumi's ciphertexts are salted). Text that does not parse gives no fingerprints: loading the
 * stack reports its problems. A map of named secrets (`apiKeys`) gives one per entry, `apiKeys.<name>`.
 */
export function stackSecretFingerprints(text: string): Record<string, string> {
  let root: unknown;
  try {
    root = parse(text, { maxAliasCount: 100 });
  } catch {
    return {};
  }
  const config = isMap(root) ? root.config : undefined;
  if (!isMap(config)) return {};
  const out: Record<string, string> = {};
  for (const [fullKey, value] of Object.entries(config)) {
    const colon = fullKey.indexOf(':');
    if (colon >= 0 && fullKey.slice(0, colon) !== CONFIG_NAMESPACE) continue;
    const key = colon < 0 ? fullKey : fullKey.slice(colon + 1);
    if (MAP_KEYS.has(key) && isMap(value)) {
      for (const [name, entry] of Object.entries(value)) {
        if (isMap(entry) && typeof entry.secure === 'string') out[`${key}.${name}`] = createHash('sha256').update(entry.secure).digest('hex');
      }
      continue;
    }
    if (!KEYS.has(key) || !isMap(value) || typeof value.secure !== 'string') continue;
    out[key] = createHash('sha256').update(value.secure).digest('hex');
  }
  return out;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
