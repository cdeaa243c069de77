import { readUpstreamJson, readUpstreamYaml } from '@app-serving/test-cluster';
import { describe, expect, it } from 'vitest';
import { GAIE_KEYS, GAIE_TEMPLATE_ONLY_KEYS, INFRA_STRICT, MODELSERVICE_ACCELERATORS, MODELSERVICE_STRICT, type KeyTree, type StrictBlock } from './chart-facts.ts';
import { isValuesMap } from './merge.ts';

/**
 * Drift tests: core's facts about the pinned charts, derived again from the charts' own files in
 * ../shared/upstream/charts. A new chart version (or a wrong fact) fails here.
 */

interface JsonSchema {
  readonly properties?: Record<string, JsonSchema>;
  readonly additionalProperties?: boolean | JsonSchema;
  readonly items?: JsonSchema;
  readonly anyOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly $ref?: string;
}

/**
 * Every block of a values schema that rejects unknown keys, with the keys it lists. A list's items
 * are `[]`, the values of a map of any keys `*`; the alternatives of an `anyOf`/`oneOf` item are one block when every one is strict.
 */
function strictBlocksOf(schema: JsonSchema, path: string[] = []): StrictBlock[] {
  if (schema.$ref !== undefined) throw new Error(`$ref at ${path.join('.')}: resolve it before deriving the facts`);
  const blocks: StrictBlock[] = [];
  if (schema.additionalProperties === false) blocks.push({ path, keys: Object.keys(schema.properties ?? {}).sort() });
  for (const [key, child] of Object.entries(schema.properties ?? {})) blocks.push(...strictBlocksOf(child, [...path, key]));
  // A schema for the values of any key (Kubernetes quantities): a strict block beneath it would show as `*`.
  if (typeof schema.additionalProperties === 'object') blocks.push(...strictBlocksOf(schema.additionalProperties, [...path, '*']));
  if (schema.items) blocks.push(...strictBlocksOf(schema.items, [...path, '[]']));
  const alternatives = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])];
  if (alternatives.length > 0) {
    const each = alternatives.map((alternative) => strictBlocksOf(alternative, path));
    const own = each.map((blocksOfOne) => blocksOfOne.find((b) => b.path.length === path.length));
    if (own.every((b) => b !== undefined)) blocks.push({ path, keys: [...new Set(own.flatMap((b) => b!.keys))].sort() });
    blocks.push(...each.flatMap((blocksOfOne) => blocksOfOne.filter((b) => b.path.length > path.length)));
  }
  return blocks;
}

const byPath = (blocks: readonly StrictBlock[]) =>
  Object.fromEntries(blocks.map((b) => [b.path.join('.') || '(root)', [...b.keys].sort()])) as Record<string, string[]>;

describe('strict blocks of the charts’ values schemas', () => {
  it('llm-d-modelservice v0.4.12: core lists exactly the blocks its values.schema.json makes strict', () => {
    const schema = readUpstreamJson('charts/llm-d-modelservice-v0.4.12/values.schema.json') as JsonSchema;
    expect(byPath(MODELSERVICE_STRICT)).toEqual(byPath(strictBlocksOf(schema)));
  });

  it('llm-d-infra v1.3.10: core lists exactly the blocks its values.schema.json makes strict', () => {
    const schema = readUpstreamJson('charts/llm-d-infra-v1.3.10/values.schema.json') as JsonSchema;
    expect(byPath(INFRA_STRICT)).toEqual(byPath(strictBlocksOf(schema)));
  });

  it('lists each block once', () => {
    for (const blocks of [MODELSERVICE_STRICT, INFRA_STRICT]) {
      const paths = blocks.map((b) => b.path.join('.'));
      expect(new Set(paths).size).toBe(paths.length);
    }
  });
});

/** Every key path of a values.yaml, down to the leaves; an empty map or a list is a leaf. */
function keyPathsOf(values: unknown, at: string[] = []): string[][] {
  if (!isValuesMap(values) || Object.keys(values).length === 0) return at.length ? [at] : [];
  return [...(at.length ? [at] : []), ...Object.entries(values).flatMap(([key, value]) => keyPathsOf(value, [...at, key]))];
}

/** Every key path of a key tree (a `true` is a leaf). */
function treePaths(tree: KeyTree, at: string[] = []): string[][] {
  return Object.entries(tree).flatMap(([key, sub]) => [[...at, key], ...(sub === true ? [] : treePaths(sub, [...at, key]))]);
}

/** True when `tree` knows `path`: each step is a key of the tree, or lies under a `true` (any shape). */
function knows(tree: KeyTree, path: readonly string[]): boolean {
  let node: KeyTree | true = tree;
  for (const key of path) {
    if (node === true) return true;
    const next: KeyTree | true | undefined = node[key];
    if (next === undefined) return false;
    node = next;
  }
  return true;
}

describe('the keys GAIE inferencepool v1.2.0 reads (it has no values schema)', () => {
  const values = readUpstreamYaml('charts/inferencepool-v1.2.0/values.yaml')[0];

  it('knows every key of the chart’s values.yaml', () => {
    const unknown = keyPathsOf(values).filter((path) => !knows(GAIE_KEYS, path));
    expect(unknown.map((p) => p.join('.'))).toEqual([]);
  });

  it('knows no key beyond values.yaml except the ones listed as read by the templates only', () => {
    const inValues = new Set(keyPathsOf(values).map((p) => p.join('.')));
    const beyond = treePaths(GAIE_KEYS).filter((path) => !inValues.has(path.join('.')) && !path.some((_, i) => i > 0 && GAIE_TEMPLATE_ONLY_KEYS.some((t) => t.join('.') === path.slice(0, i).join('.'))));
    expect(beyond.map((p) => p.join('.')).sort()).toEqual(GAIE_TEMPLATE_ONLY_KEYS.map((p) => p.join('.')).sort());
  });
});

describe('llm-d-modelservice v0.4.12 accelerators (what app-serving migrate carries into the model server)', () => {
  it('are the chart’s default type, device-plugin resources and environment', () => {
    const values = readUpstreamYaml('charts/llm-d-modelservice-v0.4.12/values.yaml')[0] as { accelerator: { type: string; resources: unknown; env: unknown } };
    expect(values.accelerator.type).toBe(MODELSERVICE_ACCELERATORS.defaultType);
    expect(values.accelerator.resources).toEqual(MODELSERVICE_ACCELERATORS.resources);
    expect(values.accelerator.env).toEqual(MODELSERVICE_ACCELERATORS.env);
  });
});
