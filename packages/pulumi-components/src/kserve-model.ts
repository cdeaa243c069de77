import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import {
  accessEnforced,
  hfTokenSecretManifest,
  kserveServiceAccountManifest,
  llmInferenceServiceConfigManifest,
  llmInferenceServiceManifest,
  KSERVE_RELEASES,
  RESOURCE_TYPES,
  type KserveModelPlan,
  type ResourceType,
} from '@app-serving/core';
import { TYPE_TOKENS, childName } from './component-names.ts';
import { customResource } from './custom-resource.ts';
import { ModelAccess } from './model-access.ts';
import { ModelNamespace } from './model-namespace.ts';
import { claimModelNamespace, resolveModelPlan, type ModelPlanSource } from './model-plan.ts';
import { ModelStorage } from './model-storage.ts';
import type { KserveModelOutputs } from './model-outputs.ts';
import { childOptions, whenReady } from './options.ts';

/** Arguments of {@link KserveModel}: a plan entry (or a model folder to plan here), the credentials, and the Gateway. */
export interface KserveModelArgs extends ModelPlanSource<KserveModelPlan> {
  /**
   * The stack's {@link KserveGateway} (or whatever provides the Gateway the model attaches to):
   * only the LLMInferenceService waits for it; the rest of the model deploys meanwhile.
   */
  readonly gateway?: pulumi.Input<pulumi.Resource>;
}

/**
 * One KServe model: namespace (and pull secret), the Hugging Face token Secret and the
 * ServiceAccount carrying it, model storage, the `LLMInferenceServiceConfig` and the
 * `LLMInferenceService`, which attaches to the stack's Envoy Gateway.
 *
 * Children: `<name>-namespace` ({@link ModelNamespace}), `<name>-hf-token` (`v1/Secret`),
 * `<name>-service-account`, `<name>-storage` ({@link ModelStorage}), `<name>-config` and
 * `<name>-service` (custom resources). Give the stack's {@link KserveGateway} as `gateway`.
 */
export class KserveModel extends pulumi.ComponentResource {
  readonly plan: KserveModelPlan;
  /** The model's outputs; they resolve once the LLMInferenceService is created (see {@link KserveModelOutputs}). */
  readonly outputs: KserveModelOutputs;
  readonly namespace: pulumi.Output<string>;
  /** The LLMInferenceService's name, once it exists. */
  readonly serviceName: pulumi.Output<string>;
  /** The URL path prefix KServe routes to the model: `/<namespace>/<name>`. */
  readonly pathPrefix: pulumi.Output<string>;
  readonly pvcName: pulumi.Output<string | undefined>;

  readonly modelNamespace: ModelNamespace;
  readonly hfTokenSecret: k8s.core.v1.Secret | undefined;
  readonly serviceAccount: k8s.core.v1.ServiceAccount;
  readonly storage: ModelStorage | undefined;
  readonly config: k8s.apiextensions.CustomResource;
  readonly service: k8s.apiextensions.CustomResource;
  /** Who may call the model, enforced by the Envoy Gateway on its route (with an access other than open, or a rate limit). */
  readonly access: ModelAccess | undefined;

  constructor(name: string, args: KserveModelArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.KserveModel, name, {}, opts);
    const { model: plan } = resolveModelPlan<KserveModelPlan>(args, 'kserve');
    this.plan = plan;
    if (plan.hfTokenSecret !== null && args.hfToken === undefined) {
      throw new pulumi.InputPropertyError({ propertyPath: 'hfToken', reason: `is required: the plan of ${plan.name} reads it from the Secret ${plan.hfTokenSecret} (pulumi config set --secret hfToken <token>)` });
    }
    if (plan.hfTokenSecret === null && args.hfToken !== undefined) {
      pulumi.log.warn(`hfToken is ignored: the plan of ${plan.name} has no Hugging Face token Secret (plan the stack with hfToken set)`, this);
    }
    if (plan.pullSecret !== null && args.harborToken === undefined) {
      throw new pulumi.InputPropertyError({ propertyPath: 'harborToken', reason: `is required: the plan of ${plan.name} pulls with the Secret ${plan.pullSecret}` });
    }
    const inherited = opts?.dependsOn;
    claimModelNamespace(this, name, plan, args.createNamespace);

    this.modelNamespace = new ModelNamespace(
      childName(name, 'namespace'),
      {
        name: plan.namespace,
        slug: plan.slug,
        ...(args.createNamespace === false && { create: false }),
        ...(plan.pullSecret !== null && { harborHostname: args.harborHostname, harborUser: args.harborUser, harborToken: args.harborToken, pullSecretName: plan.pullSecret }),
      },
      childOptions(this, inherited),
    );
    const ns = this.modelNamespace;
    const namespace = ns.name;

