import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { upstreamPath } from '@app-serving/test-cluster';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, cli, fixtureRepo, hasAnsi, modelFiles } from '../test/run-cli.ts';

const CLOUD_STACK = 'config:\n  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:\n      - name: Gen\n';
const VERSION = (JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;

describe('help, version and usage errors', () => {
  it('prints help for the program and every command', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['validate', 'plan', 'render', 'diff', 'images', 'new-model', 'migrate', 'verify']) expect(help.stdout).toContain(command);
    for (const command of ['validate', 'plan', 'render', 'diff', 'images', 'new-model', 'migrate', 'verify']) {
      const result = await cli([command, '--help']);
      expect(result.code, command).toBe(0);
      expect(result.stdout).toContain(`Usage: app-serving ${command}`);
    }
  });

  it('prints its version', async () => {
    expect(await cli(['--version'])).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it('exits 2 on an unknown command, an unknown option or a missing argument', async () => {
    expect((await cli(['deploy'])).code).toBe(2);
    const unknownOption = await cli(['validate', '--stak', 'x']);
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toContain("unknown option '--stak'");
    expect((await cli(['new-model', 'X', '--slug', 'x'])).code).toBe(2);
  });

  it('exits 2 when the stack file does not exist, and says so', async () => {
    const result = await cli(['validate', '--stack', 'nope/Pulumi.x.yaml']);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain('--stack nope/Pulumi.x.yaml: no such file');
  });

  it('exits 2 when there is no stack to default to', async () => {
    const dir = fixtureRepo({ 'README.md': '' });
    const result = await cli(['validate'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no --stack given and no apps/app-serving/Pulumi.example.yaml above');
  });
});

describe('validate', () => {
  it('accepts the built-in example stack (the default), saying once that it is on the superseded set and how to move', async () => {
    const result = await cli(['validate']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('ok apps/app-serving/Pulumi.example.yaml: 2 models (generative/Qwen3-0.6B-rke2, embedder/bge-small-en-v1.5-rke2)\n');
    expect(result.stderr).toBe(
      'warning: apps/app-serving/Pulumi.example.yaml:21: models: Qwen3-0.6B-rke2 and bge-small-en-v1.5-rke2 are deployed with the 2026-02 set (llm-d-infra v1.3.10, GAIE inferencepool v1.2.0 and llm-d-modelservice v0.4.12; KServe v0.18), which upstream has superseded (a stack without `upstream` stays on it): see docs/upgrading.md, and move with `app-serving migrate --stack apps/app-serving/Pulumi.example.yaml --to 2026-08`\n',
    );
  });

  it.each(['example', 'cloud', 'kind', 'kserve'])('accepts Pulumi.%s.yaml, with --json: one warning, that the stack is on the superseded set', async (stack) => {
    const result = await cli(['validate', '--stack', `apps/app-serving/Pulumi.${stack}.yaml`, '--json']);
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as { ok: boolean; issues: unknown[]; warnings: { code: string; message: string }[] };
    expect(json).toMatchObject({ ok: true, issues: [] });
    expect(json.warnings.map((w) => w.code)).toEqual(['warning.upstream-superseded']);
    expect(json.warnings[0]!.message).toContain(`move with \`app-serving migrate --stack apps/app-serving/Pulumi.${stack}.yaml --to 2026-08\``);
  });

  it('accepts Pulumi.current.yaml (the example on the current set) with no warning', async () => {
    const result = await cli(['validate', '--stack', 'apps/app-serving/Pulumi.current.yaml', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ ok: true, stack: 'apps/app-serving/Pulumi.current.yaml', models: ['Qwen3-0.6B-rke2', 'bge-small-en-v1.5-rke2'], issues: [], warnings: [] });
  });

  it('the migrate command the superseded warning names exists: run on a copy of the stack, it moves it, and validate no longer warns', async () => {
    const dir = fixtureRepo({ 'Pulumi.kind.yaml': readFileSync(join(REPO_ROOT, 'apps/app-serving/Pulumi.kind.yaml'), 'utf8') });
    for (const [category, name] of [
      ['generative', 'Sim'],
      ['embedder', 'SimEmbeddings'],
    ] as const) {
      for (const folder of readdirSync(join(REPO_ROOT, 'models', category, name)).filter((f) => /^(gaie|ms)-/.test(f))) {
        const to = join(dir, 'models', category, name, folder);
        mkdirSync(to, { recursive: true });
        writeFileSync(join(to, 'values.yaml'), readFileSync(join(REPO_ROOT, 'models', category, name, folder, 'values.yaml')));
      }
    }
    const before = JSON.parse((await cli(['validate', '--stack', 'Pulumi.kind.yaml', '--json'], { cwd: dir })).stdout) as { warnings: { code: string; message: string }[] };
    const named = /`app-serving (migrate [^`]+)`/.exec(before.warnings.find((w) => w.code === 'warning.upstream-superseded')!.message)![1]!;
    expect(named).toBe('migrate --stack Pulumi.kind.yaml --to 2026-08');
    const migrated = await cli(named.split(' '), { cwd: dir });
    expect(migrated.code).toBe(0);
    const after = await cli(['validate', '--stack', 'Pulumi.kind.yaml', '--json'], { cwd: dir });
    expect(JSON.parse(after.stdout)).toMatchObject({ ok: true, issues: [], warnings: [] });
  });

  it('prints every problem of a broken stack, one line each, and exits 1', async () => {
    const dir = fixtureRepo({
      'Pulumi.bad.yaml': 'config:\n  app-serving:cloudProvider: on-prem\n  app-serving:models:\n    generative:\n      - name: Gen\n      - name: Missing\n',
      ...modelFiles('generative', 'Gen', 'gen', 'modelArtifacts:\n  labels:\n    llm-d.ai/model: other\n'),
    });
    const result = await cli(['validate', '--stack', 'Pulumi.bad.yaml'], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stdout.trimEnd().split('\n')).toEqual([
      'models/generative/Gen/ms-gen/values.yaml:3: modelArtifacts.labels["llm-d.ai/model"]: is "other" in the values file, but the stack sets "gen" (the InferencePool and the embeddings Service select the model pods by this label); remove it from the file',
      'Pulumi.bad.yaml:1: harborHostname: is required when cloudProvider is on-prem',
      'Pulumi.bad.yaml:1: harborToken: is required when cloudProvider is on-prem (pulumi config set --secret harborToken <robot secret>)',
      'Pulumi.bad.yaml:1: harborUser: is required when cloudProvider is on-prem',
      'Pulumi.bad.yaml:1: kubeconfig: is required when cloudProvider is on-prem',
      'Pulumi.bad.yaml:6: models.generative[1].name: no model folder models/generative/Missing (create it with: app-serving new-model Missing --category generative --slug <slug>)',
    ]);
    expect(result.stderr).toBe('6 problems\n');
  });

  it('reports a plain-text harborToken and the missing kubeconfig in one pass, never echoing the token', async () => {
    const dir = fixtureRepo({
      'Pulumi.onprem.yaml': [
        'config:',
        '  app-serving:cloudProvider: on-prem',
        '  app-serving:harborHostname: harbor.local',
        '  app-serving:harborUser: robot$pull',
        '  app-serving:harborToken: s3cret-robot-token',
        '  app-serving:models:',
        '    generative:',
        '      - name: Gen',
        '',
      ].join('\n'),
      ...modelFiles('generative', 'Gen', 'gen'),
    });
    const result = await cli(['validate', '--stack', 'Pulumi.onprem.yaml'], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stdout.trimEnd().split('\n')).toEqual([
      'Pulumi.onprem.yaml:1: kubeconfig: is required when cloudProvider is on-prem',
      'Pulumi.onprem.yaml:5: harborToken: must be a secret, not plain text in the stack file: run `pulumi config set --secret harborToken <value>`',
    ]);
    expect(result.stdout + result.stderr).not.toContain('s3cret-robot-token');
  });

  it('reports values problems with the values file and line', async () => {
    const dir = fixtureRepo({ 'Pulumi.s.yaml': CLOUD_STACK, ...modelFiles('generative', 'Gen', 'gen', 'routing:\n  servicePort: "8000"\nmodelArtifacts:\n  labels:\n    llm-d.ai/model: other\n') });
    const result = await cli(['validate', '--stack', 'Pulumi.s.yaml', '--json'], { cwd: dir });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      ok: false,
      issues: [
        { code: 'values.invalid', path: 'routing.servicePort', message: 'must be a port number (1–65535), not "8000"', file: 'models/generative/Gen/ms-gen/values.yaml', line: 2 },
        {
          code: 'values.conflict',
          path: 'modelArtifacts.labels["llm-d.ai/model"]',
          message:
            'is "other" in the values file, but the stack sets "gen" (the InferencePool and the embeddings Service select the model pods by this label); remove it from the file',
          file: 'models/generative/Gen/ms-gen/values.yaml',
          line: 5,
        },
      ],
    });
  });

  it('reports schema errors of the stack file and the problems of the model folders of the entries that parse, in one run', async () => {
    const dir = fixtureRepo({
      'Pulumi.s.yaml': [
        'config:',
        '  app-serving:cloudProvider: cloud',
        '  app-serving:gpuTolerance: {}',
        '  app-serving:models:',
        '    generative:',
        '      - name: Big',
        '        modelSource:',
        '          harborRef: harbor.example.com/ai-models/big:1',
        '          modelUri: hub/org/big',
        '          storageSize: 40 GB',
        '      - name: Gen',
        '        nodeSelectr: { workload: gpu }',
        '      - name: Ok',
        '    embedders: []',
        '',
      ].join('\n'),
      ...modelFiles('generative', 'Big', 'big'),
      ...modelFiles('generative', 'Gen', 'gen'),
      ...modelFiles('generative', 'Ok', 'ok', 'modelArtifacts:\n  labels:\n    llm-d.ai/model: other\n'),
    });
    const result = await cli(['validate', '--stack', 'Pulumi.s.yaml'], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stdout.trimEnd().split('\n')).toEqual([
      'models/generative/Ok/ms-ok/values.yaml:3: modelArtifacts.labels["llm-d.ai/model"]: is "other" in the values file, but the stack sets "ok" (the InferencePool and the embeddings Service select the model pods by this label); remove it from the file',
      'Pulumi.s.yaml:3: gpuTolerance: unknown key "app-serving:gpuTolerance" (did you mean "gpuToleration"?)',
      'Pulumi.s.yaml:10: models.generative[0].modelSource.storageSize: "40 GB" must be a Kubernetes quantity such as 40Gi or 500Mi',
      'Pulumi.s.yaml:12: models.generative[1].nodeSelectr: unknown key "nodeSelectr" (did you mean "nodeSelector"?)',
      'Pulumi.s.yaml:14: models.embedders: unknown key "embedders" (did you mean "embedder"?)',
    ]);
    expect(result.stderr).toBe('5 problems\n');
  });

  it('checks the model folders also when a stack key is refused (a plaintext token), without repeating the key', async () => {
    const dir = fixtureRepo({
      'Pulumi.s.yaml': `${CLOUD_STACK}  app-serving:harborHostname: harbor.example.com\n  app-serving:harborUser: robot\n  app-serving:harborToken: plain\n`,
      ...modelFiles('generative', 'Gen', 'gen', 'modelArtifacts:\n  labels:\n    llm-d.ai/model: other\n'),
    });
    const result = await cli(['validate', '--stack', 'Pulumi.s.yaml', '--json'], { cwd: dir });
    expect(result.code).toBe(1);
    expect((JSON.parse(result.stdout) as { issues: { code: string; path: string }[] }).issues.map((i) => [i.code, i.path])).toEqual([
      ['values.conflict', 'modelArtifacts.labels["llm-d.ai/model"]'],
      ['config.not-secret', 'harborToken'],
    ]);
  });

  it('reports a YAML syntax error with its line', async () => {
    const dir = fixtureRepo({ 'Pulumi.s.yaml': 'config:\n  app-serving:cloudProvider: [cloud\n' });
    const result = await cli(['validate', '--stack', 'Pulumi.s.yaml'], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^Pulumi\.s\.yaml:\d+: YAML syntax error: /);
  });

  it('never prints a plaintext token it refuses, nor a secure value', async () => {
    const dir = fixtureRepo({ 'Pulumi.s.yaml': `${CLOUD_STACK}  app-serving:harborToken: hunter2-very-secret\n  app-serving:hfToken:\n    secure: v1:c2VjcmV0LWNpcGhlcg==\n`, ...modelFiles('generative', 'Gen', 'gen') });
    for (const args of [['validate'], ['validate', '--json'], ['plan'], ['plan', '--json'], ['images']]) {
      const result = await cli([...args, '--stack', 'Pulumi.s.yaml'], { cwd: dir });
      expect(result.code).toBe(1);
      expect(result.stdout + result.stderr).not.toMatch(/hunter2|c2VjcmV0/);
      expect(result.stdout + result.stderr).toContain('must be a secret');
    }
  });

  it('prints warnings on stderr and still succeeds', async () => {
    const dir = fixtureRepo({ 'Pulumi.s.yaml': 'config:\n  app-serving:cloudProvider: cloud\n  app-serving:models: {}\n' });
    const result = await cli(['validate', '--stack', 'Pulumi.s.yaml'], { cwd: dir });
    expect(result).toMatchObject({ code: 0, stdout: 'ok Pulumi.s.yaml: no enabled model\n' });
    expect(result.stderr).toContain('warning: Pulumi.s.yaml:3: models: no model is enabled');
  });

  it('never colours output that is not a terminal, nor with NO_COLOR', async () => {
    const dir = fixtureRepo({ 'Pulumi.s.yaml': 'config:\n  app-serving:cloudProvider: gcp\n  app-serving:models: {}\n' });
    for (const env of [{}, { NO_COLOR: '1', FORCE_COLOR: '1' }]) {
      const result = await cli(['validate', '--stack', 'Pulumi.s.yaml'], { cwd: dir, env });
      expect(hasAnsi(result.stdout + result.stderr)).toBe(false);
    }
  });

  it('finds the models folder from the stack file, or takes --models-dir', async () => {
    const dir = fixtureRepo({ 'stacks/Pulumi.s.yaml': CLOUD_STACK, ...modelFiles('generative', 'Gen', 'gen'), ...Object.fromEntries(Object.entries(modelFiles('generative', 'Gen', 'gen')).map(([k, v]) => [`other/${k}`, v])) });
    expect((await cli(['validate', '--stack', 'stacks/Pulumi.s.yaml'], { cwd: dir })).code).toBe(0);
    expect((await cli(['validate', '--stack', 'stacks/Pulumi.s.yaml', '--models-dir', 'other/models'], { cwd: dir })).code).toBe(0);
    expect((await cli(['validate', '--stack', 'stacks/Pulumi.s.yaml', '--models-dir', 'nope'], { cwd: dir })).code).toBe(2);
  });
});

describe('warnings and problems repeated across models', () => {
  /** A cloud stack of `count` generative models M0…, each with `gaie` and `ms` as its values files. */
  const manyModels = (count: number, gaie: string, ms: string) =>
    fixtureRepo({
      'Pulumi.s.yaml': `config:\n  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:\n${Array.from({ length: count }, (_, i) => `      - name: M${i}\n`).join('')}`,
      ...Object.assign(
        {},
        ...Array.from({ length: count }, (_, i) => ({ ...modelFiles('generative', `M${i}`, `m${i}`, ms), [`models/generative/M${i}/gaie-m${i}/values.yaml`]: gaie })),
      ),
    });
  const GAIE_TYPO = 'inferenceExtension:\n  replicas: 1\n  replica: 1\n';
  const MS = 'modelArtifacts:\n  name: org/m\n  uri: hf://org/m\ndecode:\n  containers:\n    - name: vllm\n      image: ghcr.io/llm-d/llm-d-inference-sim:v0.10.2\n      modelCommand: imageDefault\n';

  it('prints a warning that applies to many models once, with a count and the first three names; --json keeps every use', async () => {
    const dir = manyModels(50, GAIE_TYPO, MS);
    const result = await cli(['validate', '--stack', 'Pulumi.s.yaml'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stderr.split('\n').filter(Boolean)).toEqual([
      'warning: models/generative/M0/gaie-m0/values.yaml:3: inferenceExtension.replica: GAIE inferencepool v1.2.0 does not read this key, so it has no effect (did you mean \"replicas\"?); known here: replicas, image, extProcPort, env, pluginsConfigFile, pluginsCustomConfig, extraContainerPorts, extraServicePorts, flags, affinity, tolerations, failureMode, metricsPort, sidecar, monitoring, tracing (in 50 models: M0, M1, M2 and 47 more)',
      // The stack is on the superseded set: said once for the stack, not once per model.
      'warning: Pulumi.s.yaml:3: models: M0, M1, M2 and 47 more are deployed with the 2026-02 set (llm-d-infra v1.3.10, GAIE inferencepool v1.2.0 and llm-d-modelservice v0.4.12; KServe v0.18), which upstream has superseded (a stack without `upstream` stays on it): see docs/upgrading.md, and move with `app-serving migrate --stack Pulumi.s.yaml --to 2026-08`',
      'warning: ghcr.io/llm-d/llm-d-routing-sidecar:latest is not pinned to a version (llm-d-modelservice v0.4.12 default (routing.proxy.image) in 50 models: M0, M1, M2 and 47 more); pin a tag so every node runs the same code and a mirror can copy it',
      // Once per stack, however many models are open by default.
      `warning: Pulumi.s.yaml:5: models.generative[0].name: 50 models are open to anyone who reaches the gateway (${Array.from({ length: 50 }, (_, i) => `M${i}`).join(', ')}): set access.apiKeys or access.jwt, or access.open: true to say so (docs/access.md)`,
    ]);
    // The result line names the first three models too; --json lists every one.
    expect(result.stdout).toBe('ok Pulumi.s.yaml: 50 models (generative/M0, generative/M1, generative/M2 and 47 more)\n');
    const json = JSON.parse((await cli(['validate', '--stack', 'Pulumi.s.yaml', '--json'], { cwd: dir })).stdout) as { warnings: { code: string; file: string | null; uses?: unknown[] }[] };
    const unknown = json.warnings.filter((w) => w.code === 'warning.unknown-key');
    expect(unknown.map((w) => w.file).sort()).toEqual(Array.from({ length: 50 }, (_, i) => `models/generative/M${i}/gaie-m${i}/values.yaml`).sort());
    const [unpinned] = json.warnings.filter((w) => w.code === 'warning.image-unpinned');
    expect(unpinned!.uses).toEqual(Array.from({ length: 50 }, (_, i) => ({ model: `M${i}`, where: 'llm-d-modelservice v0.4.12 default (routing.proxy.image)' })));
  });

  it('keeps a warning repeated in up to four models one line per file', async () => {
    const dir = manyModels(4, GAIE_TYPO, MS);
    const result = await cli(['validate', '--stack', 'Pulumi.s.yaml'], { cwd: dir });
    expect(result.stderr.split('\n').filter((line) => line.includes('inferenceExtension.replica:')).map((line) => line.split(':')[1])).toEqual([
      ' models/generative/M0/gaie-m0/values.yaml',
      ' models/generative/M1/gaie-m1/values.yaml',
      ' models/generative/M2/gaie-m2/values.yaml',
      ' models/generative/M3/gaie-m3/values.yaml',
    ]);
    expect(result.stderr).toContain('(M0: llm-d-modelservice v0.4.12 default (routing.proxy.image); M1: ');
  });

  it('prints a problem repeated in many models once, counts every problem, and --json lists each', async () => {
    const dir = manyModels(12, 'inferenceExtension:\n  replicas: 1\n', `${MS}routing:\n  servicePrt: 8000\n`);
    const result = await cli(['validate', '--stack', 'Pulumi.s.yaml'], { cwd: dir });
    expect(result.code).toBe(1);
    const lines = result.stdout.split('\n').filter(Boolean);
    expect(lines).toEqual([
      'models/generative/M0/ms-m0/values.yaml:10: routing.servicePrt: llm-d-modelservice v0.4.12 does not accept this key (did you mean "servicePort"?); allowed here: proxy, servicePort (in 12 models: M0, M1, M10 and 9 more)',
    ]);
    expect(result.stderr).toBe('12 problems\n');
    const json = JSON.parse((await cli(['validate', '--stack', 'Pulumi.s.yaml', '--json'], { cwd: dir })).stdout) as { issues: unknown[] };
    expect(json.issues).toHaveLength(12);
  });
});

describe('plan', () => {
  it('summarises the example stack for people', async () => {
    const result = await cli(['plan']);
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toContain('Stack example (on-prem, apps/app-serving/Pulumi.example.yaml): 2 models');
    expect(out).toContain('generative/Qwen3-0.6B-rke2  [llm-d]  slug qwen3-06b-rke2');
    expect(out).toContain('gateway      infra-qwen3-06b-rke2-inference-gateway → http://infra-qwen3-06b-rke2-inference-gateway-istio.llm-d-qwen3-06b-rke2.svc.cluster.local:80');
    expect(out).toContain('route        HTTPRoute llm-d-qwen3-06b-rke2 → InferencePool gaie-qwen3-06b-rke2');
    expect(out).toContain('embeddings   Service ms-bge-small-rke2-embeddings:8200');
    expect(out).toContain('storage      PVC qwen3-06b-rke2-model 10Gi (class hostpath), PV qwen3-06b-rke2-model-pv on gpu-node-1:/var/lib/hostpath/models/qwen3-06b-rke2');
    expect(out).toContain('placement    node workload=gpu, tolerates dedicated=gpu:NoSchedule, pull secret harbor-creds');
    expect(out).toContain('listener     HTTP :80, routes from its own namespace only (llm-d-qwen3-06b-rke2); access logs on');
    expect(out).toContain('ready        pulumi up waits up to 30m for the model Deployments (readyTimeout)');
    expect(out).toContain('control pods EPP gaie-qwen3-06b-rke2-epp and the gateway pods: node workload=gpu, tolerates dedicated=gpu:NoSchedule');
  });

  it("on 2026-08: says app-serving sets no access logs (Istio's own), and validate warns at modelGateway.accessLogging", async () => {
    const result = await cli(['plan', '--stack', 'apps/app-serving/Pulumi.current.yaml']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("listener     HTTP :80, routes from its own namespace only (llm-d-qwen3-06b-rke2); access logs not set by app-serving (Istio's own: its Telemetry API)");
    const dir = fixtureRepo({ 'Pulumi.t.yaml': readFileSync(join(REPO_ROOT, 'apps/app-serving/Pulumi.current.yaml'), 'utf8').replace('config:\n', 'config:\n  app-serving:modelGateway:\n    accessLogging: true\n') });
    const validated = await cli(['validate', '--stack', join(dir, 'Pulumi.t.yaml'), '--models-dir', join(REPO_ROOT, 'models')], { cwd: dir });
    expect(validated.code).toBe(0);
    expect(validated.stderr).toContain('Pulumi.t.yaml:12: modelGateway.accessLogging: has no effect on Qwen3-0.6B-rke2 and bge-small-en-v1.5-rke2 (the 2026-08 set)');
  });

  it('shows each chart as deployed: the pinned one, a mirror, or a package on disk (air gap)', async () => {
    const pkg = upstreamPath('charts/llm-d-modelservice-v0.4.12.tgz');
    const stack = CLOUD_STACK.replace(
      '  app-serving:models:',
      `  app-serving:charts:\n    gaie:\n      chart: oci://harbor.example.com/charts/inferencepool\n    modelService:\n      chart: ${pkg}\n  app-serving:models:`,
    );
    const dir = fixtureRepo({ 'Pulumi.s.yaml': stack, ...modelFiles('generative', 'Gen', 'gen') });
    const result = await cli(['plan', '--stack', 'Pulumi.s.yaml'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `releases     infra-gen (llm-d-infra v1.3.10), gaie-gen (inferencepool v1.2.0 from oci://harbor.example.com/charts/inferencepool), ms-gen (llm-d-modelservice v0.4.12 from ${pkg})`,
    );
    const images = await cli(['images', '--stack', 'Pulumi.s.yaml', '--json'], { cwd: dir });
    expect(images.stdout).toContain(`llm-d-modelservice v0.4.12 from ${pkg} default (routing.proxy.image)`);
    // A chart path that is not a chart: refused by validate, at the key.
    const broken = fixtureRepo({ 'Pulumi.s.yaml': stack.replace(pkg, `${dir}/missing.tgz`), ...modelFiles('generative', 'Gen', 'gen') });
    const validate = await cli(['validate', '--stack', 'Pulumi.s.yaml'], { cwd: broken });
    expect(validate.code).toBe(1);
    expect(validate.stdout + validate.stderr).toContain(`Pulumi.s.yaml:7: charts.modelService.chart: no such file or folder: ${dir}/missing.tgz`);
  });

  it('shows a widened listener, a model readyTimeout and control-pod placement', async () => {
    const stack = CLOUD_STACK.replace(
      '  app-serving:models:',
      '  app-serving:controlNodeSelector:\n    role: system\n  app-serving:modelGateway:\n    routeNamespaces: [apps]\n    accessLogging: false\n  app-serving:models:',
    ).replace('      - name: Gen\n', '      - name: Gen\n        readyTimeout: 1h\n');
    const dir = fixtureRepo({ 'Pulumi.s.yaml': stack, ...modelFiles('generative', 'Gen', 'gen') });
    const result = await cli(['plan', '--stack', 'Pulumi.s.yaml'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('listener     HTTP :80, routes from namespaces llm-d-gen, apps; access logs off');
    expect(result.stdout).toContain('ready        pulumi up waits up to 1h for the model Deployments (readyTimeout)');
    expect(result.stdout).toContain('control pods EPP gaie-gen-epp and the gateway pods: node role=system');
  });

  it('names each adapter of a model, its source and where the server loads it, and what the pull Job does with it', async () => {
    const stack = readFileSync(join(REPO_ROOT, 'apps/app-serving/Pulumi.current.yaml'), 'utf8').replace(
      '          hostpathNode: gpu-node-1\n',
      '          hostpathNode: gpu-node-1\n        maxLoraRank: 32\n        adapters:\n          - name: qwen3-sql\n            harborRef: harbor.example.com/ai-adapters/qwen3-sql:v1\n          - name: qwen3-own\n            path: loras/own\n',
    );
    const dir = fixtureRepo({ 'Pulumi.a.yaml': stack });
    const result = await cli(['plan', '--stack', join(dir, 'Pulumi.a.yaml'), '--models-dir', join(REPO_ROOT, 'models')], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      [
        '  adapters     qwen3-sql ← harbor.example.com/ai-adapters/qwen3-sql:v1 (loaded from /model-cache/adapters/qwen3-sql); max rank 32, 2 per batch',
        "               qwen3-own ← the model's volume, loras/own (loaded from /model-cache/loras/own)",
      ].join('\n'),
    );
    expect(result.stdout).toContain(
      'weights      Job qwen3-06b-rke2-model-pull ← harbor.example.com/ai-models/qwen3-0.6b:2025-05; pulls the adapters qwen3-sql → adapters/qwen3-sql; checks the adapters qwen3-own in loras/own (rank ≤ 32), marker /model-cache/.pulled',
    );
  });

  it('prints the plan as the JSON contract', async () => {
    const result = await cli(['plan', '--json', '--stack', 'apps/app-serving/Pulumi.example.yaml']);
    expect(result.code).toBe(0);
    const plan = JSON.parse(result.stdout);
    expect(plan).toMatchObject({ stack: 'example', cloudProvider: 'on-prem' });
    for (const model of plan.models) {
      for (const key of ['name', 'category', 'platform', 'slug', 'namespace', 'releases', 'gateway', 'httpRoute', 'embeddingService', 'storage', 'charts', 'values']) expect(model).toHaveProperty(key);
      expect(Object.keys(model.releases)).toEqual(['infra', 'gaie', 'modelService']);
      expect(Object.keys(model.values)).toEqual(['infra', 'gaie', 'modelService']);
      expect(model.storage).toMatchObject({ pvc: expect.any(String), job: expect.any(String), marker: '/model-cache/.pulled' });
    }
    expect(plan.models[1].embeddingService).toMatchObject({ name: 'ms-bge-small-rke2-embeddings', port: 8200 });
  });

  it('describes a kserve model', async () => {
    const result = await cli(['plan', '--stack', 'apps/app-serving/Pulumi.kserve.yaml']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('kserve      Gateway kserve/kserve-ingress-gateway (class envoy, created by this stack)');
    expect(result.stdout).toContain('service      LLMInferenceService qwen25-05b (config qwen25-05b-config, ServiceAccount qwen25-05b-sa, HF token hf-token)');
    expect(result.stdout).toContain('route        Gateway kserve/kserve-ingress-gateway → /llm-d-qwen25-05b/qwen25-05b/v1/…');
  });
});

describe('llm-d behind Envoy Gateway (router.gatewayClass: envoy)', () => {
  const ENVOY_STACK =
    'config:\n  app-serving:cloudProvider: cloud\n  app-serving:upstream: 2026-08\n  app-serving:router:\n    gatewayClass: envoy\n  app-serving:models:\n    generative:\n      - name: Gen\n        access:\n          open: true\n';
  const server = { 'models/generative/Gen/server-gen/values.yaml': 'image: vllm/vllm-openai:v0.30.0\nservedModelName: org/gen\n' };

  it("plan names Envoy Gateway's objects, the stack's GatewayClass and the proxy's Service; images says where the proxy image comes from", async () => {
    const dir = fixtureRepo({ 'Pulumi.s.yaml': ENVOY_STACK, ...server });
    const plan = await cli(['plan', '--stack', 'Pulumi.s.yaml'], { cwd: dir });
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('envoy       GatewayClass envoy (gateway.envoyproxy.io/gatewayclass-controller; created by this stack): the llm-d Gateways of class envoy');
    expect(plan.stdout).toContain('router       router-gen (llm-d-router-gateway v0.10.0; gateway mode, a Gateway of class envoy)');
    expect(plan.stdout).toMatch(/gateway {6}router-gen-gateway → http:\/\/envoy-llm-d-gen-router-gen-gateway-[0-9a-f]{8}\.envoy-gateway-system\.svc\.cluster\.local:80/);
    expect(plan.stdout).toContain(
      'route        HTTPRoute router-gen-route → Service router-gen-pool:8000 (the pods of InferencePool router-gen); EPP router-gen-epp:9002 picks the pod over ext_proc (EnvoyExtensionPolicy router-gen-endpoint-picker), BackendTrafficPolicy router-gen-backend-traffic sends the request there',
    );
    const images = await cli(['images', '--stack', 'Pulumi.s.yaml'], { cwd: dir });
    expect(images.code).toBe(0);
    expect(images.stdout).toContain('The Envoy proxy image of the llm-d Gateways (class envoy) comes from your Envoy Gateway installation (v1.8.1: docker.io/envoyproxy/envoy:distroless-v1.38.1');
    expect(images.stdout).not.toContain('Istio');
  });

  it('validate refuses what the class cannot do, at the file, line and key, with the reason', async () => {
    const dir = fixtureRepo({ 'Pulumi.s.yaml': ENVOY_STACK, ...server, 'models/generative/Gen/router-gen/values.yaml': 'httpRoute:\n  create: true\n' });
    const result = await cli(['validate', '--stack', 'Pulumi.s.yaml'], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'models/generative/Gen/router-gen/values.yaml:2: httpRoute.create: is true in the values file, but the stack sets false (Envoy Gateway takes no InferencePool backend: app-serving writes the model\'s HTTPRoute to a Service of the pool\'s pods itself); remove it from the file',
    );
  });
});

describe('images', () => {
  it('lists the images of a cloud stack and how to mirror them', async () => {
    const result = await cli(['images', '--stack', 'apps/app-serving/Pulumi.cloud.yaml', '--mirror-to', 'harbor.example.com/images-llm-d']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('4 images pulled by stack cloud');
    expect(result.stdout).toContain('skopeo copy --all docker://ghcr.io/llm-d/llm-d-cuda:v0.4.0 docker://harbor.example.com/images-llm-d/llm-d/llm-d-cuda:v0.4.0');
    expect(result.stdout).toContain('skopeo copy --all docker://michaelf34/infinity:0.0.77-cpu docker://harbor.example.com/images-llm-d/michaelf34/infinity:0.0.77-cpu');
  });

  it('goes through oci-archive files when asked, and prints JSON', async () => {
    const result = await cli(['images', '--stack', 'apps/app-serving/Pulumi.cloud.yaml', '--mirror-to', 'harbor.example.com/p', '--archive-dir', '/carry', '--json']);
    const json = JSON.parse(result.stdout);
    expect(json.images.map((i: { image: string }) => i.image)).toEqual([
      'ghcr.io/llm-d/llm-d-cuda:v0.4.0',
      'ghcr.io/llm-d/llm-d-routing-sidecar:v0.4.0',
      'michaelf34/infinity:0.0.77-cpu',
      'registry.k8s.io/gateway-api-inference-extension/epp:v1.2.0',
    ].sort());
    expect(json.commands).toContain('skopeo copy --all docker://ghcr.io/llm-d/llm-d-cuda:v0.4.0 oci-archive:/carry/llm-d_llm-d-cuda-v0.4.0.tar');
    expect(json.commands).toContain('skopeo copy --all oci-archive:/carry/llm-d_llm-d-cuda-v0.4.0.tar docker://harbor.example.com/p/llm-d/llm-d-cuda:v0.4.0');
  });

  it('on an air-gapped stack, checks the Harbor images and knows where the ORAS image comes from', async () => {
    const result = await cli(['images', '--json']);
    const json = JSON.parse(result.stdout);
    expect(json.mirror).toBe('harbor.example.com/images-llm-d');
    expect(json.commands).toContain('skopeo copy --all docker://ghcr.io/oras-project/oras:v1.3.1 docker://harbor.example.com/images-infra/oras-project/oras:v1.3.1');
    expect(json.commands).toContain('skopeo inspect --raw docker://harbor.example.com/images-llm-d/llm-d/llm-d-cuda:v0.4.0 >/dev/null');
  });

  it("lists KServe's own images for a KServe stack, and what comes from the KServe charts", async () => {
    const result = await cli(['images', '--stack', 'apps/app-serving/Pulumi.kserve.yaml', '--mirror-to', 'harbor.example.com/images-llm-d']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('4 images pulled by stack kserve');
    expect(result.stdout).toContain('skopeo copy --all docker://ghcr.io/llm-d/llm-d-uds-tokenizer:v0.7.1 docker://harbor.example.com/images-llm-d/llm-d/llm-d-uds-tokenizer:v0.7.1');
    expect(result.stdout).toContain("The images of KServe's controller, Envoy Gateway and Envoy AI Gateway come from their charts");
    expect(result.stdout).not.toContain('Istio');
  });

  it("names the gateway proxy image only where a Gateway runs one: not in the Router's standalone mode (its Envoy is listed)", async () => {
    const current = readFileSync(join(REPO_ROOT, 'apps/app-serving/Pulumi.current.yaml'), 'utf8');
    const dir = fixtureRepo({ 'Pulumi.standalone.yaml': current.replace('    mode: gateway\n    gatewayClass: istio\n', '    mode: standalone\n'), 'Pulumi.agent.yaml': current.replace('gatewayClass: istio', 'gatewayClass: agentgateway') });
    const models = ['--models-dir', join(REPO_ROOT, 'models')];
    const standalone = await cli(['images', '--stack', 'Pulumi.standalone.yaml', ...models], { cwd: dir });
    expect(standalone.code).toBe(0);
    expect(standalone.stdout).toContain('docker.io/envoyproxy/envoy:distroless-v1.33.2');
    expect(standalone.stdout).not.toContain('Istio');
    const agent = await cli(['images', '--stack', 'Pulumi.agent.yaml', ...models], { cwd: dir });
    expect(agent.stdout).toContain('The agentgateway proxy image comes from your agentgateway installation');
    expect(agent.stdout).not.toContain('Istio');
    expect((await cli(['images', '--stack', 'apps/app-serving/Pulumi.current.yaml'])).stdout).toContain('The Istio gateway proxy image comes from your Istio installation');
  });

  it('rejects a malformed mirror', async () => {
    expect((await cli(['images', '--mirror-to', 'https://harbor'])).code).toBe(2);
  });
});

describe('new-model', () => {
  it.each([
    ['generative', 'vllm', [], ['router-mm', 'server-mm']],
    ['generative', 'sim', [], ['router-mm', 'server-mm']],
    ['embedder', 'infinity', [], ['router-mm', 'server-mm']],
    ['embedder', 'vllm', [], ['router-mm', 'server-mm']],
    ['generative', 'kserve-vllm', [], ['kserve-mm']],
    ['generative', 'vllm', ['--upstream', '2026-02'], ['gaie-mm', 'ms-mm']],
    ['generative', 'sim', ['--upstream', '2026-02'], ['gaie-mm', 'ms-mm']],
    ['embedder', 'infinity', ['--upstream', '2026-02'], ['gaie-mm', 'ms-mm']],
    ['embedder', 'vllm', ['--upstream', '2026-02'], ['gaie-mm', 'ms-mm']],
    ['generative', 'kserve-vllm', ['--upstream', '2026-02'], ['kserve-mm']],
  ])('scaffolds a %s model from the %s template %j that validates in any stack (its snippet names its set)', async (category, template, extra, folders) => {
    const dir = fixtureRepo({ 'models/generative/.keep': '', 'models/embedder/.keep': '' });
    const created = await cli(['new-model', 'My-Model', '--category', category, '--slug', 'mm', '--template', template, '--model-id', 'org/my-model', ...extra], { cwd: dir });
    expect(created.code).toBe(0);
    expect(readdirSync(join(dir, 'models', category, 'My-Model')).sort()).toEqual(folders);
    const snippet = created.stdout.slice(created.stdout.indexOf('  app-serving:models:'));
    const upstream = extra[1] ?? '2026-08';
    if (template !== 'kserve-vllm') expect(snippet).toMatch(new RegExp(`^ {8}upstream: ${upstream}$`, 'm'));
    for (const stackSet of ['', '  app-serving:upstream: 2026-08\n']) {
      (await import('node:fs')).writeFileSync(join(dir, 'Pulumi.new.yaml'), `config:\n  app-serving:cloudProvider: cloud\n${stackSet}${snippet}`);
      const validated = await cli(['validate', '--stack', 'Pulumi.new.yaml', '--json'], { cwd: dir });
      expect(JSON.parse(validated.stdout), stackSet).toMatchObject({ ok: true });
    }
  });

  it('puts --adapter into the snippet (Harbor, the Hub, a folder on the volume), which validates; refuses a bad one or a model vLLM does not serve', async () => {
    const dir = fixtureRepo({ 'models/generative/.keep': '', 'models/embedder/.keep': '' });
    const created = await cli(
      ['new-model', 'Lora-Model', '-c', 'generative', '--slug', 'lm', '-t', 'vllm', '--model-id', 'org/lm', '--target', 'rke2', '--mirror-to', 'harbor.example.com/images', '--adapter', 'lm-sql=harbor.example.com/ai-adapters/lm-sql:v1', '--adapter', 'lm-own=path:loras/own'],
      { cwd: dir },
    );
    expect(created.code).toBe(0);
    const snippet = created.stdout.slice(created.stdout.indexOf('  app-serving:models:'));
    expect(snippet).toContain(
      [
        '        adapters:                # LoRA adapters, each answering under its own name (docs/configuration.md#adapters)',
        '          - name: lm-sql',
        '            harborRef: harbor.example.com/ai-adapters/lm-sql:v1   # pulled into adapters/lm-sql/ on the volume (needs modelSource.harborRef)',
        '          - name: lm-own',
        "            path: loras/own   # already on the model's volume (needs a modelSource)",
      ].join('\n'),
    );
    const harbor = '  app-serving:harborHostname: harbor.example.com\n  app-serving:harborUser: robot$x\n  app-serving:harborToken:\n    secure: v1:eA==:eA==\n';
    (await import('node:fs')).writeFileSync(join(dir, 'Pulumi.new.yaml'), `config:\n  app-serving:cloudProvider: cloud\n  app-serving:upstream: 2026-08\n${harbor}${snippet}`);
    const validated = await cli(['validate', '--stack', 'Pulumi.new.yaml', '--json'], { cwd: dir });
    expect(JSON.parse(validated.stdout)).toMatchObject({ ok: true });
    const hub = await cli(['new-model', 'Hub-Model', '-c', 'generative', '--slug', 'hm', '--adapter', 'hm-chat=hf://org/hm-chat'], { cwd: dir });
    expect(hub.stdout).toContain('          - name: hm-chat\n            huggingFace:\n              repo: org/hm-chat\n');
    const bad = await cli(['new-model', 'Bad', '-c', 'generative', '--slug', 'bad', '--adapter', 'org/x=hf://org/x'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--adapter "org/x=hf://org/x": name must be an adapter name');
    const embedder = await cli(['new-model', 'Emb', '-c', 'embedder', '--slug', 'emb', '--adapter', 'e=hf://org/e'], { cwd: dir });
    expect(embedder.code).toBe(2);
    expect(embedder.stderr).toContain('--adapter is for generative models served by vLLM');
  });

  it('takes the set of --stack (its models folder too): the current set for a stack on it, the superseded one for a stack without upstream', async () => {
    const dir = fixtureRepo({ 'models/generative/.keep': '', 'stacks/Pulumi.new.yaml': 'config:\n  app-serving:upstream: 2026-08\n  app-serving:cloudProvider: cloud\n', 'stacks/Pulumi.old.yaml': 'config:\n  app-serving:cloudProvider: cloud\n' });
    const current = await cli(['new-model', 'A', '-c', 'generative', '--slug', 'a', '-t', 'sim', '--stack', 'stacks/Pulumi.new.yaml', '--json'], { cwd: dir });
    expect(JSON.parse(current.stdout)).toMatchObject({ folder: 'models/generative/A', upstream: '2026-08', files: ['models/generative/A/server-a/values.yaml', 'models/generative/A/router-a/values.yaml'] });
    expect((JSON.parse(current.stdout) as { stackSnippet: string }).stackSnippet).not.toContain('upstream');
    const old = await cli(['new-model', 'B', '-c', 'generative', '--slug', 'b', '-t', 'sim', '--stack', 'stacks/Pulumi.old.yaml', '--json'], { cwd: dir });
    expect(JSON.parse(old.stdout)).toMatchObject({ upstream: '2026-02', files: ['models/generative/B/gaie-b/values.yaml', 'models/generative/B/ms-b/values.yaml'] });
    const chosen = await cli(['new-model', 'C', '-c', 'generative', '--slug', 'c', '-t', 'sim', '--stack', 'stacks/Pulumi.old.yaml', '--upstream', '2026-08', '--json'], { cwd: dir });
    expect((JSON.parse(chosen.stdout) as { stackSnippet: string }).stackSnippet).toMatch(/^ {8}upstream: 2026-08$/m);
    expect((await cli(['new-model', 'D', '-c', 'generative', '--slug', 'd', '--upstream', '2027-01'], { cwd: dir })).code).toBe(2);
  });

  it('makes a cluster variant with Harbor images', async () => {
    const dir = fixtureRepo({ 'models/generative/.keep': '' });
    const result = await cli(['new-model', 'Qwen3-8B', '-c', 'generative', '--slug', 'qwen3-8b', '--target', 'rke2', '--mirror-to', 'harbor.local/images-llm-d', '--json'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ folder: 'models/generative/Qwen3-8B-rke2', slug: 'qwen3-8b-rke2', template: 'vllm', upstream: '2026-08' });
    expect(readFileSync(join(dir, 'models/generative/Qwen3-8B-rke2/server-qwen3-8b-rke2/values.yaml'), 'utf8')).toContain('image: harbor.local/images-llm-d/vllm/vllm-openai:v0.30.0\n');
    expect(readFileSync(join(dir, 'models/generative/Qwen3-8B-rke2/router-qwen3-8b-rke2/values.yaml'), 'utf8')).toContain(
      '    image:\n      registry: harbor.local/images-llm-d/llm-d\n      repository: llm-d-router-endpoint-picker\n      tag: v0.10.0\n',
    );
    const old = await cli(['new-model', 'Qwen3-8B', '-c', 'generative', '--slug', 'qwen3-8b', '--target', 'old', '--mirror-to', 'harbor.local/images-llm-d', '--upstream', '2026-02'], { cwd: dir });
    expect(old.code).toBe(0);
    expect(readFileSync(join(dir, 'models/generative/Qwen3-8B-old/ms-qwen3-8b-old/values.yaml'), 'utf8')).toContain('image: harbor.local/images-llm-d/llm-d/llm-d-cuda:v0.4.0');
  });

  it.each([
    ['generative', 'vllm', 'Qwen/Qwen3-8B', '2026-08'],
    ['generative', 'sim', 'random', '2026-08'],
    ['embedder', 'infinity', 'BAAI/bge-m3', '2026-08'],
    ['embedder', 'vllm', 'BAAI/bge-m3', '2026-08'],
    ['generative', 'vllm', 'Qwen/Qwen3-8B', '2026-02'],
    ['generative', 'sim', 'random', '2026-02'],
    ['embedder', 'infinity', 'BAAI/bge-m3', '2026-02'],
    ['embedder', 'vllm', 'BAAI/bge-m3', '2026-02'],
  ])('scaffolds an air-gapped %s variant (%s, --target rke2 --mirror-to) whose snippet, with a modelSource, validates on-prem with no warning but the set\'s (%s, %s)', async (category, template, modelId, upstream) => {
    const dir = fixtureRepo({ 'models/generative/.keep': '', 'models/embedder/.keep': '' });
    const created = await cli(
      ['new-model', 'My-Model', '-c', category, '--slug', 'mm', '-t', template, '--model-id', modelId, '--target', 'rke2', '--mirror-to', 'harbor.example.com/images-llm-d', '--upstream', upstream],
      { cwd: dir },
    );
    expect(created.code).toBe(0);
    if (upstream === '2026-02') {
      const ms = readFileSync(join(dir, `models/${category}/My-Model-rke2/ms-mm-rke2/values.yaml`), 'utf8');
      expect(ms).not.toMatch(/^\s*uri:/m);
      if (template !== 'sim') expect(ms).toContain('- name: HF_HUB_OFFLINE\n          value: "1"');
    } else {
      // The weights are on the volume: app-serving names them and sets HF_HUB_OFFLINE itself.
      expect(readFileSync(join(dir, `models/${category}/My-Model-rke2/server-mm-rke2/values.yaml`), 'utf8')).not.toMatch(/^model:/m);
    }
    const snippet = created.stdout.slice(created.stdout.indexOf('  app-serving:models:'));
    expect(snippet).toContain('        modelSource:\n          harborRef: harbor.example.com/ai-models/');
    const stack = [
      'config:',
      '  app-serving:cloudProvider: on-prem',
      '  app-serving:kubeconfig: ~/.kube/rke2.yaml',
      '  app-serving:harborHostname: harbor.example.com',
      '  app-serving:harborUser: robot$k8s-puller',
      '  app-serving:harborToken:',
      '    secure: v1:cGxhY2Vob2xkZXI=',
      snippet,
    ].join('\n');
    (await import('node:fs')).writeFileSync(join(dir, 'Pulumi.rke2.yaml'), stack);
    const validated = await cli(['validate', '--stack', 'Pulumi.rke2.yaml', '--json'], { cwd: dir });
    const json = JSON.parse(validated.stdout) as { ok: boolean; warnings: { code: string }[] };
    expect(json).toMatchObject({ ok: true, stack: 'Pulumi.rke2.yaml', models: ['My-Model-rke2'], issues: [] });
    expect(json.warnings.map((w) => w.code)).toEqual(upstream === '2026-02' ? ['warning.upstream-superseded'] : []);
  });

  it('sizes a kserve model from its parameter count', async () => {
    const dir = fixtureRepo({ 'models/generative/.keep': '' });
    await cli(['new-model', 'Big', '-c', 'generative', '--slug', 'big', '-t', 'kserve-vllm', '--size', '70B', '--model-id', 'meta/big'], { cwd: dir });
    const values = readFileSync(join(dir, 'models/generative/Big/kserve-big/values.yaml'), 'utf8');
    expect(values).toContain('nvidia.com/gpu: "4"');
    expect(values).toContain('memory: 128Gi');
    expect(values).toContain('--tensor-parallel-size 4');
  });

  it('refuses to overwrite, and refuses bad names and slugs', async () => {
    const dir = fixtureRepo({ 'models/generative/Taken/gaie-t/values.yaml': 'x: 1\n', 'models/generative/Other/README.md': '' });
    const taken = await cli(['new-model', 'Taken', '-c', 'generative', '--slug', 't', '--upstream', '2026-02'], { cwd: dir });
    expect(taken.code).toBe(2);
    expect(taken.stderr).toContain('models/generative/Taken already exists (it holds gaie-t/); new-model never overwrites');
    expect(readFileSync(join(dir, 'models/generative/Taken/gaie-t/values.yaml'), 'utf8')).toBe('x: 1\n');
    // Beside the other set's folders, only with their slug; a folder of no set is refused as before.
    const slug = await cli(['new-model', 'Taken', '-c', 'generative', '--slug', 'u'], { cwd: dir });
    expect(slug.code).toBe(2);
    expect(slug.stderr).toContain('models/generative/Taken holds gaie-t/: the values folders of one model share one slug; give --slug t');
    expect((await cli(['new-model', 'Other', '-c', 'generative', '--slug', 'o'], { cwd: dir })).stderr).toContain('models/generative/Other already exists; new-model never overwrites');
    expect(readdirSync(join(dir, 'models/generative/Taken'))).toEqual(['gaie-t']);
    // The slug's limit, explained with the names of the set the folders are for (hostile round 3, m18).
    const long = await cli(['new-model', 'Baz', '-c', 'generative', '--slug', 'a'.repeat(70)], { cwd: dir });
    expect(long.code).toBe(2);
    expect(long.stderr).toContain(`the Istio gateway Service "router-${'a'.repeat(70)}-gateway-istio" would be 91 characters (limit 63)`);
    expect(long.stderr).not.toContain('infra-');
    expect((await cli(['new-model', 'X', '-c', 'generative', '--slug', 'Bad_Slug'], { cwd: dir })).code).toBe(2);
    expect((await cli(['new-model', 'X', '-c', 'generative', '--slug', 's'.repeat(34)], { cwd: dir })).code).toBe(2);
    expect((await cli(['new-model', '../X', '-c', 'generative', '--slug', 'x'], { cwd: dir })).code).toBe(2);
    expect((await cli(['new-model', 'X', '-c', 'generative', '--slug', 'x', '-t', 'infinity'], { cwd: dir })).code).toBe(2);
    expect(existsSync(join(dir, 'models/generative/X'))).toBe(false);
  });
});

describe('a model folder of the other set of upstream versions', () => {
  // What five of five new stacks written from the README ran into: new-model's folders (2026-08,
  // its default) enabled in a stack without app-serving:upstream (2026-02).
  const OLD_STACK = 'config:\n  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:\n      - name: Gen\n';
  const NEW_STACK = 'config:\n  app-serving:upstream: 2026-08\n  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:\n      - name: Gen\n';
  const FOLDERS_2026_08 = 'models/generative/Gen holds router-gen/, server-gen/, the folders of the 2026-08 set, but the model is on the 2026-02 set (a stack without app-serving:upstream is on 2026-02)';
  const FIXES_2026_08 = 'either put the model on 2026-08 with "upstream: 2026-08" on this entry (or app-serving:upstream: 2026-08 for the whole stack), or add its 2026-02 folders beside them with: app-serving new-model Gen --category generative --slug gen --upstream 2026-02 --models-dir models';

  async function repo(stack: string, upstream: string): Promise<string> {
    const dir = fixtureRepo({ 'Pulumi.t.yaml': stack, 'models/generative/.keep': '' });
    expect((await cli(['new-model', 'Gen', '-c', 'generative', '--slug', 'gen', '-t', 'sim', '--upstream', upstream], { cwd: dir })).code).toBe(0);
    return dir;
  }
  const expectMismatch = (result: { code: number | null; stdout: string; stderr: string }, what: string) => {
    expect(result.code, `${what}: ${result.stderr}`).toBe(1);
    const text = result.stdout + result.stderr;
    expect(text, what).toContain(`Pulumi.t.yaml:5: models.generative[0].name: ${FOLDERS_2026_08}: ${FIXES_2026_08}`);
    expect(text, what).not.toContain('has no gaie-<slug>');
  };

  it.each([
    ['validate', ['validate', '--stack', 'Pulumi.t.yaml']],
    ['plan', ['plan', '--stack', 'Pulumi.t.yaml']],
    ['render', ['render', '--stack', 'Pulumi.t.yaml']],
    ['diff', ['diff', '--base-stack', 'base/Pulumi.t.yaml', '--base-models-dir', 'models', '--stack', 'Pulumi.t.yaml']],
    ['migrate', ['migrate', '--stack', 'Pulumi.t.yaml', '--to', '2026-08', '--dry-run']],
  ])('%s says the folder is for the other set, and gives both fixes', async (what, args) => {
    const dir = await repo(OLD_STACK, '2026-08');
    mkdirSync(join(dir, 'base'));
    writeFileSync(join(dir, 'base/Pulumi.t.yaml'), NEW_STACK);
    expectMismatch(await cli(args, { cwd: dir }), what);
  });

  it('either fix, run as the message gives it, makes the stack validate', async () => {
    const dir = await repo(OLD_STACK, '2026-08');
    const message = (await cli(['validate', '--stack', 'Pulumi.t.yaml'], { cwd: dir })).stdout;
    // The second fix, word for word: new-model adds the 2026-02 folders beside the 2026-08 ones.
    const command = /with: app-serving (new-model .*)$/m.exec(message)![1]!.split(' ');
    const added = await cli(command, { cwd: dir });
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/^added the 2026-02 folders to models\/generative\/Gen \(template vllm, slug gen, the 2026-02 set\)$/m);
    expect(readdirSync(join(dir, 'models/generative/Gen')).sort()).toEqual(['gaie-gen', 'ms-gen', 'router-gen', 'server-gen']);
    expect(JSON.parse((await cli(['validate', '--stack', 'Pulumi.t.yaml', '--json'], { cwd: dir })).stdout)).toMatchObject({ ok: true });
    // The first: the model's own upstream.
    const other = await repo(OLD_STACK.replace('      - name: Gen\n', '      - name: Gen\n        upstream: 2026-08\n'), '2026-08');
    expect(JSON.parse((await cli(['validate', '--stack', 'Pulumi.t.yaml', '--json'], { cwd: other })).stdout)).toMatchObject({ ok: true });
  });

  it('2026-02 folders in a 2026-08 stack: keep the model on 2026-02 (migrate converts it later), or add its 2026-08 folders', async () => {
    const dir = await repo(NEW_STACK, '2026-02');
    const result = await cli(['validate', '--stack', 'Pulumi.t.yaml'], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(
      'Pulumi.t.yaml:6: models.generative[0].name: models/generative/Gen holds gaie-gen/, ms-gen/, the folders of the 2026-02 set, but the model is on the 2026-08 set (the stack\'s app-serving:upstream is 2026-08): either keep the model on 2026-02 with "upstream: 2026-02" on this entry (app-serving migrate --stack Pulumi.t.yaml --to 2026-08 --model Gen converts its folders later), or add its 2026-08 folders beside them with: app-serving new-model Gen --category generative --slug gen --upstream 2026-08 --models-dir models\n',
    );
    const command = /with: app-serving (new-model .*)$/m.exec(result.stdout)![1]!.split(' ');
    expect((await cli(command, { cwd: dir })).code).toBe(0);
    expect(JSON.parse((await cli(['validate', '--stack', 'Pulumi.t.yaml', '--json'], { cwd: dir })).stdout)).toMatchObject({ ok: true });
    // The first fix, then migrate as the message says: the model moves, its folders converted.
    const kept = await repo(NEW_STACK.replace('      - name: Gen\n', '      - name: Gen\n        upstream: 2026-02\n'), '2026-02');
    expect(JSON.parse((await cli(['validate', '--stack', 'Pulumi.t.yaml', '--json'], { cwd: kept })).stdout)).toMatchObject({ ok: true });
    const moved = await cli(['migrate', '--stack', 'Pulumi.t.yaml', '--to', '2026-08', '--model', 'Gen'], { cwd: kept });
    expect(moved.code, moved.stderr).toBe(0);
    expect(readdirSync(join(kept, 'models/generative/Gen')).sort()).toEqual(['gaie-gen', 'ms-gen', 'router-gen', 'server-gen']);
  });
});
