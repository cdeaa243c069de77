import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
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

describe('LlmdRouterModel behind Envoy Gateway (router.gatewayClass: envoy)', () => {
  /** An example stack on class envoy, its first model's access replaced by `access` when given. */
  const planWith = (stack: string, extra: string, access?: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'app-serving-router-envoy-'));
    const file = join(dir, `Pulumi.${stack}.yaml`);
    let text = readFileSync(join(APP_DIR, `Pulumi.${stack}.yaml`), 'utf8').replace('config:\n', `config:\n  app-serving:upstream: 2026-08\n  app-serving:router:\n    gatewayClass: envoy\n${extra}`);
    if (access !== undefined) {
      const replaced = text.replace(/        access:\n          open: true[^\n]*\n/, access);
      if (replaced === text) throw new Error(`Pulumi.${stack}.yaml changed: no open access to replace`);
      text = replaced;
    }
    writeFileSync(file, text);
    return planDeployment(loadStackFile(file, undefined, { checkRules: false }), MODELS_DIR);
  };
  const KEY = 'team-key-Vq7Lr2Xc9Mz4Bt6Kw1Hn8Pd3';

  it("EG's route, the policies before the HTTPRoute, access on the route, the rate limit in the route's one BackendTrafficPolicy", async () => {
    const plan = planWith(
      'example',
      '  app-serving:apiKeys:\n    team:\n      secure: v1:AAAA:BBBB\n',
      '        access:\n          apiKeys: [team]\n          rateLimit:\n            requestsPerMinute: 60\n',
    );
    const model = routerModel('Qwen3-0.6B-rke2', plan);
    expect(model.access).toMatchObject({ mode: 'apiKeys', apiKeys: ['team'], requestsPerMinute: 60 });
    const rec = await record(() => new LlmdRouterModel('q', { plan: model, ...harbor, apiKeys: { team: pulumi.secret(KEY) } }));
    expect(rec.children('q')).toEqual([
      'app-serving:access:ModelAccess q-access',
      'app-serving:llmd:EnvoyRoute q-route',
      'app-serving:llmd:ModelServer q-model-server',
      'app-serving:llmd:Router q-router',
      'app-serving:llmd:RouterGateway q-infra',
      'app-serving:model:ModelNamespace q-namespace',
      'app-serving:storage:ModelStorage q-storage',
    ]);
    expect(rec.children('q-route')).toEqual([
      'kubernetes:core/v1:Service q-route-service',
      'kubernetes:gateway.envoyproxy.io/v1alpha1:BackendTrafficPolicy q-route-backend-traffic',
      'kubernetes:gateway.envoyproxy.io/v1alpha1:EnvoyExtensionPolicy q-route-extension-policy',
      'kubernetes:gateway.networking.k8s.io/v1:HTTPRoute q-route-http-route',
    ]);
    // Access makes the SecurityPolicy and the keys' Secret; no BackendTrafficPolicy of its own (EG takes one per route).
    expect(rec.children('q-access')).toEqual(['kubernetes:core/v1:Secret q-access-api-keys', 'kubernetes:gateway.envoyproxy.io/v1alpha1:SecurityPolicy q-access-security-policy']);
    expect(rec.revealed('q-access-security-policy').spec).toMatchObject({ targetRefs: [{ kind: 'HTTPRoute', name: 'router-qwen3-06b-rke2-route' }], basicAuth: { users: { name: 'router-qwen3-06b-rke2-route-api-keys' } } });
    expect(rec.get('q-access-api-keys').inputs.stringData).toMatchObject({ value: expect.anything() });
    expect(allStrings(rec.resources.map((r) => redactSecrets(r.inputs))).filter((s) => s.includes(KEY))).toEqual([]);
    // The route's objects are core's, exactly.
    const route = model.manifests.envoyRoute!;
    expect(rec.revealed('q-route-backend-traffic')).toMatchObject({ metadata: route.backendTrafficPolicy.metadata, spec: { ...(route.backendTrafficPolicy.spec as object), rateLimit: expect.anything() } });
    expect(rec.revealed('q-route-extension-policy')).toMatchObject({ apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'EnvoyExtensionPolicy', spec: route.extensionPolicy.spec });
    expect(rec.revealed('q-route-http-route')).toMatchObject({ kind: 'HTTPRoute', spec: route.httpRoute.spec });
    expect(rec.revealed('q-route-service')).toMatchObject({ metadata: { name: 'router-qwen3-06b-rke2-pool' }, spec: route.service.spec });
    // Order: the policies and the Service before the route; the route after the model serves, the EPP is up and access is in place.
    const ns = ['q-namespace-namespace', 'q-namespace-pull-secret'];
    const before = [...ns, 'q-access-api-keys', 'q-access-security-policy', 'q-model-server-deployment', 'q-router-chart'];
    expect(rec.dependencies('q-route-service')).toEqual(expect.arrayContaining(before));
    expect(rec.dependencies('q-route-http-route')).toEqual(expect.arrayContaining([...before, 'q-route-service', 'q-route-extension-policy', 'q-route-backend-traffic']));
    expect(rec.dependencies('q-infra-gateway-alias')).toEqual(expect.arrayContaining(['q-route-http-route']));
    // The proxy pods are placed by an EnvoyProxy the Gateway names.
    expect(rec.get('q-infra-gateway-parameters').type).toBe('kubernetes:gateway.envoyproxy.io/v1alpha1:EnvoyProxy');
    expect(rec.dependencies('q-infra-gateway')).toEqual(expect.arrayContaining(['q-infra-gateway-parameters']));
    for (const r of rec.kubernetesObjects()) expect(kubernetesProblems(rec.revealed(r.name)), r.name).toEqual([]);
    // The alias points at Envoy Gateway's Service, in its namespace.
    expect(rec.revealed('q-infra-gateway-alias').spec).toMatchObject({ type: 'ExternalName', externalName: expect.stringMatching(/^envoy-llm-d-qwen3-06b-rke2-router-qwen3-06b-rke2-gatew-[0-9a-f]{8}\.envoy-gateway-system\.svc\.cluster\.local$/) });
  });

  it('an open model with a rate limit: no access component, the limit in the route\'s policy; the Gateway waits for the class it is given', async () => {
    const model = routerModel('Sim', planWith('kind', '', '        access:\n          open: true\n          rateLimit:\n            requestsPerMinute: 100\n'));
    expect((model.manifests.envoyRoute!.backendTrafficPolicy.spec as any).rateLimit).toEqual({ type: 'Local', local: { rules: [{ limit: { requests: 100, unit: 'Minute' } }] } });
    const rec = await record(() => {
      const gatewayClass = new k8s.apiextensions.CustomResource('stack-class', { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', spec: {} });
      return new LlmdRouterModel('s', { plan: model, envoyGatewayClass: gatewayClass });
    });
    expect(rec.children('s').some((c) => c.includes('ModelAccess'))).toBe(false);
    expect(rec.dependencies('s-infra-gateway')).toContain('stack-class');
    // The kind stack places nothing: no EnvoyProxy.
    expect(rec.resources.some((r) => r.name === 's-infra-gateway-parameters')).toBe(false);
  });
});
