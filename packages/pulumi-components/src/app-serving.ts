import { homedir } from 'node:os';
import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import {
  RESOURCE_TYPES,
  Secret as CoreSecret,
  apiKeyProblem,
  envoyGatewayClassManifest,
  expandHome,
  formatIssue,
  isSecret,
  isStackError,
  loadStackConfigFromMap,
  planDeployment,
  type DeploymentPlan,
  type Secret,
} from '@app-serving/core';
import { TYPE_TOKENS, childName } from './component-names.ts';
import { customResource } from './custom-resource.ts';
import { KserveGateway } from './kserve-gateway.ts';
import { KserveModel } from './kserve-model.ts';
import { LlmdModel } from './llmd-model.ts';
import { LlmdRouterModel } from './llmd-router-model.ts';
import { StackEndpoint } from './stack-endpoint.ts';
import type { ModelOutputs } from './model-outputs.ts';
import { childOptions } from './options.ts';

/** The stack key of the API keys, for messages. */
const CONFIG_KEY = 'app-serving:apiKeys';

/** Arguments of {@link AppServing}. */
export interface AppServingArgs {
  /** The stack's plan: core `planDeployment(config, modelsDir)`. */
  readonly plan: DeploymentPlan;
  /** Harbor robot token (stack secret `harborToken`). Required when the plan has Harbor credentials. */
  readonly harborToken?: pulumi.Input<string>;
  /** Hugging Face token (stack secret `hfToken`). Required when the plan says the stack has one. */
  readonly hfToken?: pulumi.Input<string>;
  /** The Prometheus's token or password (stack secret `prometheusCredentials`). Required when an autoscaled model's Prometheus needs authentication. */
  readonly prometheusCredentials?: pulumi.Input<string>;
  /**
   * The API keys (stack secret map `apiKeys`), by name: every key a model's `access.apiKeys` names.
   * They stay Pulumi secrets; only their SHA-1 reaches the cluster.
   */
  readonly apiKeys?: Readonly<Record<string, pulumi.Input<string>>>;
  /**
   * The kubeconfig's content (stack secret `kubeconfig`), when the plan says the kubeconfig is a
   * secret. A kubeconfig path in the plan is read by the provider; no kubeconfig at all means the
   * ambient one (`KUBECONFIG`, `~/.kube/config`). Not needed (and ignored) when the caller gives
   * its own Kubernetes provider.
   */
  readonly kubeconfig?: pulumi.Input<string>;
  /**
   * Where `~/` in the plan's kubeconfig path points.
   * @default os.homedir()
   */
  readonly homeDir?: string;
  /**
   * How long `pulumi up` waits for each model's pull Job.
   * @default "60m"
   */
  readonly pullTimeout?: string;
}

/**
 * The program's config, secret values wrapped as core `Secret`s: `allConfig()` hands every value
 * over as plain text, and a kubeconfig may be a path or a secret content.
 */
function programConfig(): Record<string, unknown> {
  // `isConfigSecret` is exported by the Node SDK's runtime but absent from its typings.
  const isConfigSecret = (pulumi.runtime as unknown as { isConfigSecret?: (key: string) => boolean }).isConfigSecret;
  return Object.fromEntries(
    Object.entries(pulumi.runtime.allConfig()).map(([key, value]) => [key, isConfigSecret?.(key) ? CoreSecret.plain(value) : value]),
  );
}

/** Arguments of {@link AppServing.fromConfig}. */
export interface AppServingConfigArgs {
  /** The `models/` directory that holds `<category>/<name>/` folders. */
  readonly modelsDir: string;
  /**
   * The config namespace of the stack's keys (`<namespace>:models`, …).
   * @default pulumi.getProject() — the keys a stack file writes without a namespace
   */
  readonly namespace?: string;
  /**
   * The config map to read.
   * @default pulumi.runtime.allConfig()
   */
  readonly config?: Readonly<Record<string, unknown>>;
  /** Where `~/` in the kubeconfig path points. @default os.homedir() */
  readonly homeDir?: string;
  /** How long `pulumi up` waits for each model's pull Job. @default "60m" */
  readonly pullTimeout?: string;
}

