import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import { HARBOR_PULL_SECRET, dockerConfigJson, namespaceManifest, pullSecretManifest } from '@app-serving/core';
import { TYPE_TOKENS, childName } from './component-names.ts';
import { childOptions } from './options.ts';

/** Arguments of {@link ModelNamespace}. */
export interface ModelNamespaceArgs {
  /**
   * The namespace (`metadata.name`): the model plan's `namespace`, derived by core
   * (`llm-d-<slug>` or the stack's `nameSpace`).
   */
  readonly name: pulumi.Input<string>;
  /** The model slug; labels every object (`app-serving.io/model`). */
  readonly slug: pulumi.Input<string>;
  /**
   * Create the Namespace. `false` uses an existing namespace (one the caller or another team
   * manages): this component then never creates, changes or deletes it, only the pull Secret in it.
   * @default true
   */
  readonly create?: boolean;
  /**
   * Harbor registry host name, e.g. `harbor.example.com`. Required with {@link harborToken}.
   * @see https://kubernetes.io/docs/tasks/configure-pod-container/pull-image-private-registry/
   */
  readonly harborHostname?: pulumi.Input<string>;
  /** Harbor robot account, e.g. `robot$k8s-puller`. Required with {@link harborToken}. */
  readonly harborUser?: pulumi.Input<string>;
  /**
   * The robot account's token. When given, the namespace gets the `kubernetes.io/dockerconfigjson`
   * pull Secret. Always handled as a Pulumi secret (a plain string is wrapped with `pulumi.secret`),
   * so neither the token nor the `.dockerconfigjson` built from it appears in state or logs.
   */
  readonly harborToken?: pulumi.Input<string>;
  /**
   * Name of the pull Secret.
   * @default "harbor-creds" (core `HARBOR_PULL_SECRET`, the name the charts' values refer to)
   */
  readonly pullSecretName?: pulumi.Input<string>;
}

/**
 * A model's namespace and, when a Harbor token is given, its image pull Secret.
 *
 * Children: `<name>-namespace` (`v1/Namespace`, unless `create: false`), `<name>-pull-secret`
 * (`v1/Secret`, after the namespace).
 */
export class ModelNamespace extends pulumi.ComponentResource {
  /** The namespace name, known once the Namespace exists. */
  readonly name: pulumi.Output<string>;
  /** The pull Secret's name, or undefined without a Harbor token. */
  readonly pullSecretName: pulumi.Output<string | undefined>;
  /** The Namespace, or undefined when it exists already (`create: false`). */
  readonly namespace: k8s.core.v1.Namespace | undefined;
  readonly pullSecret: k8s.core.v1.Secret | undefined;

  constructor(name: string, args: ModelNamespaceArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.ModelNamespace, name, {}, opts);
    if (args.harborToken !== undefined) {
      for (const key of ['harborHostname', 'harborUser'] as const) {
        if (args[key] === undefined) {
          throw new pulumi.InputPropertyError({ propertyPath: key, reason: `is required with harborToken: the pull Secret authenticates <harborUser>@<harborHostname>` });
        }
      }
    }

    if (args.create === false) {
      this.namespace = undefined;
    } else {
      const ns = pulumi.output({ name: args.name, slug: args.slug }).apply(({ name: ns, slug }) => namespaceManifest(ns, slug));
      this.namespace = new k8s.core.v1.Namespace(childName(name, 'namespace'), { metadata: ns.metadata }, childOptions(this, opts?.dependsOn));
    }
    const namespaceName = this.namespace ? this.namespace.metadata.name : pulumi.output(args.name);

    if (args.harborToken !== undefined) {
      const secretName = args.pullSecretName ?? HARBOR_PULL_SECRET;
      const token = pulumi.secret(args.harborToken);
      // One core call builds the Secret; it runs inside an apply on the secret token, so its result
      // is secret. Only `.dockerconfigjson` holds the token: name, namespace, labels and type are unsecreted.
      const manifest = pulumi
        .all([secretName, namespaceName, args.slug, args.harborHostname!, args.harborUser!, token])
        .apply(([secret, namespace, slug, registry, user, password]) =>
          pullSecretManifest({ name: secret, namespace, slug, dockerConfigJson: dockerConfigJson(registry, user, password) }),
        );
      this.pullSecret = new k8s.core.v1.Secret(
        childName(name, 'pull-secret'),
        { metadata: pulumi.unsecret(manifest.metadata), type: pulumi.unsecret(manifest.type), stringData: manifest.stringData },
        childOptions(this, opts?.dependsOn, [this.namespace]),
      );
    } else {
      this.pullSecret = undefined;
    }

    this.name = namespaceName;
    this.pullSecretName = this.pullSecret ? this.pullSecret.metadata.name : pulumi.output(undefined);
    this.registerOutputs({ name: this.name, pullSecretName: this.pullSecretName });
  }
}
