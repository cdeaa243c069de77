import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import { DEFAULT_CHARTS, gatewayAliasManifest, type ChartRef, type PostRenderPatch, type Values } from '@app-serving/core';
import { createChart } from './chart.ts';
import { TYPE_TOKENS, childName } from './component-names.ts';
import { childOptions } from './options.ts';

/** Arguments of {@link LlmdInfra}. */
export interface LlmdInfraArgs {
  /** The model namespace. */
  readonly namespace: pulumi.Input<string>;
  /** The model slug (labels). */
  readonly slug: pulumi.Input<string>;
  /** Helm release name: the plan's `releases.infra` (`infra-<slug>`); the Gateway is `<release>-inference-gateway`. */
  readonly releaseName: pulumi.Input<string>;
  /**
   * The llm-d-infra chart.
   * @default core `DEFAULT_CHARTS.infra` (llm-d-infra v1.3.10)
   * @see https://github.com/llm-d-incubation/llm-d-infra
   */
  readonly chart?: ChartRef;
  /** The release's values: the plan's `values.infra` (file + programmatic, Helm merge semantics). */
  readonly values: pulumi.Input<Values>;
  /**
   * Post-render patches: the plan's `patches.infra` (gateway pod placement in the Gateway's
   * parametersRef ConfigMap). Applied through the chart's `transforms`, so they are plain data.
   * @default []
   */
  readonly patches?: readonly PostRenderPatch[];
  /** The ExternalName alias Service (`llmd-gateway-<slug>`): the plan's `gateway.alias`. Omit to create none. */
  readonly gatewayAlias?: pulumi.Input<string>;
  /** In-cluster FQDN of the Istio gateway Service the alias points at: the plan's `gateway.host`. Required with `gatewayAlias`. */
  readonly gatewayHost?: pulumi.Input<string>;
}

/**
 * The `llm-d-infra` chart (the model's Istio Gateway and its parameters ConfigMap) and the
 * ExternalName alias of the gateway Service.
 *
 * Children: `<name>-chart` (`helm.v4.Chart`, with the post-render transform when there are
 * patches) and `<name>-gateway-alias` (`v1/Service`, type ExternalName).
 */
export class LlmdInfra extends pulumi.ComponentResource {
  readonly chart: k8s.helm.v4.Chart;
  readonly gatewayAlias: k8s.core.v1.Service | undefined;

  constructor(name: string, args: LlmdInfraArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.LlmdInfra, name, {}, opts);
    if ((args.gatewayAlias === undefined) !== (args.gatewayHost === undefined)) {
      throw new pulumi.InputPropertyError({ propertyPath: args.gatewayAlias === undefined ? 'gatewayAlias' : 'gatewayHost', reason: 'gatewayAlias and gatewayHost go together: the alias points at the gateway host' });
    }
    const inherited = opts?.dependsOn;
    this.chart = createChart(
      this,
      name,
      { release: args.releaseName, namespace: args.namespace, chart: args.chart ?? DEFAULT_CHARTS.infra, values: args.values, patches: args.patches },
      inherited,
    );
    if (args.gatewayAlias !== undefined) {
      const alias = pulumi
        .output({ name: args.gatewayAlias, namespace: args.namespace, slug: args.slug, gatewayHost: args.gatewayHost! })
        .apply((a) => gatewayAliasManifest(a));
      // An ExternalName Service needs nothing from the chart: it resolves once Istio creates the target.
      this.gatewayAlias = new k8s.core.v1.Service(childName(name, 'gateway-alias'), { metadata: alias.metadata, spec: alias.spec }, childOptions(this, inherited));
    } else {
      this.gatewayAlias = undefined;
    }
    this.registerOutputs({});
  }
}
