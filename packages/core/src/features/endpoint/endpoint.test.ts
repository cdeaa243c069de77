import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { issuesOf, REPO_ROOT, stackFile, tempRepo } from '../../../test/helpers.ts';
import { parseStackFile } from '../../stack.ts';
import { IssueList, type Issue } from '../../errors.ts';
import { planDeployment, type DeploymentPlan, type ModelPlan } from '../../plan.ts';
import { envoyGatewayClassOf } from '../../envoy-gateway.ts';
import { ENDPOINT_TOOLS } from '../index.ts';
import { BBR_CHART, MODEL_HEADER } from './facts.ts';
import { endpointKeyObjects, luaAnswers, notFoundBody } from './manifests.ts';
import { adaptersOf, planEndpoint, type EndpointPlan } from './plan.ts';
import { grantedModels, keyReachProblem, type EndpointEntry } from './rules.ts';

const MODELS = join(REPO_ROOT, 'models');
const KEYS = ['app-serving:apiKeys:', '  ci:', '    secure: v1:abc', '  batch:', '    secure: v1:def', '  other:', '    secure: v1:ghi'];

/** A cloud stack on the 2026-08 set with the given `app-serving:` lines. */
function config(lines: readonly string[]) {
  return parseStackFile(stackFile(['app-serving:upstream: 2026-08', 'app-serving:cloudProvider: cloud', ...lines].join('\n')), 'Pulumi.ep.yaml', 'ep', { checkRules: false });
}
const planOf = (lines: readonly string[], modelsDir = MODELS): DeploymentPlan => planDeployment(config(lines), modelsDir);
const problems = (lines: readonly string[], modelsDir = MODELS): Issue[] => issuesOf(() => planOf(lines, modelsDir));
/** Each issue as [path, message], for a comparison with [path, expect.stringContaining(…)]. */
const short = (issues: readonly Issue[]) => issues.map((i) => [i.path, i.message]);
const has = (path: string, fragment: string) => [path, expect.stringContaining(fragment)];

/** The Envoy Gateway stack of docs/endpoint.md: two generative models behind the Router's own proxy, an embedder, keys granting models. */
const ENVOY_STACK = [
  'app-serving:router:',
  '  gatewayClass: envoy',
  ...KEYS,
  'app-serving:endpoint:',
  '  hostname: models.example.com',
  '  access:',
  '    keyFormat: bearer',
  '    apiKeys:',
  "      ci: ['*']",
  '      batch: [Qwen3-0.6B]',
  '    rateLimit:',
  '      requestsPerMinute: 100',
  'app-serving:models:',
  '  generative:',
  '    - name: Qwen3-0.6B',
  '      gateway: false',
  '      access:',
  '        apiKeys: [ci, batch]',
  '        rateLimit:',
  '          requestsPerMinute: 30',
  '    - name: Sim',
  '      gateway: false',
  '      access:',
  '        open: true',
  '  embedder:',
  '    - name: SimEmbeddings',
  '      access:',
  '        open: true',
];

