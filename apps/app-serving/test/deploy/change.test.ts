/**
 * `app-serving diff` against the real engine: the example stack is deployed for real, then for each
 * kind of change `diff` classifies — a values key, an image tag, a new model, a removed model, a
 * renamed namespace, the pull Job's template, a secret — `diff --base HEAD --json` (offline, from
 * git) and the engine's own `pulumi preview --diff` must agree on which resources change and how
 * (create, update, replace, delete). A Helm chart's objects are the chart's: `diff` speaks of the
 * release, the engine of each object it renders.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodes, createTestStack, installCrds, startCluster, type TestCluster, type TestStack } from '@app-serving/test-cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { appServingProgram } from '../../src/program.ts';
import { APP_DIR, MODELS_DIR, appServing, clusterShape, deployedProblems, diffVerdict, engineVerdict, sorted, stackUnderTest, verifyDeployed, type StackUnderTest } from './support.ts';

const STACK = 'Pulumi.example.yaml';
let cluster: TestCluster;
let repo: string;
let base: StackUnderTest;
let stack: TestStack;

const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
const stackDir = () => join(repo, 'apps', 'app-serving');

/** The example stack rewritten into the repository's working tree (`edit` changes its config first). */
function writeStack(edit?: (config: Record<string, unknown>) => void): StackUnderTest {
  return stackUnderTest(join(APP_DIR, STACK), { kubeconfig: cluster.kubeconfigPath, modelsDir: join(repo, 'models'), dir: stackDir(), ...(edit && { edit }) });
}

beforeAll(async () => {
  cluster = await startCluster();
  repo = mkdtempSync(join(tmpdir(), 'app-serving-change-'));
  mkdirSync(stackDir(), { recursive: true });
  cpSync(MODELS_DIR, join(repo, 'models'), { recursive: true });
  base = writeStack();
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  await createNodes(cluster, clusterShape(base.plan, 'change'));
  stack = await createTestStack({ cluster, stackName: base.name, config: base.config, secrets: base.secrets, program: () => appServingProgram(join(repo, 'models')) });
  await stack.up();
}, 900_000);
afterAll(async () => {
  await stack?.destroy().catch(() => undefined);
  await stack?.remove();
  await cluster?.stop();
}, 600_000);

/** Applies a change to the working tree and to the engine's config; compares; restores the base. */
async function compare(change: { stack?: (config: Record<string, unknown>) => void; files?: () => void }): Promise<{ diff: Map<string, string>; engine: Map<string, string>; json: any }> {
  const changed = writeStack(change.stack);
  change.files?.();
  const result = await appServing(['diff', '--base', 'HEAD', '--stack', `apps/app-serving/${STACK}`, '--models-dir', 'models', '--json'], { cwd: repo });
  expect(result.stderr).toBe('');
  const json = JSON.parse(result.stdout);
  await stack.setConfig(changed.config);
  for (const [key, value] of Object.entries(changed.secrets)) await stack.setSecret(key, value);
  try {
    const preview = await stack.preview();
    return { diff: diffVerdict(json.diff ?? json), engine: engineVerdict(preview.steps), json: json.diff ?? json };
  } finally {
    git('checkout', '-q', '--', '.');
    git('clean', '-qfd');
    await stack.setConfig(base.config);
    for (const [key, value] of Object.entries(base.secrets)) await stack.setSecret(key, value);
  }
}

const modelsOf = (config: Record<string, unknown>) => config['app-serving:models'] as { generative: any[]; embedder: any[] };
const MS_VALUES = 'models/generative/Qwen3-0.6B-rke2/ms-qwen3-06b-rke2/values.yaml';
function editValues(file: string, edit: (values: any) => void): void {
  const path = join(repo, file);
  const values = parse(readFileSync(path, 'utf8'));
  edit(values);
  writeFileSync(path, stringify(values));
}

