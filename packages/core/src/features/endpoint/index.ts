import type { Feature } from '../types.ts';
import { checkEndpointRules, type EndpointRuleTools } from './rules.ts';

export * from './facts.ts';
export * from './names.ts';
export * from './rules.ts';
export * from './plan.ts';
export * from './manifests.ts';

/** One OpenAI endpoint for the whole stack: routes by `model`, answers `/v1/models`, grants models per key (docs/endpoint.md). */
export function endpointFeature(tools: EndpointRuleTools): Feature {
  return { name: 'endpoint', checkStack: (config) => checkEndpointRules(config, tools) };
}
