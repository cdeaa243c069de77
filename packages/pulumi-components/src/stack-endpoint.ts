import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import {
  ENDPOINT_TOOLS,
  RESOURCE_TYPES,
  apiKeyProblem,
  dockerConfigJson,
  endpointKeyObjects,
  endpointLabels,
  htpasswd,
  type EndpointPlan,
  type ResourceType,
} from '@app-serving/core';
import { createChart } from './chart.ts';
import { TYPE_TOKENS, childName } from './component-names.ts';
import { customResource } from './custom-resource.ts';
import { childOptions, type DependsOn } from './options.ts';

/** Arguments of {@link StackEndpoint}. */
export interface StackEndpointArgs {
  /** The plan's `endpoint` (core `planDeployment`). */
  readonly endpoint: EndpointPlan;
  /**
   * The values of the keys the endpoint grants (stack secret `apiKeys`), by name. Bearer keys reach
   * the cluster as they are (Envoy Gateway's apiKeyAuth compares keys); Basic keys as SHA-1 hashes.
   * They stay secrets in Pulumi's state either way.
   */
  readonly apiKeys?: Readonly<Record<string, pulumi.Input<string>>>;
  /** Harbor, when the plan pulls with a pull Secret (the body-based router's image, the gateway pods on Istio). */
  readonly harborHostname?: pulumi.Input<string>;
  readonly harborUser?: pulumi.Input<string>;
  readonly harborToken?: pulumi.Input<string>;
  /** The stack's Envoy GatewayClass when the stack creates it (class `envoy`): the Gateway waits for it. */
  readonly gatewayClass?: pulumi.Resource;
  /**
   * What each model's route waits for, by model name (`models.<category>[].name`): the model's
   * component. Its ReferenceGrant goes into the model's namespace, and its route opens once the model serves.
   */
  readonly models?: Readonly<Record<string, pulumi.Resource>>;
}

/** Kinds of the endpoint's custom resources. */
const KIND_TYPES: Readonly<Record<string, ResourceType>> = {
  Gateway: RESOURCE_TYPES.gateway,
  HTTPRoute: RESOURCE_TYPES.httpRoute,
  HTTPRouteFilter: RESOURCE_TYPES.httpRouteFilter,
  ClientTrafficPolicy: RESOURCE_TYPES.clientTrafficPolicy,
  EnvoyExtensionPolicy: RESOURCE_TYPES.envoyExtensionPolicy,
  SecurityPolicy: RESOURCE_TYPES.securityPolicy,
  BackendTrafficPolicy: RESOURCE_TYPES.backendTrafficPolicy,
  EnvoyProxy: RESOURCE_TYPES.envoyProxy,
  ReferenceGrant: RESOURCE_TYPES.referenceGrant,
  EnvoyFilter: RESOURCE_TYPES.envoyFilter,
  RequestAuthentication: RESOURCE_TYPES.requestAuthentication,
  AuthorizationPolicy: RESOURCE_TYPES.authorizationPolicy,
};

type Manifest = Record<string, unknown> & { kind: string; metadata: Record<string, unknown> };

/**
 * The stack's one OpenAI endpoint (core `EndpointPlan`, docs/endpoint.md): its namespace, the
 * body-based router (GAIE's chart), the Gateway and what places its pods, what answers `/v1/models`
 * and unknown models, the access objects, and a route per model (with a ReferenceGrant in the model's
 * namespace), each after its model.
 *
 * Order: namespace → pull Secret and keys → body-based router → Gateway parameters → Gateway →
 * the policies and answers (Envoy Gateway: before the entry route that opens the way in; Istio:
 * before the Gateway takes traffic) → per model: ReferenceGrant (after the model) → its policies →
 * its HTTPRoute.
 *
 * Children: `<name>-namespace`, `<name>-pull-secret`, `<name>-keys` (Envoy Gateway's Secret or
 * Istio's EnvoyFilter of keys and limits: secret inputs), `<name>-bbr` (`helm.v4.Chart` as
 * `<name>-bbr-chart`), `<name>-gateway-parameters`, `<name>-gateway`, `<name>-<object>` per stack
 * object, and per model `<name>-<slug>-reference-grant`, `<name>-<slug>-security-policy`,
 * `<name>-<slug>-rate-limit`, `<name>-<slug>-route`.
 */
export class StackEndpoint extends pulumi.ComponentResource {
  readonly namespace: k8s.core.v1.Namespace;
  readonly bbr: k8s.helm.v4.Chart;
  readonly gateway: k8s.apiextensions.CustomResource;
  /** The URL clients call (`base_url` is `<url>/v1`), once the Gateway and every route exist. */
  readonly url: pulumi.Output<string>;
  /** Every route, by model name. */
  readonly routes: Readonly<Record<string, k8s.apiextensions.CustomResource>>;

