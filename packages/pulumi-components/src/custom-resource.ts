import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import type { ResourceType } from '@app-serving/core';

/** A manifest as core builds it. */
interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: object;
  readonly spec?: unknown;
}

/**
 * Creates a `k8s.apiextensions.CustomResource` from a core manifest. Its `apiVersion` and `kind`
 * form the resource's type token, so they must be known now: `type` is core's `RESOURCE_TYPES`
 * entry, `manifest` the real object (possibly not known yet).
 */
export function customResource(name: string, type: ResourceType, manifest: pulumi.Input<Manifest>, opts: pulumi.CustomResourceOptions): k8s.apiextensions.CustomResource {
  const m = pulumi.output(manifest);
  return new k8s.apiextensions.CustomResource(
    name,
    { apiVersion: type.apiVersion, kind: type.kind, metadata: m.metadata as pulumi.Output<k8s.types.input.meta.v1.ObjectMeta>, spec: m.apply((x) => x.spec) },
    opts,
  );
}
