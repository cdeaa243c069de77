import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  accessPlan,
  envoyGatewayAccessManifests,
  htpasswd,
  htpasswdSecretManifest,
  istioAccessManifests,
  istioGatewayPodLabels,
  loadStackFile,
  planDeployment,
  type KserveModelPlan,
  type LlmdModelPlan,
  type LlmdRouterModelPlan,
  type ModelAccess,
} from '@app-serving/core';
import { describeObject, ensureNamespaces, startCluster, tryApply, type KubeObject, type TestCluster } from '@app-serving/test-cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Every access mode, for both platforms, admitted by a real kube-apiserver with the Istio 1.28.5
 * CRDs (crds/) and the Envoy Gateway v1.8.1 and Envoy AI Gateway v1.1.0 CRDs (current/crds/, which
 * name no CRD of crds/): server-side apply with dryRun=All, so the CRDs' OpenAPI schemas and CEL
 * rules run. And the check can fail: a policy with a mistake the CRD's own rule catches is refused.
 * The objects are those the ModelAccess component registers (its tests hold it to these builders),
 * built with a real htpasswd, since render shows the hashed specs only as secrets.
 */
const APP = join(import.meta.dirname, '..');
const MODELS = join(APP, '..', '..', 'models');

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startCluster({ extraCrds: ['current/crds/envoy-gateway-v1.8.1.yaml', 'current/crds/envoy-ai-gateway-v1.1.0.yaml'], storageClasses: [] });
}, 900_000);
afterAll(async () => cluster?.stop());

