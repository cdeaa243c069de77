import * as pulumi from '@pulumi/pulumi';
import type * as k8s from '@pulumi/kubernetes';
import { DEFAULT_CHARTS, getPath, isValuesMap, type ChartRef, type PostRenderPatch, type Values } from '@app-serving/core';
import { createChart } from './chart.ts';
import { TYPE_TOKENS } from './component-names.ts';

/** Arguments of {@link ModelService}. */
export interface ModelServiceArgs {
  /** The model namespace. */
  readonly namespace: pulumi.Input<string>;
  /** Helm release name: the plan's `releases.modelService` (`ms-<slug>`). */
  readonly releaseName: pulumi.Input<string>;
  /**
   * The llm-d-modelservice chart.
   * @default core `DEFAULT_CHARTS.modelService` (llm-d-modelservice v0.4.12)
   * @see https://github.com/llm-d-incubation/llm-d-modelservice
   */
  readonly chart?: ChartRef;
  /** The release's values: the plan's `values.modelService`. */
  readonly values: pulumi.Input<Values>;
  /**
   * Post-render patches: the plan's `patches.modelService` (`pulumi.com/timeoutSeconds` on the
   * decode and prefill Deployments, from the model's `readyTimeout`; Pulumi's own default is 10
   * minutes). Applied through the chart's `transforms`.
   * @default []
   */
  readonly patches?: readonly PostRenderPatch[];
}

/**
 * The `llm-d-modelservice` chart: the vLLM decode/prefill Deployments and the routing sidecar.
 *
 * Order it with `dependsOn`: after the model's {@link ModelStorage} (its PVC and completed pull
 * Job, so the pods never start on an empty volume) and after its {@link InferencePool}.
 * {@link LlmdModel} does this. Without any dependency, a values file that mounts a PVC gets a warning.
 *
 * Children: `<name>-chart` (`helm.v4.Chart`, with the post-render transform when there are patches).
 */
export class ModelService extends pulumi.ComponentResource {
  readonly chart: k8s.helm.v4.Chart;

  constructor(name: string, args: ModelServiceArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.ModelService, name, {}, opts);
    if (opts?.dependsOn === undefined && isValuesMap(args.values)) {
      const uri = getPath(args.values, ['modelArtifacts', 'uri']);
      if (typeof uri === 'string' && uri.startsWith('pvc')) {
        pulumi.log.warn(`modelArtifacts.uri is ${uri}, but nothing orders this chart after the volume's pull Job: give dependsOn [<its ModelStorage>] so the pods do not start on an empty volume`, this);
      }
    }
    this.chart = createChart(
      this,
      name,
      { release: args.releaseName, namespace: args.namespace, chart: args.chart ?? DEFAULT_CHARTS.modelService, values: args.values, patches: args.patches },
      opts?.dependsOn,
    );
    this.registerOutputs({});
  }
}
