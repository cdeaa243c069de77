/**
 * The stack's one endpoint (`app-serving:endpoint`, docs/endpoint.md) deployed by the real engine,
 * like every stack (suite.ts), on a control plane holding the 2026-08 CRDs (Gateway API v1.5.1, GAIE
 * v1.6, KServe v0.20, Envoy Gateway v1.8.1; Istio's from the 2026-02 set, as no newer is served):
 * endpoint/Pulumi.endpoint-istio.yaml — class istio, an llm-d model with its own Gateway and a LoRA
 * adapter, an embedding model and a KServe v0.20 model behind it, HTTP Basic keys.
 *
 * - up: every object the plan writes for the endpoint is in the cluster as written (the real CRDs
 *   admitted it), its body-based router (GAIE v1.5.0's chart, rendered by the provider's Helm) is
 *   Ready and placed; the models are deployed as planned and verify passes for each;
 * - no-op: a second up changes nothing (no perpetual diff from the chart or the endpoint's objects);
 * - change: a model leaves the endpoint — `app-serving diff` and the engine's preview agree on what
 *   changes on the shared Gateway, the up removes its route, and it comes back as it was;
 * - destroy: nothing of the stack is left, the endpoint's namespace included.
 *
 * Its routing by the body's model, `/v1/models`, the unknown-model answer and the key checks run for
 * real in the data-path tier (apps/data-path/test/endpoint.test.ts: class envoy, the real Envoy and
 * body-based router); no Istio proxy runs here (Istio's releases are not served).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, type TestCluster, type TestStack } from '@app-serving/test-cluster';
import type { EndpointPlan } from '@app-serving/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { expectNoChange, stackOnCluster, upAsPlanned } from './suite.ts';
import {
  MODELS_DIR,
  appServing,
  deployedProblems,
  diffVerdict,
  endpointObjects,
  engineVerdict,
  leftovers,
  objectPath,
  sorted,
  stackUnderTest,
  verifyDeployed,
  type StackUnderTest,
} from './support.ts';

const STACK = join(import.meta.dirname, 'endpoint', 'Pulumi.endpoint-istio.yaml');
/** The KServe model's overlay, without KServe's scheduler in the copy the test deploys: the endpoint reaches a KServe model through its workload Service. */
const KSERVE_OVERLAY = join('models', 'generative', 'Qwen2.5-0.5B-Instruct', 'kserve-qwen25-05b', 'values.yaml');

const modelsOf = (config: Record<string, unknown>) => config['app-serving:models'] as { generative: any[]; embedder: any[] };
/** The change: the embedding model leaves the endpoint (it stays deployed, reached through its Service). */
const embedderLeaves = (config: Record<string, unknown>) => (modelsOf(config).embedder[0].endpoint = false);

