import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, fixtureRepo } from '../test/run-cli.ts';
import { openAiServer } from '../test/openai-server.ts';

interface Resource {
  type: string;
  name: string;
  parent: string | null;
  dependsOn: string[];
  inputs: Record<string, unknown>;
}

describe('render', () => {
  it('prints every resource the example stack registers, secrets as [secret]', async () => {
    const result = await cli(['render', '--json']);
    expect(result.code).toBe(0);
    const { resources } = JSON.parse(result.stdout) as { resources: Resource[] };
    for (const resource of resources) expect(Object.keys(resource).sort()).toEqual(['dependsOn', 'inputs', 'name', 'parent', 'type']);
    const byName = (name: string) => resources.find((r) => r.name === name)!;
    expect(resources.filter((r) => r.type === 'kubernetes:helm.sh/v4:Chart')).toHaveLength(6);
    expect(resources.filter((r) => r.type === 'kubernetes:batch/v1:Job').map((r) => (r.inputs.metadata as { name: string }).name).sort()).toEqual([
      'bge-small-rke2-model-pull',
      'qwen3-06b-rke2-model-pull',
    ]);
    const secret = resources.find((r) => r.type === 'kubernetes:core/v1:Secret')!;
    expect(secret.inputs.stringData).toBe('[secret]');
    expect(result.stdout).not.toContain('render-placeholder');
    const route = resources.find((r) => r.type === 'kubernetes:gateway.networking.k8s.io/v1:HTTPRoute')!;
    expect(route.dependsOn.length).toBeGreaterThan(0);
    expect(byName('app-serving').parent).toBeNull();
  });

  it('prints YAML manifests and chart specs for people', async () => {
    const result = await cli(['render', '--stack', 'apps/app-serving/Pulumi.kind.yaml']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('kind: Namespace');
    expect(result.stdout).toContain('chart: oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool');
    expect(result.stdout).toContain('release: ms-sim');
    expect(result.stdout).toContain('kind: HTTPRoute');
  });

  it('writes one file per resource with --out', async () => {
    const dir = fixtureRepo({});
    const out = join(dir, 'rendered');
    const result = await cli(['render', '--stack', 'apps/app-serving/Pulumi.kserve.yaml', '--out', out]);
    expect(result.code).toBe(0);
    const files = readdirSync(out);
    expect(result.stderr).toBe(`wrote ${files.length} files to ${out}\n`);
    expect(files.some((f) => f.includes('llminferenceservice-'))).toBe(true);
    const service = files.find((f) => /-llminferenceservice-/.test(f))!;
    expect(readFileSync(join(out, service), 'utf8')).toContain('kind: LLMInferenceService');
    expect(readdirSync(out).join('\n')).not.toContain('placeholder');
  });

  it('--out under a folder that does not exist is a usage error (exit 2), and nothing is created', async () => {
    const dir = fixtureRepo({});
    const out = join(dir, 'missing', 'rendered');
    const result = await cli(['render', '--stack', 'apps/app-serving/Pulumi.kserve.yaml', '--out', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`--out "${out}": the folder ${join(dir, 'missing')} does not exist (render creates only the last folder)`);
    expect(existsSync(join(dir, 'missing'))).toBe(false);
  });
});

describe('verify --base-url', () => {
  it('passes against a healthy OpenAI-compatible server, and writes JUnit', async () => {
    const url = await openAiServer(['random', 'sim-embeddings']);
    const dir = fixtureRepo({});
    const junit = join(dir, 'verify.xml');
    const result = await cli(['verify', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--base-url', url, '--junit', junit, '--timeout', '30s']);
    expect(result.stderr).toContain('Sim chat: PASS');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('app-serving verify: stack kind');
    expect(readFileSync(junit, 'utf8')).toMatch(/^<\?xml/);
  });

  it('fails with a diagnosis when the model server errors, and prints JSON', async () => {
    const url = await openAiServer(['random', 'sim-embeddings'], { broken: true });
    const result = await cli(['verify', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--base-url', url, '--json', '--model', 'Sim']);
    expect(result.code).toBe(1);
    const json = JSON.parse(result.stdout);
    expect(json.ok).toBe(false);
    const chat = json.models[0].checks.find((c: { name: string }) => c.name === 'chat');
    expect(chat).toMatchObject({ status: 'fail', failure: { httpStatus: 500 } });
  });

  it('never prints the bearer token it sends', async () => {
    const url = await openAiServer(['random']);
    const result = await cli(['verify', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--base-url', url, '--model', 'Sim', '--json'], { env: { APP_SERVING_VERIFY_TOKEN: 'sk-very-secret-token' } });
    expect(result.stdout + result.stderr).not.toContain('sk-very-secret-token');
  });

  it('exits 2 on an unknown model or a bad duration', async () => {
    expect((await cli(['verify', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--base-url', 'http://127.0.0.1:9', '--model', 'Nope'])).code).toBe(2);
    expect((await cli(['verify', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--base-url', 'http://127.0.0.1:9', '--timeout', 'soon'])).code).toBe(2);
  });

  it('a --kubeconfig file that is not there is a usage error (exit 2), for verify and preflight', async () => {
    const dir = fixtureRepo({});
    for (const command of ['verify', 'preflight']) {
      const result = await cli([command, '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--kubeconfig', join(dir, 'nope.yaml')]);
      expect(result.code, command).toBe(2);
      expect(result.stderr, command).toContain(`--kubeconfig "${join(dir, 'nope.yaml')}": no such file`);
    }
  });

  it('exits 1 when no kubeconfig can be found', async () => {
    const dir = fixtureRepo({});
    const result = await cli(['verify', '--stack', `${process.cwd()}/../../apps/app-serving/Pulumi.kind.yaml`, '--models-dir', `${process.cwd()}/../../models`], { cwd: dir, env: { HOME: dir, KUBECONFIG: join(dir, 'none') } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/kubeconfig/i);
  });
});
