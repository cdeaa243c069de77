/**
 * What the real data path costs a request: time to first token and decode speed of the same model on
 * the same vLLM pod, asked through the gateway (Envoy programmed by Envoy Gateway, the GAIE EPP over
 * ext_proc picking the pod, Envoy's endpoint override) and straight at the pod, in the same run,
 * alternating so that the machine's load falls on both alike. The stack (stacks/Pulumi.bench.yaml)
 * is one open chat model on one pod, deployed by the real engine into the tier's cluster.
 *
 *   cd apps/data-path && node ../../tools/test-cluster/netns.mjs -- npx vitest run --config bench/vitest.config.ts
 *
 * BENCH_REQUESTS (per path, default 12) and BENCH_TOKENS (tokens per answer, default 64) change the
 * run. Prints a table and writes `.reports/bench/data-path-overhead.json` at the repository's root.
 * Measures; asserts only that every request answered.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createNodes, createTestStack, list, type TestStack } from '@app-serving/test-cluster';
import { appServingProgram } from '../../app-serving/src/program.ts';
import { clusterShape, stackUnderTest, type StackUnderTest } from '../../app-serving/test/deploy/support.ts';
import { MODELS_DIR, STACKS_DIR, TIER_DIR, provideWeights, startTier, type Tier } from '../test/tier.ts';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 12);
const TOKENS = Number(process.env.BENCH_TOKENS ?? 64);

interface Sample {
  readonly ttftMs: number;
  readonly tokens: number;
  readonly decodeTokensPerSecond: number;
  readonly totalMs: number;
}

/** One streamed chat answer of exactly TOKENS tokens (`ignore_eos`): when its first and last content arrived. */
function streamed(url: string, model: string, prompt: string): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ model, messages: [{ role: 'user', content: prompt }], max_tokens: TOKENS, temperature: 0, ignore_eos: true, stream: true });
    const started = performance.now();
    let first = 0;
    let last = 0;
    let tokens = 0;
    let buffer = '';
    const req = request(`${url}/v1/chat/completions`, { method: 'POST', timeout: 600_000, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`${url}: HTTP ${res.statusCode}`));
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, at).replace(/^data: /, '');
          buffer = buffer.slice(at + 2);
          if (event === '[DONE]') continue;
          const content = (JSON.parse(event) as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta?.content;
          if (!content) continue;
          const now = performance.now();
          if (tokens === 0) first = now;
          last = now;
          tokens += 1;
        }
      });
      res.on('end', () => resolve({ ttftMs: first - started, tokens, decodeTokensPerSecond: tokens > 1 ? ((tokens - 1) * 1000) / (last - first) : 0, totalMs: last - started }));
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer`)));
    req.on('error', reject);
    req.end(body);
  });
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

let tier: Tier;
let stack: TestStack;
let sut: StackUnderTest;
let removeWeights = () => {};

beforeAll(async () => {
  tier = await startTier();
  sut = stackUnderTest(join(STACKS_DIR, 'Pulumi.bench.yaml'), { kubeconfig: tier.cluster.kubeconfigPath, modelsDir: MODELS_DIR });
  removeWeights = provideWeights(sut.plan, { smollm2: tier.tools.vllm.chatModelDir });
  await createNodes(tier.cluster, clusterShape(sut.plan, sut.name));
  stack = await createTestStack({ cluster: tier.cluster, stackName: sut.name, config: sut.config, secrets: sut.secrets, program: () => appServingProgram(sut.modelsDir) });
  expect((await stack.up()).result.summary.result).toBe('succeeded');
});

afterAll(async () => {
  await stack?.remove();
  await tier?.stop();
  removeWeights();
});

it('time to first token and decode speed: through Envoy and the EPP, and straight to vLLM', async () => {
  const model = sut.plan.models[0]!;
  if (model.platform !== 'llm-d') throw new Error('an llm-d model');
  const selector = encodeURIComponent(`gateway.envoyproxy.io/owning-gateway-name=${model.gateway.name}`);
  const proxy = (await list(tier.cluster, `/api/v1/namespaces/envoy-gateway-system/pods?labelSelector=${selector}`)).find((p) => p.status?.podIP);
  const service = (await list(tier.cluster, `/api/v1/namespaces/envoy-gateway-system/services?labelSelector=${selector}`))[0];
  const server = (await list(tier.cluster, `/api/v1/namespaces/${model.namespace}/pods?labelSelector=${encodeURIComponent('llm-d.ai/model=smollm2')}`)).find((p) => p.status?.podIP);
  const paths = {
    gateway: `http://${proxy.status.podIP}:${service.spec.ports.find((p: any) => p.port === 80).targetPort}`,
    direct: `http://${server.status.podIP}:${model.modelServer.port}`,
  };
  const name = model.modelServer.servedModelName;
  // Warm both paths (the first request compiles nothing with --enforce-eager, but fills caches).
  for (const url of Object.values(paths)) await streamed(url, name, 'Warm up.');
  const samples: Record<keyof typeof paths, Sample[]> = { gateway: [], direct: [] };
  const load: number[] = [];
  for (let i = 0; i < REQUESTS; i += 1) {
    const order = (i % 2 === 0 ? ['gateway', 'direct'] : ['direct', 'gateway']) as (keyof typeof paths)[];
    for (const path of order) samples[path].push(await streamed(paths[path], name, `Tell me about the number ${i}.`));
    load.push(loadavg()[0]!);
  }
  for (const path of Object.keys(samples) as (keyof typeof paths)[]) expect(samples[path].every((s) => s.tokens === TOKENS)).toBe(true);
  const summary = Object.fromEntries(
    (Object.keys(samples) as (keyof typeof paths)[]).map((path) => [path, { ttftMs: median(samples[path].map((s) => s.ttftMs)), decodeTokensPerSecond: median(samples[path].map((s) => s.decodeTokensPerSecond)), totalMs: median(samples[path].map((s) => s.totalMs)) }]),
  ) as Record<keyof typeof paths, { ttftMs: number; decodeTokensPerSecond: number; totalMs: number }>;
  const report = {
    measuredAt: new Date().toISOString(),
    requestsPerPath: REQUESTS,
    tokensPerAnswer: TOKENS,
    loadAverage: { min: Math.min(...load), max: Math.max(...load) },
    medians: summary,
    overhead: {
      ttftRatio: summary.gateway.ttftMs / summary.direct.ttftMs,
      ttftAddedMs: summary.gateway.ttftMs - summary.direct.ttftMs,
      decodeSpeedRatio: summary.gateway.decodeTokensPerSecond / summary.direct.decodeTokensPerSecond,
    },
    samples,
  };
  const out = join(TIER_DIR, '..', '..', '.reports', 'bench');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'data-path-overhead.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(
    [
      `${REQUESTS} requests per path, ${TOKENS} tokens each, load ${report.loadAverage.min.toFixed(1)}–${report.loadAverage.max.toFixed(1)}`,
      `                 TTFT (median)   decode tokens/s (median)`,
      `  gateway+EPP    ${summary.gateway.ttftMs.toFixed(0).padStart(7)} ms   ${summary.gateway.decodeTokensPerSecond.toFixed(1).padStart(8)}`,
      `  straight       ${summary.direct.ttftMs.toFixed(0).padStart(7)} ms   ${summary.direct.decodeTokensPerSecond.toFixed(1).padStart(8)}`,
      `  overhead       ×${report.overhead.ttftRatio.toFixed(2)} (+${report.overhead.ttftAddedMs.toFixed(0)} ms)   ×${report.overhead.decodeSpeedRatio.toFixed(2)}`,
    ].join('\n'),
  );
});
