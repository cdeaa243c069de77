import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import { accessEnforced, gatewayAliasManifest, RESOURCE_TYPES, type ChartRef, type EnvoyRouteManifests, type LlmdRouterModelPlan, type PostRenderPatch, type Values } from '@app-serving/core';
import { createChart } from './chart.ts';
import { TYPE_TOKENS, childName } from './component-names.ts';
import { customResource } from './custom-resource.ts';
import { EmbeddingService } from './embedding-service.ts';
import { istioAccess, llmdFoundation } from './llmd-common.ts';
import { ModelAccess } from './model-access.ts';
import { ModelAutoscaling } from './model-autoscaling.ts';
import type { ModelNamespace } from './model-namespace.ts';
import type { LlmdModelOutputs } from './model-outputs.ts';
import { resolveModelPlan, type ModelPlanSource } from './model-plan.ts';
import type { ModelStorage } from './model-storage.ts';
import { childOptions, whenReady, type DependsOn } from './options.ts';

/** Arguments of {@link LlmdRouterModel}: a 2026-08 plan entry (or a model folder to plan here) and the Harbor credentials. */
export type LlmdRouterModelArgs = Omit<ModelPlanSource<LlmdRouterModelPlan>, 'hfToken'> & {
  /**
   * The stack's Envoy GatewayClass when the stack creates it (class `envoy`: {@link AppServing}'s, or
   * the {@link KserveGateway}'s): the model's Gateway waits for it.
   */
  readonly envoyGatewayClass?: pulumi.Resource;
};

/** Arguments of {@link RouterGateway}. */
export interface RouterGatewayArgs {
  readonly namespace: pulumi.Input<string>;
  readonly slug: pulumi.Input<string>;
  /** The Gateway (gateway mode), as core builds it; none in standalone mode. */
  readonly gateway?: Record<string, unknown> | null;
  /** What places the gateway pods, as core builds it: Istio's ConfigMap, or Envoy Gateway's EnvoyProxy. */
  readonly parameters?: Record<string, unknown> | null;
  /** What the Gateway waits for besides its parameters (the stack's Envoy GatewayClass). */
  readonly gatewayClass?: pulumi.Resource;
  /** The ExternalName alias `llmd-gateway-<slug>` and the host it points at (the gateway Service, or the Router's proxy). */
  readonly gatewayAlias: pulumi.Input<string>;
  readonly gatewayHost: pulumi.Input<string>;
}

/**
 * How clients reach a 2026-08 llm-d model: its Gateway (gateway mode: the Gateway and what places
 * its pods — Istio's parameters ConfigMap, Envoy Gateway's EnvoyProxy) and the alias `llmd-gateway-<slug>`.
 *
 * Registered under the logical name of 2026-02's {@link LlmdInfra} (`<model>-infra`) with an alias
 * of its type: the alias Service keeps its identity when a model moves from 2026-02, so Pulumi
 * updates its target in place instead of creating a second Service of the same name.
 *
 * Children: `<name>-gateway` (Gateway), `<name>-gateway-parameters` (ConfigMap, or EnvoyProxy), `<name>-gateway-alias` (Service).
 */
export class RouterGateway extends pulumi.ComponentResource {
  readonly gateway: k8s.apiextensions.CustomResource | undefined;
  readonly parameters: k8s.core.v1.ConfigMap | k8s.apiextensions.CustomResource | undefined;
  readonly gatewayAlias: k8s.core.v1.Service;

  constructor(name: string, args: RouterGatewayArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.RouterGateway, name, {}, pulumi.mergeOptions(opts ?? {}, { aliases: [{ type: TYPE_TOKENS.LlmdInfra }] }));
    const inherited = opts?.dependsOn;
    const parameters = args.parameters;
    this.parameters = !parameters
      ? undefined
      : parameters.kind === RESOURCE_TYPES.envoyProxy.kind
        ? customResource(childName(name, 'gateway-parameters'), RESOURCE_TYPES.envoyProxy, parameters as never, childOptions(this, inherited))
        : new k8s.core.v1.ConfigMap(childName(name, 'gateway-parameters'), parameters as k8s.core.v1.ConfigMapArgs, childOptions(this, inherited));
    this.gateway = args.gateway
      ? customResource(childName(name, 'gateway'), RESOURCE_TYPES.gateway, args.gateway as never, childOptions(this, inherited, [this.parameters, args.gatewayClass]))
      : undefined;
    const alias = pulumi
      .output({ name: args.gatewayAlias, namespace: args.namespace, slug: args.slug, gatewayHost: args.gatewayHost })
      .apply((a) => gatewayAliasManifest(a));
    this.gatewayAlias = new k8s.core.v1.Service(childName(name, 'gateway-alias'), { metadata: alias.metadata, spec: alias.spec }, childOptions(this, inherited, [this.gateway]));
    this.registerOutputs({});
  }
}

