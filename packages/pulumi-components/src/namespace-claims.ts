import * as pulumi from '@pulumi/pulumi';

/**
 * Which model component uses which namespace, per Pulumi program and Kubernetes provider — the
 * component-level counterpart of the planner's "every model needs its own namespace" for stacks.
 *
 * A namespace a component creates is that component's alone: another component in it would lose
 * its namespace (and everything in it) when the creator is destroyed. Components that only use an
 * existing namespace (`createNamespace: false`) may share it, unless both would create an object
 * of the same name in it (the Harbor pull Secret, the Hugging Face token Secret).
 */
export interface NamespaceClaim {
  /** The claiming component's logical name (for messages). */
  readonly owner: string;
  /** Whether the component creates the Namespace. */
  readonly creates: boolean;
  /** Names of the namespaced objects with fixed names it creates (Secrets). */
  readonly objects: readonly string[];
}

// Keyed by the runtime's monitor (one per program run; the mocks make a new one per run), then by
// the Kubernetes provider (undefined: the default provider), then by namespace.
const claims = new WeakMap<object, Map<pulumi.ProviderResource | undefined, Map<string, NamespaceClaim>>>();
const noMonitor = {};

/**
 * Records `claim` on `namespace`; returns the reason it conflicts with an earlier claim, if any.
 * A namespace known only as an Output cannot be checked here and is not recorded.
 */
export function claimNamespace(provider: pulumi.ProviderResource | undefined, namespace: string, claim: NamespaceClaim): string | undefined {
  const monitor = (pulumi.runtime.getMonitor() as object | undefined) ?? noMonitor;
  let byProvider = claims.get(monitor);
  if (!byProvider) claims.set(monitor, (byProvider = new Map()));
  let byNamespace = byProvider.get(provider);
  if (!byNamespace) byProvider.set(provider, (byNamespace = new Map()));
  const other = byNamespace.get(namespace);
  if (other === undefined) {
    byNamespace.set(namespace, claim);
    return undefined;
  }
  if (other.creates || claim.creates) {
    const creator = other.creates ? other.owner : claim.owner;
    return (
      `namespace "${namespace}" is already used by ${other.owner}, and ${creator} creates it: destroying ${creator} would delete the other's namespace. ` +
      'Give every model its own namespace, or create the shared namespace yourself and give each component createNamespace: false'
    );
  }
  const both = claim.objects.filter((o) => other.objects.includes(o));
  if (both.length > 0) {
    return `namespace "${namespace}" is already used by ${other.owner}, which creates the Secret ${both.map((o) => `"${o}"`).join(', ')} there too; give each model its own namespace`;
  }
  byNamespace.set(namespace, { owner: `${other.owner} and ${claim.owner}`, creates: false, objects: [...other.objects, ...claim.objects] });
  return undefined;
}
