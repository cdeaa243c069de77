import { DEFAULT_CHARTS, type PostRenderPatch } from '@app-serving/core';
import { describe, expect, it } from 'vitest';
import { chartArgs, postRenderTransform } from './chart.ts';

describe('chartArgs', () => {
  it('gives repository charts their repositoryOpts and oci:// charts none', () => {
    expect(chartArgs({ release: 'infra-a', namespace: 'ns', chart: DEFAULT_CHARTS.infra, values: { a: 1 } })).toEqual({
      name: 'infra-a',
      namespace: 'ns',
      chart: 'llm-d-infra',
      version: 'v1.3.10',
      repositoryOpts: { repo: 'https://llm-d-incubation.github.io/llm-d-infra/' },
      values: { a: 1 },
    });
    expect(chartArgs({ release: 'gaie-a', namespace: 'ns', chart: DEFAULT_CHARTS.gaie, values: {} })).toEqual({
      name: 'gaie-a',
      namespace: 'ns',
      chart: 'oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool',
      version: 'v1.2.0',
      values: {},
    });
  });
});

describe('postRenderTransform', () => {
  const patch: PostRenderPatch = { kind: 'service-account-pull-secret', serviceAccount: 'gaie-a-epp', imagePullSecrets: [{ name: 'harbor-creds' }] };
  const transform = postRenderTransform([patch]);
  const sa = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'gaie-a-epp', namespace: 'ns' } };

  it('patches the targeted object and keeps its options', async () => {
    const opts = { protect: true };
    expect(await transform({ custom: true, type: 'kubernetes:core/v1:ServiceAccount', name: 'x', props: sa, opts })).toEqual({
      props: { ...sa, imagePullSecrets: [{ name: 'harbor-creds' }] },
      opts: { ...opts, deleteBeforeReplace: true },
    });
    expect(sa).not.toHaveProperty('imagePullSecrets');
  });

  it('leaves other objects as they are (only replaced delete-first) and components alone', async () => {
    const other = { ...sa, metadata: { name: 'other', namespace: 'ns' } };
    // A chart's objects have fixed names: a replacement created before the old one is deleted fails
    // (server-side apply: field conflict), which the engine planned for them; so every one is delete-first.
    expect(await transform({ custom: true, type: 'kubernetes:core/v1:ServiceAccount', name: 'x', props: other, opts: { protect: false } })).toEqual({ props: other, opts: { protect: false, deleteBeforeReplace: true } });
    expect(await transform({ custom: false, type: 'kubernetes:helm.sh/v4:Chart', name: 'c', props: { chart: 'x' }, opts: {} })).toBeUndefined();
  });

  it('is not affected by later changes to the patches it was built from', async () => {
    const patches: PostRenderPatch[] = [{ ...patch, imagePullSecrets: [{ name: 'harbor-creds' }] }];
    const t = postRenderTransform(patches);
    (patches[0] as unknown as { imagePullSecrets: { name: string }[] }).imagePullSecrets.push({ name: 'late' });
    expect(await t({ custom: true, type: 't', name: 'x', props: sa, opts: {} })).toMatchObject({ props: { imagePullSecrets: [{ name: 'harbor-creds' }] } });
  });
});
