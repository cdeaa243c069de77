import * as pulumi from '@pulumi/pulumi';
import { describe, expect, it } from 'vitest';
import { AppServing } from '../src/app-serving.ts';
import { examplePlan, kservePlan, record } from './harness.ts';
import { kubernetesProblems, llmInferenceServiceConfigSchema, llmInferenceServiceSchema } from './k8s-schemas.ts';

/** Every object every stack creates, against the upstream schemas and our name and label rules. */
describe.each([
  ['example', () => examplePlan('example')],
  ['cloud', () => examplePlan('cloud')],
  ['kind', () => examplePlan('kind')],
  ['kserve', () => kservePlan('kserve')],
  ['kserve-onprem', () => kservePlan('kserve-onprem')],
] as const)('the %s stack', (_, plan) => {
  it('creates only valid Kubernetes objects', async () => {
    const rec = await record(() => new AppServing('app', { plan: plan(), harborToken: pulumi.secret('t'), hfToken: pulumi.secret('h'), homeDir: '/h' }));
    const objects = rec.kubernetesObjects();
    expect(objects.length).toBeGreaterThan(0);
    const checked: string[] = [];
    for (const r of objects) {
      const object = rec.revealed(r.name, r.type);
      if (object.kind === 'LLMInferenceService') llmInferenceServiceSchema.parse(object);
      else if (object.kind === 'LLMInferenceServiceConfig') llmInferenceServiceConfigSchema.parse(object);
      else expect(kubernetesProblems(object), `${r.type} ${r.name}`).toEqual([]);
      checked.push(String(object.kind));
    }
    // Charts are opaque under mocks; everything else was checked.
    expect(checked).toHaveLength(rec.resources.filter((r) => r.custom && r.type.startsWith('kubernetes:')).length);
  });
});

describe('the checks themselves', () => {
  it('catch what the upstream schemas miss: names, labels', () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'Bad_Name', labels: { 'app.kubernetes.io/x': 'a/b' } } };
    expect(kubernetesProblems(ns)).toEqual(['name "Bad_Name" is not a DNS-1123 label', 'metadata.labels: bad value "a/b" for "app.kubernetes.io/x"']);
    expect(kubernetesProblems({ apiVersion: 'v1', kind: 'Service', metadata: { name: `s${'x'.repeat(63)}` }, spec: {} })).toEqual([
      `name "s${'x'.repeat(63)}" is 64 characters; a DNS-1035 label has at most 63`,
    ]);
    expect(kubernetesProblems({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: '80' }] } })[0]).toMatch(/port must be integer/);
  });
  it('reject an LLMInferenceService without a model URI scheme', () => {
    expect(() =>
      llmInferenceServiceSchema.parse({ apiVersion: 'serving.kserve.io/v1alpha1', kind: 'LLMInferenceService', metadata: { name: 'a', namespace: 'b', labels: {} }, spec: { model: { uri: 'Qwen/Qwen3' }, router: {} } }),
    ).toThrow();
  });
});
