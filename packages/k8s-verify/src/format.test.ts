import { describe, expect, it } from 'vitest';
import { describeEvent, formatJson, formatJunit, formatSummary, summaryRows } from './format.ts';
import { checkResult } from './result.ts';
import type { ModelResult, VerifyResult } from './types.ts';

const gen: ModelResult = {
  name: 'Sim',
  slug: 'sim',
  category: 'generative',
  platform: 'llm-d',
  namespace: 'llm-d-sim',
  servedModelName: 'random',
  ok: false,
  durationMs: 1530,
  endpoints: [{ role: 'gateway', url: 'http://127.0.0.1:40001', via: 'port-forward svc/infra-sim-inference-gateway-istio:80 → pod/gw:80', error: null }],
  checks: [
    checkResult('ready', 'pass', 'decode 1/1 Ready; gateway 1/1 Ready; EPP 1/1 Ready', { durationMs: 41 }),
    checkResult('pulled', 'skip', 'no modelSource: the model server fetches its own weights (nothing pulled onto a volume)'),
    checkResult('models', 'pass', 'serves "random"', { durationMs: 12 }),
    checkResult('chat', 'fail', 'POST /v1/chat/completions: HTTP 404', {
      durationMs: 8,
      target: 'POST /v1/chat/completions via port-forward svc/infra-sim-inference-gateway-istio:80 → pod/gw:80',
      failure: { expected: 'HTTP 200 with a non-empty choices[0].message.content', got: 'HTTP 404 with an empty body', cause: 'no route matched /v1/chat/completions: <"&\'>', httpStatus: 404, body: null },
    }),
    checkResult('load', 'pass', '4 req × 2 concurrent', { durationMs: 1200 }),
  ],
  load: {
    label: 'smoke-level probe, not a benchmark',
    requests: 4,
    concurrency: 2,
    sent: 4,
    succeeded: 4,
    failed: 0,
    stopped: null,
    ttftMs: { p50: 35.2, p95: 60 },
    e2eMs: { p50: 410, p95: 1250 },
    outputTokensPerSecond: 18.5,
    tokenCount: 'chunks',
    wallMs: 1190,
    errors: [],
  },
};
const emb: ModelResult = {
  name: 'SimEmbeddings',
  slug: 'sim-embed',
  category: 'embedder',
  platform: 'llm-d',
  namespace: 'llm-d-sim-embed',
  servedModelName: 'embed',
  ok: true,
  durationMs: 300,
  endpoints: [],
  checks: [
    checkResult('embeddings', 'pass', '2 vectors of dimension 384', { durationMs: 20 }),
    checkResult('gateway-rejects-embeddings', 'info', '404: the Gateway has no route for this embedder', { durationMs: 3 }),
  ],
  load: null,
};
const result: VerifyResult = {
  schemaVersion: 1,
  stack: 'kind',
  ok: false,
  startedAt: '2026-01-02T03:04:05.000Z',
  durationMs: 1600,
  target: { mode: 'cluster', context: 'kind-kind', source: '~/.kube/config', endpoints: 'port-forward' },
  deadlineExceeded: false,
  counts: { pass: 5, fail: 1, skip: 1, info: 1 },
  models: [gen, emb],
  endpoint: null,
};

describe('formatSummary', () => {
  it('prints the table, the failures with expected/got/cause, the probe and the verdict', () => {
    expect(formatSummary(result)).toBe(`app-serving verify: stack kind, cluster context kind-kind (~/.kube/config), port-forward

MODEL          CHECK                       STATUS   TIME  DETAIL
Sim            ready                       PASS    41 ms  decode 1/1 Ready; gateway 1/1 Ready; EPP 1/1 Ready
               pulled                      SKIP     0 ms  no modelSource: the model server fetches its own weights (nothing pulled onto a volume)
               models                      PASS    12 ms  serves "random"
               chat                        FAIL     8 ms  POST /v1/chat/completions: HTTP 404
               load                        PASS    1.2 s  4 req × 2 concurrent
SimEmbeddings  embeddings                  PASS    20 ms  2 vectors of dimension 384
               gateway-rejects-embeddings  INFO     3 ms  404: the Gateway has no route for this embedder

Failures
  Sim · chat
    expected  HTTP 200 with a non-empty choices[0].message.content
    got       HTTP 404 with an empty body
    cause     no route matched /v1/chat/completions: <"&'>
    target    POST /v1/chat/completions via port-forward svc/infra-sim-inference-gateway-istio:80 → pod/gw:80

Latency probe (smoke-level probe, not a benchmark)
  MODEL  REQ  CONC  OK  TTFT p50  TTFT p95  E2E p50  E2E p95  TOK/S
  Sim      4     2   4     35 ms     60 ms   410 ms    1.3 s  18.5*
  * tokens counted as streamed content chunks (the server sent no usage)

FAILED: 5 passed, 1 failed, 1 skipped, 1 info (2 models, 1.6 s)
`);
  });

  it('lets the CLI colour the status cells and the verdict without shifting columns', () => {
    const text = formatSummary(result, { colorStatus: (status, cell) => `<${status}>${cell}</>` });
    expect(text).toContain('Sim            ready                       <pass>PASS  </>  41 ms  decode');
    expect(text).toContain('               chat                        <fail>FAIL  </>   8 ms');
    expect(text).toContain('<fail>FAILED</>: 5 passed');
  });

  it('cuts lines to a width', () => {
    const lines = formatSummary(result, { width: 60 }).split('\n');
    expect(lines[3]).toBe('Sim            ready                       PASS    41 ms  d…');
  });

  it('says when there is nothing to verify, and names a base URL target', () => {
    const empty: VerifyResult = { ...result, ok: true, models: [], counts: { pass: 0, fail: 0, skip: 0, info: 0 }, target: { mode: 'base-url', baseUrl: 'https://models.example.com' } };
    expect(formatSummary(empty)).toBe('app-serving verify: stack kind, base URL https://models.example.com\n\nNo model to verify.\n\nPASSED: 0 passed, 0 failed, 0 skipped (0 models, 1.6 s)\n');
  });

  it('gives rows with status values', () => {
    expect(summaryRows(result).map((r) => [r.model, r.check, r.status])).toEqual([
      ['Sim', 'ready', 'pass'],
      ['Sim', 'pulled', 'skip'],
      ['Sim', 'models', 'pass'],
      ['Sim', 'chat', 'fail'],
      ['Sim', 'load', 'pass'],
      ['SimEmbeddings', 'embeddings', 'pass'],
      ['SimEmbeddings', 'gateway-rejects-embeddings', 'info'],
    ]);
  });
});

