import { z } from 'zod';
import { CONFIG_NAMESPACE } from '../constants.ts';
import { secretSchema, stackConfigSchema } from './schema.ts';

/**
 * A JSON Schema (draft 2020-12) of a whole `Pulumi.<stack>.yaml` with app-serving keys, generated
 * from the zod schema, for editor completion (yaml-language-server). Secret keys are described as
 * Pulumi writes them: `{secure: <ciphertext>}`.
 */
export function stackFileJsonSchema(): Record<string, unknown> {
  const inner = z.toJSONSchema(stackConfigSchema, {
    io: 'input',
    target: 'draft-2020-12',
    // The only custom type is the secret, which the override below describes.
    unrepresentable: 'any',
    override: (ctx) => {
      if (ctx.zodSchema === secretSchema) {
        for (const key of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as Record<string, unknown>)[key];
        Object.assign(ctx.jsonSchema, {
          type: 'object',
          description: 'A Pulumi secret: `pulumi config set --secret <key> <value>` writes it.',
          properties: { secure: { type: 'string' } },
          required: ['secure'],
          additionalProperties: false,
        });
      }
    },
  }) as { properties: Record<string, unknown>; required?: string[]; $schema?: string; description?: string };
  const properties: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(inner.properties)) properties[`${CONFIG_NAMESPACE}:${key}`] = value;
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://app-serving.dev/schemas/stack-config.schema.json',
    title: 'app-serving Pulumi stack file',
    description: 'Pulumi.<stack>.yaml of the app-serving program. Generated from @app-serving/core; do not edit.',
    type: 'object',
    properties: {
      config: {
        type: 'object',
        description: inner.description,
        properties,
        required: (inner.required ?? []).map((key) => `${CONFIG_NAMESPACE}:${key}`),
        // Keys of other namespaces (kubernetes:context, …) are Pulumi's business.
        patternProperties: { [`^(?!${CONFIG_NAMESPACE}:)[^:]+:.+$`]: {} },
        additionalProperties: false,
      },
      encryptionsalt: { type: 'string' },
      secretsprovider: { type: 'string' },
      encryptedkey: { type: 'string' },
      environment: {},
    },
  };
}
