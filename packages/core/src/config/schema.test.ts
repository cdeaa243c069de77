import { describe, expect, it } from 'vitest';
import { accessSchema, adapterSchema, autoscalingSchema, endpointSchema, huggingFaceSourceSchema, kserveSchema, modelSourceSchema, prometheusSchema, routerSchema, stackConfigSchema } from './schema.ts';

/** The sections of the schema built the first time a stack reaches them (schema.ts `whenUsed`). */
const SECTIONS = { accessSchema, adapterSchema, autoscalingSchema, endpointSchema, huggingFaceSourceSchema, kserveSchema, modelSourceSchema, prometheusSchema, routerSchema };
const built = () => Object.entries(SECTIONS).filter(([, schema]) => (schema._zod.def as { _cachedInner?: unknown })._cachedInner !== undefined).map(([name]) => name);

describe('the schema sections built on first use', () => {
  it('a stack that leaves them out builds none of them (zod asks every key whether it is optional)', () => {
    const parsed = stackConfigSchema.safeParse({ cloudProvider: 'cloud', models: { generative: [{ name: 'A', nodeSelector: { pool: 'gpu' } }], embedder: [{ name: 'B' }] } });
    expect(parsed.success).toBe(true);
    expect(built()).toEqual([]);
    const withAccess = stackConfigSchema.safeParse({ cloudProvider: 'cloud', models: { generative: [{ name: 'A', access: { open: true } }] } });
    expect(withAccess.success).toBe(true);
    expect(built()).toEqual(['accessSchema']);
  });

  it('each is an object schema, neither optional nor defaulted: what whenUsed tells zod without building it', () => {
    for (const [name, schema] of Object.entries(SECTIONS)) {
      const inner = schema._zod.innerType;
      expect({ name, type: inner._zod.def.type, optin: inner._zod.optin, optout: inner._zod.optout }).toEqual({ name, type: 'object', optin: undefined, optout: undefined });
    }
  });
});