/**
 * A whole stack from a core `DeploymentPlan`: one Kubernetes provider shared by every model, the
 * KServe Envoy Gateway when a model needs it, and one {@link LlmdModel} or {@link KserveModel}
 * per model. Models do not depend on one another: they deploy in parallel.
 *
 * Children: `<name>-provider` (`pulumi:providers:kubernetes`, only when the caller gives no
 * Kubernetes provider), `<name>-kserve-gateway`
 * ({@link KserveGateway}, optional), `<name>-envoy-gateway-class` (the stack's Envoy GatewayClass,
 * when llm-d models of class `envoy` need it and no KServe Gateway makes it) and `<name>-<slug>` per model.
 *
 * The stack's Envoy GatewayClass is one object whoever needs it (core `envoyGatewayClassOf`): the
 * KServe Gateway's child when the stack has one, else its own. Each takes the other's URN as an
 * alias, so that adding or removing the stack's last KServe model moves it without replacing it
 * (a replacement would create a second object of the same name first, which the API server refuses).
 */
export class AppServing extends pulumi.ComponentResource {
  /**
   * The Kubernetes provider every child deploys with: the caller's (`opts.provider`,
   * `opts.providers` as an array or a map, or inherited from `opts.parent`), else the one this
   * component builds from the plan's kubeconfig (`<name>-provider`).
   */
  readonly provider: pulumi.ProviderResource;
  /** The plan the stack was deployed from. */
  readonly plan: DeploymentPlan;
  /** True when {@link provider} is the caller's: the component built none. */
  readonly callerProvider: boolean;
  readonly kserveGateway: KserveGateway | undefined;
  /** The stack's Envoy GatewayClass when the stack creates it and a Gateway of Envoy Gateway needs it (the KServe Gateway's, or its own). */
  readonly envoyGatewayClass: k8s.apiextensions.CustomResource | undefined;
  /** The model components by slug. */
  readonly components: Readonly<Record<string, LlmdModel | LlmdRouterModel | KserveModel>>;
  /** Outputs per model, by slug: switch on `platform` (and, for llm-d, `category`); see {@link ModelOutputs}. */
  readonly models: Readonly<Record<string, ModelOutputs>>;
  /** The stack's one OpenAI endpoint (`endpoint`), after the models it serves; undefined without one. */
  readonly endpoint: StackEndpoint | undefined;

  /**
   * A whole stack from the Pulumi program's own config — what `apps/app-serving` does, in one call,
   * under any project name: reads `<namespace>:*` keys (default: the project's), plans the models
   * under `modelsDir`, logs the plan's warnings and passes the stack's secrets on as secrets.
   * Every problem of the stack is one `pulumi.RunError`, one problem per line, without a stack
   * trace; keys found under another namespace only are reported with the fix.
   */
  static fromConfig(name: string, args: AppServingConfigArgs, opts?: pulumi.ComponentResourceOptions): AppServing {
    const namespace = args.namespace ?? pulumi.getProject();
    let config;
    let plan: DeploymentPlan;
    try {
      config = loadStackConfigFromMap(args.config ?? programConfig(), { stackName: pulumi.getStack(), namespace, checkRules: false });
      plan = planDeployment(config, args.modelsDir);
    } catch (error) {
      if (isStackError(error)) throw new pulumi.RunError(error.issues.map((issue) => formatIssue(issue)).join('\n'));
      throw error;
    }
    for (const warning of plan.warnings) void pulumi.log.warn(formatIssue(warning));
    const secret = (value: Secret | string | undefined) => (isSecret(value) ? pulumi.secret(value.reveal()) : undefined);
    const harborToken = secret(config.harborToken);
    const hfToken = secret(config.hfToken);
    const prometheusCredentials = secret(config.prometheusCredentials);
    const kubeconfig = secret(config.kubeconfig);
    // Every key a model uses, checked now (by name only) so that a weak key stops the run before anything is registered.
    const used = new Set([...plan.models.flatMap((m) => m.access.apiKeys), ...Object.keys(plan.endpoint?.access.grants ?? {})]);
    const keyProblems = [...used].sort().flatMap((key) => {
      const value = config.apiKeys?.[key];
      const problem = value && !value.encrypted ? apiKeyProblem(key, value.reveal()) : null;
      return problem ? [problem] : [];
    });
    // The endpoint's Bearer keys go to Envoy Gateway as they are, which refuses one key under two names ("duplicated API key").
    if (plan.endpoint?.access.keyFormat === 'bearer') {
      const owner = new Map<string, string>();
      for (const key of Object.keys(plan.endpoint.access.grants).sort()) {
        const value = config.apiKeys?.[key];
        if (!value || value.encrypted) continue;
        const other = owner.get(value.reveal());
        if (other !== undefined) keyProblems.push(`${CONFIG_KEY}.${other} and ${CONFIG_KEY}.${key} hold the same key: give each its own (the endpoint's Envoy Gateway refuses a duplicated API key)`);
        else owner.set(value.reveal(), key);
      }
    }
    if (keyProblems.length > 0) throw new pulumi.RunError(keyProblems.join('\n'));
    const apiKeys = used.size > 0 ? Object.fromEntries([...used].map((key) => [key, secret(config.apiKeys?.[key])!])) : undefined;
    return new AppServing(
      name,
      {
        plan,
        ...(harborToken && { harborToken }),
        ...(hfToken && { hfToken }),
        ...(prometheusCredentials && { prometheusCredentials }),
        ...(apiKeys && { apiKeys }),
        ...(kubeconfig && { kubeconfig }),
        ...(args.homeDir !== undefined && { homeDir: args.homeDir }),
        ...(args.pullTimeout !== undefined && { pullTimeout: args.pullTimeout }),
      },
      opts,
    );
  }