describe('the endpoint on Envoy Gateway (class envoy)', () => {
  const plan = planOf(ENVOY_STACK);
  const endpoint = plan.endpoint!;

  it('routes each model by its served name to where its requests are taken: the Router\'s own proxy (its EPP picks), or the embeddings Service', () => {
    expect(endpoint).toMatchObject({ name: 'endpoint', namespace: 'app-serving', class: 'envoy', gatewayClassName: 'envoy', hostname: 'models.example.com', port: 80 });
    expect(endpoint.service.namespace).toBe('envoy-gateway-system');
    expect(endpoint.models.map((m) => [m.model, m.names, `${m.backend.kind} ${m.backend.namespace}/${m.backend.name}:${m.backend.port}`, m.route])).toEqual([
      ['Qwen3-0.6B', ['Qwen/Qwen3-0.6B'], 'Service llm-d-qwen3-06b/router-qwen3-06b-epp:8081', 'endpoint-qwen3-06b'],
      ['Sim', ['random'], 'Service llm-d-sim/router-sim-epp:8081', 'endpoint-sim'],
      ['SimEmbeddings', ['sim-embeddings'], 'Service llm-d-sim-embed/ms-sim-embed-embeddings:8200', 'endpoint-sim-embed'],
    ]);
    // gateway: false runs the Router's standalone chart for the model; the embedder keeps its own.
    const qwen = plan.models.find((m) => m.name === 'Qwen3-0.6B')!;
    expect(qwen.platform === 'llm-d' && qwen.upstream === '2026-08' && qwen.router.mode).toBe('standalone');
  });

  it("grants each key the models named (\"*\": every model whose own access admits it), and keeps each model's own limit when smaller", () => {
    expect(endpoint.access).toMatchObject({ mode: 'apiKeys', keyFormat: 'bearer', grants: { batch: ['Qwen3-0.6B'], ci: ['Qwen3-0.6B', 'Sim', 'SimEmbeddings'] }, requestsPerMinute: 100 });
    expect(endpoint.models.map((m) => [m.model, m.keys, m.requestsPerMinute])).toEqual([
      ['Qwen3-0.6B', ['batch', 'ci'], 30],
      ['Sim', ['ci'], 100],
      ['SimEmbeddings', ['ci'], 100],
    ]);
  });

  it('answers GET /v1/models with exactly the models, in the OpenAI shape, and an unknown model with a 404 error naming /v1/models', () => {
    const filter = endpoint.manifests.modelsFilter as any;
    expect(filter.spec.directResponse).toMatchObject({ contentType: 'application/json', statusCode: 200, body: { type: 'Inline' } });
    expect(JSON.parse(filter.spec.directResponse.body.inline)).toEqual({
      object: 'list',
      data: [
        { id: 'Qwen/Qwen3-0.6B', object: 'model', created: 0, owned_by: 'app-serving' },
        { id: 'random', object: 'model', created: 0, owned_by: 'app-serving' },
        { id: 'sim-embeddings', object: 'model', created: 0, owned_by: 'app-serving' },
      ],
    });
    const notFound = (endpoint.manifests.notFoundFilter as any).spec.directResponse;
    expect(notFound.statusCode).toBe(404);
    expect(JSON.parse(notFound.body.inline).error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_found', param: 'model' });
    expect(JSON.parse(notFound.body.inline).error.message).toContain('GET /v1/models');
    // Envoy Gateway reads a direct response body as a format string: no `%` may reach it.
    expect(`${filter.spec.directResponse.body.inline}${notFound.body.inline}`).not.toContain('%');
  });

  it('puts what every request needs on the route it enters by: the key check and the body-based router; the grants and limits on each model\'s route', () => {
    const m = endpoint.manifests;
    expect((m.entryRoute as any).spec.rules.map((r: any) => [r.matches, r.filters[0].extensionRef.name])).toEqual([
      [[{ path: { type: 'Exact', value: '/v1/models' }, method: 'GET' }], 'endpoint-models'],
      [[{ path: { type: 'PathPrefix', value: '/' } }], 'endpoint-not-found'],
    ]);
    expect((m.bbrPolicy as any).spec).toEqual({
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'endpoint-entry' }],
      extProc: [{ backendRefs: [{ group: '', kind: 'Service', name: 'body-based-router', port: 9004 }], processingMode: { request: { body: 'FullDuplexStreamed' } }, failOpen: false, messageTimeout: '10s' }],
    });
    expect((m.clientTrafficPolicy as any).spec.headers).toEqual({ earlyRequestHeaders: { remove: [MODEL_HEADER] } });
    expect((m.entrySecurityPolicy as any).spec.apiKeyAuth).toEqual({
      credentialRefs: [{ group: '', kind: 'Secret', name: 'endpoint-api-keys' }],
      extractFrom: [{ headers: ['Authorization'] }],
      forwardClientIDHeader: 'x-app-serving-client',
      sanitize: true,
    });
    const qwen = m.routes.find((r) => r.model === 'Qwen3-0.6B')!;
    expect((qwen.securityPolicy as any).spec.authorization).toEqual({
      defaultAction: 'Deny',
      rules: [{ name: 'granted-keys', action: 'Allow', principal: { headers: [{ name: 'x-app-serving-client', values: ['batch', 'ci'] }] } }],
    });
    expect((qwen.backendTrafficPolicy as any).spec.rateLimit.local.rules).toEqual([{ clientSelectors: [{ headers: [{ name: 'x-app-serving-client', type: 'Distinct' }] }], limit: { requests: 30, unit: 'Minute' } }]);
    expect((qwen.httpRoute as any).spec.rules).toEqual([
      {
        matches: [{ path: { type: 'PathPrefix', value: '/' }, headers: [{ type: 'Exact', name: MODEL_HEADER, value: 'Qwen/Qwen3-0.6B' }] }],
        backendRefs: [{ group: '', kind: 'Service', name: 'router-qwen3-06b-epp', namespace: 'llm-d-qwen3-06b', port: 8081 }],
        timeouts: { request: '300s' },
      },
    ]);
    expect((qwen.referenceGrant as any).spec).toEqual({ from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'app-serving' }], to: [{ group: '', kind: 'Service', name: 'router-qwen3-06b-epp' }] });
  });

  it("runs GAIE v1.5.0's body-based router with the one plugin the routes need, in plain gRPC (Envoy Gateway verifies TLS only against a CA)", () => {
    expect(endpoint.bbr.chart).toEqual(BBR_CHART);
    expect(endpoint.bbr.values).toEqual({
      bbr: {
        image: { registry: 'registry.k8s.io', repository: 'gateway-api-inference-extension/bbr', tag: 'v1.5.0', pullPolicy: 'IfNotPresent' },
        plugins: [{ type: 'body-field-to-header', name: 'model-extractor', json: { fieldName: 'model', headerName: 'X-Gateway-Model-Name' } }],
        // `{secure-serving: false}` would render `--secure-serving "false"`: pflag reads that as true.
        flags: { 'secure-serving=false': '' },
      },
      provider: { name: 'none' },
      inferenceGateway: { name: 'endpoint' },
    });
    expect(plan.images.map((i) => i.image)).toContain('registry.k8s.io/gateway-api-inference-extension/bbr:v1.5.0');
  });

  it('holds the keys in clear for Bearer (Envoy Gateway compares keys), as hashes for Basic', () => {
    const bearer = endpointKeyObjects(endpoint, ENDPOINT_TOOLS, { keys: { ci: 'k1', batch: 'k2' } });
    expect(bearer).toEqual([{ apiVersion: 'v1', kind: 'Secret', metadata: expect.objectContaining({ name: 'endpoint-api-keys', namespace: 'app-serving' }), type: 'Opaque', stringData: { ci: 'k1', batch: 'k2' } }]);
    const basic = planOf(ENVOY_STACK.map((l) => (l === '    keyFormat: bearer' ? '    keyFormat: basic' : l))).endpoint!;
    expect((basic.manifests.entrySecurityPolicy as any).spec.basicAuth).toEqual({ users: { name: 'endpoint-api-keys' }, forwardUsernameHeader: 'x-app-serving-client' });
    expect(endpointKeyObjects(basic, ENDPOINT_TOOLS, { htpasswd: 'ci:{SHA}x' })[0]).toMatchObject({ stringData: { '.htpasswd': 'ci:{SHA}x' } });
  });

  it('warns that Bearer keys are held in clear until the stack says keyFormat, and warns once about an endpoint open by default', () => {
    const defaulted = planOf(ENVOY_STACK.filter((l) => l !== '    keyFormat: bearer'));
    expect(defaulted.warnings.filter((w) => w.code === 'warning.keys-in-clear').map((w) => w.path)).toEqual(['endpoint.access.apiKeys']);
    expect(plan.warnings.filter((w) => w.code === 'warning.keys-in-clear')).toEqual([]);
    const open = planOf(['app-serving:router:', '  mode: standalone', 'app-serving:endpoint: {}', 'app-serving:models:', '  generative:', '    - name: Sim']);
    expect(open.warnings.filter((w) => w.code === 'warning.open-access').map((w) => w.path)).toEqual(['endpoint']);
  });
});

