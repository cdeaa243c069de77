import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import { credentialsData, type AutoscalingPlan, type KubernetesObject } from '@app-serving/core';
import { TYPE_TOKENS, childName } from './component-names.ts';
import { customResource } from './custom-resource.ts';
import { childOptions } from './options.ts';

/** Arguments of {@link ModelAutoscaling}. */
export interface ModelAutoscalingArgs {
  /** The model namespace (an output of the namespace, so that the objects come after it). */
  readonly namespace: pulumi.Input<string>;
  /** The plan's `autoscaling` (core `planAutoscaling`): its objects and the Prometheus it reads. */
  readonly autoscaling: AutoscalingPlan;
  /**
   * The Prometheus's bearer token or password (stack secret `prometheusCredentials`); stays a
   * Pulumi secret. Required when the plan names a credentials Secret (`autoscaling.prometheus.secret`).
   */
  readonly prometheusCredentials?: pulumi.Input<string>;
}

/**
 * The autoscaling of one model (docs/autoscaling.md): the KEDA ScaledObjects (one per model-server
 * Deployment, Prometheus trigger), the credentials Secret and its TriggerAuthentication when the
 * Prometheus needs them, and the Prometheus Operator PodMonitors that make the signal exist. All
 * built by core; the Deployments' `replicas` are left to KEDA by the model-server chart's transform
 * (core's `autoscaled-replicas` patch: `ignoreChanges: ['spec.replicas']`).
 *
 * Order it with `dependsOn` after the model-server chart (a ScaledObject whose Deployment does not
 * exist yet is reported by KEDA as not ready); {@link LlmdModel} does this.
 *
 * Children: `<name>-credentials` (Secret, with auth), `<name>-dashboard` (ConfigMap), `<name>-<kind>-<object name>` (CustomResource) for each other object.
 * @see https://keda.sh/docs/2.20/scalers/prometheus/
 */
export class ModelAutoscaling extends pulumi.ComponentResource {
  readonly credentials: k8s.core.v1.Secret | undefined;
  /** The model's Grafana dashboard (a ConfigMap labelled `grafana_dashboard: "1"`). */
  readonly dashboard: k8s.core.v1.ConfigMap | undefined;
  readonly objects: readonly k8s.apiextensions.CustomResource[];
  /** The ScaledObjects' names. */
  readonly scaledObjects: readonly string[];

  constructor(name: string, args: ModelAutoscalingArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.ModelAutoscaling, name, {}, opts);
    const plan = args.autoscaling;
    const inherited = opts?.dependsOn;
    const { secret, auth, username } = plan.prometheus;
    if (secret !== null && args.prometheusCredentials === undefined) {
      throw new pulumi.InputPropertyError({
        propertyPath: 'prometheusCredentials',
        reason: `is required: the Prometheus needs ${auth} authentication (pulumi config set --secret prometheusCredentials <${auth === 'bearer' ? 'token' : 'password'}>)`,
      });
    }
    this.credentials =
      secret !== null && auth !== null
        ? new k8s.core.v1.Secret(
            childName(name, 'credentials'),
            {
              metadata: { name: secret, namespace: args.namespace },
              type: 'Opaque',
              stringData: pulumi.secret(args.prometheusCredentials!).apply((value) => credentialsData(auth, value, username)),
            },
            childOptions(this, inherited),
          )
        : undefined;
    const dashboard = plan.objects.find((o) => o.kind === 'ConfigMap');
    this.dashboard = dashboard
      ? new k8s.core.v1.ConfigMap(
          childName(name, 'dashboard'),
          { metadata: { ...(dashboard.metadata as object), namespace: args.namespace }, data: (dashboard as { data?: Record<string, string> }).data ?? {} },
          childOptions(this, inherited),
        )
      : undefined;
    this.objects = plan.objects.filter((o) => o.kind !== 'ConfigMap').map((object: KubernetesObject) => {
      const meta = object.metadata ?? {};
      const manifest = pulumi.output(args.namespace).apply((namespace) => ({
        apiVersion: object.apiVersion!,
        kind: object.kind!,
        metadata: { ...meta, namespace },
        spec: (object as { spec?: unknown }).spec,
      }));
      return customResource(
        childName(name, `${object.kind!.toLowerCase()}-${meta.name}`),
        { apiVersion: object.apiVersion!, kind: object.kind! },
        manifest,
        childOptions(this, inherited, object.kind === 'ScaledObject' && this.credentials ? [this.credentials] : []),
      );
    });
    this.scaledObjects = plan.targets.map((t) => t.scaledObject);
    this.registerOutputs({});
  }
}
