import * as pulumi from '@pulumi/pulumi';
import type { LlmdModelPlan } from '@app-serving/core';
import { TYPE_TOKENS, childName } from './component-names.ts';
import { EmbeddingService } from './embedding-service.ts';
import { InferencePool } from './inference-pool.ts';
import { InferenceRoute } from './inference-route.ts';
import { LlmdInfra } from './llmd-infra.ts';
import { ModelNamespace } from './model-namespace.ts';
import { claimModelNamespace, resolveModelPlan, type ModelPlanSource } from './model-plan.ts';
import { ModelService } from './model-service.ts';
import { ModelStorage } from './model-storage.ts';
import { afterResource, childOptions } from './options.ts';

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
 * ({@link InferenceRoute}, generative) or `<name>-embeddings` ({@link EmbeddingService}, embedder).
 *
 * Order: namespace → storage, infra, pool → model service (after storage and pool) → route
 * (after infra and pool) or embeddings Service (after the model service).
 */
export class LlmdModel extends pulumi.ComponentResource {
  /** The plan the model was deployed from. */
  readonly plan: LlmdModelPlan;
  /** The namespace, once it exists. */
  readonly namespace: pulumi.Output<string>;
  /** In-cluster FQDN of the model's Istio gateway Service, once the infra chart is deployed. */
  readonly gatewayHost: pulumi.Output<string>;
  /** `http://<gatewayHost>:80`, once the infra chart is deployed. */
  readonly gatewayUrl: pulumi.Output<string>;
  /** The embeddings Service URL (embedders), else undefined. */
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

  constructor(name: string, args: LlmdModelArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.LlmdModel, name, {}, opts);
    const { model: plan } = resolveModelPlan<LlmdModelPlan>(args, 'llm-d');
    this.plan = plan;
    if (plan.pullSecret !== null && args.harborToken === undefined) {
      throw new pulumi.InputPropertyError({
        propertyPath: 'harborToken',
        reason: `is required: the plan of ${plan.name} pulls with the Secret ${plan.pullSecret} (pulumi config set --secret harborToken <robot token>)`,
      });
    }
    const inherited = opts?.dependsOn;
    claimModelNamespace(this, name, plan, args.createNamespace);

    this.modelNamespace = new ModelNamespace(
      childName(name, 'namespace'),
      {
        name: plan.namespace,
        slug: plan.slug,
        ...(args.createNamespace === false && { create: false }),
        ...(plan.pullSecret !== null && {
          harborHostname: args.harborHostname,
          harborUser: args.harborUser,
          harborToken: args.harborToken,
          pullSecretName: plan.pullSecret,
        }),
      },
      childOptions(this, inherited),
    );
    const ns = this.modelNamespace;
    const namespace = ns.name;

    this.storage = plan.storage
      ? new ModelStorage(
          childName(name, 'storage'),
          {
            namespace,
            slug: plan.slug,
            storage: plan.storage,
            ...(plan.pullSecret !== null && { pullSecret: plan.pullSecret }),
            nodeSelector: plan.nodeSelector,
            tolerations: plan.tolerations,
            ...(args.pullTimeout !== undefined && { pullTimeout: args.pullTimeout }),
          },
          childOptions(this, inherited, [ns]),
        )
      : undefined;

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
      { namespace, releaseName: plan.releases.modelService, chart: plan.charts.modelService, values: plan.values.modelService },
      childOptions(this, inherited, [ns, this.storage, this.inferencePool]),
    );

    this.route =
      plan.httpRoute !== null
        ? new InferenceRoute(
            childName(name, 'route'),
            { namespace, slug: plan.slug, routeName: plan.httpRoute, gatewayName: plan.gateway.name, inferencePoolName: plan.inferencePool.name },
            childOptions(this, inherited, [ns, this.infra, this.inferencePool]),
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

    this.namespace = namespace;
    this.gatewayHost = afterResource(this.infra.chart, plan.gateway.host);
    this.gatewayUrl = afterResource(this.infra.chart, plan.gateway.url);
    this.embeddingsUrl = this.embeddings && embedding ? afterResource(this.embeddings.service, embedding.url) : pulumi.output(undefined);
    this.pvcName = this.storage ? this.storage.pvcName : pulumi.output(undefined);
    this.registerOutputs({
      namespace: this.namespace,
      gatewayHost: this.gatewayHost,
      gatewayUrl: this.gatewayUrl,
      embeddingsUrl: this.embeddingsUrl,
      pvcName: this.pvcName,
    });
  }
}
