import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { validateAgainstUpstream } from '../../test/k8s-schema.ts';
import { sourceRef, storagePlan } from '../storage.ts';
import {
  dockerConfigJson,
  modelJobManifest,
  namespaceManifest,
  persistentVolumeClaimManifest,
  persistentVolumeManifest,
  pullSecretManifest,
} from './common.ts';
import { embeddingsServiceManifest, gatewayAliasManifest, httpRouteManifest } from './llmd.ts';
import { envoyGatewayClassManifest, hfTokenSecretManifest, kserveGatewayManifest, kserveServiceAccountManifest } from './kserve.ts';
import { kserveStackPlan } from '../kserve/plan.ts';

const LABELS = { 'app.kubernetes.io/managed-by': 'app-serving', 'app.kubernetes.io/part-of': 'app-serving', 'app-serving.io/model': 'q' };
const onPrem = storagePlan({
  slug: 'q',
  source: { harborRef: 'harbor.local/ai/q:1', modelUri: 'hub/o/m', layout: 'hf-cache', storageSize: '10Gi', hostpathNode: 'node-1' },
  cloudProvider: 'on-prem',
  harborHostname: 'harbor.local',
});
const hf = storagePlan({
  slug: 'q',
  source: { huggingFace: { repo: 'o/m' }, modelUri: 'o/m', layout: 'directory', storageSize: '10Gi' },
  cloudProvider: 'cloud',
  downloaderImage: 'kserve/storage-initializer:v0.18.0',
});

describe('plain manifests', () => {
  it('namespace', () => {
    const ns = namespaceManifest('llm-d-q', 'q');
    expect(ns).toEqual({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'llm-d-q', labels: LABELS } });
    validateAgainstUpstream(ns);
  });

  it('dockerconfigjson is what kubectl create secret docker-registry writes', () => {
    const json = JSON.parse(dockerConfigJson('harbor.local', 'robot$puller', 's3cret'));
    expect(json).toEqual({ auths: { 'harbor.local': { username: 'robot$puller', password: 's3cret', auth: Buffer.from('robot$puller:s3cret').toString('base64') } } });
    const secret = pullSecretManifest({ name: 'harbor-creds', namespace: 'llm-d-q', slug: 'q', dockerConfigJson: '{}' });
    expect(secret.type).toBe('kubernetes.io/dockerconfigjson');
    validateAgainstUpstream(secret);
  });

  it('hostPath PV pinned to its node and pre-bound to the PVC', () => {
    const pv = persistentVolumeManifest({ storage: onPrem, namespace: 'llm-d-q', slug: 'q' });
    expect(pv.spec).toEqual({
      capacity: { storage: '10Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: 'hostpath',
      volumeMode: 'Filesystem',
      hostPath: { path: '/var/lib/hostpath/models/q', type: 'Directory' },
      claimRef: { namespace: 'llm-d-q', name: 'q-model' },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] }] }] } },
    });
    validateAgainstUpstream(pv);
    expect(() => persistentVolumeManifest({ storage: hf, namespace: 'n', slug: 'q' })).toThrow(/hostPath PV/);
  });

  it('PVC binds the static PV on-prem, and leaves the class to the cluster on cloud', () => {
    const pvc = persistentVolumeClaimManifest({ storage: onPrem, namespace: 'llm-d-q', slug: 'q' });
    expect(pvc.spec).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } }, storageClassName: 'hostpath', volumeName: 'q-model-pv' });
    // Bound ahead to its volume: not awaited (a loaded cluster's provider missed the binding for 5 min).
    expect(pvc.metadata.annotations).toEqual({ 'pulumi.com/skipAwait': 'true' });
    validateAgainstUpstream(pvc);
    expect(persistentVolumeClaimManifest({ storage: hf, namespace: 'n', slug: 'q' }).spec).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } } });
    // A claim a provisioner binds is awaited by the provider, which knows WaitForFirstConsumer classes.
    expect(persistentVolumeClaimManifest({ storage: hf, namespace: 'n', slug: 'q' }).metadata).not.toHaveProperty('annotations');
  });

  it('the ORAS Job: retries, TTL, non-root, credentials from the pull secret, toleration and node affinity', () => {
    const job = modelJobManifest({
      storage: onPrem,
      namespace: 'llm-d-q',
      slug: 'q',
      pullSecret: 'harbor-creds',
      nodeSelector: { workload: 'gpu' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
    });
    validateAgainstUpstream(job);
    expect(job.metadata).toEqual({ name: 'q-model-pull', namespace: 'llm-d-q', labels: { ...LABELS, 'app-serving.io/component': 'model-pull' } });
    expect(job.spec.backoffLimit).toBe(3);
    expect(job.spec.ttlSecondsAfterFinished).toBe(86400);
    const pod = job.spec.template.spec;
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.securityContext).toEqual({ runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.imagePullSecrets).toEqual([{ name: 'harbor-creds' }]);
    expect(pod.tolerations).toEqual([{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }]);
    expect(pod.affinity).toEqual({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'workload', operator: 'In', values: ['gpu'] }] }] } } });
    const [container] = pod.containers;
    expect(container!.image).toBe('harbor.local/images-infra/oras-project/oras:v1.3.1');
    expect(container!.command.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(container!.env).toEqual([
      { name: 'MODEL_DIR', value: '/model-cache' },
      { name: 'MODEL_REF', value: 'harbor.local/ai/q:1' },
      { name: 'EXPECT_PATH', value: 'hub/models--o--m' },
      { name: 'HOME', value: '/tmp' },
      { name: 'REGISTRY_CONFIG', value: '/etc/registry-auth/config.json' },
    ]);
    expect(container!.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
    expect(pod.volumes).toEqual([
      { name: 'model', persistentVolumeClaim: { claimName: 'q-model' } },
      { name: 'tmp', emptyDir: {} },
      { name: 'registry-auth', secret: { secretName: 'harbor-creds', items: [{ key: '.dockerconfigjson', path: 'config.json' }] } },
    ]);
  });

  it('the ORAS Job needs the pull secret', () => {
    expect(() => modelJobManifest({ storage: onPrem, namespace: 'n', slug: 'q' })).toThrow(/pull secret/);
  });

  it('the Hugging Face Job reads the token from a Secret and runs as the model ServiceAccount', () => {
    const job = modelJobManifest({ storage: hf, namespace: 'llm-d-q', slug: 'q', hfTokenSecret: 'hf-token', serviceAccount: 'q-sa' });
    validateAgainstUpstream(job);
    const pod = job.spec.template.spec;
    expect(pod.serviceAccountName).toBe('q-sa');
    expect(pod.imagePullSecrets).toBeUndefined();
    expect(pod.containers[0]!.name).toBe('hf-download');
    expect(pod.containers[0]!.env).toEqual([
      { name: 'MODEL_DIR', value: '/model-cache' },
      { name: 'MODEL_REF', value: 'hf://o/m' },
      { name: 'EXPECT_PATH', value: 'o/m/config.json' },
      { name: 'HOME', value: '/tmp' },
      { name: 'HF_REPO', value: 'o/m' },
      { name: 'MODEL_PATH', value: 'o/m' },
      { name: 'HF_HUB_DISABLE_PROGRESS_BARS', value: '1' },
      { name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: 'hf-token', key: 'HF_TOKEN' } } },
    ]);
    expect(pod.volumes.map((v) => (v as { name: string }).name)).toEqual(['model', 'tmp']);
    expect(sourceRef({ ...hf, source: { kind: 'huggingface', repo: 'o/m', revision: 'v2' } })).toBe('hf://o/m@v2');
  });
});

