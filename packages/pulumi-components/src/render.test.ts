import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStackFile, MAYBE_SECRET_KEYS, planDeployment, SECRET_KEYS, SECRET_MAP_KEYS, type DeploymentPlan } from '@app-serving/core';
import { describe, expect, it } from 'vitest';
import { APP_DIR, examplePlan, kservePlan, manyModelsPlan, MODELS_DIR } from '../test/harness.ts';
import { renderStack, type RenderedStack, type RenderSecretKey } from './render.ts';

const FIELDS = ['dependsOn', 'inputs', 'model', 'name', 'options', 'parent', 'type', 'urn'];

describe('renderStack', () => {
  it('lists every resource of the cloud stack in tree order with parent and dependency URNs', async () => {
    const out = await renderStack(examplePlan('cloud'));
    for (const r of out.resources) expect(Object.keys(r).sort()).toEqual(FIELDS);
    expect(out.resources.map((r) => `${r.type} ${r.name}`)).toEqual([
      'app-serving:index:AppServing app-serving',
      'app-serving:llmd:LlmdModel app-serving-bge-small',
      'app-serving:llmd:EmbeddingService app-serving-bge-small-embeddings',
      'kubernetes:core/v1:Service app-serving-bge-small-embeddings-service',
      'app-serving:llmd:LlmdInfra app-serving-bge-small-infra',
      'kubernetes:helm.sh/v4:Chart app-serving-bge-small-infra-chart',
      'kubernetes:core/v1:Service app-serving-bge-small-infra-gateway-alias',
      'app-serving:llmd:ModelService app-serving-bge-small-model-service',
      'kubernetes:helm.sh/v4:Chart app-serving-bge-small-model-service-chart',
      'app-serving:model:ModelNamespace app-serving-bge-small-namespace',
      'kubernetes:core/v1:Namespace app-serving-bge-small-namespace-namespace',
      'app-serving:llmd:InferencePool app-serving-bge-small-pool',
      'kubernetes:helm.sh/v4:Chart app-serving-bge-small-pool-chart',
      'pulumi:providers:kubernetes app-serving-provider',
      'app-serving:llmd:LlmdModel app-serving-qwen3-06b',
      'app-serving:autoscaling:ModelAutoscaling app-serving-qwen3-06b-autoscaling',
      'kubernetes:core/v1:ConfigMap app-serving-qwen3-06b-autoscaling-dashboard',
      'kubernetes:monitoring.coreos.com/v1:PodMonitor app-serving-qwen3-06b-autoscaling-podmonitor-qwen3-06b-epp',
      'kubernetes:monitoring.coreos.com/v1:PodMonitor app-serving-qwen3-06b-autoscaling-podmonitor-qwen3-06b-model-server',
      'kubernetes:keda.sh/v1alpha1:ScaledObject app-serving-qwen3-06b-autoscaling-scaledobject-ms-qwen3-06b-llm-d-modelservice-decode',
      'app-serving:llmd:LlmdInfra app-serving-qwen3-06b-infra',
      'kubernetes:helm.sh/v4:Chart app-serving-qwen3-06b-infra-chart',
      'kubernetes:core/v1:Service app-serving-qwen3-06b-infra-gateway-alias',
      'app-serving:llmd:ModelService app-serving-qwen3-06b-model-service',
      'kubernetes:helm.sh/v4:Chart app-serving-qwen3-06b-model-service-chart',
      'app-serving:model:ModelNamespace app-serving-qwen3-06b-namespace',
      'kubernetes:core/v1:Namespace app-serving-qwen3-06b-namespace-namespace',
      'app-serving:llmd:InferencePool app-serving-qwen3-06b-pool',
      'kubernetes:helm.sh/v4:Chart app-serving-qwen3-06b-pool-chart',
      'app-serving:llmd:InferenceRoute app-serving-qwen3-06b-route',
      'kubernetes:gateway.networking.k8s.io/v1:HTTPRoute app-serving-qwen3-06b-route-httproute',
    ]);
    const byName = new Map(out.resources.map((r) => [r.name, r]));
    const urn = (name: string) => byName.get(name)!.urn;
    expect(urn('app-serving-qwen3-06b-route-httproute')).toBe(
      'urn:pulumi:cloud::app-serving::app-serving:index:AppServing$app-serving:llmd:LlmdModel$app-serving:llmd:InferenceRoute$kubernetes:gateway.networking.k8s.io/v1:HTTPRoute::app-serving-qwen3-06b-route-httproute',
    );
    expect(byName.get('app-serving')!.parent).toBeNull();
    expect(byName.get('app-serving-qwen3-06b-route-httproute')!.parent).toBe(urn('app-serving-qwen3-06b-route'));
    expect(byName.get('app-serving-qwen3-06b-route-httproute')!.dependsOn).toEqual(
      ['app-serving-qwen3-06b-infra-chart', 'app-serving-qwen3-06b-infra-gateway-alias', 'app-serving-qwen3-06b-namespace-namespace', 'app-serving-qwen3-06b-pool-chart'].map(urn).sort(),
    );
    expect(byName.get('app-serving-qwen3-06b-namespace-namespace')!.inputs).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'llm-d-qwen3-06b', labels: { 'app.kubernetes.io/managed-by': 'app-serving', 'app.kubernetes.io/part-of': 'app-serving', 'app-serving.io/model': 'qwen3-06b' } },
    });
  });

  it('prints every secret as "[secret]" and is the same on every call', async () => {
    const plan = examplePlan('example');
    const token = 'robot-token-that-must-not-leak';
    const first = await renderStack(plan, { secrets: { harborToken: token }, homeDir: '/home/ops' });
    const text = JSON.stringify(first);
    expect(text).not.toContain(token);
    expect(text).not.toContain(Buffer.from(`robot$k8s-puller:${token}`).toString('base64'));
    const secrets = first.resources.filter((r) => r.type === 'kubernetes:core/v1:Secret');
    expect(secrets.map((r) => r.inputs.stringData)).toEqual(['[secret]', '[secret]']);
    expect(secrets[0]!.inputs.metadata).toMatchObject({ name: 'harbor-creds' });
    expect(first.resources.find((r) => r.type === 'pulumi:providers:kubernetes')!.inputs).toEqual({ kubeconfig: '/home/ops/.kube/rke2-cluster.yaml', enableConfigMapMutable: 'true' });

    // Callable again in the same process, also concurrently, with identical results.
    const [second, third] = await Promise.all([renderStack(plan, { secrets: { harborToken: token }, homeDir: '/home/ops' }), renderStack(plan, { homeDir: '/home/ops' })]);
    expect(second).toEqual(first);
    expect(third).toEqual(first);
  });

  it('names the model of each resource, and its replace options', async () => {
    const out = await renderStack(examplePlan('example'));
    const byName = new Map(out.resources.map((r) => [r.name, r]));
    expect(byName.get('app-serving')!.model).toBeNull();
    expect(byName.get('app-serving-provider')!.model).toBeNull();
    expect(byName.get('app-serving-qwen3-06b-rke2')!.model).toBe('Qwen3-0.6B-rke2');
    expect(byName.get('app-serving-qwen3-06b-rke2-storage-pull-job')!.model).toBe('Qwen3-0.6B-rke2');
    expect(byName.get('app-serving-bge-small-rke2-namespace-namespace')!.model).toBe('bge-small-en-v1.5-rke2');
    expect(byName.get('app-serving-qwen3-06b-rke2-storage-pull-job')!.options).toEqual({ replaceOnChanges: ['spec.template'], deleteBeforeReplace: true, ignoreChanges: [] });
    expect(byName.get('app-serving-qwen3-06b-rke2-storage-pvc')!.options).toEqual({ replaceOnChanges: [], deleteBeforeReplace: false, ignoreChanges: [] });
  });

  it('with secretDigests, tells secret inputs apart without showing them', async () => {
    const plan = examplePlan('example');
    const digests = async (harborToken: string) =>
      (await renderStack(plan, { secrets: { harborToken }, secretDigests: true })).resources.filter((r) => r.type === 'kubernetes:core/v1:Secret').map((r) => r.inputs.stringData as string);
    const [a, b, c] = await Promise.all([digests('token-one'), digests('token-one'), digests('token-two')]);
    expect(a[0]).toMatch(/^\[secret:[0-9a-f]{16}\]$/);
    expect(b).toEqual(a);
    expect(c[0]).not.toBe(a[0]);
    expect(JSON.stringify([a, c])).not.toContain('token-');
  });

  it('renders the KServe stack, placeholders standing in for secrets it was not given', async () => {
    const out = await renderStack(kservePlan('kserve'));
    const types = out.resources.map((r) => r.type);
    expect(types.filter((t) => t.includes('serving.kserve.io')).sort()).toEqual(['kubernetes:serving.kserve.io/v1alpha1:LLMInferenceService', 'kubernetes:serving.kserve.io/v1alpha1:LLMInferenceServiceConfig']);
    expect(out.resources.find((r) => r.name === 'app-serving-tiny-hf-token')!.inputs.stringData).toBe('[secret]');
  });

  it('rejects with the component error, and the next render still works', async () => {
    const plan = examplePlan('kind');
    const [model] = plan.models;
    const broken = { ...plan, models: [{ ...model!, charts: { ...(model as { charts: object }).charts, infra: { chart: 'oci://x.example.com/c', version: '1', repo: 'https://x' } } }] } as unknown as typeof plan;
    await expect(renderStack(broken)).rejects.toMatchObject({ propertyPath: 'chart.repo' });
    expect((await renderStack(plan)).resources).toHaveLength(26);
  });

  it('scales: a 100-model plan renders every model', async () => {
    const plan = manyModelsPlan(100);
    const out: RenderedStack = await renderStack(plan);
    expect(out.resources).toHaveLength(2 + 100 * 12);
    expect(new Set(out.resources.map((r) => r.urn)).size).toBe(out.resources.length);
  }, 30_000);
});

