import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import { describe, expect, it } from 'vitest';
import { kserveModel, llmdModel, record, valueOf } from '../test/harness.ts';
import { KserveModel } from './kserve-model.ts';
import { LlmdModel } from './llmd-model.ts';

const harbor = { harborHostname: 'harbor.example.com', harborUser: 'robot$x', harborToken: pulumi.secret('t') };

describe('existing namespaces (createNamespace: false)', () => {
  it('an llm-d model deploys into a namespace it neither creates nor deletes', async () => {
    const plan = llmdModel('kind', 'Sim');
    let m!: LlmdModel;
    const rec = await record(() => {
      m = new LlmdModel('m', { plan, createNamespace: false });
    });
    expect(rec.resources.filter((r) => r.type === 'kubernetes:core/v1:Namespace')).toEqual([]);
    expect(rec.children('m-namespace')).toEqual([]);
    expect(m.modelNamespace.namespace).toBeUndefined();
    expect(await valueOf(m.namespace)).toBe('llm-d-sim');
    // Everything still goes into the plan's namespace.
    for (const r of rec.kubernetesObjects()) expect((rec.revealed(r.name).metadata as { namespace?: string }).namespace, r.name).toBe('llm-d-sim');
    for (const r of rec.resources.filter((x) => x.type === 'kubernetes:helm.sh/v4:Chart')) expect(r.inputs.namespace, r.name).toBe('llm-d-sim');
  });

  it('a KServe model too; its pull Secret still goes into the namespace', async () => {
    const plan = kserveModel('kserve-onprem', 'TinyKserveEmbed');
    const rec = await record(() => new KserveModel('k', { plan, ...harbor, createNamespace: false }));
    expect(rec.resources.filter((r) => r.type === 'kubernetes:core/v1:Namespace')).toEqual([]);
    expect(rec.revealed('k-namespace-pull-secret').metadata).toMatchObject({ name: 'harbor-creds', namespace: plan.namespace });
    expect(rec.dependencies('k-namespace-pull-secret')).toEqual([]);
  });

  it('two components claiming one namespace they create: an error naming both and the fix', async () => {
    const plan = llmdModel('kind', 'Sim');
    await expect(
      record(() => {
        new LlmdModel('a', { plan });
        new LlmdModel('b', { plan: { ...plan, slug: 'sim-b' } });
      }),
    ).rejects.toThrow(
      'b: namespace "llm-d-sim" is already used by a, and a creates it: destroying a would delete the other\'s namespace. Give every model its own namespace, or create the shared namespace yourself and give each component createNamespace: false',
    );
  });

  it('one creating and one only using it is an error too: destroying the creator would delete the namespace the other uses', async () => {
    const plan = llmdModel('kind', 'Sim');
    await expect(
      record(() => {
        new LlmdModel('a', { plan, createNamespace: false });
        new LlmdModel('b', { plan: { ...plan, slug: 'sim-b' } });
      }),
    ).rejects.toThrow('b: namespace "llm-d-sim" is already used by a, and b creates it');
  });

  it('components that only use an existing namespace may share it, unless both create the same Secret in it', async () => {
    const plan = llmdModel('kind', 'Sim');
    const rec = await record(() => {
      new k8s.core.v1.Namespace('shared', { metadata: { name: 'llm-d-sim' } });
      new LlmdModel('a', { plan, createNamespace: false });
      new LlmdModel('b', { plan: { ...plan, slug: 'sim-b' }, createNamespace: false });
    });
    expect(rec.resources.filter((r) => r.type === 'kubernetes:core/v1:Namespace').map((r) => r.name)).toEqual(['shared']);

    const onPrem = llmdModel('example', 'Qwen3-0.6B-rke2');
    await expect(
      record(() => {
        new LlmdModel('a', { plan: onPrem, ...harbor, createNamespace: false });
        new LlmdModel('b', { plan: { ...onPrem, slug: 'other' }, ...harbor, createNamespace: false });
      }),
    ).rejects.toThrow(`b: namespace "${onPrem.namespace}" is already used by a, which creates the Secret "harbor-creds" there too; give each model its own namespace`);
  });

  it('one namespace name on two clusters (two providers) is no conflict', async () => {
    const plan = llmdModel('kind', 'Sim');
    const rec = await record(() => {
      const east = new k8s.Provider('east', {});
      const west = new k8s.Provider('west', {});
      new LlmdModel('a', { plan }, { provider: east });
      new LlmdModel('b', { plan }, { provider: west });
    });
    expect(rec.resources.filter((r) => r.type === 'kubernetes:core/v1:Namespace').map((r) => r.name).sort()).toEqual(['a-namespace-namespace', 'b-namespace-namespace']);
  });
});
