import type { ChartRef, Upstream } from '../constants.ts';
import type { StackConfig } from '../config/load.ts';
import type { DiscoveredModel, ValuesFolder } from '../discovery.ts';
import type { Issue, IssueList } from '../errors.ts';
import type { AnyLlmdModelPlan, DeploymentPlan } from '../plan.ts';
import type { Toleration } from '../values/scheduling.ts';

/** What planning one llm-d model needs from the stack (the same for every set). */
export interface LlmdModelInput {
  readonly config: StackConfig;
  readonly model: DiscoveredModel;
  readonly harbor: DeploymentPlan['harbor'];
  readonly toleration: Toleration | undefined;
  /** The set's charts, resolved for the stack (pinned, or the stack's overrides, local charts read). */
  readonly charts: Readonly<Record<string, ChartRef>>;
  /** Problems go here (the model is then not planned). */
  readonly list: IssueList;
  readonly warnings: Issue[];
}

/**
 * One set of upstream versions for llm-d models (DESIGN: a second generation of upstream is a
 * second implementation of this interface, not a condition threaded through every rule):
 * which values folders a model folder holds for it, which charts it deploys, and how a model is
 * planned — names, values or objects, images, patches — from the rules every set shares (names
 * within limits, placement, pull secrets, storage, one pass over every problem).
 */
export interface LlmdGeneration {
  readonly upstream: Upstream;
  /** The values folders read for a model (`wanted`) and those it must have (`required`). */
  readonly valuesFolders: { readonly wanted: readonly ValuesFolder[]; readonly required: readonly ValuesFolder[] };
  /** The set's pinned charts, by stack key (`charts.<key>` overrides one). */
  readonly charts: Readonly<Record<string, ChartRef>>;
  /** Plans one model; undefined when it has a problem (added to `input.list`). */
  plan(input: LlmdModelInput): AnyLlmdModelPlan | undefined;
}