  constructor(name: string, args: AppServingArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.AppServing, name, {}, opts);
    const { plan } = args;
    this.plan = plan;
    if (plan.harbor !== null && args.harborToken === undefined) {
      throw new pulumi.InputPropertyError({ propertyPath: 'harborToken', reason: 'is required: the stack has Harbor credentials (pulumi config set --secret harborToken <robot token>)' });
    }
    if (plan.models.some((m) => m.platform === 'kserve' && m.hfTokenSecret !== null) && args.hfToken === undefined) {
      throw new pulumi.InputPropertyError({ propertyPath: 'hfToken', reason: 'is required: the stack has a Hugging Face token (pulumi config set --secret hfToken <token>)' });
    }
    // The caller's Kubernetes provider (opts.provider, opts.providers, or the parent's) wins.
    const given = this.getProvider('kubernetes::');
    const inherited = opts?.dependsOn;
    if (given !== undefined) {
      this.provider = given;
      this.callerProvider = true;
      if (plan.kubeconfig !== null) {
        pulumi.log.info(`the stack's kubeconfig is not used: ${name} deploys with the Kubernetes provider it was given`, this);
      }
    } else {
      if (plan.kubeconfig !== null && 'secret' in plan.kubeconfig && args.kubeconfig === undefined) {
        throw new pulumi.InputPropertyError({
          propertyPath: 'kubeconfig',
          reason: "is required: the stack's kubeconfig is a secret; pass its content (or give the component your own Kubernetes provider)",
        });
      }
      const kubeconfig =
        plan.kubeconfig === null ? undefined : 'path' in plan.kubeconfig ? expandHome(plan.kubeconfig.path, args.homeDir ?? homedir()) : pulumi.secret(args.kubeconfig!);
      // ConfigMaps update in place: the Istio gateway's parameters ConfigMap is read live by Istio, so
      // a placement change must not delete it (the provider would replace it by default, and a
      // chart's fixed-name object can only be replaced delete-first: a gap in the gateway's config).
      this.provider = new k8s.Provider(
        childName(name, 'provider'),
        { ...(kubeconfig !== undefined && { kubeconfig }), enableConfigMapMutable: true },
        childOptions(this, inherited),
      );
      this.callerProvider = false;
    }

    // Every model component reaches the provider through its parent's providers map: the caller's
    // provider is already there; a built one is added for the children.
    const modelOptions = () =>
      childOptions<pulumi.ComponentResourceOptions>(this, inherited, [], this.callerProvider ? {} : { providers: [this.provider] });

