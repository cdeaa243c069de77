import { parse, stringify } from 'yaml';
import { PULUMI_TIMEOUT_ANNOTATION } from './constants.ts';
import type { NodeAffinity, Toleration } from './values/scheduling.ts';
import { isValuesMap } from './values/merge.ts';

/**
 * Post-render patches: pure functions over rendered Kubernetes objects, for what the charts have
 * no value for (DESIGN §6). The components apply them through the charts' transforms; `render`
 * and tests apply them to objects directly.
 */
export type PostRenderPatch = GatewayPodPlacementPatch | ServiceAccountPullSecretPatch | AwaitTimeoutPatch | AutoscaledReplicasPatch | DeploymentPodPlacementPatch;

/**
 * Places the Istio gateway pods: Istio builds the gateway Deployment from the Gateway's
 * `parametersRef` ConfigMap (llm-d-infra renders it, named after the Gateway, with a `deployment`
 * strategic-merge patch). This adds node affinity, tolerations and image pull secrets to that patch.
 * A class-defaults ConfigMap in the model namespace would be ignored (Istio reads those only in istio-system).
 */
export interface GatewayPodPlacementPatch {
  readonly kind: 'gateway-pod-placement';
  /** The ConfigMap to patch: the Gateway's name. */
  readonly configMap: string;
  readonly affinity?: NodeAffinity;
  readonly tolerations?: readonly Toleration[];
  readonly imagePullSecrets?: readonly { readonly name: string }[];
}

/** Adds image pull secrets to a ServiceAccount (GAIE v1.2.0 has no imagePullSecrets value for the EPP). */
export interface ServiceAccountPullSecretPatch {
  readonly kind: 'service-account-pull-secret';
  readonly serviceAccount: string;
  readonly imagePullSecrets: readonly { readonly name: string }[];
}

/**
 * Sets how long Pulumi awaits a Deployment (`pulumi.com/timeoutSeconds`): `helm.v4.Chart` awaits
 * every object it renders, a Deployment by default for 10 minutes, which a first pull of a CUDA
 * image plus vLLM's start-up can exceed, failing `pulumi up` although the pod becomes ready later.
 */
export interface AwaitTimeoutPatch {
  readonly kind: 'await-timeout';
  readonly deployment: string;
  readonly seconds: number;
}

/**
 * Leaves a Deployment's `replicas` to its autoscaler (KEDA's HPA): the rendered count is only the
 * first one, and `pulumi up` never sets it back. It changes no field of the object; it adds
 * `spec.replicas` to the resource's `ignoreChanges` ({@link patchResourceOptions}), with which the
 * Kubernetes provider's server-side apply leaves out a field another manager (the HPA controller,
 * through the scale subresource) has taken over, and sends the live value otherwise
 * (pulumi-kubernetes v4 `pkg/await/await.go`, handleSSAIgnoreFields): no diff, no conflict, no
 * reset of the scaled count on a later update.
 */
export interface AutoscaledReplicasPatch {
  readonly kind: 'autoscaled-replicas';
  readonly deployment: string;
}

/**
 * Places a chart's Deployment whose chart has no value for it (GAIE v1.5.0's body-based-routing
 * chart renders no affinity, tolerations or node selector): a hard node affinity (replacing the
 * chart's, which it has none of) and the tolerations (added to any it has).
 */
export interface DeploymentPodPlacementPatch {
  readonly kind: 'deployment-pod-placement';
  readonly deployment: string;
  readonly affinity?: NodeAffinity;
  readonly tolerations?: readonly Toleration[];
}

/** A rendered Kubernetes object, as a chart transform sees it. */
export interface KubernetesObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** The kind of object a patch targets (`ConfigMap` or `ServiceAccount`) and its name. */
export function patchTarget(patch: PostRenderPatch): { apiVersion: string; kind: string; name: string } {
  switch (patch.kind) {
    case 'gateway-pod-placement':
      return { apiVersion: 'v1', kind: 'ConfigMap', name: patch.configMap };
    case 'service-account-pull-secret':
      return { apiVersion: 'v1', kind: 'ServiceAccount', name: patch.serviceAccount };
    case 'await-timeout':
    case 'autoscaled-replicas':
    case 'deployment-pod-placement':
      return { apiVersion: 'apps/v1', kind: 'Deployment', name: patch.deployment };
  }
}

