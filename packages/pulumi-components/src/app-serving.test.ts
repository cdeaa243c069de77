import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import { Secret, loadStackConfigFromMap, loadStackFile, planDeployment } from '@app-serving/core';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { APP_DIR, FIXTURES, MODELS_DIR, dependencyDepth, examplePlan, fixtureModelsDir, kservePlan, record, valueOf, type Recording } from '../test/harness.ts';

/** A stack file of this text, in a folder of its own. */
function writeStack(name: string, text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'app-serving-stack-')), name);
  writeFileSync(file, text);
  return file;
}
import { AppServing } from './app-serving.ts';
import type { LlmdGenerativeOutputs, ModelOutputs } from './model-outputs.ts';
import { isSecretValue } from './mock-runtime.ts';

/** Every model's resources (the model component and everything below it). */
function modelResources(rec: Recording, app: string, slugs: readonly string[]) {
  return slugs.map((slug) => {
    const name = `${app}-${slug}`;
    return { slug, resources: [rec.get(name), ...rec.descendants(name)] };
  });
}

/** Asserts that no model depends on another model's resources; returns the per-model counts. */
function assertIndependent(rec: Recording, app: string, slugs: readonly string[]): Record<string, number> {
  const models = modelResources(rec, app, slugs);
  const owner = new Map<string, string>();
  for (const m of models) for (const r of m.resources) owner.set(r.urn, m.slug);
  for (const m of models) {
    for (const r of m.resources) {
      for (const dep of r.dependencies) {
        const other = owner.get(dep);
        if (other !== undefined) expect(other, `${r.name} depends on ${dep}`).toBe(m.slug);
      }
    }
  }
  return Object.fromEntries(models.map((m) => [m.slug, m.resources.length]));
}

