import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { applyPatches, patchApplies, patchTarget, type KubernetesObject, type PostRenderPatch } from './patches.ts';

/** The parametersRef ConfigMap llm-d-infra v1.3.10 renders for an Istio Gateway. */
function gatewayConfigMap(name: string): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels: { 'app.kubernetes.io/gateway': name } },
    data: {
      deployment:
        'spec:\n  template:\n    spec:\n      containers:\n      - name: istio-proxy\n        args:\n          - proxy\n          - router\n        resources:\n          limits:\n            cpu: "2"\n',
      service: 'spec:\n  type: "ClusterIP"\n',
    },
  };
}

const AFFINITY = {
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'workload', operator: 'In' as const, values: ['gpu'] }] }] } },
};
const placement: PostRenderPatch = {
  kind: 'gateway-pod-placement',
  configMap: 'infra-m-inference-gateway',
  affinity: AFFINITY,
  tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
  imagePullSecrets: [{ name: 'harbor-creds' }],
};

describe('gateway pod placement', () => {
  it('adds affinity, tolerations and pull secrets to the deployment overlay, keeping the chart parts', () => {
    const patched = applyPatches([placement], gatewayConfigMap('infra-m-inference-gateway'));
    const data = patched.data as Record<string, string>;
    expect(parse(data.deployment!)).toEqual({
      spec: {
        template: {
          spec: {
            containers: [{ name: 'istio-proxy', args: ['proxy', 'router'], resources: { limits: { cpu: '2' } } }],
            affinity: AFFINITY,
            tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
            imagePullSecrets: [{ name: 'harbor-creds' }],
          },
        },
      },
    });
    expect(data.service).toBe('spec:\n  type: "ClusterIP"\n');
    expect(patched.metadata).toEqual({ name: 'infra-m-inference-gateway', labels: { 'app.kubernetes.io/gateway': 'infra-m-inference-gateway' } });
  });

  it('is idempotent: applying twice adds nothing more', () => {
    const once = applyPatches([placement], gatewayConfigMap('infra-m-inference-gateway'));
    expect(applyPatches([placement], once)).toEqual(once);
  });

  it('creates the overlay when the ConfigMap has none', () => {
    const patched = applyPatches([{ kind: 'gateway-pod-placement', configMap: 'gw', imagePullSecrets: [{ name: 's' }] }], { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gw' } });
    expect(parse((patched.data as Record<string, string>).deployment!)).toEqual({ spec: { template: { spec: { imagePullSecrets: [{ name: 's' }] } } } });
  });

  it('does not mutate the object it was given', () => {
    const original = gatewayConfigMap('infra-m-inference-gateway');
    const copy = structuredClone(original);
    applyPatches([placement], original);
    expect(original).toEqual(copy);
  });

  it('leaves every other object alone (same reference)', () => {
    for (const other of [gatewayConfigMap('another-gateway'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'infra-m-inference-gateway' } }]) {
      expect(applyPatches([placement], other)).toBe(other);
    }
  });
});

describe('EPP ServiceAccount pull secret', () => {
  const patch: PostRenderPatch = { kind: 'service-account-pull-secret', serviceAccount: 'gaie-m-epp', imagePullSecrets: [{ name: 'harbor-creds' }] };

  it('adds the pull secret to the named ServiceAccount', () => {
    const sa = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'gaie-m-epp', namespace: 'llm-d-m' } };
    expect(applyPatches([patch], sa)).toEqual({ ...sa, imagePullSecrets: [{ name: 'harbor-creds' }] });
  });

  it('keeps existing pull secrets and does not repeat one', () => {
    const sa = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'gaie-m-epp' }, imagePullSecrets: [{ name: 'a' }, { name: 'harbor-creds' }] };
    expect(applyPatches([patch], sa).imagePullSecrets).toEqual([{ name: 'a' }, { name: 'harbor-creds' }]);
  });

  it('targets only that ServiceAccount', () => {
    expect(patchTarget(patch)).toEqual({ apiVersion: 'v1', kind: 'ServiceAccount', name: 'gaie-m-epp' });
    expect(patchApplies(patch, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'other' } })).toBe(false);
    expect(patchApplies(patch, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'gaie-m-epp' } })).toBe(false);
  });
});

describe('await timeout of a model Deployment', () => {
  const patch: PostRenderPatch = { kind: 'await-timeout', deployment: 'ms-m-llm-d-modelservice-decode', seconds: 1800 };

  it('sets pulumi.com/timeoutSeconds on the named Deployment, keeping its annotations', () => {
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'ms-m-llm-d-modelservice-decode', annotations: { 'llm-d.ai/x': 'y' } }, spec: { replicas: 1 } };
    expect(applyPatches([patch], deployment)).toEqual({ ...deployment, metadata: { ...deployment.metadata, annotations: { 'llm-d.ai/x': 'y', 'pulumi.com/timeoutSeconds': '1800' } } });
    expect(applyPatches([patch], { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'ms-m-llm-d-modelservice-decode' } }).metadata).toEqual({
      name: 'ms-m-llm-d-modelservice-decode',
      annotations: { 'pulumi.com/timeoutSeconds': '1800' },
    });
  });

  it('targets only that Deployment', () => {
    expect(patchTarget(patch)).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'ms-m-llm-d-modelservice-decode' });
    expect(patchApplies(patch, { apiVersion: 'apps/v1', kind: 'LeaderWorkerSet', metadata: { name: 'ms-m-llm-d-modelservice-decode' } })).toBe(false);
    expect(patchApplies(patch, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'gaie-m-epp' } })).toBe(false);
  });
});

describe('deployment pod placement (a chart without placement values: GAIE v1.5.0 body-based-routing)', () => {
  const deployment: KubernetesObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'body-based-router' },
    spec: { replicas: 1, template: { metadata: { labels: { app: 'body-based-router' } }, spec: { tolerations: [{ key: 'other', operator: 'Exists' }], containers: [{ name: 'bbr' }] } } },
  };
  const patch: PostRenderPatch = { kind: 'deployment-pod-placement', deployment: 'body-based-router', affinity: AFFINITY, tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] };

  it("sets the affinity and adds the tolerations to the pod template, leaving the rest (and the input) as it was", () => {
    const before = structuredClone(deployment);
    const patched = applyPatches([patch], deployment) as any;
    expect(patched.spec.template.spec).toEqual({
      tolerations: [{ key: 'other', operator: 'Exists' }, { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
      containers: [{ name: 'bbr' }],
      affinity: AFFINITY,
    });
    expect(deployment).toEqual(before);
    expect(patchTarget(patch)).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'body-based-router' });
    expect(patchApplies(patch, { ...deployment, metadata: { name: 'other' } })).toBe(false);
  });
});
