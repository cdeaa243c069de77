import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import {
  RESOURCE_TYPES,
  apiKeyProblem,
  envoyGatewayAccessManifests,
  htpasswd,
  htpasswdSecretManifest,
  istioAccessManifests,
  type AccessPlan,
  type EnvoyRouteRef,
  type IstioGatewayRef,
  type ResourceType,
} from '@app-serving/core';
import { TYPE_TOKENS, childName } from './component-names.ts';
import { childOptions } from './options.ts';

/** Arguments of {@link ModelAccess}. */
export interface ModelAccessArgs {
  /** The model slug (labels). */
  readonly slug: string;
  /** The model plan's `access`. */
  readonly access: AccessPlan;
  /** Where it is enforced: an Istio gateway workload (llm-d) or the model's HTTPRoute on Envoy Gateway (KServe). */
  readonly target: { readonly istio: IstioGatewayRef } | { readonly envoyGateway: EnvoyRouteRef };
  /**
   * The values of the keys the plan's `access.apiKeys` names (stack secret `apiKeys`), by name.
   * Only their SHA-1 reaches the cluster; they stay secrets in Pulumi's state.
   */
  readonly apiKeys?: Readonly<Record<string, pulumi.Input<string>>>;
}

const KIND_TYPES: Record<string, ResourceType> = {
  RequestAuthentication: RESOURCE_TYPES.requestAuthentication,
  AuthorizationPolicy: RESOURCE_TYPES.authorizationPolicy,
  EnvoyFilter: RESOURCE_TYPES.envoyFilter,
  SecurityPolicy: RESOURCE_TYPES.securityPolicy,
  BackendTrafficPolicy: RESOURCE_TYPES.backendTrafficPolicy,
};

/** Logical name suffix per kind. */
const SUFFIX: Record<string, string> = {
  RequestAuthentication: 'request-authentication',
  AuthorizationPolicy: 'authorization-policy',
  EnvoyFilter: 'envoy-filter',
  SecurityPolicy: 'security-policy',
  BackendTrafficPolicy: 'rate-limit',
};

/**
 * Who may call one model, enforced by its gateway (see core `istioAccessManifests` and
 * `envoyGatewayAccessManifests`, and docs/access.md): for an Istio gateway a RequestAuthentication
 * and an AuthorizationPolicy (jwt) and an EnvoyFilter (API keys, rate limit); on Envoy Gateway a
 * SecurityPolicy, the Secret with the keys' hashes, and a BackendTrafficPolicy.
 *
 * The keys are hashed inside a secret Output: Pulumi's state and `render` show them as secrets.
 *
 * Children (only those the access needs): `<name>-request-authentication`,
 * `<name>-authorization-policy`, `<name>-envoy-filter`, `<name>-api-keys` (`v1/Secret`),
 * `<name>-security-policy`, `<name>-rate-limit`.
 */
export class ModelAccess extends pulumi.ComponentResource {
  /** The custom resources, by kind. */
  readonly policies: Readonly<Record<string, k8s.apiextensions.CustomResource>>;
  /** The Secret with the keys' hashes (Envoy Gateway, API keys). */
  readonly secret: k8s.core.v1.Secret | undefined;

  constructor(name: string, args: ModelAccessArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.ModelAccess, name, {}, opts);
    const { access, slug, target } = args;
    const inherited = opts?.dependsOn;
    const hashes = access.mode === 'apiKeys' ? hashedKeys(access, args.apiKeys ?? {}) : undefined;

    // Kinds and names (metadata) never depend on the keys: a placeholder gives them in the clear,
    // and only the specs are built from the hashes (a secret Output, so a secret in the state).
    let plain: Record<string, unknown>[];
    let specs: pulumi.Output<unknown[]>;
    if ('istio' in target) {
      plain = istioAccessManifests(target.istio, slug, access, '');
      specs = (hashes ? hashes.apply((text) => istioAccessManifests(target.istio, slug, access, text).map((m) => m.spec)) : pulumi.output(plain.map((m) => m.spec))) as pulumi.Output<unknown[]>;
      this.secret = undefined;
    } else {
      const route = target.envoyGateway;
      this.secret = hashes
        ? new k8s.core.v1.Secret(
            childName(name, 'api-keys'),
            { metadata: htpasswdSecretManifest(route, slug, '').metadata, type: 'Opaque', stringData: pulumi.secret(hashes.apply((text) => ({ ...htpasswdSecretManifest(route, slug, text).stringData }))) },
            childOptions(this, inherited),
          )
        : undefined;
      plain = envoyGatewayAccessManifests(route, slug, access);
      specs = pulumi.output(plain.map((m) => m.spec)) as pulumi.Output<unknown[]>;
    }
    const policies: Record<string, k8s.apiextensions.CustomResource> = {};
    for (const [i, object] of plain.entries()) {
      const kind = object.kind as string;
      const type = KIND_TYPES[kind]!;
      policies[kind] = new k8s.apiextensions.CustomResource(
        childName(name, SUFFIX[kind]!),
        { apiVersion: type.apiVersion, kind: type.kind, metadata: object.metadata as k8s.types.input.meta.v1.ObjectMeta, spec: specs.apply((all) => all[i]) },
        childOptions(this, inherited, [this.secret]),
      );
    }
    this.policies = policies;
    this.registerOutputs({});
  }
}

/** The htpasswd text of the keys the access names, as a secret; a key that is missing or too weak is an error naming it, never showing it. */
function hashedKeys(access: AccessPlan, keys: Readonly<Record<string, pulumi.Input<string>>>): pulumi.Output<string> {
  const missing = access.apiKeys.filter((key) => keys[key] === undefined);
  if (missing.length > 0) {
    throw new pulumi.InputPropertyError({
      propertyPath: 'apiKeys',
      reason: `lacks ${missing.join(', ')}: set each with pulumi config set --secret --path 'app-serving:apiKeys.<name>' <key>`,
    });
  }
  const values = pulumi.all(access.apiKeys.map((key) => pulumi.output(keys[key]!)));
  return pulumi.secret(
    values.apply((plain) => {
      const problems = access.apiKeys.map((key, i) => apiKeyProblem(key, plain[i]!)).filter((p): p is string => p !== null);
      if (problems.length > 0) throw new pulumi.RunError(problems.join('\n'));
      return htpasswd(access.apiKeys.map((key, i) => ({ name: key, key: plain[i]! })));
    }),
  );
}
