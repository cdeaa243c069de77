import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { issuesOf, REPO_ROOT, tempRepo } from '../../test/helpers.ts';
import { loadStackFile, parseStackFile } from '../stack.ts';
import { collectModels } from '../discovery.ts';
import { IssueList } from '../errors.ts';
import { planDeployment, type DeploymentPlan, type LlmdModelPlan, type LlmdRouterModelPlan } from '../plan.ts';
import type { Values } from '../values/merge.ts';
import { VLLM_IMAGE } from './2026-08/facts.ts';
import { migratedDifferences, planStackMigration, type StackMigration } from './migrate.ts';

const APP = join(REPO_ROOT, 'apps', 'app-serving');
const MODELS = join(REPO_ROOT, 'models');

const made: string[] = [];
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A copy of an example stack and of the 2026-02 folders (gaie-, ms-, infra-, kserve-) of the models it enables. */
function copyOfExample(stack: string): { dir: string; file: string; modelsDir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-migrate-'));
  made.push(dir);
  const file = join(dir, `Pulumi.${stack}.yaml`);
  cpSync(join(APP, `Pulumi.${stack}.yaml`), file);
  const config = loadStackFile(file);
  for (const category of ['generative', 'embedder'] as const) {
    for (const entry of config.models[category]) {
      const from = join(MODELS, category, entry.name);
      for (const folder of readdirSync(from)) {
        if (/^(gaie|ms|infra|kserve)-/.test(folder)) cpSync(join(from, folder), join(dir, 'models', category, entry.name, folder), { recursive: true });
      }
    }
  }
  return { dir, file, modelsDir: join(dir, 'models') };
}

/** Runs the migration of a stack file the way `app-serving migrate` does, without writing. */
function migrationOf(file: string, modelsDir: string, only?: string[]): { migration: StackMigration; before: DeploymentPlan } {
  const config = loadStackFile(file, 'Pulumi.test.yaml');
  const before = planDeployment(config, modelsDir);
  const models = collectModels(config, modelsDir, new IssueList());
  const existing = new Map(
    models.map((m) => {
      const folders = readdirSync(join(modelsDir, m.category, m.entry.name));
      return [`${m.category}/${m.entry.name}`, { server: folders.some((f) => f.startsWith('server-')), router: folders.some((f) => f.startsWith('router-')) }] as const;
    }),
  );
  return { migration: planStackMigration({ config, text: readFileSync(file, 'utf8'), plan: before, models, existing, only }), before };
}

/** Writes what the migration says, and plans the result. */
function applied(file: string, modelsDir: string, migration: StackMigration): DeploymentPlan {
  for (const model of migration.models) {
    for (const f of model.files) {
      mkdirSync(join(modelsDir, model.category, model.name, f.folder));
      writeFileSync(join(modelsDir, model.category, model.name, f.folder, 'values.yaml'), f.text, { flag: 'wx' });
    }
  }
  writeFileSync(file, migration.stackText);
  return planDeployment(loadStackFile(file), modelsDir);
}

const fileOf = (migration: StackMigration, model: string, folder: string): Values | undefined => migration.models.find((m) => m.name === model)?.files.find((f) => f.folder.startsWith(folder))?.values;
const handWritten = (category: string, model: string, folder: string): Values => {
  const dir = readdirSync(join(MODELS, category, model)).find((f) => f.startsWith(`${folder}-`))!;
  return parse(readFileSync(join(MODELS, category, model, dir, 'values.yaml'), 'utf8')) as Values;
};
/** What serves the model: the keys the hand-written server folders and migrate must agree on. */
const substance = (values: Values | undefined) => {
  const { image, servedModelName, launch, model, port, replicas, args, command, env, resources } = values ?? {};
  return { image, servedModelName, launch: launch ?? 'vllm', model, port: port ?? 8000, replicas: replicas ?? 1, args, command, env, resources };
};