describe('llm-d manifests', () => {
  it('HTTPRoute: every path of the model Gateway to its InferencePool', () => {
    const route = httpRouteManifest({ name: 'llm-d-q', namespace: 'llm-d-q', slug: 'q', gateway: 'infra-q-inference-gateway', inferencePool: 'gaie-q' });
    validateAgainstUpstream(route);
    expect(route.spec).toEqual({
      parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'infra-q-inference-gateway' }],
      rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'gaie-q' }] }],
    });
  });

  it('embeddings Service: port 8200 to the decode pods on the port the server listens on', () => {
    const svc = embeddingsServiceManifest({ name: 'ms-q-embeddings', namespace: 'llm-d-q', slug: 'q', podLabels: { 'llm-d.ai/model': 'q' }, targetPort: 8000 });
    validateAgainstUpstream(svc);
    expect(svc.spec).toEqual({ type: 'ClusterIP', selector: { 'llm-d.ai/model': 'q', 'llm-d.ai/role': 'decode' }, ports: [{ name: 'http', port: 8200, targetPort: 8000, protocol: 'TCP' }] });
  });

  it('gateway alias: an ExternalName Service to the Istio gateway Service', () => {
    const svc = gatewayAliasManifest({ name: 'llmd-gateway-q', namespace: 'llm-d-q', slug: 'q', gatewayHost: 'infra-q-inference-gateway-istio.llm-d-q.svc.cluster.local' });
    validateAgainstUpstream(svc);
    expect(svc.spec).toMatchObject({ type: 'ExternalName', externalName: 'infra-q-inference-gateway-istio.llm-d-q.svc.cluster.local' });
    // Not awaited: the provider's Service await could record the Service from before an update (the deploy tier's change test holds it).
    expect(svc.metadata.annotations).toEqual({ 'pulumi.com/skipAwait': 'true' });
  });
});

describe('KServe manifests', () => {
  it('HF token Secret and ServiceAccount', () => {
    const secret = hfTokenSecretManifest({ name: 'hf-token', namespace: 'n', slug: 'q', token: 't' });
    validateAgainstUpstream(secret);
    expect(secret.stringData).toEqual({ HF_TOKEN: 't' });
    const sa = kserveServiceAccountManifest({ serviceAccount: 'q-sa', namespace: 'n', slug: 'q', hfTokenSecret: 'hf-token', pullSecret: 'harbor-creds' });
    validateAgainstUpstream(sa);
    expect(sa).toMatchObject({ secrets: [{ name: 'hf-token' }], imagePullSecrets: [{ name: 'harbor-creds' }] });
    expect(kserveServiceAccountManifest({ serviceAccount: 'q-sa', namespace: 'n', slug: 'q', hfTokenSecret: null, pullSecret: null })).not.toHaveProperty('secrets');
  });

  it('Envoy GatewayClass and the KServe Gateway', () => {
    const { gateway } = kserveStackPlan({ kserve: undefined } as never);
    const gc = envoyGatewayClassManifest(gateway);
    const gw = kserveGatewayManifest(gateway);
    validateAgainstUpstream(gc);
    validateAgainstUpstream(gw);
    expect(gc.spec).toEqual({ controllerName: 'gateway.envoyproxy.io/gatewayclass-controller' });
    expect(gw.metadata).toMatchObject({ name: 'kserve-ingress-gateway', namespace: 'kserve' });
    expect(gw.spec).toEqual({ gatewayClassName: 'envoy', listeners: [{ name: 'http', protocol: 'HTTP', port: 80, allowedRoutes: { namespaces: { from: 'All' } } }] });
  });
});
