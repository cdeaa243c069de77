import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import { applyPatches, chartRefProblem, patchResourceOptions, type ChartRef, type KubernetesObject, type PostRenderPatch, type Values } from '@app-serving/core';
import { childName } from './component-names.ts';
import { childOptions, type DependsOn } from './options.ts';

/**
 * Pure builders of the Helm charts' arguments and post-render transforms, and the one place
 * that creates a `helm.v4.Chart` for the chart components.
 */

/** What a chart release is made of. */
export interface ChartReleaseInputs {
  /** Helm release name (from core: `infra-<slug>`, `gaie-<slug>`, `ms-<slug>`). */
  readonly release: pulumi.Input<string>;
  readonly namespace: pulumi.Input<string>;
  readonly chart: ChartRef;
  readonly values: pulumi.Input<Values>;
}

/** The `helm.v4.Chart` arguments of a release: `oci://` charts carry no `repositoryOpts`. */
export function chartArgs(inputs: ChartReleaseInputs): k8s.helm.v4.ChartArgs {
  const { chart } = inputs;
  return {
    name: inputs.release,
    namespace: inputs.namespace,
    chart: chart.chart,
    version: chart.version,
    ...(chart.repo !== undefined && !chart.chart.startsWith('oci://') && { repositoryOpts: { repo: chart.repo } }),
    values: inputs.values as pulumi.Input<{ [key: string]: unknown }>,
  };
}

/**
 * The resource transform of every chart: it applies core's post-render patches to the objects the
 * chart renders, and marks each object `deleteBeforeReplace`.
 *
 * Registered through the chart's `transforms` option, Pulumi runs it for the chart and for every
 * object rendered from it, before registering the object. A chart's objects have fixed names, so a
 * replacement created before the old object is deleted can never succeed (server-side apply
 * refuses it as a field conflict); the engine planned exactly that for them (a ConfigMap whose data
 * changed, seen in the deploy tests), so every rendered object is replaced delete-first. The chart
 * component itself is left alone. A Deployment an autoscaler owns (core's `autoscaled-replicas`
 * patch) gets `ignoreChanges: ['spec.replicas']`.
 *
 * @see https://www.pulumi.com/docs/iac/concepts/options/transforms/
 */
export function postRenderTransform(patches: readonly PostRenderPatch[]): pulumi.ResourceTransform {
  const own = structuredClone(patches) as PostRenderPatch[];
  return (args) => {
    if (!args.custom) return undefined;
    const object = args.props as KubernetesObject;
    const patched = applyPatches(own, object);
    const extra = patchResourceOptions(own, object);
    const ignoreChanges = extra ? [...new Set([...(args.opts.ignoreChanges ?? []), ...extra.ignoreChanges])] : args.opts.ignoreChanges;
    return { props: patched as pulumi.Inputs, opts: { ...args.opts, deleteBeforeReplace: true, ...(ignoreChanges && { ignoreChanges }) } };
  };
}

/** What {@link createChart} needs beyond the release. */
export interface CreateChartArgs extends ChartReleaseInputs {
  /** Post-render patches (the transform is registered in any case: see {@link postRenderTransform}). */
  readonly patches?: readonly PostRenderPatch[] | undefined;
}

/**
 * Creates the `helm.v4.Chart` of a chart component as its child `<name>-chart`, after the
 * component's own dependencies. Validates the chart reference first.
 */
export function createChart(component: pulumi.ComponentResource, name: string, args: CreateChartArgs, inherited: DependsOn): k8s.helm.v4.Chart {
  const problem = chartRefProblem(args.chart);
  if (problem) throw new pulumi.InputPropertyError({ propertyPath: `chart.${problem.key}`, reason: problem.message });
  const patches = args.patches ?? [];
  return new k8s.helm.v4.Chart(
    childName(name, 'chart'),
    chartArgs(args),
    childOptions<pulumi.ComponentResourceOptions>(component, inherited, [], { transforms: [postRenderTransform(patches)] }),
  );
}
