import type { StackConfig } from '../config/load.ts';
import type { Issue } from '../errors.ts';
import type { LlmdFeatures } from '../upstream/generation.ts';
import { ACCESS, accessEnforced, accessPlan, envoyRateLimit } from './access/index.ts';
import { AUTOSCALING, planAutoscaling, valuesAutoscalerConflicts } from './autoscaling/index.ts';
import type { Feature } from './types.ts';

/** The features, in the order the plan step runs them. */
export const FEATURES: readonly Feature[] = [ACCESS, AUTOSCALING];

/** Every feature's rules across keys of a loaded stack. */
export function checkFeatureRules(config: StackConfig): Issue[] {
  return FEATURES.flatMap((feature) => feature.checkStack(config));
}

/** What a set of upstream versions calls of the features while it plans an llm-d model. */
export const LLMD_FEATURES: LlmdFeatures = { accessPlan, accessEnforced, envoyRateLimit, planAutoscaling, valuesAutoscalerConflicts };
