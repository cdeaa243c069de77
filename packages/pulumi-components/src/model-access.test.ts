import { createHash } from 'node:crypto';
import { accessPlan, type DeploymentPlan } from '@app-serving/core';
import * as pulumi from '@pulumi/pulumi';
import { describe, expect, it } from 'vitest';
import { MODELS_DIR, allStrings, examplePlan, kservePlan, record } from '../test/harness.ts';
import { AppServing } from './app-serving.ts';
import { isSecretValue } from './mock-runtime.ts';
import { renderStack } from './render.ts';

// Keys as `openssl rand -base64 32` makes them (the strength rule refuses a key like "key-a-0123456789abcdef…").
const KEY_A = 'q2N8vZr5Tb1WkXe7Jf3Lh0Ys9Pc4Mg6Ud+Ao/Ri1Ekw=';
const KEY_B = 'H7tVb2Qx9Lm4Zr0Ws8Kc3Nf6Jd1Pg5Ye+Ua/Oi7Tsq=';
const sha = (key: string) => createHash('sha1').update(key).digest('base64');

/** The plan with access set on every model (the llm-d embedder of the example stays open: it has no gateway in its path). */
function withAccess(plan: DeploymentPlan, access: Parameters<typeof accessPlan>[0]): DeploymentPlan {
  return { ...plan, models: plan.models.map((m) => (m.platform === 'llm-d' && m.category === 'embedder' ? m : { ...m, access: accessPlan(access) })) };
}

