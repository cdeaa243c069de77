import type { GpuToleration } from '../config/types.ts';

/** A Kubernetes toleration. */
export interface Toleration {
  readonly key?: string;
  readonly operator?: 'Equal' | 'Exists';
  readonly value?: string;
  readonly effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  readonly tolerationSeconds?: number;
}

/** A Kubernetes node affinity that requires every label of the selector. */
export interface NodeAffinity {
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: { matchExpressions: { key: string; operator: 'In'; values: string[] }[] }[];
    };
  };
}

/** The stack's GPU toleration as a Kubernetes toleration. */
export function gpuToleration(toleration: GpuToleration | undefined): Toleration | undefined {
  if (!toleration) return undefined;
  return {
    key: toleration.key,
    operator: toleration.operator,
    ...(toleration.value !== undefined && { value: toleration.value }),
    ...(toleration.effect !== undefined && { effect: toleration.effect }),
  };
}

/**
 * A hard node affinity requiring every `key: value` of a node selector (one term, one `In`
 * expression per label, keys sorted so the result is stable). `undefined` for an empty selector.
 */
export function nodeAffinityFor(selector: Readonly<Record<string, string>>): NodeAffinity | undefined {
  const keys = Object.keys(selector).sort();
  if (keys.length === 0) return undefined;
  return {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: keys.map((key) => ({ key, operator: 'In' as const, values: [selector[key]!] })) }],
      },
    },
  };
}
