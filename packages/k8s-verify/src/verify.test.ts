import { describe, expect, it } from 'vitest';
import { Buffer } from 'node:buffer';
import { accessPlan, type DeploymentPlan } from '@app-serving/core';
import { deploy, podOf } from '../test/deployed.ts';
import { startFakeKube } from '../test/fake-kube.ts';
import { hang, reply, startModelServer, type Handler } from '../test/model-server.ts';
import { planOf, type ModelSpec } from '../test/plans.ts';
import type { Clock } from './clock.ts';
import { createCluster } from './cluster.ts';
import { isVerifyError } from './errors.ts';
import { formatJson, formatJunit, formatSummary } from './format.ts';
import type { VerifyEvent } from './types.ts';
import { verifyPlan } from './verify.ts';

const stack: ModelSpec[] = [
  { category: 'generative', name: 'Gen', slug: 'gen', pull: true },
  { category: 'embedder', name: 'Emb', slug: 'emb' },
  { category: 'generative', name: 'Kq', slug: 'kq', platform: 'kserve', pull: true },
];
const plan = planOf(stack);

async function cluster(options: Parameters<typeof deploy>[2] = {}, p = plan) {
  const kube = await startFakeKube();
  const deployed = await deploy(kube, p, options);
  return { kube, deployed, cluster: await createCluster(kube.kubeConfig(), { source: 'test kubeconfig' }) };
}

const statuses = (result: Awaited<ReturnType<typeof verifyPlan>>) => Object.fromEntries(result.models.map((m) => [m.name, m.checks.map((c) => `${c.name}:${c.status}`)]));

function fakeClock(onSleep?: (n: number) => void): { clock: Clock; sleeps: number[] } {
  let now = 0;
  const sleeps: number[] = [];
  return {
    sleeps,
    clock: {
      now: () => now,
      sleep: async (ms) => {
        sleeps.push(ms);
        now += ms;
        onSleep?.(sleeps.length);
      },
    },
  };
}

