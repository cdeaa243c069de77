import { Namespace } from 'kubernetes-models/v1/Namespace';
import { PersistentVolume } from 'kubernetes-models/v1/PersistentVolume';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { HTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import { Gateway } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway';
import { GatewayClass } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GatewayClass';

const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/PersistentVolume': PersistentVolume,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'v1/ConfigMap': ConfigMap,
  'batch/v1/Job': Job,
  'gateway.networking.k8s.io/v1/HTTPRoute': HTTPRoute,
  'gateway.networking.k8s.io/v1/Gateway': Gateway,
  'gateway.networking.k8s.io/v1/GatewayClass': GatewayClass,
};

/** Validates a plain Kubernetes object against the upstream OpenAPI schema of its kind (throws on error). */
export function validateAgainstUpstream(object: { apiVersion: string; kind: string }): void {
  const Model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (!Model) throw new Error(`no upstream schema wired for ${object.apiVersion}/${object.kind}`);
  new Model(structuredClone(object) as never).validate();
}
