import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import { loadStackFile, planDeployment, type DeploymentPlan } from '@app-serving/core';
import { describe, expect, it } from 'vitest';
import { MODELS_DIR, allStrings, record } from '../test/harness.ts';
import { kubernetesProblems } from '../test/k8s-schemas.ts';
import { AppServing } from './app-serving.ts';
import { redactSecrets } from './mock-runtime.ts';

const CI = 'endpoint-ci-key-0Qm4T7vWz2Rp9Kd1Xy6B';
const BATCH = 'endpoint-batch-key-H3sL8nF5jC2uA7eV0g';

function planOf(lines: string): DeploymentPlan {
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-endpoint-'));
  const file = join(dir, 'Pulumi.ep.yaml');
  writeFileSync(
    file,
    `config:\n  app-serving:upstream: 2026-08\n  app-serving:cloudProvider: cloud\n  app-serving:apiKeys:\n    ci:\n      secure: v1:AAAA:BBBB\n    batch:\n      secure: v1:AAAA:CCCC\n${lines}`,
  );
  return planDeployment(loadStackFile(file, 'Pulumi.ep.yaml'), MODELS_DIR);
}

const MODELS = `  app-serving:models:
    generative:
      - name: Sim
        gateway: false
        access: {apiKeys: [ci, batch]}
    embedder:
      - name: SimEmbeddings
        access: {open: true}
`;