describe('verifyPlan through a cluster (fake API server, real port-forwards)', () => {
  it('verifies llm-d generative, llm-d embedder and KServe models through their real traffic paths', async () => {
    const { kube, deployed, cluster: c } = await cluster();
    const events: VerifyEvent[] = [];
    const result = await verifyPlan(plan, { cluster: c, onProgress: (e) => events.push(e) });

    expect(statuses(result)).toEqual({
      Gen: ['ready:pass', 'pulled:pass', 'models:pass', 'chat:pass', 'chat-stream:pass', 'completions:pass'],
      Emb: ['ready:pass', 'pulled:skip', 'models:pass', 'embeddings:pass', 'gateway-rejects-embeddings:info'],
      Kq: ['ready:pass', 'pulled:pass', 'address:pass', 'models:pass', 'chat:pass', 'chat-stream:pass', 'completions:pass'],
    });
    expect(result).toMatchObject({
      schemaVersion: 1,
      stack: 'test',
      ok: true,
      deadlineExceeded: false,
      counts: { pass: 16, fail: 0, skip: 1, info: 1 },
      target: { mode: 'cluster', context: 'fake', source: 'test kubeconfig', endpoints: 'port-forward' },
    });

    // Each model's traffic took its own path: Gateway pod, embeddings Service pod, Envoy Gateway pod.
    const [gen, kq, emb] = result.models;
    expect(gen!.endpoints).toEqual([
      { role: 'gateway', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), via: 'port-forward svc/infra-gen-inference-gateway-istio:80 → pod/infra-gen-inference-gateway-istio-6d8b9:80', error: null },
    ]);
    expect(emb!.endpoints.map((e) => [e.role, e.via])).toEqual([
      ['embeddings', 'port-forward svc/ms-emb-embeddings:8200 → pod/ms-emb-llm-d-modelservice-decode-7c9f0:8200'],
      ['gateway', 'port-forward svc/infra-emb-inference-gateway-istio:80 → pod/infra-emb-inference-gateway-istio-6d8b9:80'],
    ]);
    expect(kq!.endpoints[0]!.via).toBe(
      'port-forward svc/envoy-kserve-kserve-ingress-gateway-3a9c1e2f:80 → pod/envoy-kserve-kserve-ingress-gateway-3a9c1e2f-5c6d7-xk2p9:10080 (10.96.14.7/llm-d-kq/kq)',
    );
    expect(kq!.endpoints[0]!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/llm-d-kq\/kq$/);
    expect(deployed.servers.Kq!.requests.map((r) => r.path)).toEqual([
      '/llm-d-kq/kq/v1/models',
      '/llm-d-kq/kq/v1/chat/completions',
      '/llm-d-kq/kq/v1/chat/completions',
      '/llm-d-kq/kq/v1/completions',
    ]);
    expect(deployed.servers.Gen!.requests.map((r) => r.body?.model ?? null)).toEqual([null, 'org/gen', 'org/gen', 'org/gen']);
    expect(deployed.gateways.Emb!.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/embeddings']);
    expect(emb!.checks.at(-1)!.message).toBe('404: the Gateway has no route for this embedder (no HTTPRoute, by design); clients use ms-emb-embeddings:8200');
    // One port-forward stream per connection; the run keeps connections alive, so there are few.
    expect([...new Set(kube.log.filter((l) => l.startsWith('PORTFORWARD')))].sort()).toEqual([
      'PORTFORWARD envoy-gateway-system/envoy-kserve-kserve-ingress-gateway-3a9c1e2f-5c6d7-xk2p9:10080',
      'PORTFORWARD llm-d-emb/infra-emb-inference-gateway-istio-6d8b9:80',
      'PORTFORWARD llm-d-emb/ms-emb-llm-d-modelservice-decode-7c9f0:8200',
      'PORTFORWARD llm-d-gen/infra-gen-inference-gateway-istio-6d8b9:80',
    ]);

    // Progress: each model starts, runs its checks in order, ends; the run ends last with the result.
    expect(events[0]).toMatchObject({ type: 'run-start', stack: 'test', models: ['Gen', 'Kq', 'Emb'] });
    expect(events.at(-1)).toEqual({ type: 'run-end', result });
    const label = (e: VerifyEvent) => (e.type === 'check-start' ? `${e.type}:${e.check}` : e.type === 'check-end' ? `${e.type}:${e.result.name}` : e.type);
    const gens = events.filter((e) => 'model' in e && e.model === 'Gen').map(label);
    expect(gens.slice(0, 5)).toEqual(['model-start', 'check-start:ready', 'check-end:ready', 'check-start:pulled', 'check-end:pulled']);
    expect(JSON.parse(formatJson(result))).toEqual(result);
  });

  it("llm-d behind Envoy Gateway (class envoy): the gateway is the proxy Envoy Gateway made, found by its labels in its namespace", async () => {
    const envoyPlan = planOf([{ category: 'generative', name: 'Gen', slug: 'gen' }], { upstream: '2026-08', gatewayClass: 'envoy' });
    const { kube, cluster: c } = await cluster({}, envoyPlan);
    const result = await verifyPlan(envoyPlan, { cluster: c });
    expect(statuses(result)).toEqual({ Gen: ['ready:pass', 'pulled:skip', 'models:pass', 'chat:pass', 'chat-stream:pass', 'completions:pass'] });
    const service = envoyPlan.models[0]!.platform === 'llm-d' ? envoyPlan.models[0]!.gateway.service : '';
    expect(service).toMatch(/^envoy-llm-d-gen-router-gen-gateway-[0-9a-f]{8}$/);
    expect(result.models[0]!.endpoints[0]!.via).toBe(`port-forward svc/${service}:80 → pod/${service}-5c6d7-xk2p9:10080`);
    expect(result.models[0]!.checks[0]!.message).toContain(`gateway 1/1 Ready`);
    expect(kube.log).toContain(
      'GET /api/v1/namespaces/envoy-gateway-system/services?labelSelector=gateway.envoyproxy.io/owning-gateway-name=router-gen-gateway,gateway.envoyproxy.io/owning-gateway-namespace=llm-d-gen',
    );
  });

  it('reports a failing model and keeps verifying the others', async () => {
    const { cluster: c } = await cluster({ server: (name) => (name === 'Gen' ? { routes: { 'POST /v1/chat/completions': reply(500, { error: { message: 'boom' } }) } } : {}) });
    const result = await verifyPlan(plan, { cluster: c });
    expect(result.ok).toBe(false);
    expect(result.models.map((m) => [m.name, m.ok])).toEqual([
      ['Gen', false],
      ['Kq', true],
      ['Emb', true],
    ]);
    const gen = result.models[0]!;
    expect(gen.checks.map((c) => `${c.name}:${c.status}`)).toEqual(['ready:pass', 'pulled:pass', 'models:pass', 'chat:fail', 'chat-stream:fail', 'completions:pass']);
    expect(gen.checks[3]!.failure).toMatchObject({ got: 'HTTP 500', cause: 'the model server failed on this request: check its logs (kubectl logs -n llm-d-gen deploy/ms-gen-llm-d-modelservice-decode)' });
  });

  it('fails the first HTTP check when the endpoint cannot be opened, and skips the rest', async () => {
    const { kube, cluster: c } = await cluster();
    podOf(kube, 'infra-gen-inference-gateway-istio').ready = false;
    const result = await verifyPlan(plan, { cluster: c, models: ['Gen'] });
    const checks = result.models[0]!.checks;
    expect(checks.map((x) => `${x.name}:${x.status}`)).toEqual(['ready:fail', 'pulled:pass', 'models:fail', 'chat:skip', 'chat-stream:skip', 'completions:skip']);
    expect(checks[2]!.failure).toMatchObject({
      expected: 'an open gateway endpoint to send requests to',
      got: 'no Ready pod behind Service llm-d-gen/infra-gen-inference-gateway-istio (selector gateway.networking.k8s.io/gateway-name=infra-gen-inference-gateway; infra-gen-inference-gateway-istio-6d8b9: Running)',
      cause: 'the pods behind the Service are not Ready (see the ready check; rerun with --wait)',
    });
    expect(checks[3]!.message).toBe('not run: no gateway endpoint (see models)');
    expect(result.models[0]!.endpoints[0]).toMatchObject({ role: 'gateway', url: null, error: expect.stringMatching(/^no Ready pod/) });
  });

  it('says so when RBAC forbids port-forwarding', async () => {
    const { kube, cluster: c } = await cluster();
    kube.state.forbidden.add('create pods/portforward');
    const result = await verifyPlan(plan, { cluster: c, models: ['emb'] });
    const models = result.models[0]!.checks.find((x) => x.name === 'models')!;
    expect(models.status).toBe('fail');
    expect(models.failure?.cause).toBe(
      'port-forward: forbidden: cannot create pods/portforward of pod ms-emb-llm-d-modelservice-decode-7c9f0 in namespace llm-d-emb (RBAC: grant "get" and "create" on "pods/portforward")',
    );
  });

  it('finds Envoy Gateway by a Service DNS name in the KServe address too', async () => {
    const { cluster: c } = await cluster({ kserveAddress: 'service-dns' });
    const result = await verifyPlan(plan, { cluster: c, models: ['Kq'] });
    expect(result.ok).toBe(true);
    expect(result.models[0]!.endpoints[0]!.via).toMatch(/^port-forward svc\/envoy-kserve-kserve-ingress-gateway-3a9c1e2f:80 → pod\/.*:10080 \(envoy-kserve-kserve-ingress-gateway-3a9c1e2f\.envoy-gateway-system\.svc\.cluster\.local\/llm-d-kq\/kq\)$/);
  });

  it('runs the latency probe when asked, labelled as a smoke-level probe', async () => {
    const { cluster: c } = await cluster({ server: { chunkDelayMs: 5 } });
    const result = await verifyPlan(plan, { cluster: c, models: ['Gen'], load: { requests: 6, concurrency: 3 } });
    const gen = result.models[0]!;
    expect(gen.checks.at(-1)).toMatchObject({ name: 'load', status: 'pass', data: { requests: 6, concurrency: 3, succeeded: 6, failed: 0 } });
    expect(gen.checks.at(-1)!.message).toMatch(/^6 req × 3 concurrent: TTFT p50 \d+ ms p95 \d+ ms, e2e p50 \d+ ms p95 \d+ ms, [\d.]+ tok\/s \(smoke-level probe, not a benchmark\)$/);
    expect(gen.load).toMatchObject({ label: 'smoke-level probe, not a benchmark', requests: 6, concurrency: 3, succeeded: 6, failed: 0, tokenCount: 'chunks' });
    expect(gen.load!.e2eMs!.p95).toBeGreaterThanOrEqual(gen.load!.e2eMs!.p50);
    expect(formatSummary(result)).toContain('Latency probe (smoke-level probe, not a benchmark)');
  });
});