describe('renderStack: a placeholder for every secret key of the schema', () => {
  /** The cloud example stack's text, edited. */
  const cloud = (edit: (text: string) => string): DeploymentPlan => {
    const dir = mkdtempSync(join(tmpdir(), 'app-serving-render-secrets-'));
    const file = join(dir, 'Pulumi.secrets.yaml');
    writeFileSync(file, edit(readFileSync(join(APP_DIR, 'Pulumi.cloud.yaml'), 'utf8')));
    try {
      return planDeployment(loadStackFile(file), MODELS_DIR);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const secure = (key: string) => `  app-serving:${key}:\n    secure: v1:c2VjcmV0LWNpcGhlcnRleHQ=\n`;
  // One stack per secret key that needs it: a key added to core's lists fails the type check here until it has one.
  const NEEDS: Record<RenderSecretKey | (typeof SECRET_MAP_KEYS)[number], () => DeploymentPlan> = {
    harborToken: () => examplePlan('example'),
    hfToken: () => kservePlan('kserve'),
    prometheusCredentials: () => cloud((t) => t.replace('    address: http://prometheus-operated.monitoring.svc:9090\n', '    address: http://prometheus-operated.monitoring.svc:9090\n    auth: bearer\n') + secure('prometheusCredentials')),
    kubeconfig: () => cloud((t) => t + secure('kubeconfig')),
    apiKeys: () => cloud((t) => t.replace('          open: true       # anyone who reaches', '          apiKeys: [ci]    # anyone who reaches') + '  app-serving:apiKeys:\n    ci:\n      secure: v1:c2VjcmV0LWNpcGhlcnRleHQ=\n'),
  };

  it('covers every key of SECRET_KEYS, MAYBE_SECRET_KEYS and SECRET_MAP_KEYS', () => {
    expect(Object.keys(NEEDS).sort()).toEqual([...SECRET_KEYS, ...MAYBE_SECRET_KEYS, ...SECRET_MAP_KEYS].sort());
  });

  for (const [key, plan] of Object.entries(NEEDS)) {
    it(`renders a stack that needs ${key}, the secret as "[secret]"`, async () => {
      const out = await renderStack(plan(), { homeDir: '/home/ops' });
      const text = JSON.stringify(out);
      expect(text).toContain('"[secret]"');
      expect(text).not.toContain('app-serving-render-placeholder');
    });
  }

  it('an authenticated Prometheus: the credentials Secret and the TriggerAuthentication are rendered (M3: exit 70 before)', async () => {
    const out = await renderStack(NEEDS.prometheusCredentials());
    expect(out.resources.filter((r) => r.type === 'kubernetes:core/v1:Secret' || r.type === 'kubernetes:keda.sh/v1alpha1:TriggerAuthentication').map((r) => r.type).sort()).toEqual([
      'kubernetes:core/v1:Secret',
      'kubernetes:keda.sh/v1alpha1:TriggerAuthentication',
    ]);
    expect(out.resources.find((r) => r.type === 'kubernetes:core/v1:Secret')!.inputs.stringData).toBe('[secret]');
  });
});
