import type { Feature } from '../types.ts';
import { checkAutoscalingRules } from './rules.ts';

export * from './facts.ts';
export * from './rules.ts';
export * from './plan.ts';
export * from './manifests.ts';

/** Autoscaling on LLM signals with KEDA, or KServe's own (docs/autoscaling.md). */
export const AUTOSCALING: Feature = { name: 'autoscaling', checkStack: checkAutoscalingRules };
