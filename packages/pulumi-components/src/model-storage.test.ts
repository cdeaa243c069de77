import * as k8s from '@pulumi/kubernetes';
import { modelJobManifest, persistentVolumeClaimManifest, persistentVolumeManifest } from '@app-serving/core';
import { describe, expect, it } from 'vitest';
import { kserveModel, llmdModel, record, valueOf } from '../test/harness.ts';
import { kubernetesProblems } from '../test/k8s-schemas.ts';
import { ModelStorage } from './model-storage.ts';

describe('ModelStorage', () => {
  const qwen = llmdModel('example', 'Qwen3-0.6B-rke2');
  const storage = qwen.storage!;

  it('on-prem with hostpathNode: PV, PVC after it, pull Job after the PVC', async () => {
    let s!: ModelStorage;
    const rec = await record(() => {
      s = new ModelStorage('st', {
        namespace: qwen.namespace,
        slug: qwen.slug,
        storage,
        pullSecret: 'harbor-creds',
        nodeSelector: qwen.nodeSelector,
        tolerations: qwen.tolerations,
      });
    });
    expect(rec.children('st')).toEqual([
      'kubernetes:batch/v1:Job st-pull-job',
      'kubernetes:core/v1:PersistentVolume st-pv',
      'kubernetes:core/v1:PersistentVolumeClaim st-pvc',
    ]);
    expect(rec.dependencies('st-pv')).toEqual([]);
    expect(rec.dependencies('st-pvc')).toEqual(['st-pv']);
    expect(rec.dependencies('st-pull-job')).toEqual(['st-pvc']);

    const at = { storage, namespace: 'llm-d-qwen3-06b-rke2', slug: 'qwen3-06b-rke2' };
    expect(rec.revealed('st-pv')).toEqual(persistentVolumeManifest(at));
    expect(rec.revealed('st-pvc')).toEqual(persistentVolumeClaimManifest(at));
    const job = modelJobManifest({ ...at, pullSecret: 'harbor-creds', nodeSelector: qwen.nodeSelector, tolerations: qwen.tolerations });
    expect(rec.revealed('st-pull-job')).toEqual({ ...job, metadata: { ...job.metadata, annotations: { 'pulumi.com/replaceUnready': 'true' } } });
    expect(rec.revealed('st-pv')).toMatchObject({
      metadata: { name: 'qwen3-06b-rke2-model-pv' },
      spec: { hostPath: { path: '/var/lib/hostpath/models/qwen3-06b-rke2' }, claimRef: { namespace: 'llm-d-qwen3-06b-rke2', name: 'qwen3-06b-rke2-model' } },
    });
    expect(rec.revealed('st-pvc')).toMatchObject({ metadata: { name: 'qwen3-06b-rke2-model', namespace: 'llm-d-qwen3-06b-rke2' }, spec: { volumeName: 'qwen3-06b-rke2-model-pv', storageClassName: 'hostpath' } });
    expect(rec.revealed('st-pull-job')).toMatchObject({
      metadata: { name: 'qwen3-06b-rke2-model-pull', namespace: 'llm-d-qwen3-06b-rke2' },
      spec: { backoffLimit: 3, ttlSecondsAfterFinished: 86400, template: { spec: { imagePullSecrets: [{ name: 'harbor-creds' }], tolerations: qwen.tolerations } } },
    });

    // A changed pod template (e.g. a new harborRef) replaces the Job, deleting the old one first;
    // `pulumi up` waits up to an hour for the pull.
    expect(rec.get('st-pull-job').options).toEqual({
      deleteBeforeReplace: true,
      replaceOnChanges: ['spec.template'],
      ignoreChanges: [],
      customTimeouts: { create: '60m', update: '60m', delete: '' },
      aliases: [],
    });
    for (const name of ['st-pv', 'st-pvc']) expect(rec.get(name).options.deleteBeforeReplace).toBe(false);
    for (const r of rec.kubernetesObjects()) expect(kubernetesProblems(r.inputs as Record<string, unknown>), r.name).toEqual([]);
    expect(await valueOf(s.pvcName)).toBe('qwen3-06b-rke2-model');
    expect(await valueOf(s.jobName)).toBe('qwen3-06b-rke2-model-pull');
  });

  it('without hostpathNode: PVC and Job only', async () => {
    const bge = llmdModel('example', 'bge-small-en-v1.5-rke2');
    const rec = await record(() => new ModelStorage('st', { namespace: bge.namespace, slug: bge.slug, storage: bge.storage!, pullSecret: 'harbor-creds', pullTimeout: '2h' }));
    expect(rec.children('st')).toEqual(['kubernetes:batch/v1:Job st-pull-job', 'kubernetes:core/v1:PersistentVolumeClaim st-pvc']);
    expect(rec.dependencies('st-pvc')).toEqual([]);
    expect(rec.revealed('st-pvc')).toMatchObject({ spec: { storageClassName: 'hostpath', resources: { requests: { storage: '2Gi' } } } });
    expect(rec.revealed('st-pvc')).not.toHaveProperty('spec.volumeName');
    expect(rec.get('st-pull-job').options.customTimeouts).toEqual({ create: '2h', update: '2h', delete: '' });
  });

  it('passes its own dependsOn on to every child', async () => {
    const rec = await record(() => {
      const before = new k8s.core.v1.Namespace('before', { metadata: { name: 'x' } });
      new ModelStorage('st', { namespace: qwen.namespace, slug: qwen.slug, storage, pullSecret: 'harbor-creds' }, { dependsOn: [before] });
    });
    expect(rec.dependencies('st')).toEqual(['before']);
    expect(rec.dependencies('st-pv')).toEqual(['before']);
    expect(rec.dependencies('st-pvc')).toEqual(['before', 'st-pv']);
    expect(rec.dependencies('st-pull-job')).toEqual(['before', 'st-pvc']);
  });

  it('a Hugging Face download reads HF_TOKEN from its Secret and runs as the model ServiceAccount', async () => {
    const tiny = kserveModel('kserve', 'TinyKserve');
    const rec = await record(
      () => new ModelStorage('st', { namespace: tiny.namespace, slug: tiny.slug, storage: tiny.storage!, hfTokenSecret: 'hf-token', serviceAccount: 'tiny-sa' }),
    );
    const job = rec.revealed('st-pull-job') as { spec: { template: { spec: { serviceAccountName: string; containers: { name: string; env: unknown[] }[] } } } };
    expect(job.spec.template.spec.serviceAccountName).toBe('tiny-sa');
    expect(job.spec.template.spec.containers[0]!.name).toBe('hf-download');
    expect(job.spec.template.spec.containers[0]!.env).toContainEqual({ name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: 'hf-token', key: 'HF_TOKEN' } } });
    expect(job.spec.template.spec.containers[0]!.env).toContainEqual({ name: 'HF_REPO', value: 'Qwen/Qwen3-0.6B' });
    expect(kubernetesProblems(job as unknown as Record<string, unknown>)).toEqual([]);
  });

  it('rejects an ORAS source without a pull secret', async () => {
    await expect(record(() => new ModelStorage('st', { namespace: 'n', slug: 's', storage }))).rejects.toMatchObject({
      propertyPath: 'pullSecret',
      reason: expect.stringContaining('harbor.example.com'),
    });
  });
});
