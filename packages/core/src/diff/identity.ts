import { KSERVE_RELEASES } from '../kserve/releases.ts';

/**
 * The type aliases the components declare, so that a resource keeps its identity — its URN, in
 * Pulumi's state — when a model moves between sets of upstream versions, and `pulumi up` updates it
 * in place instead of creating it anew and deleting the old one (pulumi-components
 * `llmd-router-model.ts`, `kserve-model.ts`):
 *
 * - a 2026-08 model's `RouterGateway` is registered under the 2026-02 `LlmdInfra`'s logical name
 *   (`<model>-infra`) with an alias of that type: its children — the alias Service
 *   `<model>-infra-gateway-alias` — keep their identity through the parent's alias (Pulumi gives a
 *   child the aliases of its parent);
 * - a KServe model's LLMInferenceService and LLMInferenceServiceConfig carry the type of every other
 *   KServe release's API version as an alias (the same object, read through v1alpha1 or v1alpha2).
 *
 * Each entry maps a type token to the one it is an alias of (both directions mean the same
 * identity). A component that declares a new alias must add it here, or `diff` shows a delete and a
 * create where Pulumi updates.
 */
export const TYPE_ALIASES: Readonly<Record<string, string>> = {
  'app-serving:llmd:RouterGateway': 'app-serving:llmd:LlmdInfra',
  ...kserveAliases(),
};

/** Every KServe release's LLMInferenceService(Config) type → the 2026-02 release's (v1alpha1). */
function kserveAliases(): Record<string, string> {
  const { group, version } = KSERVE_RELEASES['2026-02'].api;
  const out: Record<string, string> = {};
  for (const release of Object.values(KSERVE_RELEASES)) {
    if (release.api.version === version) continue;
    for (const kind of ['LLMInferenceService', 'LLMInferenceServiceConfig']) out[`kubernetes:${release.api.group}/${release.api.version}:${kind}`] = `kubernetes:${group}/${version}:${kind}`;
  }
  return out;
}

/**
 * The identity of a resource across revisions: its URN (`urn:pulumi:<stack>::<project>::<qualified
 * type>::<name>`) with every type of the qualified type (the ancestors' and its own, joined by `$`)
 * replaced by the type it is an alias of ({@link TYPE_ALIASES}). Two resources with one identity are
 * one resource to Pulumi: it updates it, or leaves it alone.
 */
export function resourceIdentity(urn: string): string {
  const parts = urn.split('::');
  if (parts.length < 4) return urn;
  const qualified = parts[2]!.split('$').map((type) => TYPE_ALIASES[type] ?? type).join('$');
  return [parts[0], parts[1], qualified, ...parts.slice(3)].join('::');
}
