import * as pulumi from '@pulumi/pulumi';
import type * as k8s from '@pulumi/kubernetes';
import { DEFAULT_CHARTS, type ChartRef, type PostRenderPatch, type Values } from '@app-serving/core';
import { createChart } from './chart.ts';
import { TYPE_TOKENS } from './component-names.ts';

/** Arguments of {@link InferencePool}. */
export interface InferencePoolArgs {
  /** The model namespace. */
  readonly namespace: pulumi.Input<string>;
  /** Helm release name: the plan's `releases.gaie` (`gaie-<slug>`); it is also the InferencePool's name. */
  readonly releaseName: pulumi.Input<string>;
  /**
   * The GAIE `inferencepool` chart.
   * @default core `DEFAULT_CHARTS.gaie` (oci://registry.k8s.io/…/inferencepool v1.2.0)
   * @see https://github.com/kubernetes-sigs/gateway-api-inference-extension/tree/main/config/charts/inferencepool
   */
  readonly chart?: ChartRef;
  /** The release's values: the plan's `values.gaie`. */
  readonly values: pulumi.Input<Values>;
  /**
   * Post-render patches: the plan's `patches.gaie` (image pull secrets on the EPP ServiceAccount,
   * for which GAIE v1.2.0 has no value). Applied through the chart's `transforms`.
   * @default []
   */
  readonly patches?: readonly PostRenderPatch[];
}

/**
 * The GAIE `inferencepool` chart: the EPP (endpoint picker) and the InferencePool.
 *
 * Children: `<name>-chart` (`helm.v4.Chart`, with the post-render transform when there are patches).
 */
export class InferencePool extends pulumi.ComponentResource {
  readonly chart: k8s.helm.v4.Chart;

  constructor(name: string, args: InferencePoolArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.InferencePool, name, {}, opts);
    this.chart = createChart(
      this,
      name,
      { release: args.releaseName, namespace: args.namespace, chart: args.chart ?? DEFAULT_CHARTS.gaie, values: args.values, patches: args.patches },
      opts?.dependsOn,
    );
    this.registerOutputs({});
  }
}
