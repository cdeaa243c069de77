import { describe, expect, it } from 'vitest';
import { llmdModel, record } from '../test/harness.ts';
import { InferencePool } from './inference-pool.ts';

describe('InferencePool', () => {
  const qwen = llmdModel('example', 'Qwen3-0.6B-rke2');

  it('deploys the GAIE chart from its oci:// reference with the plan values', async () => {
    const rec = await record(() => new InferencePool('p', { namespace: qwen.namespace, releaseName: qwen.releases.gaie, chart: qwen.charts.gaie, values: qwen.values.gaie, patches: qwen.patches.gaie }));
    expect(rec.children('p')).toEqual(['kubernetes:helm.sh/v4:Chart p-chart']);
    expect(rec.get('p-chart').inputs).toEqual({
      name: 'gaie-qwen3-06b-rke2',
      namespace: 'llm-d-qwen3-06b-rke2',
      chart: 'oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool',
      version: 'v1.2.0',
      values: qwen.values.gaie,
    });
    expect(rec.get('p-chart').inputs).toMatchObject({
      values: { provider: { name: 'istio', istio: { destinationRule: { host: 'gaie-qwen3-06b-rke2-epp.llm-d-qwen3-06b-rke2.svc.cluster.local' } } } },
    });
  });

  it('adds the pull secret to the EPP ServiceAccount through the registered transform', async () => {
    const rec = await record(() => new InferencePool('p', { namespace: qwen.namespace, releaseName: qwen.releases.gaie, values: qwen.values.gaie, patches: qwen.patches.gaie }));
    const [transform] = rec.get('p-chart').transforms;
    expect(rec.get('p-chart').transforms).toHaveLength(1);
    // What GAIE v1.2.0 renders: ServiceAccount `trunc40(release)-epp`, no imagePullSecrets.
    const sa = {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'gaie-qwen3-06b-rke2-epp', namespace: 'llm-d-qwen3-06b-rke2', labels: { 'app.kubernetes.io/name': 'gaie-qwen3-06b-rke2-epp' } },
    };
    const result = await transform!({ custom: true, type: 'kubernetes:core/v1:ServiceAccount', name: 'p-chart:llm-d-qwen3-06b-rke2/gaie-qwen3-06b-rke2-epp', props: sa, opts: {} });
    expect(result!.props).toEqual({ ...sa, imagePullSecrets: [{ name: 'harbor-creds' }] });
    // An existing entry is kept, the pull secret not repeated.
    const withSecrets = { ...sa, imagePullSecrets: [{ name: 'other' }, { name: 'harbor-creds' }] };
    expect((await transform!({ custom: true, type: 'kubernetes:core/v1:ServiceAccount', name: 'x', props: withSecrets, opts: {} }))?.props).toEqual(withSecrets);

    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'gaie-qwen3-06b-rke2-epp' }, spec: {} };
    const modelSa = { ...sa, metadata: { ...sa.metadata, name: 'ms-qwen3-06b-rke2-llm-d-modelservice' } };
    // The EPP Deployment gets the model's readyTimeout; the model's ServiceAccount is left as it is.
    expect(await transform!({ custom: true, type: 'x', name: 'x', props: deployment, opts: {} })).toEqual({
      props: { ...deployment, metadata: { ...deployment.metadata, annotations: { 'pulumi.com/timeoutSeconds': '1800' } } },
      opts: { deleteBeforeReplace: true },
    });
    expect(await transform!({ custom: true, type: 'x', name: 'x', props: modelSa, opts: {} })).toEqual({ props: modelSa, opts: { deleteBeforeReplace: true } });
  });

  it('registers no transform when the stack has no pull secret', async () => {
    const sim = llmdModel('kind', 'Sim');
    const rec = await record(() => new InferencePool('p', { namespace: sim.namespace, releaseName: sim.releases.gaie, values: sim.values.gaie, patches: sim.patches.gaie }));
    // Only the transform every chart has (rendered objects replaced delete-first): nothing to patch.
    expect(rec.get('p-chart').transforms).toHaveLength(1);
  });
});