describe('migrate the example stack (air-gapped RKE2, Harbor) to 2026-08', () => {
  const { file, modelsDir } = copyOfExample('example');
  const { migration, before } = migrationOf(file, modelsDir);

  it('adds app-serving:upstream: 2026-08 at the top of config:, with its comment, and changes nothing else in the file', () => {
    const original = readFileSync(join(APP, 'Pulumi.example.yaml'), 'utf8');
    expect(migration.rewritten).toBe(false);
    expect(migration.changes).toEqual(['upstream: 2026-08']);
    expect(migration.stackText).toBe(
      original.replace(
        'config:\n',
        'config:\n  # The set of upstream versions (docs/upgrading.md): 2026-08 is the llm-d Router v0.10 and KServe v0.20.\n  app-serving:upstream: 2026-08\n',
      ),
    );
  });

  it('writes the server folders the repository holds for these models, in substance (image, name, command, port, replicas, env, resources)', () => {
    for (const [category, model] of [
      ['generative', 'Qwen3-0.6B-rke2'],
      ['embedder', 'bge-small-en-v1.5-rke2'],
    ] as const) {
      expect(substance(fileOf(migration, model, 'server')), model).toEqual(substance(handWritten(category, model, 'server')));
    }
  });

  it('carries the probes of the old values (the hand-written folders rely on the defaults), aimed at the named port', () => {
    expect(fileOf(migration, 'Qwen3-0.6B-rke2', 'server')).toMatchObject({
      startupProbe: { httpGet: { path: '/v1/models', port: 'modelserver' }, periodSeconds: 10, failureThreshold: 60 },
      readinessProbe: { httpGet: { path: '/v1/models', port: 'modelserver' }, periodSeconds: 10 },
      livenessProbe: { httpGet: { path: '/health', port: 'modelserver' }, periodSeconds: 30 },
      container: { imagePullPolicy: 'IfNotPresent' },
    });
  });

  it("points the Router's EPP at the same Harbor mirror as the repository's router folders; says what it leaves out", () => {
    for (const [category, model] of [
      ['generative', 'Qwen3-0.6B-rke2'],
      ['embedder', 'bge-small-en-v1.5-rke2'],
    ] as const) {
      expect((fileOf(migration, model, 'router') as { router: { epp: Values } }).router.epp.image).toEqual((handWritten(category, model, 'router') as { router: { epp: Values } }).router.epp.image);
    }
    const qwen = migration.models.find((m) => m.name === 'Qwen3-0.6B-rke2')!;
    expect(qwen.warnings.map((w) => [w.code, w.file?.endsWith('gaie-qwen3-06b-rke2/values.yaml'), w.line, w.path])).toEqual([
      ['warning.not-carried', true, 12, 'inferenceExtension.flags.kv-cache-usage-percentage-metric'],
    ]);
    expect(qwen.notes).toEqual([
      'harbor.example.com/images-llm-d/llm-d/llm-d-cuda:v0.4.0 → harbor.example.com/images-llm-d/vllm/vllm-openai:v0.30.0: llm-d-cuda is deprecated in favour of upstream vLLM (mirror it first on an air-gapped cluster: app-serving images)',
      "the routing sidecar is not deployed on 2026-08 (the Router's EPP picks the pod; P/D disaggregation is not supported yet): the server now listens on 8000 itself",
      '--disable-log-requests dropped: vLLM removed the flag in v0.12 (vllm-project/vllm#29402); it logs no requests unless --enable-log-requests is given',
      "harbor.example.com/images-llm-d/gateway-api-inference-extension/epp:v1.2.0 → harbor.example.com/images-llm-d/llm-d/llm-d-router-endpoint-picker:v0.10.0: the Router's endpoint picker, from the same mirror (copy it there first: app-serving images)",
      "the Router's EPP asks for 8 CPUs and 8Gi by default (GAIE v1.2.0's asked for nothing): set router.epp.resources in router-qwen3-06b-rke2/values.yaml if its nodes are smaller",
    ]);
    // The file says what it leaves out, too.
    expect(qwen.files.find((f) => f.folder === 'router-qwen3-06b-rke2')!.text).toContain('#   inferenceExtension.flags.kv-cache-usage-percentage-metric\n');
  });

  it('validates, and plans to the same served model name, port, replicas, resources and placement', () => {
    const after = applied(file, modelsDir, migration);
    for (const old of before.models as LlmdModelPlan[]) {
      const now = after.models.find((m) => m.name === old.name) as LlmdRouterModelPlan;
      expect(now.upstream).toBe('2026-08');
      expect(migratedDifferences(old, now), old.name).toEqual([]);
      // The container's resources: the old chart's (with the GPU llm-d-modelservice added for tensor × dataLocal).
      const container = (now.manifests.modelServer as { spec: { template: { spec: { containers: Values[] } } } }).spec.template.spec.containers[0]!;
      const ms = readFileSync(join(modelsDir, old.category, old.name, `ms-${old.slug}`, 'values.yaml'), 'utf8');
      const oldResources = (parse(ms) as { decode: { containers: { resources: Values }[] } }).decode.containers[0]!.resources;
      expect(container.resources).toEqual(old.category === 'generative' ? { ...oldResources, limits: { ...(oldResources.limits as Values), 'nvidia.com/gpu': '1' } } : oldResources);
    }
    expect(after.warnings.map((w) => w.code)).toEqual([]);
  });

  it('refuses a stack on 2026-08 already, at its upstream key', () => {
    const issues = issuesOf(() => migrationOf(file, modelsDir));
    expect(issues.map((i) => [i.code, i.path, i.line, i.message])).toEqual([['migrate.nothing-to-do', 'upstream', 9, 'the stack is on 2026-08 already (every enabled model): nothing to migrate']]);
  });
});