describe('the endpoint on Istio (class istio)', () => {
  const lines = [
    'app-serving:router:',
    '  gatewayClass: istio',
    ...KEYS,
    'app-serving:endpoint:',
    '  access:',
    '    apiKeys:',
    '      ci: [Qwen3-0.6B, Sim]',
    '      other: [Sim]',
    '    rateLimit:',
    '      requestsPerMinute: 60',
    'app-serving:models:',
    '  generative:',
    '    - name: Qwen3-0.6B',
    '      access:',
    '        apiKeys: [ci]',
    '    - name: Sim',
    '      gateway: false',
    '      access:',
    '        open: true',
  ];
  const endpoint = planOf(lines).endpoint!;

  it("routes a model behind its own Istio Gateway to its InferencePool (Istio calls the pool's EPP after the router), one without to the Router's proxy", () => {
    expect(endpoint.class).toBe('istio');
    expect(endpoint.access.keyFormat).toBe('basic');
    expect(endpoint.service).toMatchObject({ name: 'endpoint-istio', namespace: 'app-serving' });
    expect(endpoint.models.map((m) => `${m.backend.kind} ${m.backend.name}${m.backend.port ? `:${m.backend.port}` : ''}`)).toEqual(['InferencePool router-qwen3-06b', 'Service router-sim-epp:8081']);
    expect((endpoint.manifests.routes[0]!.httpRoute as any).spec.rules[0].backendRefs).toEqual([{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'router-qwen3-06b', namespace: 'llm-d-qwen3-06b' }]);
    expect((endpoint.manifests.gateway as any).metadata.labels['istio.io/enable-inference-extproc']).toBe('true');
    expect(endpoint.bbr.values).toMatchObject({ provider: { name: 'istio' }, inferenceGateway: { name: 'endpoint' } });
    expect((endpoint.bbr.values as any).bbr.flags).toBeUndefined();
  });

  it('allows each key its models, GET /v1/models and unknown names (answered 404 by the Lua filter) and nothing else', () => {
    const rules = (endpoint.manifests.authorizationPolicy as any).spec.rules;
    expect(rules).toEqual([
      { when: [{ key: 'request.headers[x-app-serving-client]', values: ['ci'] }, { key: 'request.headers[x-gateway-model-name]', values: ['Qwen/Qwen3-0.6B', 'random'] }] },
      { when: [{ key: 'request.headers[x-app-serving-client]', values: ['other'] }, { key: 'request.headers[x-gateway-model-name]', values: ['random'] }] },
      { to: [{ operation: { methods: ['GET'], paths: ['/v1/models'] } }], when: [{ key: 'request.headers[x-app-serving-client]', values: ['ci', 'other'] }] },
      { when: [{ key: 'request.headers[x-app-serving-client]', values: ['ci', 'other'] }, { key: 'request.headers[x-gateway-model-name]', notValues: ['Qwen/Qwen3-0.6B', 'random'] }] },
    ]);
    const lua = luaAnswers(endpoint);
    expect(lua).toContain('[==[Qwen/Qwen3-0.6B]==]');
    expect(lua).toContain(notFoundBody());
    expect(lua).toContain('headers:get("x-gateway-model-name")');
  });

  it('checks keys as HTTP Basic first in the chain, and limits each caller per model name before the router', () => {
    const [filter] = endpointKeyObjects(endpoint, ENDPOINT_TOOLS, { htpasswd: 'ci:{SHA}x' }) as any[];
    expect(filter.kind).toBe('EnvoyFilter');
    expect(filter.spec.priority).toBe(10);
    expect(filter.spec.configPatches.map((p: any) => [p.patch.operation, p.patch.value.name])).toEqual([
      ['INSERT_BEFORE', 'envoy.filters.http.local_ratelimit'],
      ['INSERT_FIRST', 'envoy.filters.http.basic_auth'],
    ]);
    const limit = filter.spec.configPatches[0].patch.value.typed_config;
    expect(limit.descriptors).toEqual([
      { entries: [{ key: 'client' }, { key: 'model', value: 'Qwen/Qwen3-0.6B' }], token_bucket: { max_tokens: 60, tokens_per_fill: 60, fill_interval: '60s' } },
      { entries: [{ key: 'client' }, { key: 'model', value: 'random' }], token_bucket: { max_tokens: 60, tokens_per_fill: 60, fill_interval: '60s' } },
    ]);
  });

  it('grants by a JWT claim: one rule per model, its served name in the claim and its names in the header', () => {
    const jwt = planOf([
      'app-serving:router:',
      '  gatewayClass: istio',
      'app-serving:endpoint:',
      '  access:',
      '    jwt:',
      '      issuer: https://id.example.com',
      '      jwksUri: https://id.example.com/keys',
      '      modelsClaim: org.models',
      'app-serving:models:',
      '  generative:',
      '    - name: Sim',
      '      gateway: false',
      '      access:',
      '        open: true',
    ]).endpoint!;
    expect((jwt.manifests.authorizationPolicy as any).spec.rules[0]).toEqual({
      from: [{ source: { requestPrincipals: ['https://id.example.com/*'] } }],
      when: [{ key: 'request.auth.claims[org][models]', values: ['random'] }, { key: 'request.headers[x-gateway-model-name]', values: ['random'] }],
    });
    expect((jwt.manifests.requestAuthentication as any).spec.jwtRules[0]).toMatchObject({ issuer: 'https://id.example.com', outputClaimToHeaders: [{ header: 'x-app-serving-client', claim: 'sub' }] });
  });
});