/** Arguments of {@link Router}. */
export interface RouterArgs {
  readonly namespace: pulumi.Input<string>;
  readonly releaseName: pulumi.Input<string>;
  readonly chart: ChartRef;
  readonly values: pulumi.Input<Values>;
  readonly patches?: readonly PostRenderPatch[];
}

/**
 * The llm-d Router chart of one model (`llm-d-router-gateway` or `llm-d-router-standalone`): the
 * endpoint picker, the InferencePool and, in gateway mode, the HTTPRoute and Istio's DestinationRule.
 * Children: `<name>-chart` (`helm.v4.Chart`, its objects patched and replaced delete-first).
 */
export class Router extends pulumi.ComponentResource {
  readonly chart: k8s.helm.v4.Chart;

  constructor(name: string, args: RouterArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.Router, name, {}, opts);
    this.chart = createChart(this, name, { release: args.releaseName, namespace: args.namespace, chart: args.chart, values: args.values, patches: args.patches }, opts?.dependsOn);
    this.registerOutputs({});
  }
}

/**
 * A generative 2026-08 model's route behind an Envoy Gateway (class `envoy`), as core builds it
 * (core `envoyRouteManifests`): Envoy Gateway takes no InferencePool backend, so the HTTPRoute goes
 * to a Service of the pool's pods, an EnvoyExtensionPolicy has Envoy ask the EPP which pod, and a
 * BackendTrafficPolicy sends the request to the pod it names. The route comes last: it opens the way
 * in once its policies are there.
 *
 * Order it after the model server (Pulumi awaits the Service's endpoints) and the Router chart (the
 * EPP answers: the policy does not fail open).
 *
 * Children: `<name>-service` (`v1/Service`), `<name>-extension-policy` (EnvoyExtensionPolicy),
 * `<name>-backend-traffic` (BackendTrafficPolicy), `<name>-http-route` (HTTPRoute, after the others).
 */
export class EnvoyRoute extends pulumi.ComponentResource {
  readonly service: k8s.core.v1.Service;
  readonly extensionPolicy: k8s.apiextensions.CustomResource;
  readonly backendTrafficPolicy: k8s.apiextensions.CustomResource;
  readonly httpRoute: k8s.apiextensions.CustomResource;

  constructor(name: string, args: { readonly manifests: EnvoyRouteManifests }, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.EnvoyRoute, name, {}, opts);
    const inherited = opts?.dependsOn;
    const { service, extensionPolicy, backendTrafficPolicy, httpRoute } = args.manifests;
    const svc = service as { metadata: k8s.types.input.meta.v1.ObjectMeta; spec: k8s.types.input.core.v1.ServiceSpec };
    this.service = new k8s.core.v1.Service(childName(name, 'service'), { metadata: svc.metadata, spec: svc.spec }, childOptions(this, inherited));
    this.extensionPolicy = customResource(childName(name, 'extension-policy'), RESOURCE_TYPES.envoyExtensionPolicy, extensionPolicy as never, childOptions(this, inherited));
    this.backendTrafficPolicy = customResource(childName(name, 'backend-traffic'), RESOURCE_TYPES.backendTrafficPolicy, backendTrafficPolicy as never, childOptions(this, inherited));
    this.httpRoute = customResource(childName(name, 'http-route'), RESOURCE_TYPES.httpRoute, httpRoute as never, childOptions(this, inherited, [this.service, this.extensionPolicy, this.backendTrafficPolicy]));
    this.registerOutputs({});
  }
}

/**
 * The model server of a 2026-08 llm-d model: the Deployment core builds (llm-d's model-server recipe),
 * awaited for the model's readyTimeout. Children: `<name>-deployment`.
 */
export class ModelServer extends pulumi.ComponentResource {
  readonly deployment: k8s.apps.v1.Deployment;

  /** `autoscaled`: an autoscaler owns the replica count; `pulumi up` leaves `spec.replicas` to it after the first. */
  constructor(name: string, args: { readonly manifest: Record<string, unknown>; readonly autoscaled?: boolean }, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.ModelServer, name, {}, opts);
    const { metadata, spec } = args.manifest as { metadata: k8s.types.input.meta.v1.ObjectMeta; spec: k8s.types.input.apps.v1.DeploymentSpec };
    const options = childOptions(this, opts?.dependsOn);
    this.deployment = new k8s.apps.v1.Deployment(childName(name, 'deployment'), { metadata, spec }, args.autoscaled ? pulumi.mergeOptions(options, { ignoreChanges: ['spec.replicas'] }) : options);
    this.registerOutputs({});
  }
}

