/**
 * GPU and memory for a vLLM model on KServe, by parameter count — the documented starting point
 * of `app-serving new-model --template kserve-vllm --size <N>B`; model authors adjust it.
 *
 * | parameters | GPUs (tensor parallel) | memory request / limit |
 * |---|---|---|
 * | up to 12B (0.5B–7B, 8B) | 1 | 16Gi / 32Gi |
 * | 13B–34B | 2 | 64Gi / 64Gi |
 * | 35B and more (70B+) | 4 | 128Gi / 128Gi |
 */
export interface KserveSizing {
  readonly gpus: number;
  readonly memoryRequest: string;
  readonly memoryLimit: string;
}

/** The sizing tiers, smallest first: a model uses the first tier whose bound is ≥ its size. */
export const KSERVE_SIZING_TABLE: readonly (KserveSizing & { readonly upToBillions: number })[] = [
  { upToBillions: 12, gpus: 1, memoryRequest: '16Gi', memoryLimit: '32Gi' },
  { upToBillions: 34, gpus: 2, memoryRequest: '64Gi', memoryLimit: '64Gi' },
  { upToBillions: Number.POSITIVE_INFINITY, gpus: 4, memoryRequest: '128Gi', memoryLimit: '128Gi' },
];

/** Parses a model size such as `7B`, `0.5b`, `70` (billions of parameters). */
export function parseModelSize(size: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([bB])?\s*$/.exec(size);
  if (!match) return undefined;
  const billions = Number(match[1]);
  return billions > 0 ? billions : undefined;
}

/** The sizing tier of a model of `billions` parameters. */
export function kserveSizing(billions: number): KserveSizing {
  const tier = KSERVE_SIZING_TABLE.find((t) => billions <= t.upToBillions)!;
  return { gpus: tier.gpus, memoryRequest: tier.memoryRequest, memoryLimit: tier.memoryLimit };
}