    if (plan.hfTokenSecret !== null) {
      const secretName = plan.hfTokenSecret;
      const token = pulumi.secret(args.hfToken!);
      // Built by core inside an apply on the secret token; only `HF_TOKEN` holds a secret.
      const manifest = pulumi.all([namespace, token]).apply(([ns, t]) => hfTokenSecretManifest({ name: secretName, namespace: ns, slug: plan.slug, token: t }));
      this.hfTokenSecret = new k8s.core.v1.Secret(
        childName(name, 'hf-token'),
        { metadata: pulumi.unsecret(manifest.metadata), type: pulumi.unsecret(manifest.type), stringData: manifest.stringData },
        childOptions(this, inherited, [ns]),
      );
    } else {
      this.hfTokenSecret = undefined;
    }

    const sa = namespace.apply((ns) => kserveServiceAccountManifest({ ...plan, namespace: ns }));
    this.serviceAccount = new k8s.core.v1.ServiceAccount(
      childName(name, 'service-account'),
      { metadata: sa.metadata, secrets: sa.secrets, imagePullSecrets: sa.imagePullSecrets },
      childOptions(this, inherited, [ns, this.hfTokenSecret]),
    );

    this.storage = plan.storage
      ? new ModelStorage(
          childName(name, 'storage'),
          {
            namespace,
            slug: plan.slug,
            storage: plan.storage,
            ...(plan.pullSecret !== null && { pullSecret: plan.pullSecret }),
            ...(plan.hfTokenSecret !== null && { hfTokenSecret: plan.hfTokenSecret }),
            serviceAccount: plan.serviceAccount,
            nodeSelector: plan.nodeSelector,
            tolerations: plan.tolerations,
            ...(args.pullTimeout !== undefined && { pullTimeout: args.pullTimeout }),
          },
          childOptions(this, inherited, [ns, this.serviceAccount, this.hfTokenSecret]),
        )
      : undefined;

    // The API version is the plan's KServe release (v1alpha1 on 2026-02, v1alpha2 on 2026-08). It is
    // part of the resource's type, so the other version is an alias: a model moving across is
    // updated in place, not created anew and then deleted (which would delete the same object).
    const typed = (type: ResourceType) => ({ ...type, apiVersion: plan.apiVersion });
    const otherVersions = (type: ResourceType) => ({
      aliases: Object.values(KSERVE_RELEASES)
        .map((r) => `${r.api.group}/${r.api.version}`)
        .filter((v) => v !== plan.apiVersion)
        .map((v) => ({ type: `kubernetes:${v}:${type.kind}` })),
    });
    this.config = customResource(
      childName(name, 'config'),
      typed(RESOURCE_TYPES.llmInferenceServiceConfig),
      llmInferenceServiceConfigManifest(plan),
      pulumi.mergeOptions(childOptions(this, inherited, [ns]), otherVersions(RESOURCE_TYPES.llmInferenceServiceConfig)),
    );
    // Enforced on the model's HTTPRoute; in place before KServe creates the route.
    this.access =
      plan.access !== undefined && accessEnforced(plan.access)
        ? new ModelAccess(
            childName(name, 'access'),
            {
              slug: plan.slug,
              access: plan.access,
              target: { envoyGateway: { namespace: plan.namespace, route: plan.route } },
              ...(args.apiKeys !== undefined && { apiKeys: args.apiKeys }),
            },
            childOptions(this, inherited, [ns]),
          )
        : undefined;

    this.service = customResource(
      childName(name, 'service'),
      typed(RESOURCE_TYPES.llmInferenceService),
      llmInferenceServiceManifest(plan),
      pulumi.mergeOptions(childOptions(this, inherited, [ns, this.serviceAccount, this.config, this.storage, args.gateway, this.access]), otherVersions(RESOURCE_TYPES.llmInferenceService)),
    );

    const when = <T>(value: T) => whenReady([this.service], value);
    this.namespace = namespace;
    this.serviceName = this.service.metadata.name;
    this.pathPrefix = when(plan.pathPrefix);
    this.pvcName = this.storage ? this.storage.pvcName : pulumi.output(undefined);
    this.outputs = {
      platform: 'kserve',
      name: plan.name,
      slug: plan.slug,
      category: plan.category,
      namespace: this.namespace,
      servedModelName: when(plan.servedModelName),
      inferencePoolName: when(plan.inferencePool),
      pvcName: this.pvcName,
      serviceName: this.serviceName,
      routeName: when(plan.route),
      gatewayName: when(plan.gateway.name),
      gatewayNamespace: when(plan.gateway.namespace),
      pathPrefix: this.pathPrefix,
    };
    this.registerOutputs({ ...this.outputs });
  }
}