  constructor(name: string, args: StackEndpointArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.StackEndpoint, name, {}, opts);
    const { endpoint } = args;
    const inherited = opts?.dependsOn;
    const m = endpoint.manifests;
    const custom = (suffix: string, manifest: Record<string, unknown> | null, after: readonly (pulumi.Resource | undefined)[] = [], spec?: pulumi.Output<unknown>) => {
      if (!manifest) return undefined;
      const object = manifest as Manifest;
      const type = KIND_TYPES[object.kind];
      if (!type) throw new Error(`StackEndpoint: no resource type for kind ${object.kind}`);
      return new k8s.apiextensions.CustomResource(
        childName(name, suffix),
        { apiVersion: type.apiVersion, kind: type.kind, metadata: object.metadata as k8s.types.input.meta.v1.ObjectMeta, spec: spec ?? (object.spec as pulumi.Input<unknown>) },
        childOptions(this, inherited, after.filter((r): r is pulumi.Resource => r !== undefined)),
      );
    };

    this.namespace = new k8s.core.v1.Namespace(childName(name, 'namespace'), { metadata: (m.namespace as Manifest).metadata }, childOptions(this, inherited));
    const pullSecret = endpoint.pullSecret ? this.pullSecret(name, endpoint, args, inherited) : undefined;
    const keys = this.keys(name, endpoint, args, inherited);

    this.bbr = createChart(this, childName(name, 'bbr'), { release: endpoint.bbr.release, namespace: endpoint.namespace, chart: endpoint.bbr.chart, values: endpoint.bbr.values, patches: endpoint.bbr.patches }, [inherited, this.namespace, pullSecret].filter((d) => d !== undefined) as DependsOn);
    const parameters = m.gatewayParameters
      ? m.gatewayParameters.kind === 'ConfigMap'
        ? new k8s.core.v1.ConfigMap(childName(name, 'gateway-parameters'), m.gatewayParameters as k8s.core.v1.ConfigMapArgs, childOptions(this, inherited, [this.namespace]))
        : customResource(childName(name, 'gateway-parameters'), RESOURCE_TYPES.envoyProxy, m.gatewayParameters as never, childOptions(this, inherited, [this.namespace]))
      : undefined;
    // Before the Gateway takes traffic: what answers, checks and routes every request (the router first).
    const guards = [
      keys,
      custom('client-traffic', m.clientTrafficPolicy, [this.namespace]),
      custom('models-filter', m.modelsFilter, [this.namespace]),
      custom('not-found-filter', m.notFoundFilter, [this.namespace]),
      custom('body-based-router', m.bbrPolicy, [this.namespace, this.bbr]),
      custom('entry-security-policy', m.entrySecurityPolicy, [this.namespace, keys]),
      custom('answers', m.directResponseFilter, [this.namespace]),
      custom('request-authentication', m.requestAuthentication, [this.namespace]),
      custom('authorization-policy', m.authorizationPolicy, [this.namespace]),
    ].filter((r): r is NonNullable<typeof r> => r !== undefined);
    this.gateway = customResource(childName(name, 'gateway'), RESOURCE_TYPES.gateway, m.gateway as never, childOptions(this, inherited, [this.namespace, parameters, args.gatewayClass, this.bbr, ...guards]));
    const entry = custom('entry-route', m.entryRoute, [this.gateway, ...guards]);

