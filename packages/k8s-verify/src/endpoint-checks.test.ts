import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadStackFile, modelListBody, notFoundBody, planDeployment, type DeploymentPlan, type EndpointPlan } from '@app-serving/core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startModelServer, type ModelServer } from '../test/model-server.ts';
import { grantedNames, jwtClaim } from './endpoint-checks.ts';
import { formatJunit, formatSummary } from './format.ts';
import { verifyPlan } from './verify.ts';

const CI = 'endpoint-ci-key-0Qm4T7vWz2Rp9Kd1Xy6B';
const BATCH = 'endpoint-batch-key-H3sL8nF5jC2uA7eV0g';

/** A 2026-08 stack with an endpoint (keys ci: every model, batch: Gen only) over two models behind the Router's proxy. */
function endpointPlan(access = "{keyFormat: bearer, apiKeys: {ci: ['*'], batch: [Gen]}}", genAccess = '{open: true}'): DeploymentPlan {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-verify-endpoint-'));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  write('models/generative/Gen/server-gen/values.yaml', 'image: vllm/vllm-openai:v0.30.0\nservedModelName: org/gen\n');
  write('models/embedder/Emb/server-emb/values.yaml', 'image: vllm/vllm-openai:v0.30.0\nservedModelName: org/emb\nport: 8200\n');
  write(
    'Pulumi.test.yaml',
    [
      'config:',
      '  app-serving:cloudProvider: cloud',
      '  app-serving:upstream: 2026-08',
      '  app-serving:router: {mode: standalone}',
      '  app-serving:apiKeys:',
      '    ci: {secure: v1:AAAA:BBBB}',
      '    batch: {secure: v1:AAAA:CCCC}',
      `  app-serving:endpoint: {access: ${access}}`,
      '  app-serving:models:',
      '    generative:',
      '      - name: Gen',
      `        access: ${genAccess}`,
      '    embedder:',
      '      - name: Emb',
      '        access: {open: true}',
      '',
    ].join('\n'),
  );
  try {
    return planDeployment(loadStackFile(join(dir, 'Pulumi.test.yaml')), join(dir, 'models'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** How a fake endpoint misbehaves. */
interface Faults {
  /** Answers /v1/models with this list instead of the plan's. */
  readonly list?: unknown;
  /** Answers a request for no known model with this status and body (e.g. Envoy's empty 404, or a model's 200). */
  readonly unknown?: { status: number; body: string };
  /** Lets requests without credentials through. */
  readonly open?: boolean;
  /** Lets every key reach every model. */
  readonly ignoreGrants?: boolean;
  /** Routes this name nowhere (the route is missing): Envoy's empty 404. */
  readonly unrouted?: string;
}

/**
 * A stand-in for the stack's endpoint as its objects make it behave (docs/endpoint.md): Bearer keys
 * checked, the plan's list for GET /v1/models, a request routed by its body's model to a model
 * server when its key is granted the model (403 when not), an unknown model answered 404 with the
 * OpenAI error — each of which a fault can break.
 */
async function startEndpoint(endpoint: EndpointPlan, upstream: ModelServer, faults: Faults = {}): Promise<{ url: string; requests: { path: string; host: string | undefined }[] }> {
  const keys: Record<string, string> = { [CI]: 'ci', [BATCH]: 'batch' };
  const requests: { path: string; host: string | undefined }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path: req.url ?? '/', host: req.headers.host });
      const json = (status: number, body: string) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body);
      };
      const key = keys[(req.headers.authorization ?? '').replace(/^Bearer /, '')];
      if (!key && !faults.open) return json(401, '');
      if (req.method === 'GET' && req.url === '/v1/models') return json(200, faults.list !== undefined ? JSON.stringify(faults.list) : modelListBody(endpoint.list));
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { model?: string };
      const model = endpoint.models.find((m) => m.names.includes(String(body.model)));
      if (!model || body.model === faults.unrouted) return faults.unknown ? json(faults.unknown.status, faults.unknown.body) : json(404, notFoundBody());
      if (!faults.ignoreGrants && !(key && model.keys.includes(key))) return json(403, 'RBAC: access denied');
      const forward = http.request(`${upstream.url}${req.url}`, { method: req.method, headers: { 'content-type': 'application/json' } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

async function run(faults: Faults = {}, token = `ci:${CI}`, plan = endpointPlan()) {
  const models = await startModelServer({ models: ['org/gen', 'org/emb'] });
  const endpoint = await startEndpoint(plan.endpoint!, models, faults);
  const result = await verifyPlan(plan, { baseUrl: models.url, endpointUrl: endpoint.url, token, timeoutMs: 5000 });
  const checks = result.endpoint!.checks.map((c) => `${c.name}${typeof c.data.model === 'string' ? ` ${c.data.model}` : ''}:${c.status}`);
  return { result, checks, endpoint };
}

describe('verify through the stack endpoint (local servers standing in for it)', () => {
  it('passes against an endpoint that behaves as docs/endpoint.md says: the list exact, unknown models refused with 404, each name answering, another key refused', async () => {
    const { result, checks } = await run();
    expect(checks).toEqual(['endpoint-models:pass', 'endpoint-unknown-model:pass', 'endpoint-refuses-anonymous:pass', 'endpoint-chat org/gen:pass', 'endpoint-embeddings org/emb:pass']);
    expect(result.ok).toBe(true);
    expect(result.endpoint).toMatchObject({ name: 'endpoint', namespace: 'app-serving', class: 'envoy', ok: true });
    // batch is granted Gen only: Emb must refuse it.
    const batch = await run({}, `batch:${BATCH}`);
    expect(batch.checks).toEqual(['endpoint-models:pass', 'endpoint-unknown-model:pass', 'endpoint-refuses-anonymous:pass', 'endpoint-chat org/gen:pass', 'endpoint-refuses-ungranted org/emb:pass']);
    // The key never appears in the result or its reports.
    for (const text of [JSON.stringify(batch.result), formatSummary(batch.result), formatJunit(batch.result)]) expect(text).not.toContain(BATCH);
    expect(formatSummary(result)).toMatch(/endpoint app-serving\/endpoint +endpoint-models +PASS/);
  });

  it('fails a /v1/models that is not exactly the stack\'s, naming what is missing and what is not the stack\'s', async () => {
    const { checks, result } = await run({ list: { object: 'list', data: [{ id: 'org/gen', object: 'model' }, { id: 'other', object: 'model' }] } });
    expect(checks[0]).toBe('endpoint-models:fail');
    expect(result.endpoint!.checks[0]!.message).toBe("the list is not the stack's: missing org/emb; not the stack's other");
    const shape = await run({ list: [{ id: 'org/gen' }] });
    expect(shape.result.endpoint!.checks[0]!.message).toBe('not an OpenAI model list ({"object": "list", "data": [...]})');
  });

  it("fails an unknown model answered by Envoy's empty 404, by a model (200), or refused 403 before the 404, each with its cause", async () => {
    const empty = await run({ unknown: { status: 404, body: '' } });
    expect(empty.result.endpoint!.checks[1]).toMatchObject({ name: 'endpoint-unknown-model', status: 'fail', message: 'an unknown model: not an OpenAI error body ({"error": {...}})' });
    const answered = await run({ unknown: { status: 200, body: '{"choices": []}' } });
    expect(answered.result.endpoint!.checks[1]!.failure!.cause).toContain('a model answered for a name it does not serve');
    const rbac = await run({ unknown: { status: 403, body: 'RBAC: access denied' } });
    expect(rbac.result.endpoint!.checks[1]!.failure!.cause).toContain('lacks the rule for unknown names');
  });

  it('fails an endpoint that answers without credentials, or lets a key reach a model it is not granted', async () => {
    expect((await run({ open: true })).checks).toContain('endpoint-refuses-anonymous:fail');
    const grants = await run({ ignoreGrants: true }, `batch:${BATCH}`);
    expect(grants.checks).toContain('endpoint-refuses-ungranted org/emb:fail');
    expect(grants.result.endpoint!.checks.find((c) => c.name === 'endpoint-refuses-ungranted')!.message).toBe('"org/emb" answers a credential the stack does not grant it');
  });

  it('fails a model whose name the endpoint routes nowhere', async () => {
    const { checks } = await run({ unrouted: 'org/gen' });
    expect(checks).toContain('endpoint-chat org/gen:fail');
  });

  it('skips what needs credentials when none is given, and leaves the endpoint out with --base-url alone', async () => {
    const { checks } = await run({}, '');
    expect(checks).toEqual(['endpoint-models:skip', 'endpoint-unknown-model:skip', 'endpoint-refuses-anonymous:pass', 'endpoint-chat org/gen:skip', 'endpoint-embeddings org/emb:skip']);
    const plan = endpointPlan();
    const models = await startModelServer({ models: ['org/gen', 'org/emb'] });
    const result = await verifyPlan(plan, { baseUrl: models.url, token: `ci:${CI}`, timeoutMs: 5000 });
    expect(result.endpoint!.checks.map((c) => c.status)).toEqual(['skip', 'skip', 'skip']);
    expect((await verifyPlan(plan, { baseUrl: models.url, endpoint: false, timeoutMs: 5000 })).endpoint).toBeNull();
  });
});

describe('a model behind the endpoint only (no gateway of its own)', () => {
  it("leaves its access to the endpoint's checks: refuses-anonymous is information there, and no credential is sent to its proxy", async () => {
    const plan = endpointPlan(undefined, '{apiKeys: [ci, batch]}');
    const models = await startModelServer({ models: ['org/gen', 'org/emb'] });
    const endpoint = await startEndpoint(plan.endpoint!, models);
    const result = await verifyPlan(plan, { baseUrl: models.url, endpointUrl: endpoint.url, token: `ci:${CI}`, timeoutMs: 5000 });
    const gen = result.models.find((m) => m.name === 'Gen')!;
    expect(gen.checks.find((c) => c.name === 'refuses-anonymous')).toMatchObject({ status: 'info', message: expect.stringContaining("the stack's endpoint enforces its access") });
    expect(models.requests.filter((r) => r.path.startsWith('/v1/') && r.headers.authorization !== undefined)).toEqual([]);
    expect(result.ok).toBe(true);
  });
});

describe('what a credential grants through the endpoint', () => {
  it('a key: the models the stack grants its name; a JWT: those its claim names (read, not verified); open: every name', () => {
    const plan = endpointPlan().endpoint!;
    expect([...grantedNames(plan, `batch:${BATCH}`)!]).toEqual(['org/gen']);
    expect([...grantedNames(plan, `ci:${CI}`)!].sort()).toEqual(['org/emb', 'org/gen']);
    expect(grantedNames(plan, undefined)).toBeNull();
    const token = (payload: object) => `e30.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.sig`;
    expect(jwtClaim(token({ org: { models: ['a', 'b', 3] } }), 'org.models')).toEqual(['a', 'b']);
    expect(jwtClaim(token({ models: 'a' }), 'models')).toEqual(['a']);
    expect(jwtClaim('not-a-jwt', 'models')).toEqual([]);
    const jwt = endpointPlan('{jwt: {issuer: https://id.example.com, jwksUri: https://id.example.com/k}}').endpoint!;
    expect([...grantedNames(jwt, token({ models: ['org/emb'] }))!]).toEqual(['org/emb']);
    const open = endpointPlan('{open: true}').endpoint!;
    expect([...grantedNames(open, undefined)!].sort()).toEqual(['org/emb', 'org/gen']);
  });
});