/**
 * One llm-d model on the 2026-08 set (core `LlmdRouterModelPlan`): namespace and pull secret, model
 * storage, the model server's Deployment, the llm-d Router chart, the Gateway and its alias, and the
 * embeddings Service of an embedding model.
 *
 * It registers under {@link LlmdModel}'s own type token, and the children both sets share keep their
 * logical names — `<name>-namespace`, `<name>-storage`, `<name>-embeddings`, and the alias under
 * `<name>-infra` — so moving a model from 2026-02 updates them in place; the old set's charts are
 * deleted after the new objects are up (Pulumi deletes last).
 *
 * Order: namespace → storage → model server; namespace → access → Router chart; model server and
 * Router → (class `envoy`) Envoy Gateway's route → gateway and alias (clients are pointed at the new
 * gateway once the model serves) and the embeddings Service.
 */
export class LlmdRouterModel extends pulumi.ComponentResource {
  /** The plan the model was deployed from. */
  readonly plan: LlmdRouterModelPlan;
  /** The model's outputs, discriminated by `category`; as {@link LlmdModel}'s (standalone mode: `routeName` is ""). */
  readonly outputs: LlmdModelOutputs;
  /** The namespace, once it exists. */
  readonly namespace: pulumi.Output<string>;
  /** The name clients send as `model`. */
  readonly servedModelName: pulumi.Output<string>;
  /** The Service clients call: the Gateway's (gateway mode) or the Router's EPP (standalone mode). */
  readonly gatewayService: pulumi.Output<string>;
  /** In-cluster FQDN of {@link gatewayService}, once the model is ready to serve. */
  readonly gatewayHost: pulumi.Output<string>;
  /** The URL clients call, once the model is ready to serve. */
  readonly gatewayUrl: pulumi.Output<string>;
  /** The InferencePool (Router chart). */
  readonly inferencePoolName: pulumi.Output<string>;
  /** The HTTPRoute (generative, gateway mode), else undefined. */
  readonly routeName: pulumi.Output<string | undefined>;
  /** The embeddings Service URL (embedders), else undefined. */
  readonly embeddingsUrl: pulumi.Output<string | undefined>;
  /** The model PVC (with a modelSource), else undefined. */
  readonly pvcName: pulumi.Output<string | undefined>;
  readonly modelNamespace: ModelNamespace;
  readonly storage: ModelStorage | undefined;
  readonly modelServer: ModelServer;
  readonly router: Router;
  /** Envoy Gateway's form of the route (class `envoy`, generative), else undefined. */
  readonly envoyRoute: EnvoyRoute | undefined;
  readonly gateway: RouterGateway;
  readonly embeddings: EmbeddingService | undefined;
  /** KEDA's objects, when the plan autoscales the model. */
  readonly autoscaling: ModelAutoscaling | undefined;
  /** Who may call the model, enforced by its gateway — Istio's, or Envoy Gateway's on its route — with an access other than open, or a rate limit. */
  readonly access: ModelAccess | undefined;

  constructor(name: string, args: LlmdRouterModelArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.LlmdModel, name, {}, opts);
    // A folder planned here is on the 2026-08 set unless it says otherwise.
    const source = args.folder !== undefined && args.folder.upstream === undefined ? { ...args, folder: { ...args.folder, upstream: '2026-08' as const } } : args;
    const { model } = resolveModelPlan<LlmdRouterModelPlan>(source, 'llm-d');
    if (model.upstream !== '2026-08') {
      throw new pulumi.InputPropertyError({ propertyPath: 'plan.upstream', reason: `is ${String(model.upstream)}; LlmdRouterModel deploys models of the 2026-08 set (use LlmdModel)` });
    }
    const plan = model;
    this.plan = plan;
    const inherited = opts?.dependsOn;
    ({ modelNamespace: this.modelNamespace, storage: this.storage } = llmdFoundation(this, name, plan, args, inherited));
    const ns = this.modelNamespace;
    const namespace = ns.name;

