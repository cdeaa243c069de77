import type { Feature } from '../types.ts';
import { checkAccessRules } from './rules.ts';

export * from './plan.ts';
export * from './rules.ts';
export * from './manifests.ts';

/** Who may call each model: API keys, JWT, rate limits (docs/access.md). */
export const ACCESS: Feature = { name: 'access', checkStack: checkAccessRules };
