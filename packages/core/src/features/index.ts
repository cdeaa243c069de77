import type { StackConfig } from '../config/load.ts';
import type { Issue } from '../errors.ts';
import type { LlmdFeatures } from '../upstream/generation.ts';
import type { ModelPlan } from '../plan.ts';
import { ACCESS, CLIENT_HEADER, HTPASSWD_SECRET_KEY, accessEnforced, accessPlan, envoyRateLimit, istioBasicAuthPatch, istioBeforeRouterPatch, istioGatewayPodLabels, jwksProblem } from './access/index.ts';
import { ADAPTERS, planModelAdapters } from './adapters/index.ts';
import { AUTOSCALING, planAutoscaling, valuesAutoscalerConflicts } from './autoscaling/index.ts';
import { endpointFeature, type EndpointTools } from './endpoint/index.ts';
import type { Feature } from './types.ts';

/** What the endpoint takes of access (a feature imports no other feature: the plan step passes it). */
export const ENDPOINT_TOOLS: EndpointTools = { clientHeader: CLIENT_HEADER, htpasswdKey: HTPASSWD_SECRET_KEY, istioGatewayPodLabels, jwksProblem, istioBasicAuthPatch, istioBeforeRouterPatch };

/** The features, in the order the plan step runs them (the endpoint, a stack feature, after the models). */
export const FEATURES: readonly Feature[] = [ACCESS, AUTOSCALING, ADAPTERS, endpointFeature(ENDPOINT_TOOLS)];

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
