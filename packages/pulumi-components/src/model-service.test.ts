import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { llmdModel, record } from '../test/harness.ts';
import { ModelService } from './model-service.ts';

describe('ModelService', () => {
  const qwen = llmdModel('example', 'Qwen3-0.6B-rke2');
  const args = { namespace: qwen.namespace, releaseName: qwen.releases.modelService, chart: qwen.charts.modelService, values: qwen.values.modelService };
  afterEach(() => vi.restoreAllMocks());

  it('deploys llm-d-modelservice after what it is given to wait for', async () => {
    const warn = vi.spyOn(pulumi.log, 'warn');
    const rec = await record(() => {
      const volume = new k8s.core.v1.PersistentVolumeClaim('pvc', { metadata: { name: 'qwen3-06b-rke2-model' } });
      new ModelService('ms', args, { dependsOn: [volume] });
    });
    expect(rec.children('ms')).toEqual(['kubernetes:helm.sh/v4:Chart ms-chart']);
    expect(rec.dependencies('ms-chart')).toEqual(['pvc']);
    expect(rec.get('ms-chart').inputs).toEqual({
      name: 'ms-qwen3-06b-rke2',
      namespace: 'llm-d-qwen3-06b-rke2',
      chart: 'llm-d-modelservice',
      version: 'v0.4.12',
      repositoryOpts: { repo: 'https://llm-d-incubation.github.io/llm-d-modelservice/' },
      values: qwen.values.modelService,
    });
    expect(rec.get('ms-chart').inputs).toMatchObject({ values: { modelArtifacts: { uri: 'pvc+hf://qwen3-06b-rke2-model/hub/Qwen/Qwen3-0.6B' } } });
    // Only the transform every chart has (rendered objects replaced delete-first): nothing to patch.
    expect(rec.get('ms-chart').transforms).toHaveLength(1);
    expect(warn).not.toHaveBeenCalled();
  });

  it('raises the await timeout of the decode and prefill Deployments through the registered transform', async () => {
    const rec = await record(() => new ModelService('ms', { ...args, patches: qwen.patches.modelService }));
    const [transform] = rec.get('ms-chart').transforms;
    expect(rec.get('ms-chart').transforms).toHaveLength(1);
    const decode = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'ms-qwen3-06b-rke2-llm-d-modelservice-decode', annotations: { a: 'b' } }, spec: {} };
    const result = await transform!({ custom: true, type: 'kubernetes:apps/v1:Deployment', name: 'ms-chart:llm-d-qwen3-06b-rke2/ms-qwen3-06b-rke2-llm-d-modelservice-decode', props: decode, opts: {} });
    expect(result?.props).toEqual({ ...decode, metadata: { ...decode.metadata, annotations: { a: 'b', 'pulumi.com/timeoutSeconds': '1800' } } });
    const prefill = { ...decode, metadata: { name: 'ms-qwen3-06b-rke2-llm-d-modelservice-prefill' } };
    expect((await transform!({ custom: true, type: 'kubernetes:apps/v1:Deployment', name: 'x', props: prefill, opts: {} }))?.props).toMatchObject({
      metadata: { annotations: { 'pulumi.com/timeoutSeconds': '1800' } },
    });
    const serviceAccount = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'ms-qwen3-06b-rke2-llm-d-modelservice-decode' } };
    expect(await transform!({ custom: true, type: 'kubernetes:core/v1:ServiceAccount', name: 'x', props: serviceAccount, opts: {} })).toEqual({ props: serviceAccount, opts: { deleteBeforeReplace: true } });
  });

  it('warns when its values mount a PVC but nothing orders it after the pull', async () => {
    const warn = vi.spyOn(pulumi.log, 'warn').mockImplementation(() => Promise.resolve());
    await record(() => new ModelService('ms', args));
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatch(/modelArtifacts.uri is pvc\+hf:\/\/qwen3-06b-rke2-model\/hub\/Qwen\/Qwen3-0.6B.*dependsOn/);
  });
});