describe('--wait', () => {
  it('retries ready with exponential backoff until the pods are Ready, without sleeping', async () => {
    const { kube, cluster: c } = await cluster();
    const decode = podOf(kube, 'ms-gen-llm-d-modelservice-decode');
    decode.ready = false;
    const { clock, sleeps } = fakeClock((n) => {
      if (n === 3) decode.ready = true;
    });
    const events: VerifyEvent[] = [];
    const result = await verifyPlan(plan, { cluster: c, models: ['Gen'], waitMs: 60_000, clock, onProgress: (e) => events.push(e) });
    // Every wait went through the fake clock (a real one would have slept 7 s).
    expect(sleeps).toEqual([1000, 2000, 4000]);
    const ready = result.models[0]!.checks[0]!;
    expect(ready).toMatchObject({ name: 'ready', status: 'pass', attempts: 4 });
    expect(events.filter((e) => e.type === 'check-retry').map((e) => e.type === 'check-retry' && [e.attempt, e.retryInMs, e.message])).toEqual([
      [1, 1000, 'decode 0/1 Ready (ms-gen-llm-d-modelservice-decode-7c9f0: Running)'],
      [2, 2000, 'decode 0/1 Ready (ms-gen-llm-d-modelservice-decode-7c9f0: Running)'],
      [3, 4000, 'decode 0/1 Ready (ms-gen-llm-d-modelservice-decode-7c9f0: Running)'],
    ]);
  });

  it('gives up at the end of the wait, with the last state', async () => {
    const { kube, cluster: c } = await cluster();
    podOf(kube, 'ms-gen-llm-d-modelservice-decode').ready = false;
    const { clock, sleeps } = fakeClock();
    const result = await verifyPlan(plan, { cluster: c, models: ['Gen'], waitMs: 10_000, clock, backoff: { initialMs: 1000, factor: 3, maxMs: 5000 } });
    expect(sleeps).toEqual([1000, 3000, 5000, 1000]);
    expect(result.models[0]!.checks[0]).toMatchObject({ status: 'fail', attempts: 5 });
  });

  it('does not retry what waiting cannot fix (RBAC)', async () => {
    const { kube, cluster: c } = await cluster();
    kube.state.forbidden.add('list pods');
    const { clock, sleeps } = fakeClock();
    const result = await verifyPlan(plan, { cluster: c, models: ['Gen'], waitMs: 60_000, clock });
    expect(sleeps).toEqual([]);
    expect(result.models[0]!.checks[0]).toMatchObject({ status: 'fail', attempts: 1 });
  });

  it('retries the KServe address until KServe reports one', async () => {
    const { kube, cluster: c } = await cluster({ kserveAddress: 'none' });
    const { clock } = fakeClock((n) => {
      if (n === 2) (kube.state.customObjects[0]!.object.status as { addresses: unknown[] }).addresses.push({ url: 'http://10.96.14.7/llm-d-kq/kq' });
    });
    const result = await verifyPlan(plan, { cluster: c, models: ['Kq'], waitMs: 60_000, clock });
    expect(result.models[0]!.checks.find((x) => x.name === 'address')).toMatchObject({ status: 'pass', attempts: 3 });
    expect(result.ok).toBe(true);
  });
});