describe('migrate the kind and cloud stacks', () => {
  it.each(['kind', 'cloud'])('Pulumi.%s.yaml validates after the move and serves every model the same', (stack) => {
    const { file, modelsDir } = copyOfExample(stack);
    const { migration, before } = migrationOf(file, modelsDir);
    const after = applied(file, modelsDir, migration);
    for (const old of before.models as LlmdModelPlan[]) expect(migratedDifferences(old, after.models.find((m) => m.name === old.name) as LlmdRouterModelPlan), old.name).toEqual([]);
  });

  it('the simulator keeps its own command: its arguments as the chart wrote them, on the port clients reached', () => {
    const { file, modelsDir } = copyOfExample('kind');
    const { migration } = migrationOf(file, modelsDir);
    expect(substance(fileOf(migration, 'Sim', 'server'))).toEqual({
      ...substance(handWritten('generative', 'Sim', 'server')),
      // The chart's imageDefault command named the model twice over; the hand-written folder does not.
      args: ['--model', 'random', '--port', '8000', '--served-model-name', 'random', '--mode', 'echo', '--time-to-first-token', '20ms', '--inter-token-latency', '5ms'],
    });
  });

  it('the cloud model downloads from the Hub as before (model: the hf:// id), on upstream vLLM', () => {
    const { file, modelsDir } = copyOfExample('cloud');
    const { migration } = migrationOf(file, modelsDir);
    const server = fileOf(migration, 'Qwen3-0.6B', 'server')!;
    expect(server).toMatchObject({ image: VLLM_IMAGE, model: 'Qwen/Qwen3-0.6B', servedModelName: 'Qwen/Qwen3-0.6B', port: 8000 });
    // The chart downloaded into an emptyDir of modelArtifacts.size at /model-cache (HF_HOME): kept, so
    // that the weights outlive a container restart; the hand-written folder downloads into the container.
    expect(server).toMatchObject({ container: { volumeMounts: [{ name: 'model-storage', mountPath: '/model-cache' }] }, pod: { volumes: [{ name: 'model-storage', emptyDir: { sizeLimit: '10Gi' } }] } });
    const withoutHome = (values: Values | undefined) => ({ ...substance(values), env: (substance(values).env as Values[]).filter((e) => e.name !== 'HF_HOME') });
    expect((server.env as Values[]).find((e) => e.name === 'HF_HOME')).toEqual({ name: 'HF_HOME', value: '/model-cache' });
    expect(withoutHome(server)).toEqual(withoutHome(handWritten('generative', 'Qwen3-0.6B', 'server')));
  });
});

const STACK = (extra = '', entry = '') => `config:
  app-serving:cloudProvider: cloud
  app-serving:gpuToleration:
    key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule${extra}
  app-serving:models:
    generative:
      - name: Odd
        enabled: true
        nodeSelector:
          pool: gpu${entry}
`;