describe('adapters: routed to their base model, listed with their parent', () => {
  it('matches every adapter name on its base model\'s route, and lists it in /v1/models with parent', () => {
    const adapted = (m: ModelPlan): ModelPlan => ({ ...m, adapters: ['sim-lora-a', 'sim-lora-b'].map((name) => ({ name, parent: 'random', source: { kind: 'huggingface' as const, repo: `org/${name}`, revision: null }, path: `org/${name}` })) });
    const cfg = config(ENVOY_STACK);
    const plan = planDeployment(cfg, MODELS);
    const models = plan.models.map((m) => (m.name === 'Sim' ? adapted(m) : m));
    expect(adaptersOf(models.find((m) => m.name === 'Sim')!)).toEqual([
      { name: 'sim-lora-a', parent: 'random' },
      { name: 'sim-lora-b', parent: 'random' },
    ]);
    const endpoint = planEndpoint({ config: cfg, models, harbor: null, toleration: undefined, chart: BBR_CHART, envoyGatewayClass: envoyGatewayClassOf(cfg), list: new IssueList(), warnings: [], tools: ENDPOINT_TOOLS })!;
    const sim = endpoint.models.find((m) => m.model === 'Sim')!;
    expect(sim.names).toEqual(['random', 'sim-lora-a', 'sim-lora-b']);
    expect((endpoint.manifests.routes.find((r) => r.model === 'Sim')!.httpRoute as any).spec.rules[0].matches.map((m: any) => m.headers[0].value)).toEqual(['random', 'sim-lora-a', 'sim-lora-b']);
    expect(endpoint.list.data.filter((d) => d.parent)).toEqual([
      { id: 'sim-lora-a', object: 'model', created: 0, owned_by: 'app-serving', parent: 'random' },
      { id: 'sim-lora-b', object: 'model', created: 0, owned_by: 'app-serving', parent: 'random' },
    ]);
  });

  it('refuses an adapter name another model serves, or one the endpoint cannot route', () => {
    const cfg = config(ENVOY_STACK);
    const plan = planDeployment(cfg, MODELS);
    const list = new IssueList();
    const source = { kind: 'volume' as const, path: 'lora' };
    const models = plan.models.map((m): ModelPlan => (m.name === 'Sim' ? { ...m, adapters: ['Qwen/Qwen3-0.6B', 'a b%'].map((name) => ({ name, parent: 'random', source, path: '/model-cache/lora' })) } : m));
    expect(planEndpoint({ config: cfg, models, harbor: null, toleration: undefined, chart: BBR_CHART, envoyGatewayClass: envoyGatewayClassOf(cfg), list, warnings: [], tools: ENDPOINT_TOOLS })).toBeNull();
    expect(list.items.map((i) => [i.code, i.path])).toEqual([
      ['name.duplicate', 'models.generative[1].name'],
      ['config.invalid', 'models.generative[1].name'],
    ]);
    expect(list.items[0]!.message).toContain('also served by generative/Qwen3-0.6B');
  });
});

