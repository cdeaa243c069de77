/**
 * The tier's model values files (models/): every vLLM they start runs eagerly. On the CPU, vLLM
 * without --enforce-eager compiles the model with torch.compile and g++ at every pod start, in the
 * pod's own /tmp (VLLM_CACHE_ROOT), so nothing is kept between starts: the embedder took 47.7 s of
 * CPU to its first embedding compiled and 25.9 s eager (2026-12-07, `vllm serve` of all-MiniLM-L6-v2
 * with `--runner pooling --max-model-len 256`, on the idle machine, `/usr/bin/time`). A user's CPU
 * values file would say the same; the tier's requests prove the same either way.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { MODELS_DIR } from './tier.ts';

/** Every `values.yaml` under `dir`, at any depth. */
function valuesFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((path) => basename(path) === 'values.yaml')
    .sort()
    .map((path) => join(dir, path));
}

/** The vLLM arguments a values file gives: its `args`, or a KServe template's container args and VLLM_ADDITIONAL_ARGS. */
function vllmArguments(values: any): string[] {
  const container = values?.template?.containers?.[0];
  const additional = (container?.env ?? []).find((e: { name: string }) => e.name === 'VLLM_ADDITIONAL_ARGS')?.value ?? '';
  return [...(values?.args ?? []), ...(container?.args ?? []), ...String(additional).split(/\s+/).filter(Boolean)].map(String);
}

describe("the tier's model values files", () => {
  const files = valuesFiles(MODELS_DIR);

  it('are found', () => {
    expect(files.length).toBeGreaterThanOrEqual(5);
  });

  it.each(files.map((file) => [relative(MODELS_DIR, file), file]))('%s runs vLLM eagerly', (_, file) => {
    expect(vllmArguments(parse(readFileSync(file, 'utf8')))).toContain('--enforce-eager');
  });
});
