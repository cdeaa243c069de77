import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, cli, fixtureRepo } from '../test/run-cli.ts';

/** The stack of the fixtures: one model (or more) whose weights come from Harbor, on a cloud cluster. */
interface StackShape {
  readonly models?: readonly string[];
  readonly nameSpace?: string;
  readonly harborRef?: string;
  readonly token?: string;
}

function stackFile({ models = ['Gen'], nameSpace, harborRef = 'harbor.example.com/models/gen:v1', token = 'v1:c2FsdA==:b25l' }: StackShape = {}): string {
  const entries = models.map((name) =>
    name === 'Gen'
      ? `      - name: Gen\n        nodeSelector: { workload: gpu }\n${nameSpace ? `        nameSpace: ${nameSpace}\n` : ''}        modelSource:\n          harborRef: ${harborRef}\n          modelUri: hub/org/gen\n          storageSize: 10Gi\n`
      : `      - name: ${name}\n        nodeSelector: { workload: gpu }\n`,
  );
  return `config:\n  app-serving:cloudProvider: cloud\n  app-serving:harborHostname: harbor.example.com\n  app-serving:harborUser: robot$ci\n  app-serving:harborToken:\n    secure: ${token}\n  app-serving:models:\n    generative:\n${entries.join('')}`;
}

const GAIE = 'inferenceExtension:\n  replicas: 1\n';
const msValues = (image = 'harbor.example.com/llm-d/llm-d-inference-sim:v0.10.2', name = 'org/gen') =>
  `modelArtifacts:\n  name: ${name}\n${name === 'org/gen' ? '' : `  uri: hf://${name}\n`}decode:\n  containers:\n    - name: vllm\n      image: ${image}\n      modelCommand: imageDefault\n`;

/** The files of one revision under `prefix/`. */
function revision(prefix: string, stack: StackShape = {}, files: { gaie?: string; ms?: string } = {}): Record<string, string> {
  const out: Record<string, string> = {
    [`${prefix}/Pulumi.t.yaml`]: stackFile(stack),
    [`${prefix}/models/generative/Gen/gaie-gen/values.yaml`]: files.gaie ?? GAIE,
    [`${prefix}/models/generative/Gen/ms-gen/values.yaml`]: files.ms ?? msValues(),
  };
  for (const name of stack.models ?? []) {
    if (name === 'Gen') continue;
    const slug = name.toLowerCase();
    out[`${prefix}/models/generative/${name}/gaie-${slug}/values.yaml`] = GAIE;
    out[`${prefix}/models/generative/${name}/ms-${slug}/values.yaml`] = msValues('harbor.example.com/llm-d/llm-d-inference-sim:v0.10.2', `org/${slug}`);
  }
  return out;
}

/** Runs `diff --json --exit-code` of two revisions given as files. */
async function diffFiles(base: Record<string, string>, head: Record<string, string>) {
  const dir = fixtureRepo({ ...base, ...head });
  const result = await cli(['diff', '--base-stack', 'base/Pulumi.t.yaml', '--stack', 'head/Pulumi.t.yaml', '--json', '--exit-code'], { cwd: dir });
  expect(result.stderr).toBe('');
  return { code: result.code, json: JSON.parse(result.stdout) as Record<string, unknown>, stdout: result.stdout, dir };
}

const SIDES = {
  base: { ref: null, commit: null, stack: 'base/Pulumi.t.yaml', exists: true },
  head: { ref: null, commit: null, stack: 'head/Pulumi.t.yaml', exists: true },
};