    const routes: Record<string, k8s.apiextensions.CustomResource> = {};
    for (const route of m.routes) {
      const model = endpoint.models.find((e) => e.model === route.model)!;
      const after = args.models?.[route.model];
      const grant = custom(`${model.slug}-reference-grant`, route.referenceGrant, [after])!;
      const security = custom(`${model.slug}-security-policy`, route.securityPolicy, [this.namespace, keys]);
      const limit = custom(`${model.slug}-rate-limit`, route.backendTrafficPolicy, [this.namespace]);
      routes[route.model] = custom(`${model.slug}-route`, route.httpRoute, [this.gateway, grant, security, limit, entry, after])!;
    }
    this.routes = routes;
    this.url = pulumi.all([this.gateway.urn, ...Object.values(routes).map((r) => r.urn)]).apply(() => endpoint.service.url);
    this.registerOutputs({ url: this.url });
  }

  /** The endpoint namespace's image pull Secret (the same credentials as every model namespace's). */
  private pullSecret(name: string, endpoint: EndpointPlan, args: StackEndpointArgs, inherited: DependsOn): k8s.core.v1.Secret {
    for (const key of ['harborHostname', 'harborUser', 'harborToken'] as const) {
      if (args[key] === undefined) throw new pulumi.InputPropertyError({ propertyPath: key, reason: `is required: the endpoint pulls with the Secret ${endpoint.pullSecret} (its body-based router's image)` });
    }
    const config = pulumi.all([args.harborHostname!, args.harborUser!, pulumi.secret(args.harborToken!)]).apply(([registry, user, token]) => ({ '.dockerconfigjson': dockerConfigJson(registry, user, token) }));
    return new k8s.core.v1.Secret(
      childName(name, 'pull-secret'),
      { metadata: { name: endpoint.pullSecret!, namespace: endpoint.namespace, labels: endpointLabels(endpoint.name) }, type: 'kubernetes.io/dockerconfigjson', stringData: pulumi.secret(config) },
      childOptions(this, inherited, [this.namespace]),
    );
  }

  /**
   * What holds the keys, built inside a secret Output (only names and kinds in the clear): on Envoy
   * Gateway the Secret the SecurityPolicies read (Bearer: the keys under their names; Basic: the
   * htpasswd text); on Istio the EnvoyFilter with basic_auth's hashes and the rate limit (which is
   * written without keys for an open or JWT endpoint). A key missing, too weak, or the value of two
   * names (Envoy Gateway refuses "duplicated API key") is an error naming the keys, never their values.
   */
  private keys(name: string, endpoint: EndpointPlan, args: StackEndpointArgs, inherited: DependsOn): pulumi.Resource | undefined {
    const access = endpoint.access;
    const names = access.mode === 'apiKeys' ? Object.keys(access.grants).sort() : [];
    const missing = names.filter((key) => args.apiKeys?.[key] === undefined);
    if (missing.length > 0) throw new pulumi.InputPropertyError({ propertyPath: 'apiKeys', reason: `lacks ${missing.join(', ')}: the endpoint grants them (pulumi config set --secret --path 'app-serving:apiKeys.<name>' <key>)` });
    const values = pulumi.all(names.map((key) => pulumi.output(args.apiKeys![key]!)));
    const secrets = pulumi.secret(
      values.apply((plain) => {
        const problems = names.map((key, i) => apiKeyProblem(key, plain[i]!)).filter((p): p is string => p !== null);
        const seen = new Map<string, string>();
        names.forEach((key, i) => {
          const other = seen.get(plain[i]!);
          if (other !== undefined) problems.push(`app-serving:apiKeys.${other} and app-serving:apiKeys.${key} hold the same key: give each its own (Envoy Gateway refuses a duplicated API key)`);
          else seen.set(plain[i]!, key);
        });
        if (problems.length > 0) throw new pulumi.RunError(problems.join('\n'));
        const keys = Object.fromEntries(names.map((key, i) => [key, plain[i]!]));
        return access.keyFormat === 'bearer' ? { keys } : { htpasswd: htpasswd(names.map((key, i) => ({ name: key, key: plain[i]! }))) };
      }),
    );
    // The objects' kinds and names never depend on the keys: a placeholder gives them in the clear.
    const [plain] = endpointKeyObjects(endpoint, ENDPOINT_TOOLS, access.keyFormat === 'bearer' ? { keys: Object.fromEntries(names.map((k) => [k, ''])) } : { htpasswd: '' });
    if (!plain) return undefined;
    const object = plain as Manifest;
    const built = secrets.apply((s) => endpointKeyObjects(endpoint, ENDPOINT_TOOLS, s)[0] as Manifest);
    if (object.kind === 'Secret') {
      return new k8s.core.v1.Secret(
        childName(name, 'keys'),
        { metadata: object.metadata as k8s.types.input.meta.v1.ObjectMeta, type: 'Opaque', stringData: pulumi.secret(built.apply((o) => o.stringData as Record<string, string>)) },
        childOptions(this, inherited, [this.namespace]),
      );
    }
    // An EnvoyFilter: its spec holds the hashes only with API keys.
    const spec = built.apply((o) => o.spec);
    return new k8s.apiextensions.CustomResource(
      childName(name, 'keys'),
      { apiVersion: RESOURCE_TYPES.envoyFilter.apiVersion, kind: RESOURCE_TYPES.envoyFilter.kind, metadata: object.metadata as k8s.types.input.meta.v1.ObjectMeta, spec: access.mode === 'apiKeys' ? pulumi.secret(spec) : pulumi.unsecret(spec) },
      childOptions(this, inherited, [this.namespace]),
    );
  }
}