describe('formatJunit', () => {
  it('writes one suite per model and one case per check', () => {
    const xml = formatJunit({ ...result, models: [{ ...emb, checks: [...emb.checks, checkResult('pulled', 'skip', 'cannot check: no exec permission (RBAC: create pods/exec)')] }], counts: { pass: 1, fail: 0, skip: 1, info: 1 } });
    expect(xml).toBe(`<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="app-serving verify kind" tests="3" failures="0" errors="0" skipped="1" time="1.600">
  <testsuite name="kind/SimEmbeddings" tests="3" failures="0" errors="0" skipped="1" time="0.300" timestamp="2026-01-02T03:04:05.000Z">
    <properties>
      <property name="platform" value="llm-d"/>
      <property name="category" value="embedder"/>
      <property name="namespace" value="llm-d-sim-embed"/>
      <property name="servedModelName" value="embed"/>
    </properties>
    <testcase name="embeddings" classname="app-serving.verify.kind.SimEmbeddings" time="0.020">
      <system-out>PASS: 2 vectors of dimension 384</system-out>
    </testcase>
    <testcase name="gateway-rejects-embeddings" classname="app-serving.verify.kind.SimEmbeddings" time="0.003">
      <system-out>INFO: 404: the Gateway has no route for this embedder</system-out>
    </testcase>
    <testcase name="pulled" classname="app-serving.verify.kind.SimEmbeddings" time="0.000">
      <skipped message="cannot check: no exec permission (RBAC: create pods/exec)"/>
    </testcase>
  </testsuite>
</testsuites>
`);
  });

  it('puts a failure with expected, got and cause, escaped', () => {
    const xml = formatJunit(result);
    expect(xml).toContain(
      '<failure message="POST /v1/chat/completions: HTTP 404" type="chat">expected: HTTP 200 with a non-empty choices[0].message.content\ngot: HTTP 404 with an empty body\ncause: no route matched /v1/chat/completions: &lt;&quot;&amp;&apos;&gt;\ntarget: POST /v1/chat/completions via port-forward svc/infra-sim-inference-gateway-istio:80 → pod/gw:80</failure>',
    );
    expect(xml).toContain('<testsuites name="app-serving verify kind" tests="7" failures="1" errors="0" skipped="1" time="1.600">');
    expect(xml).toContain('<system-out>smoke-level probe, not a benchmark: {&quot;label&quot;');
  });

  it('drops characters XML cannot carry', () => {
    const xml = formatJunit({ ...result, models: [{ ...emb, checks: [checkResult('embeddings', 'pass', 'bell\u0007 and nul\u0000 gone')] }] });
    expect(xml).toContain('<system-out>PASS: bell and nul gone</system-out>');
  });
});

describe('formatJson and describeEvent', () => {
  it('round-trips the result', () => {
    expect(JSON.parse(formatJson(result))).toEqual(result);
  });

  it('describes notable events in one line', () => {
    expect(describeEvent({ type: 'run-start', stack: 'kind', models: ['Sim'], target: result.target })).toBe('verifying 1 model of stack kind via cluster context kind-kind (~/.kube/config), port-forward');
    expect(describeEvent({ type: 'check-retry', model: 'Sim', check: 'ready', attempt: 2, retryInMs: 4000, message: 'decode 0/1 Ready' })).toBe('Sim ready: not yet (decode 0/1 Ready); retry 3 in 4 s');
    expect(describeEvent({ type: 'check-end', model: 'Sim', result: gen.checks[0]! })).toBe('Sim ready: PASS decode 1/1 Ready; gateway 1/1 Ready; EPP 1/1 Ready (41 ms)');
    expect(describeEvent({ type: 'model-end', result: gen })).toBe('Sim: FAILED (1.5 s)');
    expect(describeEvent({ type: 'check-start', model: 'Sim', check: 'ready' })).toBeNull();
  });
});