describe('what the endpoint refuses, with the reason and the fix', () => {
  it("a generative llm-d model behind its own Gateway on an Envoy Gateway endpoint (its EPP would never run there)", () => {
    const issues = problems([...ENVOY_STACK.filter((l) => l !== '      gateway: false')]);
    expect(issues.map((i) => [i.code, i.path])).toEqual([
      ['config.contradiction', 'models.generative[0].gateway'],
      ['config.contradiction', 'models.generative[1].gateway'],
    ]);
    expect(issues[0]!.message).toContain('before the body-based router has named the model');
  });

  it('a model on the 2026-02 set, gateway: false where it means nothing, an Istio endpoint before a gateway of another class', () => {
    const issues = problems([
      'app-serving:router:',
      '  gatewayClass: agentgateway',
      'app-serving:endpoint:',
      '  class: istio',
      '  access:',
      '    open: true',
      'app-serving:models:',
      '  generative:',
      '    - name: Sim',
      '      access:',
      '        open: true',
      '    - name: Qwen3-0.6B',
      '      upstream: 2026-02',
      '      gateway: false',
      '      access:',
      '        open: true',
      '    - name: Qwen2.5-0.5B-Instruct',
      '      platform: kserve',
      '      gateway: false',
      '      access:',
      '        open: true',
    ]);
    expect(short(issues)).toEqual([
      has('models.generative[0].gateway', 'must be false for this model to be on an Istio endpoint: its own Gateway is of class agentgateway'),
      has('models.generative[1].name', "cannot be served by the stack's endpoint: it is on the 2026-02 set"),
      has('models.generative[1].gateway', 'cannot be false on the 2026-02 set: llm-d-infra always deploys'),
      has('models.generative[2].gateway', 'has no meaning for a KServe model'),
    ]);
  });

  it('access the endpoint cannot keep: a key a model refuses, a model the endpoint does not serve, a key reaching nothing, an open endpoint before a protected model', () => {
    const issues = problems([
      'app-serving:router:',
      '  mode: standalone',
      ...KEYS,
      'app-serving:endpoint:',
      '  access:',
      '    apiKeys:',
      '      ci: [Qwen3-0.6B, Nope]',
      '      other: [Qwen3-0.6B]',
      "      batch: ['*']",
      '      missing: [Sim]',
      'app-serving:models:',
      '  generative:',
      '    - name: Qwen3-0.6B',
      '      access:',
      '        apiKeys: [ci]',
      '    - name: Sim',
      '      access:',
      '        jwt: {issuer: https://id.example.com, jwksUri: https://id.example.com/k}',
    ]);
    expect(short(issues)).toEqual([
      has('endpoint.access.apiKeys.ci[1]', 'names the model "Nope", which the endpoint does not serve'),
      has('endpoint.access.apiKeys.other[0]', 'grants Qwen3-0.6B to the key "other", but its own access admits only the keys ci'),
      has('endpoint.access.apiKeys.batch', 'names no model the key "batch" may reach'),
      has('endpoint.access.apiKeys.missing', 'names the key "missing", which app-serving:apiKeys does not hold'),
      has('endpoint.access.apiKeys.missing[0]', 'its own access asks for a JWT from https://id.example.com, which an API key is not'),
      has('models.generative[1].access', 'the endpoint cannot protect this model'),
    ]);
    const open = problems(['app-serving:router:', '  mode: standalone', ...KEYS, 'app-serving:endpoint: {access: {open: true}}', 'app-serving:models:', '  generative:', '    - name: Sim', '      access: {apiKeys: [ci]}']);
    expect(short(open)).toEqual([has('models.generative[0].access', 'asks for API keys, but the endpoint is open')]);
  });

  it('Bearer keys on Istio (its proxy has no API-key filter), and JWTs of another issuer or wider audiences than a model allows', () => {
    expect(short(problems(['app-serving:router:', '  gatewayClass: istio', ...KEYS, "app-serving:endpoint: {access: {keyFormat: bearer, apiKeys: {ci: ['*']}}}", 'app-serving:models:', '  generative:', '    - name: Sim', '      gateway: false', '      access: {open: true}']))).toEqual([
      has('endpoint.access.keyFormat', 'is bearer, but the endpoint is an Istio gateway, whose proxy has no API-key filter'),
    ]);
    const jwt = problems([
      'app-serving:router:',
      '  mode: standalone',
      'app-serving:endpoint: {access: {jwt: {issuer: https://a.example.com, jwksUri: https://a.example.com/k}}}',
      'app-serving:models:',
      '  generative:',
      '    - name: Sim',
      '      access: {jwt: {issuer: https://b.example.com, jwksUri: https://b.example.com/k}}',
      '    - name: Qwen3-0.6B',
      '      access: {jwt: {issuer: https://a.example.com, audiences: [llm], jwksUri: https://a.example.com/k}}',
    ]);
    expect(short(jwt)).toEqual([
      has('models.generative[0].access', 'asks for JWTs from https://b.example.com, but the endpoint accepts those of https://a.example.com'),
      has('models.generative[1].access', 'accepts JWTs for the audiences llm only, but the endpoint accepts any audience'),
    ]);
  });

  it("a KServe model with its scheduler (KServe sends inference through its InferencePool); without it, KServe's workload Service", () => {
    const kserve = (overlay: string) =>
      tempRepo({
        'models/generative/K/kserve-k/values.yaml': `model:\n  name: org/k\n  uri: hf://org/k\n${overlay}`,
      });
    const lines = ['app-serving:endpoint: {access: {open: true}}', 'app-serving:models:', '  generative:', '    - name: K', '      platform: kserve', '      access: {open: true}'];
    expect(short(problems(lines, join(kserve(''), 'models')))).toEqual([has('models.generative[0].endpoint', 'a KServe model with its scheduler cannot be on the endpoint')]);
    const plan = planOf(lines, join(kserve('router:\n  scheduler: null\n'), 'models'));
    expect(plan.endpoint!.models[0]!.backend).toEqual({ group: '', kind: 'Service', name: 'k-kserve-workload-svc', namespace: 'llm-d-k', port: 8000, what: "KServe's workload Service k-kserve-workload-svc" });
  });

  it("an endpoint namespace that is a model's", () => {
    expect(short(problems(['app-serving:router:', '  mode: standalone', 'app-serving:endpoint: {namespace: sims, access: {open: true}}', 'app-serving:models:', '  generative:', '    - name: Sim', '      nameSpace: sims', '      access: {open: true}']))).toEqual([
      has('endpoint.namespace', '"sims" is the namespace of generative/Sim; the endpoint needs a namespace of its own'),
    ]);
  });
});

