/**
 * The stack's one OpenAI endpoint on the real data path (issue 32): stacks/Pulumi.endpoint.yaml —
 * `app-serving:endpoint` of class envoy with two Bearer keys, a chat model with no Gateway of its own
 * (the llm-d Router's standalone proxy, EPP included) serving a real LoRA adapter from its volume, and
 * an embedding model — deployed by the real Pulumi engine into the tier's cluster, then through ONE
 * base URL (the endpoint Gateway's Envoy, programmed by the real Envoy Gateway v1.8.1, calling the
 * real body-based router GAIE v1.5.0 `bbr` over ext_proc):
 *
 * - each name reaches its model: the chat model and its adapter (vLLM answers as the adapter, and
 *   lists it with its parent), the embedder (vectors);
 * - `GET /v1/models` is exactly the plan's list; an unknown model is a 404 in OpenAI's shape naming
 *   `/v1/models`;
 * - a key granted only the chat model is refused the embedder; no key or a wrong one is refused;
 * - `app-serving verify --kubeconfig` passes, the endpoint's checks included;
 * - a second up changes nothing; a model that leaves the endpoint is no longer listed and its name
 *   is unknown through the same base URL, and answers again once back.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodes, createTestStack, list, type TestStack } from '@app-serving/test-cluster';
import type { DeploymentPlan, EndpointPlan } from '@app-serving/core';
import { appServingProgram } from '../../app-serving/src/program.ts';
import { appServing, clusterShape, stackUnderTest, type StackUnderTest } from '../../app-serving/test/deploy/support.ts';
import { MODELS_DIR, STACKS_DIR, answered, gatewayAddress, provideWeights, send, startTier, type Tier, settledProblems } from './tier.ts';

const STACK = join(STACKS_DIR, 'Pulumi.endpoint.yaml');
const ADAPTER = 'smollm2-lora';

const chat = (model: string, content = 'Say hello.') => ({ model, messages: [{ role: 'user', content }], max_tokens: 8, temperature: 0 });
const embed = (model: string) => ({ model, input: ['one base URL for every model'] });
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe.skipIf(process.env.APP_SERVING_NETNS !== '1')('the stack endpoint: one base URL — Envoy ← Envoy Gateway, the body-based router, the Router\'s proxy and EPP, vLLM', () => {
  let tier: Tier;
  let sut: StackUnderTest;
  let stack: TestStack;
  let plan: DeploymentPlan;
  let endpoint: EndpointPlan;
  let base: string;
  let removeWeights = () => {};
  const started = Date.now();

  const key = (name: string) => sut.secrets[`app-serving:apiKeys[${JSON.stringify(name)}]`]!;
  const chatModel = () => plan.models.find((m) => m.category === 'generative')!;
  const embedder = () => plan.models.find((m) => m.category === 'embedder')!;
  const served = (m: ReturnType<typeof chatModel>) => (m.platform === 'llm-d' ? m.modelServer.servedModelName : m.servedModelName);

  beforeAll(async () => {
    tier = await startTier();
    sut = stackUnderTest(STACK, { kubeconfig: tier.cluster.kubeconfigPath, modelsDir: MODELS_DIR });
    plan = sut.plan;
    if (!plan.endpoint) throw new Error('the endpoint stack plans no endpoint');
    endpoint = plan.endpoint;
    removeWeights = provideWeights(plan, { smollm2: tier.tools.vllm.chatModelDir, minilm: tier.tools.vllm.embeddingModelDir }, { [ADAPTER]: tier.tools.vllm.adapterDir });
    await createNodes(tier.cluster, clusterShape(plan, sut.name));
    stack = await createTestStack({ cluster: tier.cluster, stackName: sut.name, config: sut.config, secrets: sut.secrets, program: () => appServingProgram(sut.modelsDir) });
    const up = await stack.up();
    expect(up.result.summary.result).toBe('succeeded');
    base = await gatewayAddress(tier, endpoint.name, endpoint.namespace);
    // Envoy Gateway programs the routes and policies within seconds of the up: wait for the first answer by name.
    const until = Date.now() + 180_000;
    for (;;) {
      const answer = await send(`${base}/v1/chat/completions`, { body: chat(served(chatModel())), headers: bearer(key('every-model')) }).catch((error: Error) => ({ status: 0, text: error.message }));
      if (answer.status === 200) break;
      if (Date.now() > until) throw new Error(`the endpoint did not answer the chat model three minutes after the up: ${answer.status} ${answer.text.slice(0, 300)}`);
      await new Promise((r) => setTimeout(r, 2000));
    }
  }, 1_800_000);

  afterAll(async () => {
    if (process.env.APP_SERVING_DATA_PATH_LOG) console.log(tier?.log.join('\n'));
    await stack?.remove();
    await tier?.stop();
    removeWeights();
    console.log(`endpoint.test.ts: ${Math.round((Date.now() - started) / 1000)} s`);
  }, 300_000);

  it('up: every object of the plan is there and Ready; vLLM, the EPP, its proxy and the body-based router run for real', async () => {
    expect(await settledProblems(tier.cluster, plan)).toEqual([]);
    const real = tier.runtime.containers();
    const ready = (container: string, namespace?: string) => real.filter((c) => c.container === container && c.ready && (namespace === undefined || c.namespace === namespace)).length;
    expect(ready('modelserver')).toBe(2);
    expect(ready('bbr', endpoint.namespace)).toBe(1);
    expect(ready('epp', chatModel().namespace)).toBe(1);
  });

  it('one base URL: the chat model, its LoRA adapter and the embedder, each by its name, each answered by its own server', async () => {
    const model = served(chatModel());
    const headers = bearer(key('every-model'));
    const base200 = await answered(`${base}/v1/chat/completions`, { body: chat(model), headers });
    expect({ status: base200.status, model: JSON.parse(base200.text).model }).toEqual({ status: 200, model });
    expect(JSON.parse(base200.text).choices[0].message.content.length).toBeGreaterThan(0);

    const adapter = await answered(`${base}/v1/chat/completions`, { body: chat(ADAPTER), headers });
    expect({ status: adapter.status, model: JSON.parse(adapter.text).model }).toEqual({ status: 200, model: ADAPTER });

    const vectors = await send(`${base}/v1/embeddings`, { body: embed(served(embedder())), headers });
    expect(vectors.status).toBe(200);
    const data = JSON.parse(vectors.text).data;
    expect(data.length).toBe(1);
    expect(data[0].embedding.length).toBe(384);

    // vLLM itself loaded the adapter: its own /v1/models (the pod, past every proxy) lists it with its parent.
    const pods = (await list(tier.cluster, `/api/v1/namespaces/${chatModel().namespace}/pods`)).filter((p) => p.status?.podIP && /^server-/.test(p.metadata.name) && !p.metadata.deletionTimestamp);
    expect(pods.length).toBe(1);
    const own = JSON.parse((await send(`http://${pods[0].status.podIP}:8000/v1/models`)).text).data.map((m: any) => ({ id: m.id, parent: m.parent }));
    expect(own).toEqual(expect.arrayContaining([{ id: ADAPTER, parent: model }]));
    // The requests reached that pod: its access log has the chat completions the endpoint sent.
    const log = tier.runtime.logs(chatModel().namespace, pods[0].metadata.name, 'modelserver');
    expect((log.match(/POST \/v1\/chat\/completions HTTP\/1\.1" 200/g) ?? []).length).toBeGreaterThanOrEqual(2);
  }, 600_000);

  it('GET /v1/models is exactly the plan\'s list: the stack\'s models, and the adapter with its parent', async () => {
    const answer = await send(`${base}/v1/models`, { headers: bearer(key('every-model')) });
    expect(answer.status).toBe(200);
    const body = JSON.parse(answer.text);
    expect(body).toEqual(endpoint.list);
    expect(body.data.map((m: any) => [m.id, m.parent ?? null])).toEqual([
      [served(chatModel()), null],
      [ADAPTER, served(chatModel())],
      [served(embedder()), null],
    ]);
  }, 120_000);

  it('an unknown model: 404 in OpenAI\'s error shape, naming /v1/models', async () => {
    const answer = await send(`${base}/v1/chat/completions`, { body: chat('no-such-model'), headers: bearer(key('every-model')) });
    expect(answer.status).toBe(404);
    const error = JSON.parse(answer.text).error;
    expect(error).toMatchObject({ code: 'model_not_found' });
    expect(error.message).toContain('/v1/models');
  }, 120_000);

  it('access: the key granted only the chat model is refused the embedder (and answered for chat); no key and a wrong key are refused', async () => {
    const chatOnly = bearer(key('chat-only'));
    const refused = await send(`${base}/v1/embeddings`, { body: embed(served(embedder())), headers: chatOnly });
    expect([401, 403]).toContain(refused.status);
    expect((await answered(`${base}/v1/chat/completions`, { body: chat(served(chatModel())), headers: chatOnly })).status).toBe(200);
    expect((await send(`${base}/v1/chat/completions`, { body: chat(served(chatModel())) })).status).toBe(401);
    expect((await send(`${base}/v1/chat/completions`, { body: chat(served(chatModel())), headers: bearer('not-a-key-of-this-stack-0000') })).status).toBe(401);
    expect((await send(`${base}/v1/models`)).status).toBe(401);
  }, 300_000);

  it('app-serving verify passes through the cluster, the endpoint\'s checks included', async () => {
    // The key granted only the chat model: its names answer, the embedder is refused (endpoint-refuses-ungranted).
    const run = await appServing(
      ['verify', '--stack', sut.file, '--models-dir', sut.modelsDir, '--kubeconfig', tier.cluster.kubeconfigPath, '--json', '--timeout', '300s', '--deadline', '1200s', '--wait', '5m'],
      { env: { APP_SERVING_VERIFY_TOKEN: `chat-only:${key('chat-only')}` } },
    );
    const report = JSON.parse(run.stdout || 'null');
    const line = (owner: string, c: any) => `${owner}/${c.name}${c.data?.model ? `(${c.data.model})` : ''}: ${c.status}${c.status === 'fail' ? ` ${c.message}` : ''}`;
    const checks = [
      ...(report?.models ?? []).flatMap((m: any) => m.checks.map((c: any) => line(m.name, c))),
      ...(report?.endpoint?.checks ?? []).map((c: any) => line('endpoint', c)),
    ];
    expect({ code: run.code, stderr: run.stderr, failing: checks.filter((c: string) => !/: (pass|skip|info)$/.test(c)) }).toEqual({ code: 0, stderr: '', failing: [] });
    expect(checks).toEqual(
      expect.arrayContaining([
        'endpoint/endpoint-models: pass',
        'endpoint/endpoint-unknown-model: pass',
        'endpoint/endpoint-refuses-anonymous: pass',
        `endpoint/endpoint-chat(${served(chatModel())}): pass`,
        `endpoint/endpoint-chat(${ADAPTER}): pass`,
        `endpoint/endpoint-refuses-ungranted(${served(embedder())}): pass`,
        `${chatModel().name}/adapters: pass`,
        `${embedder().name}/embeddings: pass`,
      ]),
    );
  }, 1_800_000);

  it('no-op: a second up changes nothing', async () => {
    const again = await stack.up();
    expect(again.result.summary.resourceChanges).toEqual({ same: expect.any(Number) });
  }, 600_000);

  it('change: the embedder leaves the endpoint — through the same base URL it is no longer listed and its name is unknown; back, it answers again', async () => {
    const headers = bearer(key('every-model'));
    const use = async (next: StackUnderTest) => {
      await stack.setConfig(next.config);
      for (const [path, value] of Object.entries(next.secrets)) await stack.setSecret(path, value);
      expect((await stack.up()).result.summary.result).toBe('succeeded');
    };
    /** What GET /v1/models answers once Envoy Gateway has programmed the proxy with `list` (bounded: a hang guard). */
    const listed = async (list: unknown) => {
      const until = Date.now() + 300_000;
      for (;;) {
        const answer = await send(`${base}/v1/models`, { headers }).catch((error: Error) => ({ status: 0, text: error.message }));
        if (answer.status === 200 && JSON.stringify(JSON.parse(answer.text)) === JSON.stringify(list)) return;
        if (Date.now() > until) throw new Error(`GET /v1/models did not become the plan's list: ${answer.status} ${answer.text.slice(0, 300)}`);
        await new Promise((r) => setTimeout(r, 2000));
      }
    };
    const without = stackUnderTest(STACK, {
      kubeconfig: tier.cluster.kubeconfigPath,
      modelsDir: MODELS_DIR,
      edit: (config) => {
        (config['app-serving:models'] as { embedder: Record<string, unknown>[] }).embedder[0]!.endpoint = false;
        // A grant may name only a model the endpoint serves (validate): the key keeps the chat model.
        (config['app-serving:endpoint'] as { access: { apiKeys: Record<string, string[]> } }).access.apiKeys['every-model'] = [chatModel().name];
      },
    });
    const smaller = without.plan.endpoint!.list;
    expect(smaller.data.map((m) => m.id)).toEqual([served(chatModel()), ADAPTER]);
    await use(without);
    expect(await settledProblems(tier.cluster, without.plan)).toEqual([]);
    await listed(smaller);
    const gone = await send(`${base}/v1/embeddings`, { body: embed(served(embedder())), headers });
    expect({ status: gone.status, code: JSON.parse(gone.text).error?.code }).toEqual({ status: 404, code: 'model_not_found' });
    expect((await answered(`${base}/v1/chat/completions`, { body: chat(served(chatModel())), headers })).status).toBe(200);

    await use(sut);
    expect(await settledProblems(tier.cluster, plan)).toEqual([]);
    await listed(endpoint.list);
    expect((await answered(`${base}/v1/embeddings`, { body: embed(served(embedder())), headers })).status).toBe(200);
  }, 1_200_000);
});
