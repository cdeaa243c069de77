import * as pulumi from '@pulumi/pulumi';
import type { LlmdModelPlan } from '@app-serving/core';
import { TYPE_TOKENS, childName } from './component-names.ts';
import { EmbeddingService } from './embedding-service.ts';
import { InferencePool } from './inference-pool.ts';
import { InferenceRoute } from './inference-route.ts';
import { istioAccess, llmdFoundation } from './llmd-common.ts';
import { LlmdInfra } from './llmd-infra.ts';
import type { ModelAccess } from './model-access.ts';
import type { ModelNamespace } from './model-namespace.ts';
import { resolveModelPlan, type ModelPlanSource } from './model-plan.ts';
import { ModelAutoscaling } from './model-autoscaling.ts';
import { ModelService } from './model-service.ts';
import type { ModelStorage } from './model-storage.ts';
import type { LlmdModelOutputs } from './model-outputs.ts';
import { childOptions, whenReady } from './options.ts';

/** Arguments of {@link LlmdModel}: a plan entry (or a model folder to plan here) and the Harbor credentials. */
export type LlmdModelArgs = Omit<ModelPlanSource<LlmdModelPlan>, 'hfToken'>;

/**
 * One llm-d model end to end (DESIGN §1): namespace and pull secret, model storage, the
 * llm-d-infra, GAIE and llm-d-modelservice charts, then the HTTPRoute (generative) or the
 * embeddings Service (embedder).
 *
 * Children (logical names): `<name>-namespace` ({@link ModelNamespace}), `<name>-storage`
 * ({@link ModelStorage}, with a modelSource), `<name>-infra` ({@link LlmdInfra}), `<name>-pool`
 * ({@link InferencePool}), `<name>-model-service` ({@link ModelService}), `<name>-route`
 * ({@link InferenceRoute}, generative) or `<name>-embeddings` ({@link EmbeddingService}, embedder),
 * and `<name>-autoscaling` ({@link ModelAutoscaling}) when the plan autoscales the model.
 *
 * Order: namespace → storage, infra, pool → model service (after storage and pool) → route
 * (after infra and pool) or embeddings Service (after the model service).
 */
export class LlmdModel extends pulumi.ComponentResource {
  /** The plan the model was deployed from. */
  readonly plan: LlmdModelPlan;
  /**
   * The model's outputs, discriminated by `category` (generative: `routeName`; embedder:
   * `embeddingsUrl`). They resolve once the model is ready to serve; see {@link LlmdModelOutputs}.
   */
  readonly outputs: LlmdModelOutputs;
  /** The namespace, once it exists. */
  readonly namespace: pulumi.Output<string>;
  /** The name clients send as `model`. */
  readonly servedModelName: pulumi.Output<string>;
  /** The Service Istio generates for the model's Gateway. */
  readonly gatewayService: pulumi.Output<string>;
  /** In-cluster FQDN of the model's Istio gateway Service, once the model is ready to serve. */
  readonly gatewayHost: pulumi.Output<string>;
  /** `http://<gatewayHost>:80`, once the model is ready to serve. */
  readonly gatewayUrl: pulumi.Output<string>;
  /** The InferencePool (GAIE chart). */
  readonly inferencePoolName: pulumi.Output<string>;
  /** The HTTPRoute (generative), else undefined; `outputs` types it per category. */
  readonly routeName: pulumi.Output<string | undefined>;
  /** The embeddings Service URL (embedders), else undefined; `outputs` types it per category. */
  readonly embeddingsUrl: pulumi.Output<string | undefined>;
  /** The model PVC (with a modelSource), else undefined. */
  readonly pvcName: pulumi.Output<string | undefined>;

  readonly modelNamespace: ModelNamespace;
  readonly storage: ModelStorage | undefined;
  readonly infra: LlmdInfra;
  readonly inferencePool: InferencePool;
  readonly modelService: ModelService;
  readonly route: InferenceRoute | undefined;
  readonly embeddings: EmbeddingService | undefined;
  readonly autoscaling: ModelAutoscaling | undefined;
  /** Who may call the model, enforced by its Istio gateway (with an access other than open, or a rate limit). */
  readonly access: ModelAccess | undefined;