describe('grants, whatever the stack (property)', () => {
  const names = ['A', 'B', 'C', 'D'];
  const keys = ['k1', 'k2', 'k3'];
  const ownAccess = fc.oneof(fc.constant(undefined), fc.constant({ open: true as const }), fc.subarray(keys, { minLength: 1 }).map((k) => ({ apiKeys: k })), fc.constant({ jwt: { issuer: 'https://i' } }));
  it("a key reaches a model exactly when the endpoint grants it by name (or \"*\") and the model's own access admits the key", () => {
    fc.assert(
      fc.property(fc.tuple(...names.map(() => ownAccess)), fc.dictionary(fc.constantFrom(...keys), fc.oneof(fc.constant<string[]>(['*']), fc.subarray(names, { minLength: 1 }))), (accesses, grants) => {
        const entries: EndpointEntry[] = names.map((name, index) => ({ category: 'generative', index, entry: { name, enabled: true, nodeSelector: {}, access: accesses[index] as never } }));
        for (const [key, granted] of Object.entries(grants)) {
          const reached = new Set(grantedModels(key, granted, entries));
          for (const { entry } of entries) {
            const named = granted.includes('*') || granted.includes(entry.name);
            expect(reached.has(entry.name)).toBe(named && keyReachProblem(key, entry.access) === null);
          }
        }
      }),
    );
  });
});

describe('the Lua answers of an Istio endpoint (whatever the names it serves)', () => {
  it('holds every name in a long bracket and both bodies as JSON that parses', () => {
    const name = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,30}$/);
    fc.assert(
      fc.property(fc.uniqueArray(name, { minLength: 1, maxLength: 6 }), (served) => {
        const models = served.map((s) => ({ names: [s] })) as unknown as EndpointPlan['models'];
        const list = { object: 'list' as const, data: served.map((s) => ({ id: s, object: 'model' as const, created: 0, owned_by: 'app-serving' })) };
        const lua = luaAnswers({ models, list });
        const bodies = [...lua.matchAll(/local (MODELS|NOT_FOUND) = \[==\[(.*)\]==\]/g)].map((m) => JSON.parse(m[2]!));
        expect(bodies[0]).toEqual(list);
        expect(bodies[1].error.code).toBe('model_not_found');
        for (const s of served) expect(lua).toContain(`[==[${s}]==]`);
      }),
    );
  });
});