describe('StackEndpoint (in AppServing)', () => {
  it('Envoy Gateway: every child in order — the router, the answers and key check before the Gateway, each model\'s route after its model and its grants', async () => {
    const plan = planOf(`  app-serving:router: {gatewayClass: envoy}\n  app-serving:endpoint:\n    access:\n      keyFormat: bearer\n      apiKeys: {ci: ['*'], batch: [Sim]}\n      rateLimit: {requestsPerMinute: 60}\n${MODELS}`);
    const rec = await record(() => new AppServing('app', { plan, apiKeys: { ci: pulumi.secret(CI), batch: pulumi.secret(BATCH) } }));
    expect(rec.children('app-endpoint')).toEqual([
      'kubernetes:core/v1:Namespace app-endpoint-namespace',
      'kubernetes:core/v1:Secret app-endpoint-keys',
      'kubernetes:gateway.envoyproxy.io/v1alpha1:BackendTrafficPolicy app-endpoint-sim-embed-rate-limit',
      'kubernetes:gateway.envoyproxy.io/v1alpha1:BackendTrafficPolicy app-endpoint-sim-rate-limit',
      'kubernetes:gateway.envoyproxy.io/v1alpha1:ClientTrafficPolicy app-endpoint-client-traffic',
      'kubernetes:gateway.envoyproxy.io/v1alpha1:EnvoyExtensionPolicy app-endpoint-body-based-router',
      'kubernetes:gateway.envoyproxy.io/v1alpha1:HTTPRouteFilter app-endpoint-models-filter',
      'kubernetes:gateway.envoyproxy.io/v1alpha1:HTTPRouteFilter app-endpoint-not-found-filter',
      'kubernetes:gateway.envoyproxy.io/v1alpha1:SecurityPolicy app-endpoint-entry-security-policy',
      'kubernetes:gateway.envoyproxy.io/v1alpha1:SecurityPolicy app-endpoint-sim-embed-security-policy',
      'kubernetes:gateway.envoyproxy.io/v1alpha1:SecurityPolicy app-endpoint-sim-security-policy',
      'kubernetes:gateway.networking.k8s.io/v1:Gateway app-endpoint-gateway',
      'kubernetes:gateway.networking.k8s.io/v1:HTTPRoute app-endpoint-entry-route',
      'kubernetes:gateway.networking.k8s.io/v1:HTTPRoute app-endpoint-sim-embed-route',
      'kubernetes:gateway.networking.k8s.io/v1:HTTPRoute app-endpoint-sim-route',
      'kubernetes:gateway.networking.k8s.io/v1beta1:ReferenceGrant app-endpoint-sim-embed-reference-grant',
      'kubernetes:gateway.networking.k8s.io/v1beta1:ReferenceGrant app-endpoint-sim-reference-grant',
      'kubernetes:helm.sh/v4:Chart app-endpoint-bbr-chart',
    ]);
    // The stack's Envoy GatewayClass, created for the endpoint's Gateway too.
    expect(rec.dependencies('app-endpoint-gateway')).toEqual(
      expect.arrayContaining(['app-envoy-gateway-class', 'app-endpoint-bbr-chart', 'app-endpoint-body-based-router', 'app-endpoint-entry-security-policy', 'app-endpoint-models-filter', 'app-endpoint-keys']),
    );
    // A model's route opens after its model, its grant in the model's namespace and its policies.
    expect(rec.dependencies('app-endpoint-sim-route')).toEqual(
      expect.arrayContaining(['app-sim-model-server-deployment', 'app-sim-router-chart', 'app-endpoint-sim-reference-grant', 'app-endpoint-sim-security-policy', 'app-endpoint-sim-rate-limit', 'app-endpoint-gateway', 'app-endpoint-entry-route']),
    );
    expect(rec.dependencies('app-endpoint-sim-reference-grant')).toContain('app-sim-namespace-namespace');
    // Bearer keys are in the Secret in clear (Envoy Gateway compares keys), as secrets in the state.
    expect(rec.revealed('app-endpoint-keys').stringData).toEqual({ batch: BATCH, ci: CI });
    expect(allStrings(rec.resources.map((r) => redactSecrets(r.inputs))).filter((s) => s.includes(CI) || s.includes(BATCH))).toEqual([]);
    for (const r of rec.kubernetesObjects()) expect(kubernetesProblems(rec.revealed(r.name)), r.name).toEqual([]);
    expect(rec.get('app-endpoint-bbr-chart').inputs).toMatchObject({ name: 'endpoint-bbr', namespace: 'app-serving', chart: 'oci://registry.k8s.io/gateway-api-inference-extension/charts/body-based-routing', version: 'v1.5.0' });
  });

  it('Istio, Basic keys: the EnvoyFilter of keys holds only their hashes, as a secret', async () => {
    const plan = planOf(`  app-serving:router: {gatewayClass: istio}\n  app-serving:endpoint:\n    access:\n      apiKeys: {ci: ['*'], batch: [Sim]}\n${MODELS}`);
    const rec = await record(() => new AppServing('app', { plan, apiKeys: { ci: pulumi.secret(CI), batch: pulumi.secret(BATCH) } }));
    expect(rec.children('app-endpoint').filter((c) => /EnvoyFilter|AuthorizationPolicy|HTTPRoute |Secret/.test(c))).toEqual([
      'kubernetes:gateway.networking.k8s.io/v1:HTTPRoute app-endpoint-sim-embed-route',
      'kubernetes:gateway.networking.k8s.io/v1:HTTPRoute app-endpoint-sim-route',
      'kubernetes:networking.istio.io/v1alpha3:EnvoyFilter app-endpoint-answers',
      'kubernetes:networking.istio.io/v1alpha3:EnvoyFilter app-endpoint-keys',
      'kubernetes:security.istio.io/v1:AuthorizationPolicy app-endpoint-authorization-policy',
    ]);
    const keys = rec.revealed('app-endpoint-keys') as any;
    const htpasswd = keys.spec.configPatches.find((p: any) => p.patch.value.name === 'envoy.filters.http.basic_auth').patch.value.typed_config.users.inline_string;
    expect(htpasswd).toMatch(/^batch:\{SHA\}\S+\nci:\{SHA\}\S+$/);
    expect(JSON.stringify(keys)).not.toContain(CI);
    expect(JSON.stringify(redactSecrets(rec.get('app-endpoint-keys').inputs))).toContain('[secret]');
  });

  it('from the program config: refuses two names holding one Bearer key (Envoy Gateway refuses the Secret), naming them, never the key', async () => {
    const models = JSON.stringify({ generative: [{ name: 'Sim', gateway: false, access: { apiKeys: ['ci', 'batch'] } }] });
    const endpoint = JSON.stringify({ access: { keyFormat: 'bearer', apiKeys: { ci: ['*'], batch: ['Sim'] } } });
    const run = (keys: Record<string, string>) =>
      record(() => {
        pulumi.runtime.setAllConfig(
          { 'proj:upstream': '2026-08', 'proj:cloudProvider': 'cloud', 'proj:router': JSON.stringify({ gatewayClass: 'envoy' }), 'proj:endpoint': endpoint, 'proj:models': models, 'proj:apiKeys': JSON.stringify(keys) },
          ['proj:apiKeys'],
        );
        AppServing.fromConfig('platform', { modelsDir: MODELS_DIR });
      });
    const error = await run({ ci: CI, batch: CI }).catch((e: unknown) => e);
    expect(pulumi.RunError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe("app-serving:apiKeys.batch and app-serving:apiKeys.ci hold the same key: give each its own (the endpoint's Envoy Gateway refuses a duplicated API key)");
    const rec = await run({ ci: CI, batch: BATCH });
    expect(rec.revealed('platform-endpoint-keys').stringData).toEqual({ batch: BATCH, ci: CI });
  });
});
