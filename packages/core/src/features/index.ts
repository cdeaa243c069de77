import type { StackConfig } from '../config/load.ts';
import type { Issue } from '../errors.ts';
import type { LlmdFeatures } from '../upstream/generation.ts';
import type { ModelPlan } from '../plan.ts';
import { ACCESS, accessEnforced, accessPlan, envoyRateLimit } from './access/index.ts';
import { ADAPTERS, planModelAdapters } from './adapters/index.ts';
import { AUTOSCALING, planAutoscaling, valuesAutoscalerConflicts } from './autoscaling/index.ts';
import type { Feature } from './types.ts';

/** The features, in the order the plan step runs them. */
export const FEATURES: readonly Feature[] = [ACCESS, AUTOSCALING, ADAPTERS];

/** Every feature's rules across keys of a loaded stack. */
export function checkFeatureRules(config: StackConfig): Issue[] {
  return FEATURES.flatMap((feature) => feature.checkStack(config));
}

/** Every feature's rules across the planned models of a stack. */
export function checkFeatureModels(config: StackConfig, models: readonly ModelPlan[]): Issue[] {
  return FEATURES.flatMap((feature) => feature.checkModels?.(config, models) ?? []);
}

/** What a set of upstream versions calls of the features while it plans an llm-d model. */
export const LLMD_FEATURES: LlmdFeatures = { accessPlan, accessEnforced, envoyRateLimit, planAutoscaling, valuesAutoscalerConflicts, planModelAdapters };