describe('diff: each kind of change, exact JSON and exit code', { timeout: 600_000 }, () => {
  it('nothing changed: exit 0, no models, nothing to do', async () => {
    const { code, json } = await diffFiles(revision('base'), revision('head'));
    expect(code).toBe(0);
    expect(json).toEqual({
      ...SIDES,
      changed: false,
      summary: { create: 0, update: 0, replace: 0, delete: 0, unchangedModels: 1 },
      models: [],
      stack: { resources: [], secrets: [] },
      warnings: [],
    });
  });

  it('a values key: the release values by key path, an update, no restart of the model pods', async () => {
    const { code, json } = await diffFiles(revision('base'), revision('head', {}, { gaie: 'inferenceExtension:\n  replicas: 2\n' }));
    expect(code).toBe(1);
    expect(json).toEqual({
      ...SIDES,
      changed: true,
      summary: { create: 0, update: 1, replace: 0, delete: 0, unchangedModels: 0 },
      models: [
        {
          name: 'Gen',
          category: 'generative',
          platform: 'llm-d',
          status: 'changed',
          namespace: 'llm-d-gen',
          releases: [
            {
              release: 'gaie-gen',
              chart: 'oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool',
              changes: [{ path: 'inferenceExtension.replicas', change: 'changed', old: 1, new: 2 }],
            },
          ],
          images: { added: [], removed: [], changed: [] },
          resources: [
            {
              action: 'update',
              type: 'kubernetes:helm.sh/v4:Chart',
              name: 'app-serving-gen-pool-chart',
              object: 'release llm-d-gen/gaie-gen (oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool)',
              reasons: [],
              notes: [],
              changes: [],
            },
          ],
        },
      ],
      stack: { resources: [], secrets: [] },
      warnings: [],
    });
  });

  it('an image tag: the values and the image change, and the model pods restart', async () => {
    const { code, json } = await diffFiles(revision('base'), revision('head', {}, { ms: msValues('harbor.example.com/llm-d/llm-d-inference-sim:v0.10.3') }));
    expect(code).toBe(1);
    expect(json).toEqual({
      ...SIDES,
      changed: true,
      summary: { create: 0, update: 1, replace: 0, delete: 0, unchangedModels: 0 },
      models: [
        {
          name: 'Gen',
          category: 'generative',
          platform: 'llm-d',
          status: 'changed',
          namespace: 'llm-d-gen',
          releases: [
            {
              release: 'ms-gen',
              chart: 'llm-d-modelservice',
              changes: [
                {
                  path: 'decode.containers[0].image',
                  change: 'changed',
                  old: 'harbor.example.com/llm-d/llm-d-inference-sim:v0.10.2',
                  new: 'harbor.example.com/llm-d/llm-d-inference-sim:v0.10.3',
                },
              ],
            },
          ],
          images: {
            added: [],
            removed: [],
            changed: [
              {
                old: 'harbor.example.com/llm-d/llm-d-inference-sim:v0.10.2',
                new: 'harbor.example.com/llm-d/llm-d-inference-sim:v0.10.3',
                where: 'head/models/generative/Gen/ms-gen/values.yaml: decode.containers[0].image',
              },
            ],
          },
          resources: [
            {
              action: 'update',
              type: 'kubernetes:helm.sh/v4:Chart',
              name: 'app-serving-gen-model-service-chart',
              object: 'release llm-d-gen/ms-gen (llm-d-modelservice)',
              reasons: [],
              notes: [],
              changes: [],
            },
          ],
        },
      ],
      stack: { resources: [], secrets: [] },
      warnings: [
        {
          code: 'pods.restart',
          model: 'Gen',
          message: "the model server's pods change (decode.containers[0].image): they restart (a rolling update; new pods may wait for a free GPU)",
        },
      ],
    });
  });

  it('a new model: every resource created, its images added; the unchanged model is not rendered twice', async () => {
    const { code, json } = await diffFiles(revision('base'), revision('head', { models: ['Gen', 'Two'] }));
    expect(code).toBe(1);
    expect(json).toEqual({
      ...SIDES,
      changed: true,
      summary: { create: 7, update: 0, replace: 0, delete: 0, unchangedModels: 1 },
      models: [
        {
          name: 'Two',
          category: 'generative',
          platform: 'llm-d',
          status: 'added',
          namespace: 'llm-d-two',
          releases: [],
          images: {
            added: [
              'ghcr.io/llm-d/llm-d-routing-sidecar:latest',
              'harbor.example.com/llm-d/llm-d-inference-sim:v0.10.2',
              'registry.k8s.io/gateway-api-inference-extension/epp:v1.2.0',
            ],
            removed: [],
            changed: [],
          },
          resources: [
            ['kubernetes:helm.sh/v4:Chart', 'app-serving-two-infra-chart', 'release llm-d-two/infra-two (llm-d-infra)'],
            ['kubernetes:core/v1:Service', 'app-serving-two-infra-gateway-alias', 'Service llm-d-two/llmd-gateway-two'],
            ['kubernetes:helm.sh/v4:Chart', 'app-serving-two-model-service-chart', 'release llm-d-two/ms-two (llm-d-modelservice)'],
            ['kubernetes:core/v1:Namespace', 'app-serving-two-namespace-namespace', 'Namespace llm-d-two'],
            ['kubernetes:core/v1:Secret', 'app-serving-two-namespace-pull-secret', 'Secret llm-d-two/harbor-creds'],
            [
              'kubernetes:helm.sh/v4:Chart',
              'app-serving-two-pool-chart',
              'release llm-d-two/gaie-two (oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool)',
            ],
            ['kubernetes:gateway.networking.k8s.io/v1:HTTPRoute', 'app-serving-two-route-httproute', 'HTTPRoute llm-d-two/llm-d-two'],
          ].map(([type, name, object]) => ({ action: 'create', type, name, object, reasons: [], notes: [], changes: [] })),
        },
      ],
      stack: { resources: [], secrets: [] },
      warnings: [],
    });
  });

  it('a removed model: every resource deleted, and a warning', async () => {
    const { code, json } = await diffFiles(revision('base', { models: ['Gen', 'Two'] }), revision('head'));
    expect(code).toBe(1);
    const models = json.models as { name: string; status: string; resources: { action: string; object: string }[] }[];
    expect(models.map((m) => [m.name, m.status, m.resources.map((r) => `${r.action} ${r.object}`)])).toEqual([
      [
        'Two',
        'removed',
        [
          'delete release llm-d-two/infra-two (llm-d-infra)',
          'delete Service llm-d-two/llmd-gateway-two',
          'delete release llm-d-two/ms-two (llm-d-modelservice)',
          'delete Namespace llm-d-two',
          'delete Secret llm-d-two/harbor-creds',
          'delete release llm-d-two/gaie-two (oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool)',
          'delete HTTPRoute llm-d-two/llm-d-two',
        ],
      ],
    ]);
    expect(json.summary).toEqual({ create: 0, update: 0, replace: 0, delete: 7, unchangedModels: 1 });
    expect(json.warnings).toEqual([{ code: 'model.removed', model: 'Two', message: 'removed: its endpoint, model pods and Kubernetes objects are deleted (7 resources)' }]);
  });

  it('a renamed namespace: every namespaced object replaced, the releases moved, and a warning', async () => {
    const { code, json } = await diffFiles(revision('base'), revision('head', { nameSpace: 'team-gen' }));
    expect(code).toBe(1);
    const [model] = json.models as { namespace: string; resources: { action: string; object: string; reasons: string[]; deleteBeforeReplace?: true }[] }[];
    expect(model!.namespace).toBe('team-gen');
    expect(model!.resources.map((r) => [r.action, r.object, r.reasons, r.deleteBeforeReplace ?? false])).toEqual([
      [
        'replace',
        'release team-gen/infra-gen (llm-d-infra)',
        ['release moved to another namespace ("llm-d-gen" → "team-gen"): every object of the chart is created under its new name and the old ones are deleted'],
        false,
      ],
      ['replace', 'Service team-gen/llmd-gateway-gen', ['metadata.namespace changed ("llm-d-gen" → "team-gen"): Kubernetes cannot rename or move an object'], false],
      [
        'replace',
        'release team-gen/ms-gen (llm-d-modelservice)',
        ['release moved to another namespace ("llm-d-gen" → "team-gen"): every object of the chart is created under its new name and the old ones are deleted'],
        false,
      ],
      ['replace', 'Namespace team-gen', ['metadata.name changed ("llm-d-gen" → "team-gen"): Kubernetes cannot rename or move an object'], false],
      ['replace', 'Secret team-gen/harbor-creds', ['metadata.namespace changed ("llm-d-gen" → "team-gen"): Kubernetes cannot rename or move an object'], false],
      [
        'replace',
        'release team-gen/gaie-gen (oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool)',
        ['release moved to another namespace ("llm-d-gen" → "team-gen"): every object of the chart is created under its new name and the old ones are deleted'],
        false,
      ],
      ['replace', 'HTTPRoute team-gen/llm-d-gen', ['metadata.namespace changed ("llm-d-gen" → "team-gen"): Kubernetes cannot rename or move an object'], false],
      ['replace', 'Job team-gen/gen-model-pull', ['metadata.namespace changed ("llm-d-gen" → "team-gen"): Kubernetes cannot rename or move an object'], true],
      ['replace', 'PersistentVolumeClaim team-gen/gen-model', ['metadata.namespace changed ("llm-d-gen" → "team-gen"): Kubernetes cannot rename or move an object'], false],
    ]);
    expect(json.summary).toEqual({ create: 0, update: 0, replace: 9, delete: 0, unchangedModels: 0 });
    expect(json.warnings).toEqual([
      {
        code: 'namespace.renamed',
        model: 'Gen',
        message:
          'namespace llm-d-gen → team-gen: every object of the model is re-created there and the old namespace is deleted with everything in it; the new claim gets a new, empty volume: the weights are pulled again',
      },
    ]);
  });

  it("the pull Job's template (new weights): the Job replaced, deleted first; the model pods restart", async () => {
    const { code, json } = await diffFiles(revision('base'), revision('head', { harborRef: 'harbor.example.com/models/gen:v2' }));
    expect(code).toBe(1);
    const [model] = json.models as { resources: Record<string, unknown>[]; releases: unknown[] }[];
    expect(model!.resources).toEqual([
      {
        action: 'update',
        type: 'kubernetes:helm.sh/v4:Chart',
        name: 'app-serving-gen-model-service-chart',
        object: 'release llm-d-gen/ms-gen (llm-d-modelservice)',
        reasons: [],
        notes: [],
        changes: [],
      },
      {
        action: 'replace',
        type: 'kubernetes:batch/v1:Job',
        name: 'app-serving-gen-storage-pull-job',
        object: 'Job llm-d-gen/gen-model-pull',
        reasons: ['spec.template changed, and the resource has replaceOnChanges: [spec.template]', 'spec.template changed: immutable in a Job'],
        notes: [],
        deleteBeforeReplace: true,
        changes: [{ path: 'spec.template.spec.containers[0].env[1].value', change: 'changed', old: 'harbor.example.com/models/gen:v1', new: 'harbor.example.com/models/gen:v2' }],
      },
    ]);
    expect(model!.releases).toEqual([
      {
        release: 'ms-gen',
        chart: 'llm-d-modelservice',
        changes: [
          { path: 'decode.podAnnotations["app-serving.io/model-ref"]', change: 'changed', old: 'harbor.example.com/models/gen:v1', new: 'harbor.example.com/models/gen:v2' },
          { path: 'prefill.podAnnotations["app-serving.io/model-ref"]', change: 'changed', old: 'harbor.example.com/models/gen:v1', new: 'harbor.example.com/models/gen:v2' },
        ],
      },
    ]);
    expect(json.summary).toEqual({ create: 0, update: 1, replace: 1, delete: 0, unchangedModels: 0 });
    expect((json.warnings as { code: string }[]).map((w) => w.code)).toEqual(['weights.changed', 'pods.restart']);
  });

  it('a secret changed: the pull Secret replaced, the secret named but never shown', async () => {
    const token = 'v1:c2FsdA==:dHdv';
    const { code, json, stdout } = await diffFiles(revision('base'), revision('head', { token }));
    expect(code).toBe(1);
    expect(json).toEqual({
      ...SIDES,
      changed: true,
      summary: { create: 0, update: 0, replace: 1, delete: 0, unchangedModels: 0 },
      models: [
        {
          name: 'Gen',
          category: 'generative',
          platform: 'llm-d',
          status: 'changed',
          namespace: 'llm-d-gen',
          releases: [],
          images: { added: [], removed: [], changed: [] },
          resources: [
            {
              action: 'replace',
              type: 'kubernetes:core/v1:Secret',
              name: 'app-serving-gen-namespace-pull-secret',
              object: 'Secret llm-d-gen/harbor-creds',
              reasons: ['stringData changed: the Kubernetes provider replaces a Secret whose data changes (unless it runs with enableSecretMutable)'],
              notes: [],
              changes: [{ path: 'stringData', change: 'changed', secret: true }],
            },
          ],
        },
      ],
      stack: { resources: [], secrets: [{ key: 'harborToken', change: 'changed' }] },
      warnings: [
        {
          code: 'secret.changed',
          model: null,
          message: 'harborToken is changed in the stack file (a secret: its value is never shown; a re-encrypted but equal value also counts as changed)',
        },
      ],
    });
    expect(stdout).not.toContain('dHdv');
    expect(stdout).not.toContain('b25l');
    expect(stdout).not.toMatch(/\[secret:[0-9a-f]/);
  });
});

describe('diff: a rotated API key', { timeout: 600_000 }, () => {
  /** A revision whose model takes the API key `ci`, encrypted as `ciphertext`. */
  const keyed = (prefix: string, ciphertext: string) => {
    const files = revision(prefix);
    files[`${prefix}/Pulumi.t.yaml`] = files[`${prefix}/Pulumi.t.yaml`]!
      .replace('  app-serving:models:\n', `  app-serving:apiKeys:\n    ci:\n      secure: ${ciphertext}\n  app-serving:models:\n`)
      .replace('      - name: Gen\n', '      - name: Gen\n        access: { apiKeys: [ci] }\n');
    return files;
  };

  it('is a changed secret and an update of the object holding the hash, shown as [secret], never the key', async () => {
    const { code, json, stdout } = await diffFiles(keyed('base', 'v1:c2FsdA==:a2V5MQ=='), keyed('head', 'v1:c2FsdA==:a2V5Mg=='));
    expect(code).toBe(1);
    const models = json.models as { resources: { action: string; object: string; changes: unknown[] }[] }[];
    expect(models[0]!.resources).toEqual([
      expect.objectContaining({
        action: 'update',
        object: 'EnvoyFilter llm-d-gen/infra-gen-inference-gateway-access',
        changes: [{ path: 'spec', change: 'changed', secret: true }],
      }),
    ]);
    expect(json.stack).toEqual({ resources: [], secrets: [{ key: 'apiKeys.ci', change: 'changed' }] });
    expect(stdout).not.toContain('a2V5');
    expect(stdout).not.toMatch(/\{SHA\}/);
  });
});

describe('diff: a stack moving from the 2026-02 set to 2026-08', { timeout: 600_000 }, () => {
  type Json = { summary: Record<string, number>; models: { name: string; resources: { action: string; object: string }[] }[]; warnings: { code: string; model: string; message: string }[] };

  it('the example stack → Pulumi.current.yaml: the alias Service updated in place, the embeddings Service unchanged, the new objects created before the old charts are deleted; which pods restart and which images to mirror first', async () => {
    const result = await cli(['diff', '--base-stack', 'apps/app-serving/Pulumi.example.yaml', '--stack', 'apps/app-serving/Pulumi.current.yaml', '--json']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const json = JSON.parse(result.stdout) as Json;
    expect(json.summary).toEqual({ create: 8, update: 2, replace: 0, delete: 7, unchangedModels: 0 });
    const actions = (name: string) => json.models.find((m) => m.name === name)!.resources.map((r) => `${r.action} ${r.object}`).sort();
    expect(actions('Qwen3-0.6B-rke2')).toEqual([
      'create ConfigMap llm-d-qwen3-06b-rke2/router-qwen3-06b-rke2-gateway',
      'create Deployment llm-d-qwen3-06b-rke2/server-qwen3-06b-rke2',
      'create Gateway llm-d-qwen3-06b-rke2/router-qwen3-06b-rke2-gateway',
      'create release llm-d-qwen3-06b-rke2/router-qwen3-06b-rke2 (oci://ghcr.io/llm-d/charts/llm-d-router-gateway)',
      'delete HTTPRoute llm-d-qwen3-06b-rke2/llm-d-qwen3-06b-rke2',
      'delete release llm-d-qwen3-06b-rke2/gaie-qwen3-06b-rke2 (oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool)',
      'delete release llm-d-qwen3-06b-rke2/infra-qwen3-06b-rke2 (llm-d-infra)',
      'delete release llm-d-qwen3-06b-rke2/ms-qwen3-06b-rke2 (llm-d-modelservice)',
      'update Service llm-d-qwen3-06b-rke2/llmd-gateway-qwen3-06b-rke2',
    ]);
    // The embeddings Service keeps its identity and its inputs: not listed at all.
    expect(actions('bge-small-en-v1.5-rke2')).toEqual([
      'create ConfigMap llm-d-bge-small-rke2/router-bge-small-rke2-gateway',
      'create Deployment llm-d-bge-small-rke2/server-bge-small-rke2',
      'create Gateway llm-d-bge-small-rke2/router-bge-small-rke2-gateway',
      'create release llm-d-bge-small-rke2/router-bge-small-rke2 (oci://ghcr.io/llm-d/charts/llm-d-router-gateway)',
      'delete release llm-d-bge-small-rke2/gaie-bge-small-rke2 (oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool)',
      'delete release llm-d-bge-small-rke2/infra-bge-small-rke2 (llm-d-infra)',
      'delete release llm-d-bge-small-rke2/ms-bge-small-rke2 (llm-d-modelservice)',
      'update Service llm-d-bge-small-rke2/llmd-gateway-bge-small-rke2',
    ]);
    expect(json.warnings.map((w) => [w.model, w.code])).toEqual([
      ['Qwen3-0.6B-rke2', 'pods.restart'],
      ['Qwen3-0.6B-rke2', 'images.mirror-first'],
      ['bge-small-en-v1.5-rke2', 'pods.restart'],
      ['bge-small-en-v1.5-rke2', 'images.mirror-first'],
    ]);
    const [qwenPods, qwenImages, bgePods] = json.warnings;
    expect(qwenPods!.message).toMatch(/^moves from the 2026-02 set to 2026-08: it is served by new pods — Deployment server-qwen3-06b-rke2 \(1 pod\) is created and awaited \(readyTimeout 30m\) before the old release ms-qwen3-06b-rke2 and its Deployment ms-qwen3-06b-rke2-llm-d-modelservice-decode are deleted \(Pulumi deletes last\)/);
    expect(qwenPods!.message).toContain('The alias Service llmd-gateway-qwen3-06b-rke2 is updated in place to point at router-qwen3-06b-rke2-gateway-istio');
    expect(bgePods!.message).toContain('The embeddings Service ms-bge-small-rke2-embeddings keeps its name');
    expect(qwenImages!.message).toMatch(/^images to mirror first: harbor\.example\.com\/images-llm-d\/llm-d\/llm-d-router-endpoint-picker:v0\.10\.0, harbor\.example\.com\/images-llm-d\/vllm\/vllm-openai:v0\.30\.0 — /);
  });

  it('a KServe stack: the LLMInferenceService and its config updated in place (v1alpha1 → v1alpha2), the download Job replaced for the new downloader', async () => {
    const stack = readFileSync(join(REPO_ROOT, 'apps/app-serving/Pulumi.kserve.yaml'), 'utf8');
    const overlay = readFileSync(join(REPO_ROOT, 'models/generative/Qwen2.5-0.5B-Instruct/kserve-qwen25-05b/values.yaml'), 'utf8');
    const dir = fixtureRepo({
      'old/Pulumi.kserve.yaml': stack,
      'new/Pulumi.kserve.yaml': stack.replace('config:\n', 'config:\n  app-serving:upstream: 2026-08\n'),
      'models/generative/Qwen2.5-0.5B-Instruct/kserve-qwen25-05b/values.yaml': overlay,
    });
    const result = await cli(['diff', '--base-stack', 'old/Pulumi.kserve.yaml', '--stack', 'new/Pulumi.kserve.yaml', '--json'], { cwd: dir });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const json = JSON.parse(result.stdout) as Json;
    expect(json.summary).toEqual({ create: 0, update: 2, replace: 1, delete: 0, unchangedModels: 0 });
    expect(json.models[0]!.resources.map((r) => `${r.action} ${r.object}`)).toEqual([
      'update LLMInferenceServiceConfig llm-d-qwen25-05b/qwen25-05b-config',
      'update LLMInferenceService llm-d-qwen25-05b/qwen25-05b',
      'replace Job llm-d-qwen25-05b/qwen25-05b-model-pull',
    ]);
    expect(json.warnings.map((w) => [w.code, w.message])).toEqual([
      [
        'pods.restart',
        "moves from the 2026-02 set to 2026-08: its LLMInferenceService qwen25-05b is updated in place (serving.kserve.io/v1alpha1 → serving.kserve.io/v1alpha2, the same object); its pods are KServe's — expect them to roll when KServe v0.20.0 reconciles it with its own images, so upgrade KServe (and mirror its images) first",
      ],
    ]);
  });
});

describe('diff: formats and usage', { timeout: 600_000 }, () => {
  it('prints a markdown table for a pull-request comment, and text for a terminal', async () => {
    const dir = fixtureRepo({ ...revision('base'), ...revision('head', { models: ['Gen', 'Two'] }, { ms: msValues('harbor.example.com/llm-d/llm-d-inference-sim:v0.10.3') }) });
    const args = ['diff', '--base-stack', 'base/Pulumi.t.yaml', '--stack', 'head/Pulumi.t.yaml'];
    const markdown = await cli([...args, '--format', 'markdown'], { cwd: dir });
    expect(markdown.code).toBe(0);
    expect(markdown.stdout.split('\n').slice(0, 9)).toEqual([
      '### app-serving diff: `base/Pulumi.t.yaml` → `head/Pulumi.t.yaml`',
      '',
      '**Pulumi would: 7 to create · 1 to update · 0 to replace · 0 to delete**',
      '',
      '| model | change | create | update | replace | delete | images |',
      '|---|---|--:|--:|--:|--:|---|',
      '| Gen | changed | 0 | 1 | 0 | 0 | `harbor.example.com/llm-d/llm-d-inference-sim:v0.10.2` → `harbor.example.com/llm-d/llm-d-inference-sim:v0.10.3` |',
      '| Two | added | 7 | 0 | 0 | 0 | + `ghcr.io/llm-d/llm-d-routing-sidecar:latest`<br>+ `harbor.example.com/llm-d/llm-d-inference-sim:v0.10.2`<br>+ `registry.k8s.io/gateway-api-inference-extension/epp:v1.2.0` |',
      '',
    ]);
    expect(markdown.stdout).toContain("> - **Gen**: the model server's pods change (decode.containers\\[0\\].image): they restart");
    expect(markdown.stdout).toContain('| `decode.containers[0].image` | `"harbor.example.com/llm-d/llm-d-inference-sim:v0.10.2"` | `"harbor.example.com/llm-d/llm-d-inference-sim:v0.10.3"` |');

    const text = await cli(args, { cwd: dir });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('~ Gen  generative, llm-d, namespace llm-d-gen · changed\n    values of ms-gen (llm-d-modelservice):\n      ~ decode.containers[0].image:');
    expect(text.stdout).toContain('+ Two  generative, llm-d, namespace llm-d-two · added: 7 to create\n');
    expect(text.stdout.trimEnd().split('\n').at(-1)).toBe('Pulumi would: 7 to create, 1 to update, 0 to replace, 0 to delete');
  });

  it("markdown: a warning's `…` spans are inline code, not escaped backticks (which GitHub shows as they are)", async () => {
    const { prose } = await import('./commands/diff-format.ts');
    expect(prose('copy them into Harbor before pulumi up (`app-serving images` prints the commands); pods [0]')).toBe(
      'copy them into Harbor before pulumi up (`app-serving images` prints the commands); pods \\[0\\]',
    );
    expect(prose('`a|b` keeps its pipe escaped; a lone ` stays escaped')).toBe('`a\\|b` keeps its pipe escaped; a lone \\` stays escaped');
  });

  it('exits 2 without a base, with two bases, or a bad format', async () => {
    const dir = fixtureRepo(revision('head'));
    for (const args of [[], ['--base', 'main', '--base-stack', 'head/Pulumi.t.yaml'], ['--base-stack', 'head/Pulumi.t.yaml', '--format', 'html'], ['--base-models-dir', 'x', '--base', 'main']]) {
      const result = await cli(['diff', '--stack', 'head/Pulumi.t.yaml', ...args], { cwd: dir });
      expect(result.code, args.join(' ')).toBe(2);
    }
    const missing = await cli(['diff', '--stack', 'head/Pulumi.t.yaml', '--base-stack', 'nope/Pulumi.t.yaml'], { cwd: dir });
    expect(missing).toMatchObject({ code: 2, stdout: '' });
    expect(missing.stderr).toContain('error: --base-stack nope/Pulumi.t.yaml: no such file');
  });

  it('reports the problems of both revisions in one pass, each with its file, and exits 1', async () => {
    const dir = fixtureRepo({
      ...revision('base'),
      ...revision('head'),
      'base/Pulumi.t.yaml': 'config:\n  app-serving:cloudProvider: moon\n',
      'head/Pulumi.t.yaml': 'config:\n  app-serving:cloudProvider: mars\n',
    });
    const result = await cli(['diff', '--base-stack', 'base/Pulumi.t.yaml', '--stack', 'head/Pulumi.t.yaml'], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('4 problems\n');
    expect(result.stdout).toBe(
      [
        'base/Pulumi.t.yaml:1: models: is required',
        'base/Pulumi.t.yaml:2: cloudProvider: must be one of "cloud", "on-prem", not "moon"',
        'head/Pulumi.t.yaml:1: models: is required',
        'head/Pulumi.t.yaml:2: cloudProvider: must be one of "cloud", "on-prem", not "mars"',
        '',
      ].join('\n'),
    );
  });
});

describe('diff --base <git-ref>', { timeout: 600_000 }, () => {
  function git(cwd: string, ...args: string[]): string {
    const result = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
    return result.stdout.trim();
  }

  it('reads the stack and models at a ref without touching the work tree; --head reads another ref', async () => {
    const dir = fixtureRepo(revision('repo'));
    const repo = join(dir, 'repo');
    git(repo, 'init', '-q');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'one model');
    const first = git(repo, 'rev-parse', 'HEAD');
    const values = join(repo, 'models/generative/Gen/ms-gen/values.yaml');
    writeFileSync(values, msValues('harbor.example.com/llm-d/llm-d-inference-sim:v0.10.3'));
    const status = git(repo, 'status', '--porcelain');

    const result = await cli(['diff', '--base', 'HEAD', '--stack', 'Pulumi.t.yaml', '--json', '--exit-code'], { cwd: repo });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    const json = JSON.parse(result.stdout);
    expect(json.base).toEqual({ ref: 'HEAD', commit: first, stack: 'HEAD:Pulumi.t.yaml', exists: true });
    expect(json.head).toEqual({ ref: null, commit: null, stack: 'Pulumi.t.yaml', exists: true });
    expect(json.models[0].images.changed).toEqual([
      { old: 'harbor.example.com/llm-d/llm-d-inference-sim:v0.10.2', new: 'harbor.example.com/llm-d/llm-d-inference-sim:v0.10.3', where: 'models/generative/Gen/ms-gen/values.yaml: decode.containers[0].image' },
    ]);
    // The work tree, the index and HEAD are as they were.
    expect(git(repo, 'status', '--porcelain')).toBe(status);
    expect(readFileSync(values, 'utf8')).toContain('v0.10.3');

    git(repo, 'commit', '-q', '-am', 'new sim');
    const both = await cli(['diff', '--base', 'HEAD~1', '--head', 'HEAD', '--stack', 'Pulumi.t.yaml', '--json'], { cwd: repo });
    expect(both.code).toBe(0);
    const atRef = JSON.parse(both.stdout);
    expect(atRef.head).toMatchObject({ ref: 'HEAD', stack: 'HEAD:Pulumi.t.yaml', exists: true });
    expect(atRef.models[0].images.changed[0].where).toBe('HEAD:models/generative/Gen/ms-gen/values.yaml: decode.containers[0].image');
    expect({ ...atRef.models[0], images: null }).toEqual({ ...json.models[0], images: null });

    const none = await cli(['diff', '--base', 'HEAD', '--stack', 'Pulumi.t.yaml', '--exit-code'], { cwd: repo });
    expect(none).toMatchObject({ code: 0, stderr: '' });
    expect(none.stdout).toContain('No changes');
  });

  it('treats a stack file that does not exist at the ref as a new stack; a bad ref is a usage error', async () => {
    const dir = fixtureRepo({ 'repo/README.md': 'x\n' });
    const repo = join(dir, 'repo');
    git(repo, 'init', '-q');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'empty');
    for (const [path, content] of Object.entries(revision('repo'))) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), content);
    }
    const result = await cli(['diff', '--base', 'HEAD', '--stack', 'Pulumi.t.yaml', '--json'], { cwd: repo });
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json.base).toMatchObject({ ref: 'HEAD', stack: 'HEAD:Pulumi.t.yaml', exists: false });
    expect(json.models.map((m: { name: string; status: string }) => `${m.name} ${m.status}`)).toEqual(['Gen added']);
    expect(json.summary).toEqual({ create: 10, update: 0, replace: 0, delete: 0, unchangedModels: 0 });

    const bad = await cli(['diff', '--base', '--output=/tmp/x', '--stack', 'Pulumi.t.yaml'], { cwd: repo });
    expect(bad.code).toBe(2);
    const missing = await cli(['diff', '--base', 'no-such-branch', '--stack', 'Pulumi.t.yaml'], { cwd: repo });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--base no-such-branch: no such commit, branch or tag');
    expect(missing.stderr).toContain('(fetch it first, e.g. `git fetch origin no-such-branch`;');
    // A remote-tracking ref: the remote's branch is fetched by its own name, not as "origin/…".
    expect(spawnSync('git', ['remote', 'add', 'origin', 'https://example.com/app-serving.git'], { cwd: repo }).status).toBe(0);
    const remote = await cli(['diff', '--base', 'origin/nope', '--stack', 'Pulumi.t.yaml'], { cwd: repo });
    expect(remote.code).toBe(2);
    expect(remote.stderr).toContain('--base origin/nope: no such commit, branch or tag');
    expect(remote.stderr).toContain('(fetch it first, e.g. `git fetch origin nope`;');
  });
});