    this.modelServer = new ModelServer(
      childName(name, 'model-server'),
      { manifest: plan.manifests.modelServer, autoscaled: plan.autoscaling !== null },
      childOptions(this, inherited, [ns, this.storage]),
    );
    // Enforced by the Istio gateway's pods, or by Envoy Gateway on the model's route (core refuses
    // access on other gateways); in place before the route opens the way in.
    this.access = plan.router.gatewayClass === 'envoy' ? envoyAccess(this, name, plan, args, inherited, [ns]) : istioAccess(this, name, plan, args, inherited, [ns]);
    this.router = new Router(
      childName(name, 'router'),
      { namespace, releaseName: plan.router.release, chart: plan.router.chart, values: plan.router.values, patches: plan.router.patches },
      childOptions(this, inherited, [ns, this.access]),
    );
    this.autoscaling = plan.autoscaling
      ? new ModelAutoscaling(
          childName(name, 'autoscaling'),
          { namespace, autoscaling: plan.autoscaling, ...(args.prometheusCredentials !== undefined && { prometheusCredentials: args.prometheusCredentials }) },
          childOptions(this, inherited, [ns, this.modelServer]),
        )
      : undefined;
    const envoyRoute = plan.manifests.envoyRoute;
    this.envoyRoute = envoyRoute ? new EnvoyRoute(childName(name, 'route'), { manifests: envoyRoute }, childOptions(this, inherited, [ns, this.modelServer, this.router, this.access])) : undefined;
    this.gateway = new RouterGateway(
      childName(name, 'infra'),
      {
        namespace,
        slug: plan.slug,
        gateway: plan.manifests.gateway,
        parameters: plan.manifests.gatewayParameters,
        ...(plan.router.gatewayClass === 'envoy' && args.envoyGatewayClass !== undefined && { gatewayClass: args.envoyGatewayClass }),
        gatewayAlias: plan.gateway.alias,
        gatewayHost: plan.gateway.host,
      },
      childOptions(this, inherited, [ns, this.modelServer, this.router, this.envoyRoute]),
    );
    const embedding = plan.embeddingService;
    this.embeddings =
      embedding !== null
        ? new EmbeddingService(
            childName(name, 'embeddings'),
            { namespace, slug: plan.slug, serviceName: embedding.name, podLabels: plan.modelServer.podLabels, targetPort: embedding.targetPort },
            childOptions(this, inherited, [ns, this.modelServer]),
          )
        : undefined;

    // Ready to serve: the model server and the Router's EPP are awaited (Deployments); the Gateway,
    // its HTTPRoute and the InferencePool are not (no status this provider waits for): verify is the proof.
    const ready = [this.modelServer.deployment, this.router.chart, this.envoyRoute?.httpRoute, this.gateway.gatewayAlias, this.embeddings?.service];
    const when = <T>(value: T) => whenReady(ready, value);
    this.namespace = namespace;
    this.servedModelName = when(plan.modelServer.servedModelName);
    this.gatewayService = when(plan.gateway.service);
    this.gatewayHost = when(plan.gateway.host);
    this.gatewayUrl = when(plan.gateway.url);
    this.inferencePoolName = when(plan.inferencePool.name);
    this.routeName = when(plan.httpRoute ?? undefined);
    this.embeddingsUrl = when(embedding?.url);
    this.pvcName = this.storage ? this.storage.pvcName : pulumi.output(undefined);
    const base = {
      platform: 'llm-d' as const,
      name: plan.name,
      slug: plan.slug,
      namespace: this.namespace,
      servedModelName: this.servedModelName,
      inferencePoolName: this.inferencePoolName,
      pvcName: this.pvcName,
      gatewayService: this.gatewayService,
      gatewayHost: this.gatewayHost,
      gatewayUrl: this.gatewayUrl,
    };
    this.outputs =
      embedding !== null
        ? { ...base, category: 'embedder', embeddingsService: when(embedding.name), embeddingsUrl: when(embedding.url) }
        : // Standalone mode has no HTTPRoute: clients call the Router's proxy (gatewayUrl).
          { ...base, category: 'generative', routeName: when(plan.httpRoute ?? '') };
    this.registerOutputs({
      namespace: this.namespace,
      servedModelName: this.servedModelName,
      gatewayService: this.gatewayService,
      gatewayHost: this.gatewayHost,
      gatewayUrl: this.gatewayUrl,
      inferencePoolName: this.inferencePoolName,
      routeName: this.routeName,
      embeddingsUrl: this.embeddingsUrl,
      pvcName: this.pvcName,
    });
  }
}

/**
 * The model's access on its Envoy Gateway route (`<name>-access`): the SecurityPolicy and the keys'
 * Secret; the rate limit is in the route's own BackendTrafficPolicy (Envoy Gateway attaches one per
 * route), so access makes none. Undefined without authentication (an open model's limit is the route's).
 */
function envoyAccess(
  component: pulumi.ComponentResource,
  name: string,
  plan: LlmdRouterModelPlan,
  args: Pick<LlmdRouterModelArgs, 'apiKeys'>,
  inherited: DependsOn,
  after: readonly DependsOn[],
): ModelAccess | undefined {
  if (!accessEnforced(plan.access) || plan.access.mode === 'open' || plan.httpRoute === null) return undefined;
  return new ModelAccess(
    childName(name, 'access'),
    {
      slug: plan.slug,
      access: plan.access,
      target: { envoyGateway: { namespace: plan.namespace, route: plan.httpRoute, sharedBackendTraffic: true } },
      ...(args.apiKeys !== undefined && { apiKeys: args.apiKeys }),
    },
    childOptions(component, inherited, [...after]),
  );
}