    const gateway = plan.kserve?.gateway;
    const kserveGatewayName = childName(name, 'kserve-gateway');
    const stackClassName = childName(name, 'envoy-gateway-class');
    const classType = `kubernetes:${RESOURCE_TYPES.gatewayClass.apiVersion}:${RESOURCE_TYPES.gatewayClass.kind}`;
    this.kserveGateway =
      gateway && gateway.create
        ? new KserveGateway(
            kserveGatewayName,
            {
              name: gateway.name,
              namespace: gateway.namespace,
              className: gateway.className,
              controllerName: gateway.controllerName,
              port: gateway.port,
              gatewayClassAliases: [pulumi.createUrn(stackClassName, classType, this)],
            },
            modelOptions(),
          )
        : undefined;
    const envoyClass = plan.envoyGatewayClass;
    const llmdOnEnvoy = plan.endpoint?.class === 'envoy' || plan.models.some((m) => m.platform === 'llm-d' && m.upstream === '2026-08' && m.router.gatewayClass === 'envoy');
    this.envoyGatewayClass =
      this.kserveGateway?.gatewayClass ??
      (envoyClass?.create && llmdOnEnvoy
        ? customResource(
            stackClassName,
            RESOURCE_TYPES.gatewayClass,
            envoyGatewayClassManifest({ className: envoyClass.name, controllerName: envoyClass.controllerName }),
            childOptions(this, inherited, [], {
              ...(this.callerProvider ? {} : { provider: this.provider }),
              aliases: [pulumi.createUrn(childName(kserveGatewayName, 'gateway-class'), classType, pulumi.createUrn(kserveGatewayName, TYPE_TOKENS.KserveGateway, this))],
            }),
          )
        : undefined);

    const harbor = plan.harbor ? { harborHostname: plan.harbor.hostname, harborUser: plan.harbor.user, harborToken: args.harborToken } : {};
    const keysOf = (model: { access?: { apiKeys: readonly string[] } }) =>
      model.access && model.access.apiKeys.length > 0 && args.apiKeys ? { apiKeys: Object.fromEntries(model.access.apiKeys.filter((k) => args.apiKeys![k] !== undefined).map((k) => [k, args.apiKeys![k]!])) } : {};
    const timeout = args.pullTimeout !== undefined ? { pullTimeout: args.pullTimeout } : {};
    const components: Record<string, LlmdModel | LlmdRouterModel | KserveModel> = {};
    const models: Record<string, ModelOutputs> = {};
    for (const model of plan.models) {
      const child = childName(name, model.slug);
      if (model.platform === 'llm-d') {
        const prometheus = model.autoscaling?.prometheus.secret ? { prometheusCredentials: args.prometheusCredentials } : {};
        const modelArgs = { ...harbor, ...timeout, ...prometheus, ...keysOf(model) };
        const envoy = model.upstream === '2026-08' && model.router.gatewayClass === 'envoy' && this.envoyGatewayClass ? { envoyGatewayClass: this.envoyGatewayClass } : {};
        const c =
          model.upstream === '2026-08' ? new LlmdRouterModel(child, { plan: model, ...modelArgs, ...envoy }, modelOptions()) : new LlmdModel(child, { plan: model, ...modelArgs }, modelOptions());
        components[model.slug] = c;
        models[model.slug] = c.outputs;
      } else {
        const hf = model.hfTokenSecret !== null ? { hfToken: args.hfToken } : {};
        const gw = this.kserveGateway ? { gateway: this.kserveGateway } : {};
        const c = new KserveModel(child, { plan: model, ...harbor, ...hf, ...gw, ...timeout, ...keysOf(model) }, modelOptions());
        components[model.slug] = c;
        models[model.slug] = c.outputs;
      }
    }
    this.components = components;
    this.models = models;
    const endpoint = plan.endpoint;
    this.endpoint = endpoint
      ? new StackEndpoint(
          childName(name, 'endpoint'),
          {
            endpoint,
            ...(args.apiKeys && { apiKeys: Object.fromEntries(Object.keys(endpoint.access.grants).filter((k) => args.apiKeys![k] !== undefined).map((k) => [k, args.apiKeys![k]!])) }),
            ...(endpoint.pullSecret && harbor),
            ...(endpoint.class === 'envoy' && this.envoyGatewayClass && { gatewayClass: this.envoyGatewayClass }),
            models: Object.fromEntries(plan.models.filter((m) => endpoint.models.some((e) => e.model === m.name && e.category === m.category)).map((m) => [m.name, components[m.slug]!])),
          },
          modelOptions(),
        )
      : undefined;
    this.registerOutputs({ models, ...(this.endpoint && { endpointUrl: this.endpoint.url }) });
  }
}