describe('the stack endpoint (class istio), deployed by the real engine', () => {
  let cluster: TestCluster;
  let repo: string;
  let base: StackUnderTest;
  let stack: TestStack;
  let created = 0;

  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
  const stackDir = () => join(repo, 'apps', 'app-serving');
  const writeStack = (edit?: (config: Record<string, unknown>) => void) =>
    stackUnderTest(STACK, { kubeconfig: cluster.kubeconfigPath, modelsDir: join(repo, 'models'), dir: stackDir(), ...(edit && { edit }) });
  const endpointOf = (sut: StackUnderTest): EndpointPlan => {
    if (!sut.plan.endpoint) throw new Error(`${sut.name} plans no endpoint`);
    return sut.plan.endpoint;
  };
  const use = async (sut: StackUnderTest) => {
    await stack.setConfig(sut.config);
    for (const [key, value] of Object.entries(sut.secrets)) await stack.setSecret(key, value);
  };

  beforeAll(async () => {
    cluster = await startCluster({ crdSet: '2026-08' });
    repo = mkdtempSync(join(tmpdir(), 'app-serving-endpoint-'));
    mkdirSync(stackDir(), { recursive: true });
    cpSync(MODELS_DIR, join(repo, 'models'), { recursive: true });
    const overlay = parse(readFileSync(join(repo, KSERVE_OVERLAY), 'utf8'));
    writeFileSync(join(repo, KSERVE_OVERLAY), stringify({ ...overlay, router: { ...overlay.router, scheduler: null } }));
    base = writeStack();
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-q', '-m', 'base');
  }, 900_000);

  afterAll(async () => {
    await stack?.remove();
    await cluster?.stop();
    if (repo) rmSync(repo, { recursive: true, force: true });
  }, 300_000);

  it('up: the endpoint is in the cluster as planned (its body-based router Ready), the models too; verify passes for each model', async () => {
    const endpoint = endpointOf(base);
    expect(endpoint.class).toBe('istio');
    expect(endpoint.models.map((m) => m.model).sort()).toEqual(base.plan.models.map((m) => m.name).sort());
    stack = await stackOnCluster(cluster, base);
    ({ created } = await upAsPlanned(cluster, stack, base));
    // One route per model on the shared Gateway, each with a grant in its model's namespace.
    const routes = (await cluster.request('GET', `/apis/gateway.networking.k8s.io/v1/namespaces/${endpoint.namespace}/httproutes`)).body.items.map((r: any) => r.metadata.name).sort();
    expect(routes).toEqual(endpoint.manifests.routes.map((r: any) => r.httpRoute.metadata.name).sort());
    expect(routes.length).toBe(3);

    const verify = await verifyDeployed(cluster, base);
    expect({ failing: verify.failing, stderr: verify.stderr }).toEqual({ failing: [], stderr: '' });
    expect(verify.passed).toContain('Qwen3-0.6B/adapters');
  }, 1_200_000);

  it('no-op: a second up changes nothing', () => expectNoChange(stack, created), 600_000);

  it("a model leaves the endpoint: diff and the engine agree — its route and grant are deleted, the endpoint's list and grants updated, nothing of any model", async () => {
    const changed = writeStack(embedderLeaves);
    const embedderRoute = endpointOf(base).manifests.routes.find((r) => r.model === 'bge-small-en-v1.5')!;
    expect(endpointOf(changed).models.map((m) => m.model)).not.toContain('bge-small-en-v1.5');
    const result = await appServing(['diff', '--base', 'HEAD', '--stack', 'apps/app-serving/Pulumi.endpoint-istio.yaml', '--models-dir', 'models', '--json'], { cwd: repo });
    expect(result.stderr).toBe('');
    const json = JSON.parse(result.stdout);
    await use(changed);
    const preview = await stack.preview();
    const diff = diffVerdict(json.diff ?? json);
    expect(sorted(engineVerdict(preview.steps))).toEqual(sorted(diff));
    // What changes is the endpoint's: the embedder's route and its ReferenceGrant go; the shared
    // objects that list or grant it change in place; no model's own resource changes.
    const deleted = [...diff.entries()].filter(([, action]) => action === 'delete').map(([key]) => key.split('::')[0]).sort();
    expect(deleted).toEqual(['kubernetes:gateway.networking.k8s.io/v1:HTTPRoute', 'kubernetes:gateway.networking.k8s.io/v1beta1:ReferenceGrant']);
    expect([...diff.values()].every((action) => action === 'delete' || action === 'update')).toBe(true);
    for (const model of base.plan.models) expect((json.diff ?? json).models.find((m: any) => m.name === model.name)?.resources ?? []).toEqual([]);

    const up = await stack.up();
    expect(up.result.summary.result).toBe('succeeded');
    expect(await deployedProblems(cluster, changed.plan)).toEqual([]);
    expect((await cluster.request('GET', await objectPath(cluster, embedderRoute.httpRoute))).status).toBe(404);
    expect((await cluster.request('GET', await objectPath(cluster, embedderRoute.referenceGrant))).status).toBe(404);
  }, 900_000);

  it('and comes back: the up restores the endpoint as first planned; a further up changes nothing', async () => {
    await use(base);
    const up = await stack.up();
    expect(up.result.summary.result).toBe('succeeded');
    expect(await deployedProblems(cluster, base.plan)).toEqual([]);
    expect((await stack.up()).result.summary.resourceChanges).toEqual({ same: expect.any(Number) });
  }, 900_000);

  it("destroy: nothing of the stack is left, the endpoint's namespace and objects included", async () => {
    const endpoint = endpointOf(base);
    await stack.destroy();
    expect(await leftovers(cluster, base.plan)).toEqual([]);
    const left: string[] = [];
    for (const o of endpointObjects(endpoint)) if ((await cluster.request('GET', await objectPath(cluster, o))).status !== 404) left.push(`${o.kind} ${o.metadata.name}`);
    expect(left).toEqual([]);
  }, 600_000);
});