describe('AppServing', () => {
  it('kind stack: one ambient provider shared by two independent models', async () => {
    const plan = examplePlan('kind');
    let app!: AppServing;
    const rec = await record(() => {
      app = new AppServing('app', { plan });
    });
    expect(rec.children('app')).toEqual(['app-serving:llmd:LlmdModel app-sim', 'app-serving:llmd:LlmdModel app-sim-embed', 'pulumi:providers:kubernetes app-provider']);
    const provider = rec.get('app-provider');
    // No kubeconfig: the ambient one. ConfigMaps update in place (Istio reads the gateway's parameters live).
    expect(provider.inputs).toEqual({ enableConfigMapMutable: 'true' });
    const ref = `${provider.urn}::app-provider-id`;
    for (const model of ['app-sim', 'app-sim-embed']) expect(rec.get(model).providers).toEqual({ kubernetes: ref });
    // Every Kubernetes object and chart goes through the shared provider.
    for (const r of rec.resources.filter((x) => x.type.startsWith('kubernetes:'))) {
      if (r.custom) expect(r.provider, r.name).toBe(ref);
      else expect(r.providers, r.name).toEqual({ kubernetes: ref });
    }
    expect(assertIndependent(rec, 'app', ['sim', 'sim-embed'])).toEqual({ sim: 12, 'sim-embed': 12 });
    expect(rec.resources).toHaveLength(2 + 24);
    const sim = app.models.sim!;
    expect(sim.name).toBe('Sim');
    if (sim.platform !== 'llm-d' || sim.category !== 'generative') throw new Error(`Sim is ${sim.platform}/${sim.category}`);
    expect(await valueOf(sim.gatewayUrl)).toBe('http://infra-sim-inference-gateway-istio.llm-d-sim.svc.cluster.local:80');
    expect(await valueOf(sim.gatewayService)).toBe('infra-sim-inference-gateway-istio');
    expect(await valueOf(sim.routeName)).toBe('llm-d-sim');
    expect(await valueOf(sim.inferencePoolName)).toBe('gaie-sim');
    expect(await valueOf(sim.servedModelName)).toBe(plan.models[0]!.platform === 'llm-d' ? plan.models[0]!.modelServer.servedModelName : '');
    const embed = app.models['sim-embed']!;
    if (embed.platform !== 'llm-d' || embed.category !== 'embedder') throw new Error(`sim-embed is ${embed.platform}/${embed.category}`);
    expect(await valueOf(embed.embeddingsUrl)).toBe('http://ms-sim-embed-embeddings.llm-d-sim-embed.svc.cluster.local:8200');
    expect(await valueOf(embed.embeddingsService)).toBe('ms-sim-embed-embeddings');
  });

  it('example (on-prem) stack: kubeconfig path, Harbor pull secrets, storage', async () => {
    const plan = examplePlan('example');
    const rec = await record(() => new AppServing('app', { plan, harborToken: pulumi.secret('t'), homeDir: '/home/ops' }));
    expect(rec.get('app-provider').inputs).toEqual({ kubeconfig: '/home/ops/.kube/rke2-cluster.yaml', enableConfigMapMutable: 'true' });
    expect(assertIndependent(rec, 'app', ['qwen3-06b-rke2', 'bge-small-rke2'])).toEqual({ 'qwen3-06b-rke2': 17, 'bge-small-rke2': 16 });
    expect(rec.children('app-bge-small-rke2-storage')).toEqual(['kubernetes:batch/v1:Job app-bge-small-rke2-storage-pull-job', 'kubernetes:core/v1:PersistentVolumeClaim app-bge-small-rke2-storage-pvc']);
    // Longest chains: Namespace → pull Secret → PV → PVC → pull Job → modelservice chart (qwen);
    // Namespace → pull Secret → PVC → pull Job → modelservice chart → embeddings Service (bge).
    const depths = modelResources(rec, 'app', ['qwen3-06b-rke2', 'bge-small-rke2']).map((m) => dependencyDepth(m.resources.filter((r) => r.custom || r.remote)));
    expect(depths).toEqual([6, 6]);
  });

  it('cloud stack: no pull secret, no storage', async () => {
    const rec = await record(() => new AppServing('app', { plan: examplePlan('cloud') }));
    // The generative model is autoscaled: its ModelAutoscaling, PodMonitors (vLLM, EPP), ScaledObject and dashboard.
    expect(assertIndependent(rec, 'app', ['qwen3-06b', 'bge-small'])).toEqual({ 'qwen3-06b': 17, 'bge-small': 12 });
    expect(rec.resources.filter((r) => r.type === 'kubernetes:core/v1:Secret')).toEqual([]);
    // Namespace → GAIE chart → modelservice chart (→ the ScaledObject of the autoscaled model; → embeddings Service for the embedder).
    const depths = modelResources(rec, 'app', ['qwen3-06b', 'bge-small']).map((m) => dependencyDepth(m.resources.filter((r) => r.custom || r.remote)));
    expect(depths).toEqual([4, 4]);
  });

  it('kserve stack: the Envoy Gateway once, only KServe services wait for it', async () => {
    const plan = kservePlan('kserve');
    let app!: AppServing;
    const rec = await record(() => {
      app = new AppServing('app', { plan, hfToken: pulumi.secret('hf') });
    });
    expect(rec.children('app')).toEqual([
      'app-serving:kserve:KserveGateway app-kserve-gateway',
      'app-serving:kserve:KserveModel app-tiny',
      'app-serving:llmd:LlmdModel app-sim',
      'pulumi:providers:kubernetes app-provider',
    ]);
    expect(rec.dependencies('app-tiny-service')).toContain('app-kserve-gateway-gateway');
    expect(rec.dependencies('app-tiny-service')).toContain('app-kserve-gateway-gateway-class');
    const gateway = new Set([rec.get('app-kserve-gateway'), ...rec.descendants('app-kserve-gateway')].map((r) => r.urn));
    const onGateway = rec.resources.filter((r) => r.dependencies.some((d) => gateway.has(d))).map((r) => r.name).filter((n) => !n.startsWith('app-kserve-gateway'));
    expect(onGateway).toEqual(['app-tiny-service']);
    expect(assertIndependent(rec, 'app', ['tiny', 'sim'])).toEqual({ tiny: 10, sim: 12 });
    const tiny = app.models.tiny!;
    if (tiny.platform !== 'kserve') throw new Error(`tiny is ${tiny.platform}`);
    expect(await valueOf(tiny.pathPrefix)).toBe('/llm-d-tiny/tiny');
    expect(await valueOf(tiny.gatewayName)).toBe('kserve-ingress-gateway');
    expect(await valueOf(tiny.gatewayNamespace)).toBe('kserve');
    const tinyPlan = plan.models.find((m) => m.slug === 'tiny')!;
    if (tinyPlan.platform !== 'kserve') throw new Error('tiny plan');
    expect(await valueOf(tiny.routeName)).toBe(tinyPlan.route);
    expect(await valueOf(tiny.inferencePoolName)).toBe(tinyPlan.inferencePool);
    expect(await valueOf(tiny.servedModelName)).toBe(tinyPlan.servedModelName);
    expect(app.models.sim!.platform).toBe('llm-d');
  });

  it("the stack's Envoy GatewayClass: once for llm-d models of class envoy and KServe; moving between the two keeps the object", async () => {
    const onEnvoy = (text: string) => text.replace('config:\n', 'config:\n  app-serving:upstream: 2026-08\n  app-serving:router:\n    gatewayClass: envoy\n');
    const kindPlan = planDeployment(loadStackFile(writeStack('Pulumi.kind.yaml', onEnvoy(readFileSync(join(APP_DIR, 'Pulumi.kind.yaml'), 'utf8')))), MODELS_DIR);
    const llmdOnly = await record(() => new AppServing('app', { plan: kindPlan }));
    // No KServe Gateway: the stack makes the class itself, with its provider; the model's Gateway waits for it.
    expect(llmdOnly.children('app')).toContain('kubernetes:gateway.networking.k8s.io/v1:GatewayClass app-envoy-gateway-class');
    const stackClass = llmdOnly.get('app-envoy-gateway-class');
    expect(llmdOnly.revealed('app-envoy-gateway-class')).toMatchObject({ metadata: { name: 'envoy' }, spec: { controllerName: 'gateway.envoyproxy.io/gatewayclass-controller' } });
    expect(stackClass.provider).toMatch(/app-provider/);
    expect(llmdOnly.dependencies('app-sim-infra-gateway')).toContain('app-envoy-gateway-class');

    const mixedPlan = planDeployment(loadStackFile(writeStack('Pulumi.kserve.yaml', onEnvoy(readFileSync(join(FIXTURES, 'Pulumi.kserve.yaml'), 'utf8')))), fixtureModelsDir());
    const mixed = await record(() => new AppServing('app', { plan: mixedPlan, hfToken: pulumi.secret('hf') }));
    // With a KServe Gateway, its class is the one: none of the stack's own, and the llm-d Gateway waits for KServe's.
    expect(mixed.children('app')).not.toContain('kubernetes:gateway.networking.k8s.io/v1:GatewayClass app-envoy-gateway-class');
    expect(mixed.dependencies('app-sim-infra-gateway')).toContain('app-kserve-gateway-gateway-class');
    const kserveClass = mixed.get('app-kserve-gateway-gateway-class');
    // Each takes the other's URN as an alias: adding or removing the last KServe model moves the class,
    // never replaces it. (The engine's URNs name every parent type; the mock's record only the last.)
    const classType = 'kubernetes:gateway.networking.k8s.io/v1:GatewayClass';
    expect(stackClass.options.aliases).toEqual([`urn:pulumi:test::proj::app-serving:index:AppServing$app-serving:kserve:KserveGateway$${classType}::app-kserve-gateway-gateway-class`]);
    expect(kserveClass.options.aliases).toEqual([`urn:pulumi:test::proj::app-serving:index:AppServing$${classType}::app-envoy-gateway-class`]);
    expect(kserveClass.name).toBe('app-kserve-gateway-gateway-class');

    // A class the cluster has (kserve.gateway.create: false): nothing to create, nothing to wait for.
    const givenPlan = planDeployment(
      loadStackFile(writeStack('Pulumi.kind.yaml', onEnvoy(readFileSync(join(APP_DIR, 'Pulumi.kind.yaml'), 'utf8')).replace('config:\n', 'config:\n  app-serving:kserve:\n    gateway:\n      className: eg\n      create: false\n'))),
      MODELS_DIR,
    );
    const given = await record(() => new AppServing('app', { plan: givenPlan }));
    expect(given.resources.some((r) => r.type.endsWith(':GatewayClass'))).toBe(false);
    expect(given.revealed('app-sim-infra-gateway')).toMatchObject({ spec: { gatewayClassName: 'eg' } });
  });

  it('kserve stack with the cluster’s own Gateway: none created', async () => {
    const rec = await record(() => new AppServing('app', { plan: kservePlan('kserve-onprem'), harborToken: 'x', homeDir: '/h' }));
    expect(rec.children('app')).toEqual(['app-serving:kserve:KserveModel app-tiny-embed', 'pulumi:providers:kubernetes app-provider']);
  });

  it('a kubeconfig held as a secret reaches the provider as a secret', async () => {
    const config = loadStackConfigFromMap(
      { 'app-serving:cloudProvider': 'cloud', 'app-serving:kubeconfig': Secret.plain('apiVersion: v1'), 'app-serving:models': JSON.stringify({ generative: [{ name: 'Sim' }] }) },
      { stackName: 'dev' },
    );
    const plan = planDeployment(config, MODELS_DIR);
    expect(plan.kubeconfig).toEqual({ secret: true });
    const rec = await record(() => new AppServing('app', { plan, kubeconfig: 'apiVersion: v1\nkind: Config' }));
    expect(isSecretValue(rec.get('app-provider').inputs.kubeconfig)).toBe(true);
    await expect(record(() => new AppServing('app', { plan }))).rejects.toMatchObject({ propertyPath: 'kubeconfig' });
  });

  describe("the caller's Kubernetes provider wins", () => {
    /** Every Kubernetes object and chart of the recording goes through `ref`; no provider was built. */
    function assertAllThrough(rec: Recording, ref: string) {
      const kube = rec.resources.filter((x) => x.type.startsWith('kubernetes:'));
      expect(kube.length).toBeGreaterThan(10);
      for (const r of kube) {
        if (r.custom) expect(r.provider, r.name).toBe(ref);
        else expect(r.providers, r.name).toEqual({ kubernetes: ref });
      }
      expect(rec.resources.filter((r) => r.type === 'pulumi:providers:kubernetes').map((r) => r.name)).toEqual(['mine']);
    }
    const cases: [string, (p: k8s.Provider) => pulumi.ComponentResourceOptions][] = [
      ['provider', (p) => ({ provider: p })],
      ['providers (array)', (p) => ({ providers: [p] })],
      ['providers (map)', (p) => ({ providers: { kubernetes: p } })],
    ];
    for (const [how, options] of cases) {
      it(`given as ${how}`, async () => {
        // On-prem: the plan names a kubeconfig path and Harbor; KServe + llm-d models, the Envoy Gateway.
        let app!: AppServing;
        let mine!: k8s.Provider;
        const rec = await record(() => {
          mine = new k8s.Provider('mine', { kubeconfig: 'from-the-caller' });
          app = new AppServing('app', { plan: kservePlan('kserve'), hfToken: 'hf' }, options(mine));
        });
        expect(app.provider).toBe(mine);
        expect(app.callerProvider).toBe(true);
        assertAllThrough(rec, `${rec.get('mine').urn}::mine-id`);
        expect(rec.children('app')).not.toContain('pulumi:providers:kubernetes app-provider');
      });
    }

    it('inherited from a parent component, and the secret kubeconfig is then not needed', async () => {
      const config = loadStackConfigFromMap(
        { 'app-serving:cloudProvider': 'cloud', 'app-serving:kubeconfig': Secret.plain('apiVersion: v1'), 'app-serving:models': JSON.stringify({ generative: [{ name: 'Sim' }], embedder: [{ name: 'SimEmbeddings' }] }) },
        { stackName: 'dev' },
      );
      const plan = planDeployment(config, MODELS_DIR);
      const rec = await record(() => {
        const mine = new k8s.Provider('mine', {});
        const platform = new pulumi.ComponentResource('team:index:Platform', 'platform', {}, { providers: [mine] });
        new AppServing('app', { plan }, { parent: platform });
      });
      assertAllThrough(rec, `${rec.get('mine').urn}::mine-id`);
    });
  });

  it('model outputs are discriminated by platform and category, and wait for the model to be ready to serve', async () => {
    const plan = examplePlan('kind');
    let app!: AppServing;
    const rec = await record(() => {
      app = new AppServing('app', { plan });
      const sim = app.models.sim as LlmdGenerativeOutputs;
      // A consumer's resource that uses the URL waits for the model to be ready to serve.
      new k8s.core.v1.ConfigMap('client', { data: { url: sim.gatewayUrl, model: sim.servedModelName } });
    });
    expect(rec.revealed('client').data).toEqual({ url: 'http://infra-sim-inference-gateway-istio.llm-d-sim.svc.cluster.local:80', model: 'random' });
    expect(rec.dependencies('client')).toEqual(['app-sim-infra-chart', 'app-sim-model-service-chart', 'app-sim-pool-chart', 'app-sim-route-httproute']);
    const m = app.models.sim!;
    // Types: no Output<string | undefined> for an llm-d gateway URL, a route or an embeddings URL.
    expectTypeOf(m).toEqualTypeOf<ModelOutputs>();
    if (m.platform === 'llm-d') {
      expectTypeOf(m.gatewayUrl).toEqualTypeOf<pulumi.Output<string>>();
      if (m.category === 'generative') expectTypeOf(m.routeName).toEqualTypeOf<pulumi.Output<string>>();
      else expectTypeOf(m.embeddingsUrl).toEqualTypeOf<pulumi.Output<string>>();
    } else {
      expectTypeOf(m.pathPrefix).toEqualTypeOf<pulumi.Output<string>>();
      expectTypeOf(m).not.toHaveProperty('gatewayUrl');
    }
  });

  describe('fromConfig: a whole stack from the program’s config, under any project name', () => {
    const models = JSON.stringify({ generative: [{ name: 'Sim' }] });
    it("reads the project's own keys (<project>:models) and passes secrets on as secrets", async () => {
      let app!: AppServing;
      const rec = await record(() => {
        pulumi.runtime.setAllConfig({ 'proj:cloudProvider': 'cloud', 'proj:models': models, 'proj:kubeconfig': 'apiVersion: v1' }, ['proj:kubeconfig']);
        app = AppServing.fromConfig('platform', { modelsDir: MODELS_DIR });
      });
      expect(Object.keys(app.models)).toEqual(['sim']);
      expect(app.plan.stack).toBe('test');
      expect(isSecretValue(rec.get('platform-provider').inputs.kubeconfig)).toBe(true);
    });

    it('says when the keys sit under another namespace', async () => {
      const error = await record(() => AppServing.fromConfig('platform', { modelsDir: MODELS_DIR, config: { 'app-serving:cloudProvider': 'cloud', 'app-serving:models': models } })).catch(
        (e: unknown) => e,
      );
      expect(pulumi.RunError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain(
        'app-serving:models: sits under the namespace "app-serving", but this program reads "proj:*" keys (its project\'s): set it as "proj:models" (pulumi config set proj:models …), or read the config with namespace "app-serving"',
      );
      // The namespace can be named.
      const rec = await record(() => AppServing.fromConfig('platform', { modelsDir: MODELS_DIR, namespace: 'app-serving', config: { 'app-serving:cloudProvider': 'cloud', 'app-serving:models': models } }));
      expect(rec.children('platform')).toContain('app-serving:llmd:LlmdModel platform-sim');
    });
  });

  it('requires the secrets the plan needs', async () => {
    await expect(record(() => new AppServing('app', { plan: examplePlan('example') }))).rejects.toMatchObject({ propertyPath: 'harborToken' });
    await expect(record(() => new AppServing('app', { plan: kservePlan('kserve') }))).rejects.toMatchObject({ propertyPath: 'hfToken' });
  });
});