describe('ModelAccess under AppServing', () => {
  it('llm-d, API keys: one EnvoyFilter on the gateway pods with the keys\' SHA-1 only, a secret in the state, before the route', async () => {
    const plan = withAccess(examplePlan('cloud'), { apiKeys: ['a', 'b'], rateLimit: { requestsPerMinute: 30 } });
    const rec = await record(() => new AppServing('app', { plan, apiKeys: { a: pulumi.secret(KEY_A), b: pulumi.secret(KEY_B) } }));
    expect(rec.children('app-qwen3-06b-access')).toEqual(['kubernetes:networking.istio.io/v1alpha3:EnvoyFilter app-qwen3-06b-access-envoy-filter']);
    const filter = rec.get('app-qwen3-06b-access-envoy-filter');
    expect(isSecretValue(filter.inputs.spec)).toBe(true);
    expect(isSecretValue(filter.inputs.metadata)).toBe(false);
    const revealed = rec.revealed('app-qwen3-06b-access-envoy-filter') as { metadata: unknown; spec: { workloadSelector: unknown; configPatches: { patch: { value: { typed_config: Record<string, unknown> } } }[] } };
    expect(revealed.metadata).toMatchObject({ name: 'infra-qwen3-06b-inference-gateway-access', namespace: 'llm-d-qwen3-06b' });
    expect(revealed.spec.workloadSelector).toEqual({ labels: { 'gateway.networking.k8s.io/gateway-name': 'infra-qwen3-06b-inference-gateway' } });
    const [limit, auth] = revealed.spec.configPatches;
    expect(auth!.patch.value.typed_config.users).toEqual({ inline_string: `a:{SHA}${sha(KEY_A)}\nb:{SHA}${sha(KEY_B)}` });
    expect(limit!.patch.value.typed_config.descriptors).toEqual([
      { entries: [{ key: 'client', value: 'a' }], token_bucket: { max_tokens: 30, tokens_per_fill: 30, fill_interval: '60s' } },
      { entries: [{ key: 'client', value: 'b' }], token_bucket: { max_tokens: 30, tokens_per_fill: 30, fill_interval: '60s' } },
    ]);
    // Traffic opens only once access is enforced.
    expect(rec.dependencies('app-qwen3-06b-route')).toContain('app-qwen3-06b-access-envoy-filter');
    // No key in any input, revealed or not.
    expect(rec.resources.flatMap((r) => allStrings(r.inputs)).some((s) => s.includes(KEY_A) || s.includes(KEY_B))).toBe(false);
    // The embedder (ClusterIP Service, no gateway) gets nothing.
    expect(() => rec.get('app-bge-small-access')).toThrow();
  });

  it('llm-d, JWT: RequestAuthentication and AuthorizationPolicy on the gateway pods, in the clear (no secret in them)', async () => {
    const plan = withAccess(examplePlan('cloud'), { jwt: { issuer: 'https://id.example.com', audiences: ['llm'], jwksUri: 'https://id.example.com/jwks.json' } });
    const rec = await record(() => new AppServing('app', { plan }));
    expect(rec.children('app-qwen3-06b-access')).toEqual([
      'kubernetes:security.istio.io/v1:AuthorizationPolicy app-qwen3-06b-access-authorization-policy',
      'kubernetes:security.istio.io/v1:RequestAuthentication app-qwen3-06b-access-request-authentication',
    ]);
    expect(rec.get('app-qwen3-06b-access-request-authentication').inputs.spec).toEqual({
      selector: { matchLabels: { 'gateway.networking.k8s.io/gateway-name': 'infra-qwen3-06b-inference-gateway' } },
      jwtRules: [{ issuer: 'https://id.example.com', audiences: ['llm'], jwksUri: 'https://id.example.com/jwks.json', outputClaimToHeaders: [{ header: 'x-app-serving-client', claim: 'sub' }] }],
    });
    expect(rec.get('app-qwen3-06b-access-authorization-policy').inputs.spec).toEqual({
      selector: { matchLabels: { 'gateway.networking.k8s.io/gateway-name': 'infra-qwen3-06b-inference-gateway' } },
      action: 'ALLOW',
      rules: [{ from: [{ source: { requestPrincipals: ['https://id.example.com/*'] } }] }],
    });
  });

  it('KServe, API keys: the hashes in a Secret, a SecurityPolicy and a rate limit on the route, before the LLMInferenceService', async () => {
    const plan = withAccess(kservePlan('kserve'), { apiKeys: ['a'], rateLimit: { requestsPerMinute: 10 } });
    const slug = plan.models[0]!.slug;
    const rec = await record(() => new AppServing('app', { plan, hfToken: pulumi.secret('hf'), apiKeys: { a: pulumi.secret(KEY_A) } }));
    const base = `app-${slug}-access`;
    expect(rec.children(base)).toEqual([
      `kubernetes:core/v1:Secret ${base}-api-keys`,
      `kubernetes:gateway.envoyproxy.io/v1alpha1:BackendTrafficPolicy ${base}-rate-limit`,
      `kubernetes:gateway.envoyproxy.io/v1alpha1:SecurityPolicy ${base}-security-policy`,
    ]);
    const route = `${slug}-kserve-route`;
    expect(isSecretValue(rec.get(`${base}-api-keys`).inputs.stringData)).toBe(true);
    expect(rec.revealed(`${base}-api-keys`).stringData).toEqual({ '.htpasswd': `a:{SHA}${sha(KEY_A)}` });
    expect(rec.get(`${base}-security-policy`).inputs.spec).toEqual({
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: route }],
      basicAuth: { users: { name: `${route}-api-keys` }, forwardUsernameHeader: 'x-app-serving-client' },
    });
    expect(rec.get(`${base}-rate-limit`).inputs.spec).toEqual({
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: route }],
      rateLimit: { type: 'Local', local: { rules: [{ clientSelectors: [{ headers: [{ name: 'x-app-serving-client', type: 'Distinct' }] }], limit: { requests: 10, unit: 'Minute' } }] } },
    });
    expect(rec.dependencies(`app-${slug}-service`)).toEqual(expect.arrayContaining([`${base}-security-policy`, `${base}-rate-limit`, `${base}-api-keys`]));
  });

  it('from the program config: the apiKeys map arrives as one secret and each key stays one; a weak key stops the run by name', async () => {
    const models = JSON.stringify({ generative: [{ name: 'Sim', access: { apiKeys: ['a'] } }] });
    const rec = await record(() => {
      pulumi.runtime.setAllConfig({ 'proj:cloudProvider': 'cloud', 'proj:models': models, 'proj:apiKeys': JSON.stringify({ a: KEY_A, unused: KEY_B }) }, ['proj:apiKeys']);
      AppServing.fromConfig('platform', { modelsDir: MODELS_DIR });
    });
    expect(JSON.stringify(rec.revealed('platform-sim-access-envoy-filter'))).toContain(`a:{SHA}${sha(KEY_A)}`);
    expect(JSON.stringify(rec.revealed('platform-sim-access-envoy-filter'))).not.toContain(sha(KEY_B));
    const short = 'tiny-secret';
    const error = await record(() => {
      pulumi.runtime.setAllConfig({ 'proj:cloudProvider': 'cloud', 'proj:models': models, 'proj:apiKeys': JSON.stringify({ a: short }) }, ['proj:apiKeys']);
      AppServing.fromConfig('platform', { modelsDir: MODELS_DIR });
    }).catch((e: unknown) => e);
    expect(pulumi.RunError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe('app-serving:apiKeys.a is shorter than 24 characters: the gateway keeps its SHA-1, so the key must be unguessable (make a random key, e.g. openssl rand -base64 32)');
    // m13: long but guessable keys stop the run too, with the reason, never the key.
    for (const [weak, why] of [
      ['a'.repeat(24), 'it repeats a character or a block'],
      ['password1234567890123456', 'it holds a run of the alphabet or of digits'],
      [`${KEY_A.slice(0, 20)}\u200b${KEY_A.slice(20)}`, 'holds white space, a control, format or separator character'],
    ] as const) {
      const refused = await record(() => {
        pulumi.runtime.setAllConfig({ 'proj:cloudProvider': 'cloud', 'proj:models': models, 'proj:apiKeys': JSON.stringify({ a: weak }) }, ['proj:apiKeys']);
        AppServing.fromConfig('platform', { modelsDir: MODELS_DIR });
      }).catch((e: unknown) => e);
      expect(pulumi.RunError.isInstance(refused), weak).toBe(true);
      expect((refused as Error).message).toContain(why);
      expect((refused as Error).message).not.toContain(weak.slice(0, 8));
    }
    // A component given no value for a key its plan names says which, before registering anything.
    const plan = withAccess(examplePlan('cloud'), { apiKeys: ['a', 'b'] });
    await expect(record(() => new AppServing('app', { plan, apiKeys: { a: pulumi.secret(KEY_A) } }))).rejects.toThrow(/lacks b: set each with pulumi config set --secret --path 'app-serving:apiKeys.<name>' <key>/);
  });

  it('render shows the access objects and never a key; a changed key changes only the hashed spec', async () => {
    const plan = withAccess(examplePlan('cloud'), { apiKeys: ['a'] });
    const one = await renderStack(plan, { secrets: { apiKeys: { a: KEY_A } }, secretDigests: true });
    const two = await renderStack(plan, { secrets: { apiKeys: { a: KEY_B } }, secretDigests: true });
    const filter = (r: typeof one) => r.resources.find((x) => x.type === 'kubernetes:networking.istio.io/v1alpha3:EnvoyFilter')!;
    expect(JSON.stringify(one)).not.toContain(KEY_A);
    expect(JSON.stringify(one)).not.toContain(sha(KEY_A));
    expect(filter(one).inputs.spec).toMatch(/^\[secret:[0-9a-f]+\]$/);
    expect(filter(one).inputs.spec).not.toEqual(filter(two).inputs.spec);
    expect(filter(one).inputs.metadata).toEqual(filter(two).inputs.metadata);
  });
});