describe('the run is bounded', () => {
  it('a per-check timeout bounds a server that never answers', async () => {
    const { cluster: c } = await cluster({ server: { routes: { 'POST /v1/completions': hang } } });
    // The server never answers: only the 300 ms timeout can end the check (the test's timeout guards a hang).
    const result = await verifyPlan(plan, { cluster: c, models: ['Gen'], timeoutMs: 300 });
    expect(result.models[0]!.checks.find((x) => x.name === 'completions')!.failure?.got).toBe('no answer within 300 ms');
  });

  it('the deadline stops the whole run: the running check fails, later ones are skipped', async () => {
    const { cluster: c } = await cluster({ server: { routes: { 'POST /v1/chat/completions': hang } } });
    // The check's own timeout (60 s) is far beyond the deadline: the deadline ended it, as the failure says.
    const result = await verifyPlan(plan, { cluster: c, models: ['Gen'], timeoutMs: 60_000, deadlineMs: 400 });
    expect(result.deadlineExceeded).toBe(true);
    const checks = result.models[0]!.checks;
    expect(checks.map((x) => `${x.name}:${x.status}`)).toEqual(['ready:pass', 'pulled:pass', 'models:pass', 'chat:fail', 'chat-stream:skip', 'completions:skip']);
    expect(checks[3]!.failure).toMatchObject({ got: "the run's deadline (400 ms) passed" });
    expect(checks[4]!.message).toBe("not run: the run's deadline (400 ms) passed");
    expect(formatSummary(result)).toMatch(/— the run hit its deadline\n$/);
  });

  it('a caller can cancel the run', async () => {
    const { cluster: c } = await cluster({ server: { routes: { 'GET /v1/models': hang } } });
    const controller = new AbortController();
    const pending = verifyPlan(plan, { cluster: c, models: ['Gen'], signal: controller.signal, onProgress: (e) => e.type === 'check-start' && e.check === 'models' && controller.abort() });
    const result = await pending;
    expect(result.models[0]!.checks.map((x) => `${x.name}:${x.status}`)).toEqual(['ready:pass', 'pulled:pass', 'models:fail', 'chat:skip', 'chat-stream:skip', 'completions:skip']);
    expect(result.models[0]!.checks[2]!.failure?.got).toBe('cancelled');
  });

  it('ten models are verified concurrently: all ten ask their server before any gets an answer', async () => {
    const n = 10;
    const p = planOf(Array.from({ length: n }, (_, i) => ({ category: 'generative' as const, name: `M${i}`, slug: `m${i}` })));
    // A barrier, not a stopwatch: each model's GET /v1/models is held until all ten are waiting. Run
    // one model after another, the first would wait alone until its 60 s timeout and fail.
    const held: Array<() => void> = [];
    let mostWaiting = 0;
    const barrier = (served: string): Handler => (_req, res) => {
      held.push(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: served, object: 'model' }] })));
      mostWaiting = Math.max(mostWaiting, held.length);
      if (held.length === n) held.splice(0).forEach((answer) => answer());
    };
    const served = (name: string) => (p.models.find((m) => m.name === name) as { modelServer: { servedModelName: string } }).modelServer.servedModelName;
    const { cluster: c } = await cluster({ server: (name) => ({ models: [served(name)], routes: { 'GET /v1/models': barrier(served(name)) } }) }, p);
    const result = await verifyPlan(p, { cluster: c, timeoutMs: 60_000 });
    expect(mostWaiting).toBe(n);
    expect(result.ok).toBe(true);
    expect(result.counts.pass).toBe(n * 6 - n);
  });
});