describe('app-serving diff agrees with the engine, change by change', () => {
  it('a values key: the release changes its objects in place', async () => {
    const { diff, engine } = await compare({ files: () => editValues(MS_VALUES, (v) => v.decode.containers[0].env.push({ name: 'VLLM_TEST_FLAG', value: '1' })) });
    expect(sorted(engine)).toEqual(sorted(diff));
    expect(sorted(diff)).toEqual({ 'kubernetes:helm.sh/v4:Chart::app-serving-qwen3-06b-rke2-model-service-chart': 'objects' });
  }, 600_000);

  it('an image tag: the same, and diff names the image', async () => {
    const { diff, engine, json } = await compare({ files: () => editValues(MS_VALUES, (v) => (v.decode.containers[0].image = v.decode.containers[0].image.replace(/:[^:]+$/, ':v0.4.1'))) });
    expect(sorted(engine)).toEqual(sorted(diff));
    expect(json.models[0].images.changed[0]).toMatchObject({ new: expect.stringMatching(/:v0\.4\.1$/) });
  }, 600_000);

  it('a new model: every resource of it is created, nothing else changes', async () => {
    const { diff, engine } = await compare({
      stack: (c) => modelsOf(c).generative.push({ name: 'Sim', enabled: true, nodeSelector: { workload: 'cpu' } }),
    });
    expect(sorted(engine)).toEqual(sorted(diff));
    expect(new Set(diff.values())).toEqual(new Set(['create']));
  }, 600_000);

  it('a removed model: every resource of it is deleted', async () => {
    const { diff, engine } = await compare({ stack: (c) => (modelsOf(c).embedder = []) });
    expect(sorted(engine)).toEqual(sorted(diff));
    expect(new Set(diff.values())).toEqual(new Set(['delete']));
  }, 600_000);

  it('a renamed namespace: the model is re-created in the new one', async () => {
    const { diff, engine } = await compare({ stack: (c) => (modelsOf(c).generative[0].nameSpace = 'llm-d-qwen-renamed') });
    expect(sorted(engine)).toEqual(sorted(diff));
    expect(diff.get('kubernetes:core/v1:Namespace::app-serving-qwen3-06b-rke2-namespace-namespace')).toBe('replace');
  }, 600_000);

  it("the pull Job's template (new weights): the Job is replaced", async () => {
    const { diff, engine } = await compare({ stack: (c) => (modelsOf(c).generative[0].modelSource.harborRef = 'harbor.example.com/ai-models/qwen3-0.6b:2025-06') });
    expect(sorted(engine)).toEqual(sorted(diff));
    expect([...diff.entries()].filter(([k]) => k.startsWith('kubernetes:batch/v1:Job')).map(([, v]) => v)).toEqual(['replace']);
  }, 600_000);

  it('a secret (the Harbor token): each pull Secret is replaced, never shown', async () => {
    const { diff, engine, json } = await compare({ stack: (c) => (c['app-serving:harborToken'] = { secure: 'v1:cm90YXRlZA==:cm90YXRlZCBjaXBoZXJ0ZXh0' }) });
    expect(sorted(engine)).toEqual(sorted(diff));
    expect([...diff.entries()].filter(([k]) => k.startsWith('kubernetes:core/v1:Secret')).map(([, v]) => v)).toEqual(['replace', 'replace']);
    expect(json.stack.secrets).toEqual([{ key: 'harborToken', change: 'changed' }]);
  }, 600_000);
});

/**
 * The way across (docs/upgrading.md): the example stack moved from the 2026-02 set to 2026-08 — what
 * `diff` says against what the engine would do, then the move for real on a cluster whose CRDs were
 * upgraded first, and verify right after.
 */