  constructor(name: string, args: LlmdModelArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.LlmdModel, name, {}, opts);
    const { model: plan } = resolveModelPlan<LlmdModelPlan>(args, 'llm-d');
    if ((plan as { upstream?: string }).upstream === '2026-08') {
      throw new pulumi.InputPropertyError({ propertyPath: 'plan.upstream', reason: 'is 2026-08; LlmdModel deploys models of the 2026-02 set (use LlmdRouterModel)' });
    }
    this.plan = plan;
    const inherited = opts?.dependsOn;
    ({ modelNamespace: this.modelNamespace, storage: this.storage } = llmdFoundation(this, name, plan, args, inherited));
    const ns = this.modelNamespace;
    const namespace = ns.name;

    this.infra = new LlmdInfra(
      childName(name, 'infra'),
      {
        namespace,
        slug: plan.slug,
        releaseName: plan.releases.infra,
        chart: plan.charts.infra,
        values: plan.values.infra,
        patches: plan.patches.infra,
        gatewayAlias: plan.gateway.alias,
        gatewayHost: plan.gateway.host,
      },
      childOptions(this, inherited, [ns]),
    );

    this.inferencePool = new InferencePool(
      childName(name, 'pool'),
      { namespace, releaseName: plan.releases.gaie, chart: plan.charts.gaie, values: plan.values.gaie, patches: plan.patches.gaie },
      childOptions(this, inherited, [ns]),
    );

    this.modelService = new ModelService(
      childName(name, 'model-service'),
      { namespace, releaseName: plan.releases.modelService, chart: plan.charts.modelService, values: plan.values.modelService, patches: plan.patches.modelService },
      childOptions(this, inherited, [ns, this.storage, this.inferencePool]),
    );

    // Enforced on the gateway's pods before the route opens the model to traffic.
    this.access = istioAccess(this, name, plan, args, inherited, [ns]);

    this.route =
      plan.httpRoute !== null
        ? new InferenceRoute(
            childName(name, 'route'),
            { namespace, slug: plan.slug, routeName: plan.httpRoute, gatewayName: plan.gateway.name, inferencePoolName: plan.inferencePool.name },
            childOptions(this, inherited, [ns, this.infra, this.inferencePool, this.access]),
          )
        : undefined;

    this.autoscaling = plan.autoscaling
      ? new ModelAutoscaling(
          childName(name, 'autoscaling'),
          { namespace, autoscaling: plan.autoscaling, ...(args.prometheusCredentials !== undefined && { prometheusCredentials: args.prometheusCredentials }) },
          childOptions(this, inherited, [ns, this.modelService]),
        )
      : undefined;

    const embedding = plan.embeddingService;
    this.embeddings =
      embedding !== null
        ? new EmbeddingService(
            childName(name, 'embeddings'),
            { namespace, slug: plan.slug, serviceName: embedding.name, podLabels: plan.modelServer.podLabels, targetPort: embedding.targetPort },
            childOptions(this, inherited, [ns, this.modelService]),
          )
        : undefined;

    // The model servers and the EPP are up (the charts await their Deployments) and traffic has its
    // way in (route or embeddings Service); the Gateway's programming is not awaited: verify proves it.
    const ready = [this.infra.chart, this.inferencePool.chart, this.modelService.chart, this.route?.route, this.embeddings?.service];
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
    if (embedding !== null) {
      this.outputs = { ...base, category: 'embedder', embeddingsService: when(embedding.name), embeddingsUrl: when(embedding.url) };
    } else if (plan.httpRoute !== null) {
      this.outputs = { ...base, category: 'generative', routeName: when(plan.httpRoute) };
    } else {
      throw new pulumi.ResourceError(`the plan of ${plan.name} has neither an HTTPRoute nor an embeddings Service (core plans one of them for every llm-d model)`, this);
    }
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
