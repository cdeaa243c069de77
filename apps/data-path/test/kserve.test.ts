/**
 * A KServe v0.20 model through the real data path: the tier's KServe stack
 * (stacks/Pulumi.kserve-datapath.yaml — SmolLM2 as an LLMInferenceService without KServe's scheduler,
 * its weights downloaded from Hugging Face into a claim the KServe way, API keys on it) deployed by
 * the real Pulumi engine into the tier's cluster, KServe's controller stood in for by what v0.20's
 * controller makes (./kserve-controller.ts), then:
 *
 * - the workload runs as KServe's well-known template writes it: its own bash command, which runs
 *   the real vLLM (`vllm serve /mnt/models --served-model-name … $@`) on the weights mounted where
 *   KServe mounts them, our arguments and VLLM_ADDITIONAL_ARGS parsed by vLLM's real parser;
 * - the real Envoy Gateway accepts KServe's HTTPRoute (to the workload Service, path
 *   `/<namespace>/<name>/…` rewritten) and programs a real Envoy, and the LLMInferenceService
 *   becomes Ready with its URL;
 * - `app-serving verify --kubeconfig` passes through the real Envoy: chat, streaming, completions,
 *   refuses-anonymous;
 * - Envoy enforces our SecurityPolicy: the model's key 200; a wrong key, another model's, none 401;
 *   and our BackendTrafficPolicy on KServe's route: a key past its requests per minute 429, another
 *   key of the model still 200.
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENVOY_GATEWAY_SYSTEM, createNodes, createTestStack, list, waitFor, type TestStack } from '@app-serving/test-cluster';
import type { DeploymentPlan, KserveModelPlan } from '@app-serving/core';
import { appServingProgram } from '../../app-serving/src/program.ts';
import { appServing, clusterShape, stackUnderTest, type StackUnderTest } from '../../app-serving/test/deploy/support.ts';
import { installKserve, startKserveController, type KserveController } from './kserve-controller.ts';
import { MODELS_DIR, STACKS_DIR, provideWeights, startTier, type Tier, settledProblems } from './tier.ts';

const STACK = join(STACKS_DIR, 'Pulumi.kserve-datapath.yaml');

/** One request from the test (inside the tier's namespace) to an address of the cluster. */
function send(url: string, options: { headers?: Record<string, string>; body?: unknown } = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const req = request(url, { method: payload ? 'POST' : 'GET', timeout: 180_000, headers: { ...(payload && { 'content-type': 'application/json' }), ...options.headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer`)));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

const basic = (name: string, key: string) => ({ authorization: `Basic ${Buffer.from(`${name}:${key}`).toString('base64')}` });
const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 8, temperature: 0 });

describe.skipIf(process.env.APP_SERVING_NETNS !== '1')('a KServe v0.20 model without the scheduler: Envoy ← Envoy Gateway → the workload Service → vLLM', () => {
  let tier: Tier;
  let kserve: KserveController | undefined;
  let sut: StackUnderTest;
  let stack: TestStack;
  let plan: DeploymentPlan;
  let removeWeights = () => {};

  const model = () => {
    const found = plan.models.find((m): m is KserveModelPlan => m.platform === 'kserve');
    if (found?.upstream !== '2026-08') throw new Error('the KServe data-path stack has a 2026-08 KServe model');
    return found;
  };
  const key = (name: string) => sut.secrets[`app-serving:apiKeys[${JSON.stringify(name)}]`]!;
  const servicePath = () => `/apis/${model().apiVersion}/namespaces/${model().namespace}/llminferenceservices/${model().service}`;

  beforeAll(async () => {
    tier = await startTier();
    await installKserve(tier.cluster);
    kserve = startKserveController(tier.cluster);
    sut = stackUnderTest(STACK, { kubeconfig: tier.cluster.kubeconfigPath, modelsDir: MODELS_DIR });
    plan = sut.plan;
    // The download Job leaves the repository's files at <claim>/<repo>: the tier's converted SmolLM2.
    removeWeights = provideWeights(plan, { [model().storage!.modelUri]: tier.tools.vllm.chatModelDir });
    await createNodes(tier.cluster, clusterShape(plan, sut.name));
    stack = await createTestStack({ cluster: tier.cluster, stackName: sut.name, config: sut.config, secrets: sut.secrets, program: () => appServingProgram(sut.modelsDir) });
    const up = await stack.up();
    expect(up.result.summary.result).toBe('succeeded');
    // vLLM loads (1-3 min here), Envoy Gateway accepts the route: the stand-in then reports Ready.
    await waitFor(tier.cluster, servicePath(), (o) => o.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'), 1_200_000).catch((error) => {
      throw new Error(`${(error as Error).message}\nstand-in: ${kserve?.log.slice(-20).join('\n')}\nruntime: ${tier.log.slice(-20).join('\n')}`);
    });
  }, 1_800_000);

  afterAll(async () => {
    if (process.env.APP_SERVING_DATA_PATH_LOG) console.log([...(kserve?.log ?? []), ...(tier?.log ?? [])].join('\n'));
    await stack?.remove();
    await kserve?.stop();
    await tier?.stop();
    removeWeights();
  }, 300_000);

  it('up: every object of the plan is there; KServe\'s workload runs its template\'s command, and the real vLLM parsed our arguments', async () => {
    expect(await settledProblems(tier.cluster, plan)).toEqual([]);
    expect(kserve!.errors).toEqual(new Map());
    const m = model();
    const main = tier.runtime.containers().find((c) => c.namespace === m.namespace && c.container === 'main');
    expect(main?.ready).toBe(true);
    const log = tier.runtime.logs(m.namespace, main!.pod, 'main');
    // The runtime's record of the command: KServe's bash script, then our arguments after its `--`.
    expect(log).toMatch(/\[runtime\] .* start: \/bin\/bash -c .*exec vllm serve \/mnt\/models/s);
    expect(log).toMatch(/ -- --dtype bfloat16\n/);
    // The template's version check ran the real CLI, and vLLM's parser took every flag: the
    // template's, ours in args and in VLLM_ADDITIONAL_ARGS (vLLM logs the ones that differ from its defaults).
    expect(log).toContain("[access-log-detect] selected ACCESS_LOG_ARGS='--disable-access-log-for-endpoints /health,/metrics,/ping'");
    const args = /non-default args: (\{.*\})/.exec(log)?.[1] ?? '';
    for (const expected of [
      "'model': '/mnt/models'",
      `'served_model_name': ['${m.servedModelName}', 'publishers/${m.namespace}/models/${m.servedModelName}']`,
      "'dtype': 'bfloat16'",
      "'max_model_len': 2048",
      "'enforce_eager': True",
      "'shutdown_timeout': 40",
    ]) {
      expect(args).toContain(expected);
    }
  });

  it('the real Envoy Gateway accepts KServe\'s route to the workload Service; the LLMInferenceService reports its URL', async () => {
    const m = model();
    const route = (await tier.cluster.request('GET', `/apis/gateway.networking.k8s.io/v1/namespaces/${m.namespace}/httproutes/${m.route}`)).body as any;
    const backends = new Set(route.spec.rules.flatMap((r: any) => r.backendRefs.map((b: any) => `${b.kind}/${b.name}:${b.port}`)));
    expect([...backends]).toEqual([`Service/${m.workloadService}:${m.port}`]);
    const parent = route.status.parents.find((p: any) => p.parentRef.name === m.gateway.name);
    expect(Object.fromEntries(parent.conditions.map((c: any) => [c.type, c.status]))).toMatchObject({ Accepted: 'True', ResolvedRefs: 'True' });
    const service = (await tier.cluster.request('GET', servicePath())).body as any;
    expect(new URL(service.status.url).pathname).toBe(m.pathPrefix);
  });

  it('verify passes through the real chain: chat, streaming, completions, refuses-anonymous', async () => {
    const run = await appServing(
      ['verify', '--stack', sut.file, '--models-dir', sut.modelsDir, '--kubeconfig', tier.cluster.kubeconfigPath, '--json', '--timeout', '120s', '--deadline', '600s', '--wait', '5m'],
      { env: { APP_SERVING_VERIFY_TOKEN: `ci:${key('ci')}` } },
    );
    const report = JSON.parse(run.stdout || 'null');
    const checks = (report?.models ?? []).flatMap((m: any) => m.checks.map((c: any) => `${m.name}/${c.name}: ${c.status}${c.status === 'fail' ? ` ${c.message}` : ''}`));
    expect({ code: run.code, stderr: run.stderr, failing: checks.filter((c: string) => !c.endsWith(': pass') && !c.endsWith(': skip')) }).toEqual({ code: 0, stderr: '', failing: [] });
    const name = model().name;
    expect(checks).toEqual(expect.arrayContaining([`${name}/ready: pass`, `${name}/address: pass`, `${name}/chat: pass`, `${name}/chat-stream: pass`, `${name}/completions: pass`, `${name}/refuses-anonymous: pass`]));
  }, 900_000);

  /** The address of the proxy Envoy Gateway made for the stack's Gateway (its pod, the listener's port). */
  const gateway = async () => {
    const m = model();
    const selector = encodeURIComponent(`gateway.envoyproxy.io/owning-gateway-name=${m.gateway.name},gateway.envoyproxy.io/owning-gateway-namespace=${m.gateway.namespace}`);
    const pods = (await list(tier.cluster, `/api/v1/namespaces/${ENVOY_GATEWAY_SYSTEM}/pods?labelSelector=${selector}`)).filter((p) => !p.metadata.deletionTimestamp && p.status?.podIP);
    const services = await list(tier.cluster, `/api/v1/namespaces/${ENVOY_GATEWAY_SYSTEM}/services?labelSelector=${selector}`);
    const port = services[0]?.spec.ports.find((p: any) => p.port === 80)?.targetPort;
    expect({ pods: pods.length, port: typeof port }).toEqual({ pods: 1, port: 'number' });
    return `http://${pods[0].status.podIP}:${port}`;
  };

  it('access, enforced by the real Envoy: the model\'s key 200; a wrong key, another model\'s, none 401', async () => {
    const m = model();
    const url = `${await gateway()}${m.pathPrefix}/v1/chat/completions`;
    expect((await send(url, { body: chat(m.servedModelName) })).status).toBe(401);
    expect((await send(url, { body: chat(m.servedModelName), headers: basic('ci', 'not-the-key-of-ci-0000000000') })).status).toBe(401);
    expect((await send(url, { body: chat(m.servedModelName), headers: basic('other', key('other')) })).status).toBe(401);
    const ok = await send(url, { body: chat(m.servedModelName), headers: basic('ci', key('ci')) });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text).choices[0].message.content.length).toBeGreaterThan(0);
  }, 600_000);

  it('the rate limit on KServe\'s route: a key past its requests per minute gets 429, another key of the model still 200', async () => {
    // Cheap requests (KServe's catch-all rule, rewritten to /v1/models), all in flight at once, so that the minute's window cannot turn over between them.
    const m = model();
    const limit = m.access.requestsPerMinute!;
    const models = `${await gateway()}${m.pathPrefix}/v1/models`;
    const answers = await Promise.all(Array.from({ length: limit + 5 }, () => send(models, { headers: basic('ci-rate', key('ci-rate')) })));
    const counts = answers.reduce<Record<number, number>>((c, a) => ({ ...c, [a.status]: (c[a.status] ?? 0) + 1 }), {});
    expect(counts).toEqual({ 200: limit, 429: 5 });
    expect((await send(models, { headers: basic('ci', key('ci')) })).status).toBe(200);
  }, 600_000);
});
