import { describe, expect, it } from 'vitest';
import { readUpstreamJson, readUpstreamYaml, upstreamPath } from './upstream.ts';

describe('upstream data', () => {
  it('reads the pinned CRDs and chart schemas', () => {
    const crds = readUpstreamYaml('crds/kserve-v0.18.1-serving.kserve.io_llminferenceservices.yaml') as Array<{ kind: string; spec: { names: { kind: string } } }>;
    expect(crds.map((c) => `${c.kind}/${c.spec.names.kind}`)).toEqual(['CustomResourceDefinition/LLMInferenceService']);
    const schema = readUpstreamJson('charts/llm-d-modelservice-v0.4.12/values.schema.json') as { $schema: string };
    expect(schema.$schema).toMatch(/draft-07/);
  });

  it('names the missing file', () => {
    expect(() => upstreamPath('crds/nope.yaml')).toThrow(/upstream file not found: .*crds\/nope\.yaml/);
  });
});
