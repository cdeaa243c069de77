import { z } from 'zod';
import { stackConfigSchema } from './schema.ts';
import type { ParsedStackConfig } from './types.ts';

/** Keys whose values are secrets: a stack file must hold them as `secure:` values. */
export const SECRET_KEYS = ['harborToken', 'hfToken', 'prometheusCredentials'] as const;
/** Keys that may be secrets (a kubeconfig's content) or plain values (its path). */
export const MAYBE_SECRET_KEYS = ['kubeconfig'] as const;
/** Keys whose value is a map of named secrets (`apiKeys: {<name>: {secure: …}}`): each entry must be a `secure:` value. */
export const SECRET_MAP_KEYS = ['apiKeys'] as const;
/** Every key of the schema, for "did you mean" suggestions. */
export const STACK_KEYS = Object.keys(stackConfigSchema.shape) as (keyof ParsedStackConfig)[];

/**
 * Every key path of the stack schema, e.g. `['models', 'generative', 'modelSource', 'harborRef']`
 * (list entries are not indexed). For tools and tests that check the documentation covers them.
 */
export function configKeyPaths(): string[][] {
  const walk = (schema: z.core.$ZodType, at: string[]): string[][] => {
    let current = schema;
    for (;;) {
      if (current instanceof z.ZodOptional || current instanceof z.ZodDefault || current instanceof z.ZodPrefault || current instanceof z.ZodNullable || current instanceof z.ZodLazy) {
        current = current.unwrap() as z.core.$ZodType;
      } else if (current instanceof z.ZodArray) current = current.element as z.core.$ZodType;
      else break;
    }
    if (!(current instanceof z.ZodObject)) return [];
    return Object.entries(current.shape).flatMap(([key, child]) => [[...at, key], ...walk(child as z.core.$ZodType, [...at, key])]);
  };
  return walk(stackConfigSchema, []);
}
