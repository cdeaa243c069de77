import { describe, expect, it } from 'vitest';
import { cli, fixtureRepo } from '../test/run-cli.ts';

/** A 2026-08 stack on Envoy Gateway with an endpoint over `models` (each behind the Router's own proxy). */
function stack(models: readonly string[]): string {
  return [
    'config:',
    '  app-serving:cloudProvider: cloud',
    '  app-serving:upstream: 2026-08',
    '  app-serving:router: {mode: standalone}',
    '  app-serving:apiKeys:',
    '    ci: {secure: v1:AAAA:BBBB}',
    "  app-serving:endpoint: {class: envoy, access: {keyFormat: bearer, apiKeys: {ci: ['*']}}}",
    '  app-serving:models:',
    '    generative:',
    ...models.flatMap((name) => [`      - name: ${name}`, '        access: {open: true}']),
    '',
  ].join('\n');
}

const model = (prefix: string, name: string) => ({
  [`${prefix}/models/generative/${name}/server-${name.toLowerCase()}/values.yaml`]: `image: vllm/vllm-openai:v0.30.0\nservedModelName: org/${name.toLowerCase()}\n`,
});

describe('the stack endpoint in plan and diff', { timeout: 600_000 }, () => {
  it('plan shows the endpoint: its base URL, the router, who may call what, and each route by name', async () => {
    const dir = fixtureRepo({ 'Pulumi.t.yaml': stack(['A', 'B']), ...model('.', 'A'), ...model('.', 'B') });
    const result = await cli(['plan', '--stack', 'Pulumi.t.yaml'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('  endpoint    Gateway app-serving/endpoint (class envoy) → base_url http://envoy-app-serving-endpoint-8c36097d.envoy-gateway-system.svc.cluster.local:80/v1');
    expect(result.stdout).toContain('              access: API keys (Authorization: Bearer <key>; Envoy Gateway holds the keys in clear): ci → A, B');
    expect(result.stdout).toContain("              route endpoint-b: \"org/b\" → the llm-d Router's proxy router-b-epp:8081 (its EPP picks the pod)");
    expect(result.stdout).toContain('              GET /v1/models: 2 models, 0 adapters; an unknown model: 404 model_not_found');
  });

  it('diff shows what adding a model changes on the shared Gateway: its route and grant created, the model list it answers updated', async () => {
    const dir = fixtureRepo({
      'base/Pulumi.t.yaml': stack(['A']),
      ...model('base', 'A'),
      'head/Pulumi.t.yaml': stack(['A', 'B']),
      ...model('head', 'A'),
      ...model('head', 'B'),
    });
    const result = await cli(['diff', '--base-stack', 'base/Pulumi.t.yaml', '--stack', 'head/Pulumi.t.yaml'], { cwd: dir });
    expect(result.stderr).toBe('');
    const stackSection = result.stdout.slice(result.stdout.indexOf('\nstack\n'));
    expect(stackSection).toContain('+ create  HTTPRoute app-serving/endpoint-b');
    expect(stackSection).toContain('+ create  ReferenceGrant llm-d-b/app-serving-endpoint');
    expect(stackSection).toContain('+ create  SecurityPolicy app-serving/endpoint-b-access');
    expect(stackSection).toContain('~ update  HTTPRouteFilter app-serving/endpoint-models');
    expect(stackSection).toContain('~ metadata.annotations["app-serving.io/models"]: "org/a" → "org/a, org/b"');
  });
});
