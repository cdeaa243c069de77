import type { ChartRef, Upstream } from '../constants.ts';
import type { StackConfig } from '../config/load.ts';
import type { DiscoveredModel, ValuesFolder } from '../discovery.ts';
import type { Issue, IssueList } from '../errors.ts';
import type { ModelAccess } from '../config/types.ts';
import type { AccessPlan, AnyLlmdModelPlan, AutoscalingPlan, AutoscalingPlanInput, DeploymentPlan, ModelAdapters, ModelAdaptersInput } from '../plan.ts';
import type { ValuesFile } from '../discovery.ts';
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
  /** What the set calls of the features (the plan step passes them: upstream imports no feature). */
  readonly features: LlmdFeatures;
}

/**
 * The features' functions a set calls while it plans a model (DESIGN §2): the set knows its objects
 * (which Deployments scale, which pods export which metrics, which values keys fix a replica count);
 * the feature knows its rules and objects. `features/index.ts` implements it; `plan.ts` passes it.
 */
export interface LlmdFeatures {
  accessPlan(access: ModelAccess | undefined): AccessPlan;
  /** True when the model's gateway needs objects of ours (authentication or a rate limit). */
  accessEnforced(access: AccessPlan): boolean;
  /** The model's rate limit as an Envoy Gateway BackendTrafficPolicy's `rateLimit`, or null (for a route whose BackendTrafficPolicy is the set's). */
  envoyRateLimit(access: AccessPlan): Record<string, unknown> | null;
  planAutoscaling(input: AutoscalingPlanInput): AutoscalingPlan;
  /** A values file of an autoscaled model that fixes the replica count or brings its own autoscaler. */
  valuesAutoscalerConflicts(file: ValuesFile | undefined, keys: AutoscalerKeys): Issue[];
  /** A model's LoRA adapters for a vLLM server the set launches: vLLM's options, the pull Job's part, the values file's conflicts. */
  planModelAdapters(input: ModelAdaptersInput): ModelAdapters;
}

/** An endpoint picker's pool-wide gauges and the label that names the pool (a set's fact). */
export interface EppMetricFacts {
  readonly queue: string;
  readonly kvCache: string;
  readonly poolLabel: string;
  /**
   * The EPP's flow control, where it has one (the llm-d Router): the gauge of requests held in its
   * queue (labelled with the pool by `poolLabel`) and the gauge of requests it has running. What
   * wakes a model from zero and keeps it up while it serves.
   */
  readonly flowControl?: { readonly queue: string; readonly poolLabel: string; readonly running: string } | undefined;
}

/**
 * Whether a set holds a request while a model has no replica (so that it may scale to zero):
 * how it does, or why nothing does (a set's fact, read by the autoscaling rules).
 */
export type RequestBuffering = { readonly holds: true; readonly how: string } | { readonly holds: false; readonly why: string; readonly fix?: string };

/** Where a values file could fix a replica count or bring its own autoscaler (a set's or platform's fact). */
export interface AutoscalerKeys {
  /** Key paths of fixed replica counts (llm-d-modelservice: `decode.replicas`; KServe: `replicas`). */
  readonly replicas: readonly (readonly string[])[];
  /** Key paths that switch on a chart's own autoscaler (or hold one: KServe's `scaling`). */
  readonly autoscalers: readonly (readonly string[])[];
  /** A list of extra objects the chart renders as they are (llm-d-modelservice: `extraObjects`). */
  readonly extraObjects?: readonly string[];
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
