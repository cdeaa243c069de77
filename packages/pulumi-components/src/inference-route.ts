import * as pulumi from '@pulumi/pulumi';
import type * as k8s from '@pulumi/kubernetes';
import { RESOURCE_TYPES, httpRouteManifest } from '@app-serving/core';
import { TYPE_TOKENS, childName } from './component-names.ts';
import { customResource } from './custom-resource.ts';
import { childOptions } from './options.ts';

/** Arguments of {@link InferenceRoute}. */
export interface InferenceRouteArgs {
  /** The model namespace. */
  readonly namespace: pulumi.Input<string>;
  /** The model slug (labels). */
  readonly slug: pulumi.Input<string>;
  /** The HTTPRoute's name: the plan's `httpRoute` (`llm-d-<slug>`). */
  readonly routeName: pulumi.Input<string>;
  /** The parent Gateway (in the same namespace): the plan's `gateway.name`. */
  readonly gatewayName: pulumi.Input<string>;
  /** The backend InferencePool: the plan's `inferencePool.name` (`gaie-<slug>`). */
  readonly inferencePoolName: pulumi.Input<string>;
}

/**
 * The `gateway.networking.k8s.io/v1` HTTPRoute of a generative model: `PathPrefix /` of its
 * Gateway to its InferencePool (`inference.networking.k8s.io`).
 *
 * Order it with `dependsOn` after the {@link LlmdInfra} (the Gateway) and the {@link InferencePool}
 * (the pool); {@link LlmdModel} does this.
 *
 * Children: `<name>-httproute` (`apiextensions.CustomResource`).
 * @see https://gateway-api.sigs.k8s.io/reference/spec/#httproute
 */
export class InferenceRoute extends pulumi.ComponentResource {
  readonly route: k8s.apiextensions.CustomResource;

  constructor(name: string, args: InferenceRouteArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.InferenceRoute, name, {}, opts);
    const route = pulumi
      .output({ name: args.routeName, namespace: args.namespace, slug: args.slug, gateway: args.gatewayName, inferencePool: args.inferencePoolName })
      .apply((a) => httpRouteManifest(a));
    this.route = customResource(childName(name, 'httproute'), RESOURCE_TYPES.httpRoute, route, childOptions(this, opts?.dependsOn));
    this.registerOutputs({});
  }
}
