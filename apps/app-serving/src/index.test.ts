import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import { recordUnderMocks, redactSecrets, type RecordedResource } from '@app-serving/pulumi-components/testing';
import { describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';

/**
 * The program itself (src/index.ts) under Pulumi's mocks, fed each example stack file the way
 * the Pulumi CLI hands config over: `app-serving:<key>` → string, structured values as JSON,
 * secrets decrypted (here: test values) and listed as secret keys.
 */
const APP = join(import.meta.dirname, '..');
const SECRETS: Record<string, string> = { 'app-serving:harborToken': 'harbor-robot-token-for-tests', 'app-serving:hfToken': 'hf-token-for-tests' };

function configOf(file: string): { config: Record<string, string>; secretKeys: string[] } {
  const doc = parse(readFileSync(join(APP, file), 'utf8')) as { config: Record<string, unknown> };
  const config: Record<string, string> = {};
  const secretKeys: string[] = [];
  for (const [key, value] of Object.entries(doc.config)) {
    if (typeof value === 'object' && value !== null && 'secure' in value) {
      config[key] = SECRETS[key] ?? 'secret-for-tests';
      secretKeys.push(key);
    } else config[key] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return { config, secretKeys };
}

interface Run {
  resources: RecordedResource[];
  models: Record<string, Record<string, pulumi.Output<unknown> | string>>;
}

/** Imports a fresh copy of the program with `stack`'s config under mocks. */
async function runProgram(stack: string, config = configOf(`Pulumi.${stack}.yaml`)): Promise<Run> {
  let exported: { models: Run['models'] } | undefined;
  const resources = await recordUnderMocks(
    async () => {
      pulumi.runtime.setAllConfig(config.config, config.secretKeys);
      vi.resetModules();
      exported = (await import('./index.ts')) as unknown as { models: Run['models'] };
    },
    { project: 'app-serving', stack },
  );
  return { resources, models: exported!.models };
}

const valueOf = <T>(o: pulumi.Input<T>) => new Promise<T>((resolve) => pulumi.output(o).apply((v) => resolve(v as T)));

/** Resources per model: the model component `app-serving-<slug>` and everything below it. */
function perModel(resources: readonly RecordedResource[]): Record<string, number> {
  const models = resources.filter((r) => r.type === 'app-serving:llmd:LlmdModel' || r.type === 'app-serving:kserve:KserveModel');
  const count = (urn: string): number => 1 + resources.filter((r) => r.parent === urn).reduce((n, r) => n + count(r.urn), 0);
  return Object.fromEntries(models.map((m) => [m.name.replace(/^app-serving-/, ''), count(m.urn)]));
}

describe('the README', () => {
  it('lists every output of every kind of model (llm-d generative and embedder, KServe), and nothing else', async () => {
    const keys = new Set<string>();
    for (const stack of ['cloud', 'kserve']) for (const model of Object.values((await runProgram(stack)).models)) for (const key of Object.keys(model)) keys.add(key);
    const readme = readFileSync(join(APP, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Outputs'), readme.indexOf('\n## ', readme.indexOf('## Outputs') + 1));
    // The bullet list, without its remarks in parentheses.
    const bullets = section.split('\n- ').slice(1).join(' ').split('\n\n')[0]!.replace(/\([^)]*\)/g, '');
    const listed = new Set([...bullets.matchAll(/`(\w+)`/g)].map((m) => m[1]!));
    expect([...listed].sort()).toEqual([...keys].sort());
  });
});

describe('the app-serving program', () => {
  it('example (on-prem, Harbor): both models, with storage and pull secrets', async () => {
    const run = await runProgram('example');
    expect(perModel(run.resources)).toEqual({ 'qwen3-06b-rke2': 17, 'bge-small-rke2': 16 });
    expect(run.resources).toHaveLength(2 + 17 + 16);
    const provider = run.resources.find((r) => r.type === 'pulumi:providers:kubernetes')!;
    expect(provider.inputs.kubeconfig).toMatch(/\/\.kube\/rke2-cluster\.yaml$/);
    expect(provider.inputs.kubeconfig).not.toMatch(/^~/);
    // The Harbor token reaches the cluster only inside the secret pull Secrets.
    const visible = JSON.stringify(run.resources.map((r) => redactSecrets(r.inputs)));
    expect(visible).not.toContain(SECRETS['app-serving:harborToken']);
    expect(run.resources.filter((r) => r.type === 'kubernetes:core/v1:Secret').map((r) => redactSecrets(r.inputs.stringData))).toEqual(['[secret]', '[secret]']);
    expect(Object.keys(run.models).sort()).toEqual(['bge-small-rke2', 'qwen3-06b-rke2']);
    expect(await valueOf(run.models['qwen3-06b-rke2']!.pvcName!)).toBe('qwen3-06b-rke2-model');
    expect(await valueOf(run.models['bge-small-rke2']!.embeddingsUrl!)).toBe('http://ms-bge-small-rke2-embeddings.llm-d-bge-small-rke2.svc.cluster.local:8200');
  });

  it('cloud: a generative model and an embedder, ambient kubeconfig', async () => {
    const run = await runProgram('cloud');
    // Qwen3-0.6B is autoscaled: ModelAutoscaling, its ScaledObject, two PodMonitors and the dashboard ConfigMap.
    expect(perModel(run.resources)).toEqual({ 'qwen3-06b': 17, 'bge-small': 12 });
    expect(run.resources.find((r) => r.type === 'pulumi:providers:kubernetes')!.inputs).toEqual({ enableConfigMapMutable: 'true' });
    expect(await valueOf(run.models['qwen3-06b']!.gatewayUrl!)).toBe('http://infra-qwen3-06b-inference-gateway-istio.llm-d-qwen3-06b.svc.cluster.local:80');
  });

  it('kind: the simulator models', async () => {
    const run = await runProgram('kind');
    expect(perModel(run.resources)).toEqual({ sim: 12, 'sim-embed': 12 });
    expect(await valueOf(run.models.sim!.namespace!)).toBe('llm-d-sim');
  });

  it('kserve: the Envoy Gateway once, an LLMInferenceService downloading from Hugging Face', async () => {
    const run = await runProgram('kserve');
    expect(perModel(run.resources)).toEqual({ 'qwen25-05b': expect.any(Number) });
    const types = run.resources.map((r) => r.type);
    expect(types.filter((t) => t === 'app-serving:kserve:KserveGateway')).toHaveLength(1);
    const service = run.resources.find((r) => r.type === 'kubernetes:serving.kserve.io/v1alpha1:LLMInferenceService')!;
    expect(service.inputs).toMatchObject({
      metadata: { name: 'qwen25-05b', namespace: 'llm-d-qwen25-05b' },
      spec: { model: { uri: 'pvc://qwen25-05b-model/Qwen/Qwen2.5-0.5B-Instruct', name: 'Qwen/Qwen2.5-0.5B-Instruct' }, baseRefs: [{ name: 'qwen25-05b-config' }] },
    });
    expect(service.dependencies).toEqual(expect.arrayContaining([expect.stringMatching(/KserveGateway/), expect.stringMatching(/model-pull|pull-job/)]));
    const job = run.resources.find((r) => r.type === 'kubernetes:batch/v1:Job')!;
    expect(JSON.stringify(job.inputs)).toContain('kserve/storage-initializer:v0.18.1');
    // The HF token only inside the secret hf-token Secret.
    expect(JSON.stringify(run.resources.map((r) => redactSecrets(r.inputs)))).not.toContain(SECRETS['app-serving:hfToken']);
    expect(await valueOf(run.models['qwen25-05b']!.pathPrefix!)).toBe('/llm-d-qwen25-05b/qwen25-05b');
  });

  it('reports every problem of a broken stack, without a stack trace', async () => {
    const broken = { config: { 'app-serving:cloudProvider': 'on-prem', 'app-serving:models': JSON.stringify({ generative: [{ name: 'Nope' }] }) }, secretKeys: [] };
    const error = await runProgram('broken', broken).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(pulumi.RunError.isInstance(error)).toBe(true);
    const lines = (error as Error).message.split('\n');
    expect(lines).toEqual(expect.arrayContaining([expect.stringMatching(/kubeconfig: is required when cloudProvider is on-prem/), expect.stringMatching(/harborToken: is required/)]));
  });
});