describe('a model with values that cannot be carried over', () => {
  const ms = `modelArtifacts:
  name: org/odd
  uri: hf://org/odd
  size: 40Gi
  authSecretName: hf-secret
  labels:
    team: search
routing:
  servicePort: 8000
  proxy:
    enabled: true
    targetPort: 8200
accelerator:
  type: nvidia
decode:
  replicas: 2
  parallelism:
    tensor: 2
  strategy:
    type: Recreate
  podAnnotations:
    prometheus.io/scrape: "true"
  terminationGracePeriodSeconds: 120
  tolerations:
    - key: nvidia.com/gpu
      operator: Exists
      effect: NoSchedule
    - key: spot
      operator: Exists
  containers:
    - name: vllm
      image: ghcr.io/llm-d/llm-d-cuda:v0.4.0
      modelCommand: vllmServe
      args: ["--max-model-len", "4096"]
      ports:
        - containerPort: 8200
          name: http
        - containerPort: 9090
          name: metrics
      resources:
        limits:
          memory: 64Gi
      extraConfig:
        securityContext:
          runAsNonRoot: true
    - name: exporter
      image: example.com/exporter:1
prefill:
  create: true
  replicas: 1
  containers:
    - name: vllm
      image: ghcr.io/llm-d/llm-d-cuda:v0.4.0
      modelCommand: vllmServe
tracing:
  enabled: true
`;
  const gaie = `inferenceExtension:
  replicas: 2
  image:
    hub: registry.k8s.io/gateway-api-inference-extension
    name: epp
    tag: v1.2.0
  flags:
    v: 2
    kv-cache-usage-percentage-metric: "vllm:gpu_cache_usage_perc"
    some-other-flag: "x"
  pluginsCustomConfig:
    custom.yaml: "x"
  resources:
    requests:
      cpu: "1"
  failureMode: FailClose
  monitoring:
    prometheus:
      enabled: true
inferencePool:
  modelServerType: vllm
`;
  const infra = `gateway:
  service:
    type: LoadBalancer
`;
  const files = {
    'Pulumi.odd.yaml': STACK(),
    'models/generative/Odd/ms-odd/values.yaml': ms,
    'models/generative/Odd/gaie-odd/values.yaml': gaie,
    'models/generative/Odd/infra-odd/values.yaml': infra,
  };

  it('carries what it can, and names every value it cannot at its file, line and key', () => {
    const dir = tempRepo(files);
    const { migration } = migrationOf(join(dir, 'Pulumi.odd.yaml'), join(dir, 'models'));
    const odd = migration.models[0]!;
    expect(odd.warnings.map((w) => `${w.file!.split('/').slice(-2).join('/')}:${w.line}: ${w.path}`)).toEqual([
      'ms-odd/values.yaml:38: decode.containers[0].ports[1]',
      'ms-odd/values.yaml:46: decode.containers[1]',
      'ms-odd/values.yaml:24: decode.tolerations',
      'ms-odd/values.yaml:19: decode.strategy',
      'ms-odd/values.yaml:48: prefill',
      'ms-odd/values.yaml:7: modelArtifacts.labels.team',
      'ms-odd/values.yaml:55: tracing',
      'gaie-odd/values.yaml:9: inferenceExtension.flags.kv-cache-usage-percentage-metric',
      'gaie-odd/values.yaml:10: inferenceExtension.flags.some-other-flag',
      'gaie-odd/values.yaml:11: inferenceExtension.pluginsCustomConfig',
      'infra-odd/values.yaml:3: gateway.service.type',
    ]);
    expect(odd.warnings.every((w) => w.code === 'warning.not-carried' && w.message.startsWith('not carried over'))).toBe(true);
    expect(odd.warnings.find((w) => w.path === 'prefill')!.message).toContain('P/D disaggregation (1 prefill pods) is not supported on 2026-08 yet');
    expect(fileOf(migration, 'Odd', 'server')).toEqual({
      image: VLLM_IMAGE,
      servedModelName: 'org/odd',
      model: 'org/odd',
      args: ['--tensor-parallel-size', '2', '--max-model-len', '4096'],
      port: 8000,
      replicas: 2,
      env: [
        { name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: 'hf-secret', key: 'HF_TOKEN' } } },
        { name: 'USER', value: 'llm-d' },
      ],
      resources: { limits: { memory: '64Gi', 'nvidia.com/gpu': '2' } },
      container: { securityContext: { runAsNonRoot: true } },
      podAnnotations: { 'prometheus.io/scrape': 'true' },
      pod: { terminationGracePeriodSeconds: 120 },
    });
    expect(fileOf(migration, 'Odd', 'router')).toEqual({
      router: {
        epp: { replicas: 2, flags: { v: 2 }, resources: { requests: { cpu: '1' } } },
        inferencePool: { failureMode: 'FailClose' },
        monitoring: { prometheus: { enabled: true } },
        modelServers: { type: 'vllm' },
      },
    });
  });

  it('the result validates (P/D left out), and the differences it makes are said', () => {
    const dir = tempRepo(files);
    const file = join(dir, 'Pulumi.odd.yaml');
    const { migration, before } = migrationOf(file, join(dir, 'models'));
    const after = applied(file, join(dir, 'models'), migration);
    expect(migratedDifferences(before.models[0] as LlmdModelPlan, after.models[0] as LlmdRouterModelPlan)).toEqual([]);
  });
});

