import type { StackConfig } from '../config/load.ts';
import type { Issue } from '../errors.ts';
import type { ModelPlan } from '../plan.ts';

/**
 * A capability a stack turns on (DESIGN §2: access, autoscaling, …), kept in one folder of its own
 * with its rules, its part of the plan and its manifests. A feature imports config's and the plan's
 * types, never another feature; config and upstream import no feature. The plan step composes them.
 */
export interface Feature {
  /** The feature's stack key or name, for messages and tests. */
  readonly name: string;
  /** Rules across keys of the loaded stack: every problem, each at its key path. */
  checkStack(config: StackConfig): Issue[];
  /** Rules across the planned models (what only a model's values say: its served name, …), when the feature has any. */
  checkModels?(config: StackConfig, models: readonly ModelPlan[]): Issue[];
}