describe('the example stack moved to the 2026-08 set', () => {
  const toCurrent = (c: Record<string, unknown>) => {
    c['app-serving:upstream'] = '2026-08';
    c['app-serving:router'] = { mode: 'gateway', gatewayClass: 'istio' };
  };

  it('diff and the engine agree: the old releases deleted, the Router, the model server and the Gateway created, the alias updated in place', async () => {
    // The cluster's CRDs first (GAIE v1.6's InferencePool has fields the Router chart renders; the
    // engine's preview is refused without them — preflight says so: core ROUTER_POOL_CRD_FIELDS).
    await installCrds(cluster, '2026-08');
    const { diff, engine } = await compare({ stack: toCurrent });
    expect(sorted(engine)).toEqual(sorted(diff));
    const alias = [...diff.entries()].filter(([k]) => /gateway-alias$/.test(k));
    expect(alias.map(([, v]) => v)).toEqual(['update', 'update']);
    expect([...diff.entries()].filter(([k]) => k.startsWith('kubernetes:apps/v1:Deployment')).map(([, v]) => v)).toEqual(['create', 'create']);
  }, 600_000);

  it('pulumi up moves it: the new set is deployed as planned, nothing of the old is left, verify passes', async () => {
    const moved = writeStack(toCurrent);
    await stack.setConfig(moved.config);
    const up = await stack.up();
    expect(up.result.summary.result).toBe('succeeded');
    expect(await deployedProblems(cluster, moved.plan)).toEqual([]);
    // The 2026-02 releases' workloads are gone: only the new model server and the Router's EPP run.
    for (const model of moved.plan.models) {
      if (model.platform !== 'llm-d') continue;
      const names = (await cluster.request('GET', `/apis/apps/v1/namespaces/${model.namespace}/deployments`)).body.items.map((d: any) => d.metadata.name).sort();
      expect(names).toEqual([model.inferencePool.epp, model.modelServer.decodeDeployment].sort());
    }
    const verify = await verifyDeployed(cluster, moved);
    expect({ failing: verify.failing, stderr: verify.stderr }).toEqual({ failing: [], stderr: '' });
  }, 900_000);

  it("then behind Envoy Gateway (gatewayClass: envoy): pulumi up moves it, Envoy Gateway's route in place of the chart's, verify passes", async () => {
    const envoy = writeStack((c) => {
      toCurrent(c);
      c['app-serving:router'] = { mode: 'gateway', gatewayClass: 'envoy' };
    });
    await stack.setConfig(envoy.config);
    const up = await stack.up();
    expect(up.result.summary.result).toBe('succeeded');
    expect(await deployedProblems(cluster, envoy.plan)).toEqual([]);
    // One route per model: app-serving's (another name than the chart's, which is gone), no second object of one name.
    for (const model of envoy.plan.models) {
      if (model.platform !== 'llm-d' || model.category !== 'generative') continue;
      const routes = (await cluster.request('GET', `/apis/gateway.networking.k8s.io/v1/namespaces/${model.namespace}/httproutes`)).body.items.map((r: any) => r.metadata.name);
      expect(routes).toEqual([model.httpRoute]);
    }
    const verify = await verifyDeployed(cluster, envoy);
    expect({ failing: verify.failing, stderr: verify.stderr }).toEqual({ failing: [], stderr: '' });
  }, 900_000);

  it('then with LoRA adapters from Harbor: diff and the engine agree (the pull Job replaced, the model server updated, its pods restart), pulumi up carries them, verify asks each by name', async () => {
    const withAdapters = (c: Record<string, unknown>) => {
      toCurrent(c);
      c['app-serving:router'] = { mode: 'gateway', gatewayClass: 'envoy' };
      modelsOf(c).generative[0].adapters = [{ name: 'qwen3-sql', harborRef: 'harbor.example.com/ai-adapters/qwen3-sql:v1' }];
    };
    // The base is the stack behind Envoy Gateway (the step before): commit it, so that diff compares with it.
    const envoy = writeStack((c) => {
      toCurrent(c);
      c['app-serving:router'] = { mode: 'gateway', gatewayClass: 'envoy' };
    });
    git('add', '-A');
    git('commit', '-q', '-m', 'envoy');
    base = envoy;
    // The stack behind Envoy Gateway is converged (a preview of it changes nothing): what follows is
    // the adapter's alone. This found the gateway alias recorded with its Istio host after the up had
    // moved it to Envoy Gateway's (in about half the runs; PULUMI_SKIP_AWAIT_ANNOTATION in core says why): on
    // failure, the engine's detailed diff and the old and new spec of each step say what drifted.
    const preview = await stack.preview();
    const steps = preview.events
      .map((e) => e.resourcePreEvent?.metadata)
      .filter((m) => m !== undefined && m.op !== 'same')
      .map((m) => ({ op: m!.op, urn: m!.urn, detailedDiff: m!.detailedDiff, old: { inputs: m!.old?.inputs?.spec, outputs: m!.old?.outputs?.spec }, new: { inputs: m!.new?.inputs?.spec } }));
    expect(steps).toEqual([]);
    const { diff, engine, json } = await compare({ stack: withAdapters });
    expect(sorted(engine)).toEqual(sorted(diff));
    expect([...diff.entries()].filter(([k]) => k.startsWith('kubernetes:batch/v1:Job')).map(([, v]) => v)).toEqual(['replace']);
    expect([...diff.entries()].filter(([k]) => k.startsWith('kubernetes:apps/v1:Deployment') && k.includes('model-server')).map(([, v]) => v)).toEqual(['update']);
    expect(json.warnings.map((w: any) => w.code)).toEqual(expect.arrayContaining(['adapters.changed', 'pods.restart']));
    const changed = writeStack(withAdapters);
    await stack.setConfig(changed.config);
    const up = await stack.up();
    expect(up.result.summary.result).toBe('succeeded');
    expect(await deployedProblems(cluster, changed.plan)).toEqual([]);
    const verify = await verifyDeployed(cluster, changed);
    expect({ failing: verify.failing, stderr: verify.stderr }).toEqual({ failing: [], stderr: '' });
    expect(verify.passed).toContain('Qwen3-0.6B-rke2/adapters');
  }, 900_000);
});