describe('which models move, and the stack keys that say so', () => {
  const model = (name: string, slug: string) => ({
    [`models/generative/${name}/ms-${slug}/values.yaml`]: `modelArtifacts:\n  name: org/${slug}\n  uri: hf://org/${slug}\nrouting:\n  proxy:\n    enabled: false\n  servicePort: 8000\ndecode:\n  containers:\n    - name: vllm\n      image: ghcr.io/llm-d/llm-d-inference-sim:v0.10.2\n      modelCommand: imageDefault\n`,
    [`models/generative/${name}/gaie-${slug}/values.yaml`]: 'inferenceExtension:\n  replicas: 1\n',
  });
  const two = (upstream: string, entries: [string, string][]) =>
    `config:\n  app-serving:cloudProvider: cloud\n${upstream}  app-serving:models:\n    generative:\n${entries.map(([name, extra]) => `      - name: ${name}\n        enabled: true\n${extra}`).join('')}`;

  it('--model moves one model by its own upstream key, below its name; the others stay', () => {
    const dir = tempRepo({ 'Pulumi.s.yaml': two('', [['A', ''], ['B', '']]), ...model('A', 'a'), ...model('B', 'b') });
    const { migration } = migrationOf(join(dir, 'Pulumi.s.yaml'), join(dir, 'models'), ['B']);
    expect(migration.changes).toEqual(['models.generative[1] (B): upstream: 2026-08']);
    expect(migration.stackText).toBe(two('', [['A', ''], ['B', '']]).replace('- name: B\n', '- name: B\n        upstream: 2026-08\n'));
    expect(migration.models.map((m) => m.name)).toEqual(['B']);
    expect(migration.kept).toEqual([{ name: 'A', category: 'generative', reason: 'stays on 2026-02' }]);
  });

  it('on a stack on 2026-08, moving a model pinned to 2026-02 removes its pin; moving the whole stack removes every pin', () => {
    const stack = two('  app-serving:upstream: 2026-08\n', [['A', '        upstream: 2026-02\n'], ['B', '        upstream: 2026-02 # for now\n']]);
    const dir = tempRepo({ 'Pulumi.s.yaml': stack, ...model('A', 'a'), ...model('B', 'b') });
    const one = migrationOf(join(dir, 'Pulumi.s.yaml'), join(dir, 'models'), ['A']).migration;
    expect(one.stackText).toBe(two('  app-serving:upstream: 2026-08\n', [['A', ''], ['B', '        upstream: 2026-02 # for now\n']]));
    const all = migrationOf(join(dir, 'Pulumi.s.yaml'), join(dir, 'models')).migration;
    expect(all.changes).toEqual(['models.generative[0] (A): upstream: 2026-02 removed', 'models.generative[1] (B): upstream: 2026-02 removed']);
    expect(all.stackText).toBe(two('  app-serving:upstream: 2026-08\n', [['A', ''], ['B', '']]));
  });

  it('replaces upstream: 2026-02 in place, quotes and comments as written; keeps CRLF line endings', () => {
    const stack = two('  app-serving:upstream: "2026-02" # the seed\'s pins\n', [['A', '']]).replace(/\n/g, '\r\n');
    const dir = tempRepo({ 'Pulumi.s.yaml': stack, ...model('A', 'a') });
    const { migration } = migrationOf(join(dir, 'Pulumi.s.yaml'), join(dir, 'models'));
    // The quotes stay as written (docs/cli.md: "quoting … stay as they were").
    expect(migration.stackText).toBe(stack.replace('"2026-02"', '"2026-08"'));
  });

  it('leaves a folder that has a server folder already as it is, and a disabled model unconverted, saying so', () => {
    const dir = tempRepo({
      'Pulumi.s.yaml': two('', [['A', ''], ['C', '']]).replace(/(- name: C\n\s+enabled: )true/, '$1false'),
      ...model('A', 'a'),
      'models/generative/A/server-a/values.yaml': 'image: x:1\nservedModelName: a\n',
    });
    const { migration } = migrationOf(join(dir, 'Pulumi.s.yaml'), join(dir, 'models'));
    expect(migration.models).toEqual([]);
    expect(migration.kept.map((k) => [k.name, k.reason.replace(dir, '<dir>')])).toEqual([
      ['A', '<dir>/models/generative/A has a server-* folder already: kept as it is'],
      ['C', 'disabled: its folder is not converted; before enabling it, add a server-<slug>/ folder (app-serving new-model shows one)'],
    ]);
  });

  it('a KServe model moves to LLMInferenceService v1alpha2 (KServe v0.20) with no file to write', () => {
    const { file, modelsDir } = copyOfExample('kserve');
    const { migration } = migrationOf(file, modelsDir);
    expect(migration.models).toEqual([]);
    expect(migration.notes).toEqual([
      'KServe: Qwen2.5-0.5B-Instruct moves to v0.20.0 — LLMInferenceService serving.kserve.io/v1alpha2 (no files to write: the kserve-<slug> overlay is read as it is); the cluster needs KServe v0.20.0 and its images (app-serving preflight, app-serving images) before pulumi up',
    ]);
    const after = applied(file, modelsDir, migration);
    expect(after.models[0]).toMatchObject({ platform: 'kserve', upstream: '2026-08', apiVersion: 'serving.kserve.io/v1alpha2' });
  });

  it('says which chart to mirror when the stack points the 2026-02 charts at a mirror', () => {
    const stack = `config:\n  app-serving:cloudProvider: cloud\n  app-serving:charts:\n    gaie:\n      chart: oci://harbor.local/charts/inferencepool\n      version: v1.2.0\n  app-serving:models:\n    generative:\n      - name: A\n        enabled: true\n`;
    const dir = tempRepo({ 'Pulumi.s.yaml': stack, ...model('A', 'a') });
    const { migration } = migrationOf(join(dir, 'Pulumi.s.yaml'), join(dir, 'models'));
    expect(migration.notes).toContain('charts.gaie is for the 2026-02 charts; the models that move use oci://ghcr.io/llm-d/charts/llm-d-router-gateway v0.10.0: mirror it like the others and set charts.routerGateway to the mirror');
  });

  it('the edited stack parses to the same config plus the new key (a stack written with bare keys gets a bare key)', () => {
    const stack = 'config:\n  cloudProvider: cloud\n  models:\n    generative:\n      - name: A\n        enabled: true\n';
    const dir = tempRepo({ 'Pulumi.s.yaml': stack, ...model('A', 'a') });
    const { migration } = migrationOf(join(dir, 'Pulumi.s.yaml'), join(dir, 'models'));
    expect(parseStackFile(migration.stackText, 'x.yaml').upstream).toBe('2026-08');
    expect(migration.stackText).toContain('\n  upstream: 2026-08\n  cloudProvider: cloud\n');
  });
});
