import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { hfTokenSecretManifest, kserveServiceAccountManifest, llmInferenceServiceConfigManifest, llmInferenceServiceManifest } from '@app-serving/core';
import { describe, expect, it } from 'vitest';
import { allStrings, dependencyDepth, kserveModel, record, valueOf } from '../test/harness.ts';
import { kubernetesProblems, llmInferenceServiceConfigSchema, llmInferenceServiceSchema } from '../test/k8s-schemas.ts';
import { KserveModel } from './kserve-model.ts';
import { redactSecrets, secretPaths } from './mock-runtime.ts';

const HF = 'hf_s3cr3t_t0ken';

describe('KserveModel', () => {
  it('cloud model with a Hugging Face download: children, order, secrets and schemas', async () => {
    const plan = kserveModel('kserve', 'TinyKserve');
    let m!: KserveModel;
    const rec = await record(() => {
      const gateway = new k8s.core.v1.Namespace('stack-gateway', { metadata: { name: 'kserve' } });
      m = new KserveModel('t', { plan, hfToken: pulumi.secret(HF), gateway });
    });
    expect(rec.children('t')).toEqual([
      'app-serving:model:ModelNamespace t-namespace',
      'app-serving:storage:ModelStorage t-storage',
      'kubernetes:core/v1:Secret t-hf-token',
      'kubernetes:core/v1:ServiceAccount t-service-account',
      'kubernetes:serving.kserve.io/v1alpha1:LLMInferenceService t-service',
      'kubernetes:serving.kserve.io/v1alpha1:LLMInferenceServiceConfig t-config',
    ]);
    expect(rec.children('t-storage')).toEqual(['kubernetes:batch/v1:Job t-storage-pull-job', 'kubernetes:core/v1:PersistentVolumeClaim t-storage-pvc']);
    const base = ['t-namespace-namespace'];
    expect(rec.dependencies('t-hf-token')).toEqual(base);
    expect(rec.dependencies('t-service-account')).toEqual([...base, 't-hf-token'].sort());
    expect(rec.dependencies('t-storage-pvc')).toEqual([...base, 't-hf-token', 't-service-account'].sort());
    expect(rec.dependencies('t-storage-pull-job')).toEqual([...base, 't-hf-token', 't-service-account', 't-storage-pvc'].sort());
    expect(rec.dependencies('t-config')).toEqual(base);
    // Only the LLMInferenceService waits for the stack's Gateway.
    expect(rec.dependencies('t-service')).toEqual([...base, 'stack-gateway', 't-config', 't-service-account', 't-storage-pull-job', 't-storage-pvc'].sort());

    expect(secretPaths(rec.get('t-hf-token').inputs)).toEqual(['stringData']);
    expect(rec.revealed('t-hf-token')).toEqual({ ...hfTokenSecretManifest({ name: 'hf-token', namespace: 'llm-d-tiny', slug: 'tiny', token: HF }) });
    expect(allStrings(rec.resources.map((r) => redactSecrets(r.inputs))).filter((s) => s.includes(HF))).toEqual([]);

    expect(rec.revealed('t-service-account')).toEqual(kserveServiceAccountManifest(plan));
    expect(rec.revealed('t-service-account')).toMatchObject({ metadata: { name: 'tiny-sa', namespace: 'llm-d-tiny' }, secrets: [{ name: 'hf-token' }] });
    expect(rec.revealed('t-storage-pull-job')).toMatchObject({ spec: { template: { spec: { serviceAccountName: 'tiny-sa' } } } });
    for (const r of rec.kubernetesObjects().filter((x) => !x.type.startsWith('kubernetes:serving.kserve.io'))) {
      expect(kubernetesProblems(rec.revealed(r.name)), r.name).toEqual([]);
    }

    const config = rec.revealed('t-config');
    expect(config).toEqual(llmInferenceServiceConfigManifest(plan));
    expect(llmInferenceServiceConfigSchema.parse(config)).toEqual(config);
    const service = rec.revealed('t-service');
    expect(service).toEqual(llmInferenceServiceManifest(plan));
    expect(llmInferenceServiceSchema.parse(service)).toEqual(service);
    expect(service).toMatchObject({
      metadata: { name: 'tiny', namespace: 'llm-d-tiny' },
      spec: {
        model: { uri: 'pvc://tiny-model/Qwen/Qwen3-0.6B', name: 'Qwen/Qwen3-0.6B' },
        router: { gateway: { refs: [{ name: 'kserve-ingress-gateway', namespace: 'kserve' }] } },
        baseRefs: [{ name: 'tiny-config' }],
        template: { serviceAccountName: 'tiny-sa' },
      },
    });

    expect(await valueOf(m.namespace)).toBe('llm-d-tiny');
    expect(await valueOf(m.serviceName)).toBe('tiny');
    expect(await valueOf(m.pathPrefix)).toBe('/llm-d-tiny/tiny');
    expect(await valueOf(m.pvcName)).toBe('tiny-model');
    // Namespace → HF Secret → ServiceAccount → PVC → download Job → LLMInferenceService.
    expect(dependencyDepth(rec.resources.filter((r) => r.custom || r.remote))).toBe(6);
  });

  it('air-gapped model from Harbor: pull secret, ORAS Job, no HF Secret', async () => {
    const plan = kserveModel('kserve-onprem', 'TinyKserveEmbed');
    const rec = await record(() => new KserveModel('e', { plan, harborHostname: 'harbor.example.com', harborUser: 'robot$puller', harborToken: 'tok' }));
    expect(rec.children('e')).toEqual([
      'app-serving:model:ModelNamespace e-namespace',
      'app-serving:storage:ModelStorage e-storage',
      'kubernetes:core/v1:ServiceAccount e-service-account',
      'kubernetes:serving.kserve.io/v1alpha1:LLMInferenceService e-service',
      'kubernetes:serving.kserve.io/v1alpha1:LLMInferenceServiceConfig e-config',
    ]);
    expect(rec.children('e-namespace')).toEqual(['kubernetes:core/v1:Namespace e-namespace-namespace', 'kubernetes:core/v1:Secret e-namespace-pull-secret']);
    expect(rec.revealed('e-service-account')).toMatchObject({ imagePullSecrets: [{ name: 'harbor-creds' }] });
    expect(rec.revealed('e-service-account')).not.toHaveProperty('secrets');
    expect(rec.revealed('e-storage-pull-job')).toMatchObject({ spec: { template: { spec: { imagePullSecrets: [{ name: 'harbor-creds' }], containers: [{ name: 'oras-pull' }] } } } });
    expect(llmInferenceServiceSchema.parse(rec.revealed('e-service'))).toMatchObject({ spec: { model: { uri: 'pvc://tiny-embed-model/tiny-embed' }, template: { imagePullSecrets: [{ name: 'harbor-creds' }] } } });
  });

  it('needs the HF token when the plan has its Secret', async () => {
    await expect(record(() => new KserveModel('t', { plan: kserveModel('kserve', 'TinyKserve') }))).rejects.toMatchObject({ propertyPath: 'hfToken' });
    await expect(record(() => new KserveModel('t', { plan: kserveModel('kserve-onprem', 'TinyKserveEmbed') }))).rejects.toMatchObject({ propertyPath: 'harborToken' });
  });
});
