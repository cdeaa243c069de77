import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import { loadStackFile, planDeployment, type LlmdRouterModelPlan } from '@app-serving/core';
import { describe, expect, it } from 'vitest';
import { APP_DIR, MODELS_DIR, allStrings, examplePlan, record, valueOf } from '../test/harness.ts';
import { kubernetesProblems } from '../test/k8s-schemas.ts';
import { LlmdModel } from './llmd-model.ts';
import { LlmdRouterModel } from './llmd-router-model.ts';
import { redactSecrets } from './mock-runtime.ts';

const TOKEN = 'harbor-robot-t0ken';
const harbor = { harborHostname: 'harbor.example.com', harborUser: 'robot$k8s-puller', harborToken: pulumi.secret(TOKEN) };
const routerModel = (name: string, plan = examplePlan('current')) => plan.models.find((m) => m.name === name) as LlmdRouterModelPlan;

describe('LlmdRouterModel (the 2026-08 set)', () => {
  it('on-prem generative model: every child, its names and its order', async () => {
    const plan = routerModel('Qwen3-0.6B-rke2');
    let m!: LlmdRouterModel;
    const rec = await record(() => {
      m = new LlmdRouterModel('q', { plan, ...harbor });
    });
    expect(rec.summary()).toEqual([
      'app-serving:llmd:LlmdModel q',
      'app-serving:llmd:ModelServer q-model-server',
      'app-serving:llmd:Router q-router',
      'app-serving:llmd:RouterGateway q-infra',
      'app-serving:model:ModelNamespace q-namespace',
      'app-serving:storage:ModelStorage q-storage',
      'kubernetes:apps/v1:Deployment q-model-server-deployment',
      'kubernetes:batch/v1:Job q-storage-pull-job',
      'kubernetes:core/v1:ConfigMap q-infra-gateway-parameters',
      'kubernetes:core/v1:Namespace q-namespace-namespace',
      'kubernetes:core/v1:PersistentVolume q-storage-pv',
      'kubernetes:core/v1:PersistentVolumeClaim q-storage-pvc',
      'kubernetes:core/v1:Secret q-namespace-pull-secret',
      'kubernetes:core/v1:Service q-infra-gateway-alias',
      'kubernetes:gateway.networking.k8s.io/v1:Gateway q-infra-gateway',
      'kubernetes:helm.sh/v4:Chart q-router-chart',
    ]);
    const ns = ['q-namespace-namespace', 'q-namespace-pull-secret'];
    // The model server starts on a filled volume; the alias points at the gateway once the model serves.
    expect(rec.dependencies('q-model-server-deployment')).toEqual([...ns, 'q-storage-pull-job', 'q-storage-pv', 'q-storage-pvc'].sort());
    expect(rec.dependencies('q-router-chart')).toEqual(ns);
    expect(rec.dependencies('q-infra-gateway-alias')).toEqual(expect.arrayContaining(['q-model-server-deployment', 'q-router-chart', 'q-infra-gateway']));
    expect(rec.get('q-router-chart').inputs.name).toBe('router-qwen3-06b-rke2');
    expect(rec.get('q-router-chart').inputs.namespace).toBe('llm-d-qwen3-06b-rke2');
    for (const r of rec.kubernetesObjects()) expect(kubernetesProblems(rec.revealed(r.name)), r.name).toEqual([]);
    expect(rec.revealed('q-infra-gateway-alias').spec).toMatchObject({ type: 'ExternalName', externalName: 'router-qwen3-06b-rke2-gateway-istio.llm-d-qwen3-06b-rke2.svc.cluster.local' });
    expect(allStrings(rec.resources.map((r) => redactSecrets(r.inputs))).filter((s) => s.includes(TOKEN))).toEqual([]);
    expect(await valueOf(m.gatewayUrl)).toBe('http://router-qwen3-06b-rke2-gateway-istio.llm-d-qwen3-06b-rke2.svc.cluster.local:80');
    expect(await valueOf(m.routeName)).toBe('router-qwen3-06b-rke2');
  });

  it('keeps the URNs a model has on 2026-02 where both sets have the object: the alias under the LlmdInfra type, the embeddings Service, the storage', async () => {
    const old = examplePlan('example').models.find((m) => m.name === 'bge-small-en-v1.5-rke2')!;
    const current = routerModel('bge-small-en-v1.5-rke2');
    const before = await record(() => new LlmdModel('b', { plan: old as never, ...harbor }));
    const after = await record(() => new LlmdRouterModel('b', { plan: current, ...harbor }));
    // Same logical names (the alias's parent, RouterGateway, takes LlmdInfra's type as an alias; the
    // real engine updates the alias in place: apps/app-serving/test/deploy/change.test.ts).
    expect(after.get('b-infra').type).toBe('app-serving:llmd:RouterGateway');
    expect(before.get('b-infra').type).toBe('app-serving:llmd:LlmdInfra');
    for (const name of ['b-embeddings-service', 'b-storage-pvc', 'b-namespace-namespace', 'b-infra-gateway-alias']) {
      expect(after.get(name).name, name).toBe(before.get(name).name);
    }
  });

  it('autoscaled (the cloud example on 2026-08): KEDA\'s objects after the model server, whose replicas pulumi up leaves to KEDA', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'app-serving-router-'));
    const file = join(dir, 'Pulumi.cloud.yaml');
    writeFileSync(file, readFileSync(join(APP_DIR, 'Pulumi.cloud.yaml'), 'utf8').replace('config:\n', 'config:\n  app-serving:upstream: 2026-08\n'));
    const plan = routerModel('Qwen3-0.6B', planDeployment(loadStackFile(file), MODELS_DIR));
    expect(plan.autoscaling).not.toBeNull();
    const rec = await record(() => new LlmdRouterModel('c', { plan }));
    expect(rec.get('c-model-server-deployment').options.ignoreChanges).toEqual(['spec.replicas']);
    expect(rec.get('c-autoscaling').type).toBe('app-serving:autoscaling:ModelAutoscaling');
    expect(rec.dependencies('c-autoscaling')).toEqual(expect.arrayContaining(['c-model-server-deployment']));
    const scaled = rec.resources.find((r) => r.type === 'kubernetes:keda.sh/v1alpha1:ScaledObject')!;
    expect((rec.revealed(scaled.name).spec as any).scaleTargetRef).toMatchObject({ name: 'server-qwen3-06b' });
  });

  it('refuses a plan of the other set, and the other component refuses this one', () => {
    expect(() => new LlmdRouterModel('x', { plan: examplePlan('example').models[0] as never, ...harbor })).toThrow(/LlmdRouterModel deploys models of the 2026-08 set/);
    expect(() => new LlmdModel('y', { plan: routerModel('Qwen3-0.6B-rke2') as never, ...harbor })).toThrow(/LlmdModel deploys models of the 2026-02 set/);
  });
});