/** Resource options the patches that target `object` ask for: the fields Pulumi must leave alone. */
export function patchResourceOptions(patches: readonly PostRenderPatch[], object: KubernetesObject): { ignoreChanges: string[] } | undefined {
  const ignore = patches.some((patch) => patch.kind === 'autoscaled-replicas' && patchApplies(patch, object));
  return ignore ? { ignoreChanges: ['spec.replicas'] } : undefined;
}

/** True when `patch` applies to `object`. */
export function patchApplies(patch: PostRenderPatch, object: KubernetesObject): boolean {
  const target = patchTarget(patch);
  return object.kind === target.kind && (object.apiVersion ?? 'v1') === target.apiVersion && object.metadata?.name === target.name;
}

/**
 * Applies every patch that targets `object` and returns the patched copy; an object no patch
 * targets is returned unchanged (the same reference).
 */
export function applyPatches(patches: readonly PostRenderPatch[], object: KubernetesObject): KubernetesObject {
  let current = object;
  for (const patch of patches) {
    if (!patchApplies(patch, current)) continue;
    if (patch.kind === 'autoscaled-replicas') continue;
    current =
      patch.kind === 'gateway-pod-placement'
        ? placeGatewayPods(patch, current)
        : patch.kind === 'service-account-pull-secret'
          ? addPullSecrets(patch, current)
          : patch.kind === 'deployment-pod-placement'
            ? placeDeploymentPods(patch, current)
            : setAwaitTimeout(patch, current);
  }
  return current;
}

function placeGatewayPods(patch: GatewayPodPlacementPatch, configMap: KubernetesObject): KubernetesObject {
  const data = isValuesMap(configMap.data) ? (configMap.data as Record<string, string>) : {};
  const existing = typeof data.deployment === 'string' && data.deployment.trim() !== '' ? parse(data.deployment) : {};
  const deployment = isValuesMap(existing) ? structuredClone(existing) : {};
  const spec = child(child(child(deployment, 'spec'), 'template'), 'spec');
  if (patch.affinity) spec.affinity = structuredClone(patch.affinity);
  if (patch.tolerations?.length) spec.tolerations = mergeByIdentity(asList(spec.tolerations), patch.tolerations);
  if (patch.imagePullSecrets?.length) spec.imagePullSecrets = mergeByIdentity(asList(spec.imagePullSecrets), patch.imagePullSecrets);
  return { ...configMap, data: { ...data, deployment: stringify(deployment, { lineWidth: 0 }) } };
}

function placeDeploymentPods(patch: DeploymentPodPlacementPatch, deployment: KubernetesObject): KubernetesObject {
  const copy = structuredClone(deployment) as Record<string, unknown>;
  const spec = child(child(child(copy, 'spec'), 'template'), 'spec');
  if (patch.affinity) spec.affinity = structuredClone(patch.affinity);
  if (patch.tolerations?.length) spec.tolerations = mergeByIdentity(asList(spec.tolerations), patch.tolerations);
  return copy as KubernetesObject;
}

function addPullSecrets(patch: ServiceAccountPullSecretPatch, serviceAccount: KubernetesObject): KubernetesObject {
  return { ...serviceAccount, imagePullSecrets: mergeByIdentity(asList(serviceAccount.imagePullSecrets), patch.imagePullSecrets) };
}

function setAwaitTimeout(patch: AwaitTimeoutPatch, deployment: KubernetesObject): KubernetesObject {
  const metadata = deployment.metadata ?? {};
  const annotations = isValuesMap(metadata.annotations) ? metadata.annotations : {};
  return { ...deployment, metadata: { ...metadata, annotations: { ...annotations, [PULUMI_TIMEOUT_ANNOTATION]: String(patch.seconds) } } };
}

function child(parent: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = parent[key];
  if (isValuesMap(value)) return value;
  const created: Record<string, unknown> = {};
  parent[key] = created;
  return created;
}

function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** `existing` plus every item of `added` not already in it (by JSON identity). */
function mergeByIdentity(existing: readonly unknown[], added: readonly unknown[]): unknown[] {
  const seen = new Set(existing.map((item) => JSON.stringify(item)));
  return [...existing, ...added.filter((item) => !seen.has(JSON.stringify(item)))].map((item) => structuredClone(item));
}