describe('--base-url', () => {
  it('checks the endpoint directly, with no cluster access, and never leaks the token', async () => {
    const token = 'sk-live-0123456789abcdef';
    // A server that echoes the Authorization header into its answers and errors.
    const server = await startModelServer({
      models: ['org/gen', 'org/emb', 'org/kq'],
      routes: { 'POST /v1/completions': (req, res) => reply(401, { error: { message: `bad key ${String(req.headers.authorization)}` } })(req, res, undefined) },
    });
    const events: VerifyEvent[] = [];
    const result = await verifyPlan(plan, { baseUrl: `${server.url}/?key=${token}`, headers: { Authorization: `Bearer ${token}` }, onProgress: (e) => events.push(e) });
    expect(statuses(result)).toEqual({
      Gen: ['ready:skip', 'pulled:skip', 'models:pass', 'chat:pass', 'chat-stream:pass', 'completions:fail'],
      Kq: ['ready:skip', 'pulled:skip', 'address:skip', 'models:fail', 'chat:fail', 'chat-stream:fail', 'completions:fail'],
      Emb: ['ready:skip', 'pulled:skip', 'models:pass', 'embeddings:pass', 'gateway-rejects-embeddings:skip'],
    });
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${token}`);
    // KServe models get their path prefix.
    expect(server.requests.filter((r) => r.path.startsWith('/llm-d-kq/kq/')).length).toBe(4);
    expect(result.target).toEqual({ mode: 'base-url', baseUrl: server.url });
    expect(result.models[0]!.checks[5]!.failure?.body).toBe('{"error":{"message":"bad key [redacted]"}}');
    expect(result.models[0]!.checks[5]!.failure?.cause).toBe('the endpoint wants credentials or refused them: give it a bearer token (app-serving verify reads APP_SERVING_VERIFY_TOKEN; the library takes an Authorization header in `headers`), whose value is never printed');
    for (const text of [formatJson(result), formatSummary(result), formatJunit(result), JSON.stringify(events)]) {
      expect(text).not.toContain(token);
    }
  });

  it('does not load a kubeconfig, and refuses --base-url with cluster options', async () => {
    const server = await startModelServer({ models: ['org/gen'] });
    const p = planOf([{ category: 'generative', name: 'Gen', slug: 'gen' }]);
    // A kubeconfig that cannot exist: never read in base-url mode.
    const result = await verifyPlan(p, { baseUrl: server.url });
    expect(result.ok).toBe(true);
    await expect(verifyPlan(p, { baseUrl: server.url, kubeconfig: '/nonexistent' })).rejects.toMatchObject({ code: 'invalid-option' });
  });
});

describe('adapters', () => {
  it('asks each adapter of a model by name through its endpoint, after the model\'s own checks; models without adapters get no such check', async () => {
    const p = planOf(
      [
        { category: 'generative', name: 'Gen', slug: 'gen', adapters: ['gen-sql', 'gen-chat'] },
        { category: 'generative', name: 'Other', slug: 'other' },
      ],
      { upstream: '2026-08' },
    );
    const server = await startModelServer({ models: ['org/gen', 'gen-sql', 'gen-chat', 'org/other'] });
    const result = await verifyPlan(p, { baseUrl: server.url });
    expect(statuses(result)).toEqual({
      Gen: ['ready:skip', 'pulled:skip', 'models:pass', 'chat:pass', 'chat-stream:pass', 'completions:pass', 'adapters:pass'],
      Other: ['ready:skip', 'pulled:skip', 'models:pass', 'chat:pass', 'chat-stream:pass', 'completions:pass'],
    });
    expect(server.requests.filter((r) => r.body?.model === 'gen-sql' || r.body?.model === 'gen-chat').map((r) => `${r.path} ${String(r.body?.model)}`)).toEqual([
      '/v1/chat/completions gen-sql',
      '/v1/chat/completions gen-chat',
    ]);
    const missing = await verifyPlan(p, { baseUrl: (await startModelServer({ models: ['org/gen', 'gen-sql', 'org/other'] })).url, models: ['Gen'] });
    expect(missing.ok).toBe(false);
    expect(missing.models[0]!.checks.find((c) => c.name === 'adapters')!.message).toBe('adapter "gen-chat" (of org/gen): POST /v1/chat/completions: HTTP 404');
  });
});

describe('options', () => {
  it('selects models by name or slug, and names the models there are for an unknown one', async () => {
    const server = await startModelServer({ models: ['org/gen', 'org/emb'] });
    const result = await verifyPlan(plan, { baseUrl: server.url, models: ['Gen', 'emb'] });
    expect(result.models.map((m) => m.name)).toEqual(['Gen', 'Emb']);
    const error = await verifyPlan(plan, { baseUrl: server.url, models: ['Nope'] }).catch((e: unknown) => e);
    expect(isVerifyError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'unknown-model', message: '--model Nope: not an enabled model of stack test (models: Gen, Kq, Emb)' });
  });

  it('rejects bad options before any check', async () => {
    const bad = [
      [{ timeoutMs: 0 }, '--timeout must be a positive duration, not 0'],
      [{ waitMs: -1 }, '--wait must be a non-negative duration, not -1'],
      [{ load: { requests: 0, concurrency: 1 } }, '--load must be a whole number from 1 to 10000, not 0'],
      [{ load: { requests: 5, concurrency: 1.5 } }, '--concurrency must be a whole number from 1 to 256, not 1.5'],
      [{ load: { requests: 5_000_000_000, concurrency: 1 } }, '--load must be a whole number from 1 to 10000, not 5000000000'],
      [{ load: { requests: 5, concurrency: 50_000 } }, '--concurrency must be a whole number from 1 to 256, not 50000'],
      [{ timeoutMs: 600 * 3_600_000 }, '--timeout is too long: at most 24 days (596h) can be timed'],
      [{ baseUrl: 'ftp://x' }, '--base-url must be http:// or https://, not ftp:'],
      [{ baseUrl: 'not a url' }, '--base-url [invalid URL] is not a URL'],
    ] as const;
    for (const [options, message] of bad) {
      await expect(verifyPlan(plan, options)).rejects.toMatchObject({ code: 'invalid-option', message });
    }
  });

  it('a progress callback that throws does not break the run', async () => {
    const server = await startModelServer({ models: ['org/gen'] });
    const p = planOf([{ category: 'generative', name: 'Gen', slug: 'gen' }]);
    const result = await verifyPlan(p, {
      baseUrl: server.url,
      onProgress: () => {
        throw new Error('display broke');
      },
    });
    expect(result.ok).toBe(true);
  });
});

describe('access: credentials, and the refusal check', () => {
  const key = 'k3y-0123456789abcdefghijklmn';
  const token = `ci:${key}`;
  const basic = `Basic ${Buffer.from(token).toString('base64')}`;
  const withAccess = (p: DeploymentPlan, access: Parameters<typeof accessPlan>[0]): DeploymentPlan => ({ ...p, models: p.models.map((m) => ({ ...m, access: accessPlan(access) })) });
  const gen = () => withAccess(planOf([{ category: 'generative', name: 'Gen', slug: 'gen' }]), { apiKeys: ['ci'] });

  it('passes against a gateway that enforces the key: the key goes as HTTP Basic, the same request without it is refused', async () => {
    const server = await startModelServer({ models: ['org/gen'], requireAuthorization: basic });
    const events: VerifyEvent[] = [];
    const result = await verifyPlan(gen(), { baseUrl: server.url, token, onProgress: (e) => events.push(e) });
    expect(statuses(result)).toEqual({ Gen: ['ready:skip', 'pulled:skip', 'models:pass', 'refuses-anonymous:pass', 'chat:pass', 'chat-stream:pass', 'completions:pass'] });
    const refusal = result.models[0]!.checks.find((c) => c.name === 'refuses-anonymous')!;
    expect(refusal.message).toBe('refused without credentials (HTTP 401)');
    expect(refusal.target).toBe('GET /v1/models without credentials via base URL ' + server.url);
    // Exactly one request went without credentials: the refusal check's.
    expect(server.requests.filter((r) => r.headers.authorization === undefined).map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/models']);
    for (const text of [formatJson(result), formatSummary(result), formatJunit(result), JSON.stringify(events)]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(basic.slice(6));
    }
  });

  it('fails against a gateway that ignores the key, saying the model answers without credentials', async () => {
    const server = await startModelServer({ models: ['org/gen'] });
    const result = await verifyPlan(gen(), { baseUrl: server.url, token });
    const refusal = result.models[0]!.checks.find((c) => c.name === 'refuses-anonymous')!;
    expect(refusal).toMatchObject({ status: 'fail', message: 'model Gen answers without credentials', failure: { expected: 'HTTP 401 or 403: model Gen takes API keys only', got: 'HTTP 200', httpStatus: 200 } });
    expect(result.ok).toBe(false);
    expect(formatSummary(result)).toContain('model Gen answers without credentials');
  });

  it('JWT: the token goes as a bearer token; an open model gets no refusal check and no token', async () => {
    const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJjaSJ9.c2lnbmF0dXJl';
    const server = await startModelServer({ models: ['org/gen'], requireAuthorization: `Bearer ${jwt}` });
    const p = withAccess(planOf([{ category: 'generative', name: 'Gen', slug: 'gen' }]), { jwt: { issuer: 'https://id', jwksUri: 'https://id/keys' } });
    expect((await verifyPlan(p, { baseUrl: server.url, token: jwt })).ok).toBe(true);
    const open = planOf([{ category: 'generative', name: 'Gen', slug: 'gen' }]);
    const plain = await startModelServer({ models: ['org/gen'] });
    const result = await verifyPlan(open, { baseUrl: plain.url, token: jwt });
    expect(result.models[0]!.checks.map((c) => c.name)).not.toContain('refuses-anonymous');
    expect(plain.requests.every((r) => r.headers.authorization === undefined)).toBe(true);
  });
});
