import * as pulumi from '@pulumi/pulumi';
import type * as k8s from '@pulumi/kubernetes';
import { ENVOY_GATEWAY_CONTROLLER, GATEWAY_HTTP_PORT, RESOURCE_TYPES, envoyGatewayClassManifest, kserveGatewayManifest } from '@app-serving/core';
import { TYPE_TOKENS, childName } from './component-names.ts';
import { customResource } from './custom-resource.ts';
import { childOptions } from './options.ts';

/** Arguments of {@link KserveGateway}: the plan's `kserve.gateway`. */
export interface KserveGatewayArgs {
  /**
   * The Gateway's name: the plan's `kserve.gateway.name` (KServe expects `kserve-ingress-gateway`
   * unless its `inferenceservice-config` names another).
   * @see https://kserve.github.io/website/docs/admin-guide/kubernetes-deployment-llmisvc
   */
  readonly name: pulumi.Input<string>;
  /** The Gateway's namespace (it must exist; KServe's install creates `kserve`). */
  readonly namespace: pulumi.Input<string>;
  /** The GatewayClass to create and use, e.g. `envoy`. */
  readonly className: pulumi.Input<string>;
  /**
   * The GatewayClass controller.
   * @default "gateway.envoyproxy.io/gatewayclass-controller" (Envoy Gateway)
   * @see https://gateway.envoyproxy.io/docs/
   */
  readonly controllerName?: pulumi.Input<string>;
  /**
   * The HTTP listener port.
   * @default 80
   */
  readonly port?: pulumi.Input<number>;
  /**
   * Earlier URNs of the GatewayClass (the stack's own Envoy GatewayClass, {@link AppServing}'s, when
   * the stack had llm-d models of class `envoy` and no KServe model): it is taken over, not replaced.
   */
  readonly gatewayClassAliases?: readonly pulumi.Input<pulumi.URN | pulumi.Alias>[];
}

/**
 * The Envoy GatewayClass and the KServe ingress Gateway (one HTTP listener, routes from every
 * namespace), created once per stack; every KServe model's LLMInferenceService attaches to it.
 *
 * Children: `<name>-gateway-class` (`GatewayClass`, cluster-scoped) and `<name>-gateway`
 * (`Gateway`, after the class).
 * @see https://kserve.github.io/website/docs/admin-guide/kubernetes-deployment-llmisvc
 */
export class KserveGateway extends pulumi.ComponentResource {
  readonly gatewayClass: k8s.apiextensions.CustomResource;
  readonly gateway: k8s.apiextensions.CustomResource;

  constructor(name: string, args: KserveGatewayArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.KserveGateway, name, {}, opts);
    const gateway = pulumi.output({
      name: args.name,
      namespace: args.namespace,
      className: args.className,
      controllerName: args.controllerName ?? ENVOY_GATEWAY_CONTROLLER,
      port: args.port ?? GATEWAY_HTTP_PORT,
    });
    const inherited = opts?.dependsOn;
    this.gatewayClass = customResource(
      childName(name, 'gateway-class'),
      RESOURCE_TYPES.gatewayClass,
      gateway.apply(envoyGatewayClassManifest),
      childOptions(this, inherited, [], args.gatewayClassAliases?.length ? { aliases: [...args.gatewayClassAliases] } : undefined),
    );
    this.gateway = customResource(
      childName(name, 'gateway'),
      RESOURCE_TYPES.gateway,
      gateway.apply(kserveGatewayManifest),
      childOptions(this, inherited, [this.gatewayClass]),
    );
    this.registerOutputs({});
  }
}