const JWKS = JSON.stringify({ keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1' }] });
const MODES: Record<string, ModelAccess> = {
  'apiKeys + rate limit': { apiKeys: ['ci', 'ci-next'], rateLimit: { requestsPerMinute: 60 } },
  'jwt (JWKS URI, audiences) + rate limit': { jwt: { issuer: 'https://id.example.com', audiences: ['llm'], jwksUri: 'https://id.example.com/.well-known/jwks.json' }, rateLimit: { requestsPerMinute: 600 } },
  'jwt (inline JWKS)': { jwt: { issuer: 'https://id.example.com', jwks: JWKS } },
  'open + rate limit': { open: true, rateLimit: { requestsPerMinute: 1000 } },
};
const HTPASSWD = htpasswd([
  { name: 'ci', key: 'first-key-0123456789abcdefgh' },
  { name: 'ci-next', key: 'second-key-0123456789abcdefg' },
]);

function modelOf<P extends 'llm-d' | 'kserve'>(stack: string, platform: P): P extends 'llm-d' ? LlmdModelPlan : KserveModelPlan {
  const plan = planDeployment(loadStackFile(join(APP, stack), stack, { checkRules: false }), MODELS);
  return plan.models.find((m) => m.platform === platform && m.category === 'generative') as never;
}

function istioObjects(access: ModelAccess): KubeObject[] {
  const model = modelOf('Pulumi.cloud.yaml', 'llm-d');
  const gateway = { namespace: model.namespace, name: model.gateway.name, podLabels: istioGatewayPodLabels(model.gateway.name) };
  return istioAccessManifests(gateway, model.slug, accessPlan(access), HTPASSWD) as unknown as KubeObject[];
}

function envoyObjects(access: ModelAccess): KubeObject[] {
  const model = modelOf('Pulumi.kserve.yaml', 'kserve');
  const route = { namespace: model.namespace, route: model.route };
  const plan = accessPlan(access);
  return [...(plan.mode === 'apiKeys' ? [htpasswdSecretManifest(route, model.slug, HTPASSWD)] : []), ...envoyGatewayAccessManifests(route, model.slug, plan)] as unknown as KubeObject[];
}

describe('access objects are admitted by the API server with the Istio, Envoy Gateway and Envoy AI Gateway CRDs', () => {
  it.each(Object.keys(MODES))('llm-d on Istio: %s', async (mode) => {
    const objects = istioObjects(MODES[mode]!);
    expect(objects.length).toBeGreaterThan(0);
    await ensureNamespaces(cluster, objects);
    expect(await tryApply(cluster, objects, { dryRun: true })).toEqual([]);
  });

  it.each(Object.keys(MODES))('KServe on Envoy Gateway: %s', async (mode) => {
    const objects = envoyObjects(MODES[mode]!);
    expect(objects.length).toBeGreaterThan(0);
    await ensureNamespaces(cluster, objects);
    expect(await tryApply(cluster, objects, { dryRun: true })).toEqual([]);
  });

  it('the kinds each mode creates', () => {
    const kinds = (objects: KubeObject[]) => objects.map((o) => o.kind);
    expect(Object.fromEntries(Object.entries(MODES).map(([mode, access]) => [mode, [kinds(istioObjects(access)), kinds(envoyObjects(access))]]))).toEqual({
      'apiKeys + rate limit': [['EnvoyFilter'], ['Secret', 'SecurityPolicy', 'BackendTrafficPolicy']],
      'jwt (JWKS URI, audiences) + rate limit': [['RequestAuthentication', 'AuthorizationPolicy', 'EnvoyFilter'], ['SecurityPolicy', 'BackendTrafficPolicy']],
      'jwt (inline JWKS)': [['RequestAuthentication', 'AuthorizationPolicy'], ['SecurityPolicy']],
      'open + rate limit': [['EnvoyFilter'], ['BackendTrafficPolicy']],
    });
  });
});

/**
 * A 2026-08 llm-d model behind Envoy Gateway (`router.gatewayClass: envoy`): what the plan writes —
 * the Gateway of the stack's class, the EnvoyProxy placing its proxy pods, Envoy Gateway's form of
 * the route (the pool's Service, EnvoyExtensionPolicy, BackendTrafficPolicy with the rate limit,
 * HTTPRoute) — and the access objects the ModelAccess component adds on that route.
 */
function envoyClassObjects(access: ModelAccess): KubeObject[] {
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-envoy-class-'));
  const text = readFileSync(join(APP, 'Pulumi.example.yaml'), 'utf8')
    .replace('config:\n', 'config:\n  app-serving:upstream: 2026-08\n  app-serving:router:\n    gatewayClass: envoy\n  app-serving:apiKeys:\n    ci:\n      secure: v1:AAAA:BBBB\n    ci-next:\n      secure: v1:AAAA:CCCC\n')
    .replace(/(- name: Qwen3-0\.6B-rke2\n        enabled: true\n)        access:\n          open: true[^\n]*\n/, (_, head: string) => `${head}        access: ${JSON.stringify(access)}\n`);
  writeFileSync(join(dir, 'Pulumi.example.yaml'), text);
  const plan = planDeployment(loadStackFile(join(dir, 'Pulumi.example.yaml'), 'Pulumi.example.yaml', { checkRules: false }), MODELS);
  const model = plan.models.find((m) => m.platform === 'llm-d' && m.category === 'generative') as LlmdRouterModelPlan;
  expect(model.access.mode).toBe(accessPlan(access).mode);
  const route = { namespace: model.namespace, route: model.httpRoute!, sharedBackendTraffic: true };
  const { manifests } = model;
  return [
    manifests.gateway!,
    manifests.gatewayParameters!,
    ...Object.values(manifests.envoyRoute!),
    ...(model.access.mode === 'apiKeys' ? [htpasswdSecretManifest(route, model.slug, HTPASSWD)] : []),
    ...envoyGatewayAccessManifests(route, model.slug, model.access),
  ] as unknown as KubeObject[];
}

describe('llm-d on Envoy Gateway (router.gatewayClass: envoy): every object of the class, admitted with the Envoy Gateway v1.8.1 CRDs', () => {
  it.each(Object.keys(MODES))('%s', async (mode) => {
    const objects = envoyClassObjects(MODES[mode]!);
    expect(objects.map((o) => o.kind).filter((k) => k === 'BackendTrafficPolicy')).toHaveLength(1);
    await ensureNamespaces(cluster, objects);
    expect(await tryApply(cluster, objects, { dryRun: true })).toEqual([]);
  });

  it('the check can fail: an EnvoyExtensionPolicy that would fail open with FullDuplexStreamed bodies is refused by its CEL rule', async () => {
    const policy = envoyClassObjects({ open: true }).find((o) => o.kind === 'EnvoyExtensionPolicy')!;
    const spec = policy.spec as { extProc: Record<string, unknown>[] };
    const open = { ...policy, spec: { ...spec, extProc: [{ ...spec.extProc[0], failOpen: true }] } } as KubeObject;
    const rejections = await tryApply(cluster, [open], { dryRun: true });
    expect(rejections.map((r) => r.object)).toEqual([describeObject(policy)]);
    expect(rejections[0]!.message).toContain('If FullDuplexStreamed body processing mode is used, FailOpen must be false');
  });
});

describe('the check can fail: mistakes the CRDs themselves refuse', () => {
  it('a local rate limit that counts response cost (LLM tokens) is refused by the BackendTrafficPolicy rule', async () => {
    const [policy] = envoyObjects({ open: true, rateLimit: { requestsPerMinute: 10 } });
    const spec = policy!.spec as { rateLimit: { local: { rules: Record<string, unknown>[] } } };
    const tokens = { ...spec.rateLimit.local.rules[0], cost: { response: { from: 'Metadata', metadata: { namespace: 'io.envoy.ai_gateway', key: 'llm_total_token' } } } };
    const wrong = { ...policy!, spec: { ...spec, rateLimit: { type: 'Local', local: { rules: [tokens] } } } } as KubeObject;
    const rejections = await tryApply(cluster, [wrong], { dryRun: true });
    expect(rejections.map((r) => r.object)).toEqual([describeObject(policy!)]);
    expect(rejections[0]!.message).toContain('response cost is not supported for Local Rate Limits');
  });

  it('a RequestAuthentication with both jwksUri and inline jwks is refused by its CEL rule', async () => {
    const [authn] = istioObjects({ jwt: { issuer: 'https://id.example.com', jwksUri: 'https://id.example.com/keys' } });
    const spec = authn!.spec as { jwtRules: Record<string, unknown>[] };
    const both = { ...authn!, spec: { ...spec, jwtRules: [{ ...spec.jwtRules[0], jwks: JWKS }] } } as KubeObject;
    const rejections = await tryApply(cluster, [both], { dryRun: true });
    expect(rejections.map((r) => r.object)).toEqual([describeObject(authn!)]);
    expect(rejections[0]!.message).toContain('only one of jwks or jwksUri can be set');
  });
});
