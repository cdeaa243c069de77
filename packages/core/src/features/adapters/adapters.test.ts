import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readUpstream, readUpstreamYaml } from '@app-serving/test-cluster';
import { REPO_ROOT, tempRepo } from '../../../test/helpers.ts';
import { isStackError, type Issue } from '../../errors.ts';
import { modelJobManifest } from '../../manifests/common.ts';
import type { KserveModelPlan } from '../../kserve/plan.ts';
import { planDeployment, type DeploymentPlan, type LlmdRouterModelPlan } from '../../plan.ts';
import { parseStackFile } from '../../stack.ts';
import { getPath, type Values } from '../../values/merge.ts';
import { KSERVE_LORA_MOUNT_ROOT, LORA_FLAGS, describeAdapters, parseAdapterOption } from './index.ts';
import { LORA_RANKS } from '../../constants.ts';

const MODELS = join(REPO_ROOT, 'models');
const CURRENT = readFileSync(join(REPO_ROOT, 'apps/app-serving/Pulumi.current.yaml'), 'utf8');

/** Pulumi.current.yaml (2026-08, on-prem, Harbor) with `keys` (YAML, indented for a model entry) added to its generative model. */
function currentWith(keys: string, replace: [string, string][] = []): string {
  let text = CURRENT.replace('          hostpathNode: gpu-node-1\n', `          hostpathNode: gpu-node-1\n${keys}`);
  for (const [from, to] of replace) text = text.replace(from, to);
  return text;
}

function planOf(text: string, modelsDir = MODELS): DeploymentPlan {
  return planDeployment(parseStackFile(text, 'Pulumi.adapters.yaml'), modelsDir);
}

function problems(text: string, modelsDir = MODELS): Pick<Issue, 'code' | 'path' | 'message'>[] {
  try {
    planOf(text, modelsDir);
  } catch (error) {
    if (isStackError(error)) return error.issues.map(({ code, path, message }) => ({ code, path, message }));
    throw error;
  }
  return [];
}

const TWO = `        maxLoraRank: 32
        adapters:
          - name: qwen3-sql
            harborRef: harbor.example.com/ai-adapters/qwen3-sql:v1
          - name: qwen3-support
            path: loras/support
`;

describe('adapters of a 2026-08 llm-d model (the current example, on-prem with Harbor)', () => {
  const plan = planOf(currentWith(TWO));
  const qwen = plan.models.find((m) => m.name === 'Qwen3-0.6B-rke2') as LlmdRouterModelPlan;
  const bge = plan.models.find((m) => m.name === 'bge-small-en-v1.5-rke2') as LlmdRouterModelPlan;
  const container = (qwen.manifests.modelServer as any).spec.template.spec.containers[0];

  it('puts every adapter in the plan with its parent (the served name), its source and where the server loads it', () => {
    expect(qwen.adapters).toEqual([
      { name: 'qwen3-sql', parent: 'Qwen/Qwen3-0.6B', source: { kind: 'oras', ref: 'harbor.example.com/ai-adapters/qwen3-sql:v1' }, path: '/model-cache/adapters/qwen3-sql' },
      { name: 'qwen3-support', parent: 'Qwen/Qwen3-0.6B', source: { kind: 'volume', path: 'loras/support' }, path: '/model-cache/loras/support' },
    ]);
    expect(qwen.lora).toEqual({ maxRank: 32, maxLoras: 2, maxCpuLoras: 2 });
    expect(bge.adapters).toEqual([]);
    expect(bge.lora).toBeNull();
  });

  it("writes vLLM's LoRA options after the values file's args, --lora-modules last with every adapter as name=path", () => {
    expect(container.args).toEqual([
      'Qwen/Qwen3-0.6B',
      '--served-model-name',
      'Qwen/Qwen3-0.6B',
      '--port',
      '8000',
      '--max-model-len',
      '8192',
      '--gpu-memory-utilization',
      '0.90',
      '--enable-lora',
      '--max-lora-rank',
      '32',
      '--max-loras',
      '2',
      '--max-cpu-loras',
      '2',
      '--lora-modules',
      'qwen3-sql=/model-cache/adapters/qwen3-sql',
      'qwen3-support=/model-cache/loras/support',
    ]);
    // A new artifact behind the same name changes no argument: the annotation rolls the pods.
    expect((qwen.manifests.modelServer as any).spec.template.metadata.annotations).toEqual({
      'app-serving.io/model-ref': 'harbor.example.com/ai-models/qwen3-0.6b:2025-05',
      'app-serving.io/adapters': 'qwen3-sql=harbor.example.com/ai-adapters/qwen3-sql:v1 qwen3-support=volume:loras/support',
    });
  });

  it('has the pull Job pull the Harbor adapter and check the one on the volume, with the rank it allows; no new image', () => {
    expect(qwen.storage!.adapters).toEqual({
      maxRank: 32,
      items: [
        { name: 'qwen3-sql', dir: 'adapters/qwen3-sql', ref: 'harbor.example.com/ai-adapters/qwen3-sql:v1' },
        { name: 'qwen3-support', dir: 'loras/support', ref: null },
      ],
    });
    const job = modelJobManifest({ storage: qwen.storage!, namespace: qwen.namespace, slug: qwen.slug, pullSecret: 'harbor-creds' });
    const env = job.spec.template.spec.containers[0]!.env;
    expect(env.filter((e) => e.name === 'ADAPTERS' || e.name === 'MAX_LORA_RANK')).toEqual([
      { name: 'ADAPTERS', value: 'qwen3-sql adapters/qwen3-sql harbor.example.com/ai-adapters/qwen3-sql:v1\nqwen3-support loras/support -' },
      { name: 'MAX_LORA_RANK', value: '32' },
    ]);
    // The same ORAS image pulls the adapters: the image list is the one without them.
    const without = planOf(CURRENT);
    expect(plan.images).toEqual(without.images);
  });

  it('leaves a model without adapters exactly as it was', () => {
    const without = planOf(CURRENT).models.find((m) => m.name === 'bge-small-en-v1.5-rke2');
    expect(bge).toEqual(without);
  });

  it('defaults maxLoraRank to vLLM\'s 16', () => {
    const one = planOf(currentWith('        adapters:\n          - name: a1\n            harborRef: harbor.example.com/ai-adapters/a1:v1\n')).models[0] as LlmdRouterModelPlan;
    expect(one.lora).toEqual({ maxRank: 16, maxLoras: 1, maxCpuLoras: 1 });
    expect((one.manifests.modelServer as any).spec.template.spec.containers[0].args.slice(-9)).toEqual([
      '--enable-lora', '--max-lora-rank', '16', '--max-loras', '1', '--max-cpu-loras', '1', '--lora-modules', 'a1=/model-cache/adapters/a1',
    ]);
  });
});

describe('a Hugging Face adapter of an llm-d model without a volume', () => {
  it('is downloaded by vLLM at start-up: its repository id is the path', () => {
    const text = `config:
  app-serving:upstream: 2026-08
  app-serving:cloudProvider: cloud
  app-serving:models:
    generative:
      - name: Qwen3-0.6B
        access:
          open: true
        adapters:
          - name: qwen3-chat
            huggingFace:
              repo: org/qwen3-chat-lora
`;
    const qwen = planOf(text).models[0] as LlmdRouterModelPlan;
    expect(qwen.adapters).toEqual([{ name: 'qwen3-chat', parent: 'Qwen/Qwen3-0.6B', source: { kind: 'huggingface', repo: 'org/qwen3-chat-lora', revision: null }, path: 'org/qwen3-chat-lora' }]);
    expect((qwen.manifests.modelServer as any).spec.template.spec.containers[0].args.slice(-2)).toEqual(['--lora-modules', 'qwen3-chat=org/qwen3-chat-lora']);
    expect(qwen.storage).toBeNull();
  });
});

describe('adapters: what validate refuses, each at its key', () => {
  const at = (path: string) => (p: { path: string }) => p.path === path;

  it('an adapter without a source, or with two', () => {
    const issues = problems(currentWith('        adapters:\n          - name: a1\n          - name: a2\n            harborRef: harbor.example.com/x/a2:v1\n            path: loras/a2\n'));
    expect(issues).toEqual([
      { code: 'config.missing-key', path: 'models.generative[0].adapters[0]', message: expect.stringContaining('needs a source: harborRef') },
      { code: 'config.contradiction', path: 'models.generative[0].adapters[1].path', message: 'sets harborRef and path: an adapter has one source; keep one of them' },
    ]);
  });

  it('the same name twice in the stack, and a name a model serves', () => {
    const twice = problems(
      currentWith('        adapters:\n          - name: a1\n            harborRef: harbor.example.com/x/a1:v1\n          - name: a1\n            path: loras/a1\n'),
    );
    expect(twice).toEqual([{ code: 'name.duplicate', path: 'models.generative[0].adapters[1].name', message: expect.stringContaining('"a1" is also the name of the adapter at models.generative[0].adapters[0]') }]);
    // The simulator serves the name "random": an adapter may not take it.
    const sim = `config:
  app-serving:upstream: 2026-08
  app-serving:cloudProvider: cloud
  app-serving:models:
    generative:
      - name: Sim
        access:
          open: true
      - name: Qwen3-0.6B
        access:
          open: true
        adapters:
          - name: random
            huggingFace:
              repo: org/random-lora
`;
    expect(problems(sim)).toEqual([
      { code: 'name.duplicate', path: 'models.generative[1].adapters[0].name', message: '"random" is the name generative/Sim serves (servedModelName): clients reach a model and an adapter by name alone, so give the adapter another' },
    ]);
  });

  it('names and ranks vLLM and a header cannot take', () => {
    const issues = problems(currentWith('        maxLoraRank: 24\n        adapters:\n          - name: org/sql\n            harborRef: harbor.example.com/x/a1:v1\n          - name: a=b\n            path: loras/a\n'));
    expect(issues.map((i) => i.path)).toEqual(['models.generative[0].maxLoraRank', 'models.generative[0].adapters[0].name', 'models.generative[0].adapters[1].name']);
    expect(issues.find(at('models.generative[0].maxLoraRank'))!.message).toMatch(/^must be one of 1, 8, 16, 32, 64, 128, 256, 320, 512\b/);
  });

  it('sources the model cannot serve: Harbor without a Harbor modelSource or on another registry, a path without a volume or in adapters/', () => {
    const issues = problems(
      currentWith(
        '        adapters:\n          - name: a1\n            harborRef: other.example.com/x/a1:v1\n          - name: a2\n            path: adapters/a2\n',
      ),
    );
    expect(issues).toEqual([
      { code: 'config.contradiction', path: 'models.generative[0].adapters[0].harborRef', message: 'points at registry "other.example.com", but the Harbor credentials are for "harbor.example.com"; the pull Job could not authenticate' },
      { code: 'config.invalid', path: 'models.generative[0].adapters[1].path', message: expect.stringContaining('is under adapters/, the folder the pull Job fills') },
    ]);
    const noVolume = `config:
  app-serving:upstream: 2026-08
  app-serving:cloudProvider: cloud
  app-serving:models:
    generative:
      - name: Qwen3-0.6B
        access:
          open: true
        adapters:
          - name: a1
            harborRef: harbor.example.com/x/a1:v1
          - name: a2
            path: loras/a2
          - name: a3
            huggingFace:
              repo: org/a3
              revision: v1
`;
    expect(problems(noVolume).filter((i) => i.path.startsWith('models.generative[0].adapters')).map((i) => [i.path, i.message.slice(0, 50)])).toEqual([
      ['models.generative[0].adapters[0].harborRef', "is pulled by the model's pull Job into adapters/a1"],
      ['models.generative[0].adapters[1].path', "is a folder on the model's volume, and this model "],
      ['models.generative[0].adapters[2].huggingFace.revision', 'cannot be pinned: vLLM downloads an adapter named '],
    ]);
  });

  it('a Hugging Face adapter of an llm-d model whose weights are on a volume', () => {
    expect(problems(currentWith('        adapters:\n          - name: a1\n            huggingFace:\n              repo: org/a1\n'))).toEqual([
      { code: 'config.contradiction', path: 'models.generative[0].adapters[0].huggingFace', message: expect.stringContaining('push the adapter to Harbor and use harborRef') },
    ]);
  });

  it('embedding models, the 2026-02 set (llm-d and KServe), and maxLoraRank without adapters', () => {
    const embedder = problems(currentWith('', [['          hostpathNode: gpu-node-1\n    embedder:', '          hostpathNode: gpu-node-1\n    embedder:'], ['          storageSize: 2Gi\n', '          storageSize: 2Gi\n        adapters:\n          - name: e1\n            harborRef: harbor.example.com/x/e1:v1\n']]));
    expect(embedder).toEqual([{ code: 'config.contradiction', path: 'models.embedder[0].adapters', message: expect.stringMatching(/^is for generative models: a LoRA adapter is served .* as a chat and completions model/) }]);
    const old = problems(currentWith(TWO, [['  app-serving:upstream: 2026-08\n', '  app-serving:upstream: 2026-02\n']]));
    expect(old).toEqual([{ code: 'config.contradiction', path: 'models.generative[0].adapters', message: expect.stringContaining('llm-d-modelservice v0.4.12 has no value for LoRA adapters') }]);
    const kserve = problems(`config:
  app-serving:cloudProvider: cloud
  app-serving:platform: kserve
  app-serving:models:
    generative:
      - name: Qwen2.5-0.5B-Instruct
        access:
          open: true
        modelSource:
          huggingFace:
            repo: Qwen/Qwen2.5-0.5B-Instruct
          storageSize: 5Gi
        adapters:
          - name: k1
            huggingFace:
              repo: org/k1
`);
    expect(kserve.filter((i) => i.path.includes('adapters'))).toEqual([
      { code: 'config.contradiction', path: 'models.generative[0].adapters', message: expect.stringContaining("KServe v0.18's controller does not turn spec.model.lora into vLLM's arguments") },
    ]);
    expect(problems(currentWith('        maxLoraRank: 64\n'))).toEqual([
      { code: 'config.contradiction', path: 'models.generative[0].maxLoraRank', message: "sizes the model's LoRA adapters, and it has none: remove it, or list them in adapters" },
    ]);
  });
});

describe("adapters against the model server's values file", () => {
  /** A 2026-08 stack with one model `M` whose server values are `server`. */
  function withServer(server: string, adapters = '        adapters:\n          - name: m1\n            huggingFace:\n              repo: org/m1\n'): { issues: ReturnType<typeof problems>; warnings: string[]; lines: (number | undefined)[] } {
    const dir = tempRepo({ 'models/generative/M/server-m/values.yaml': server });
    const text = `config:\n  app-serving:upstream: 2026-08\n  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:\n      - name: M\n        access:\n          open: true\n${adapters}`;
    try {
      const plan = planOf(text, join(dir, 'models'));
      return { issues: [], warnings: plan.warnings.filter((w) => w.code === 'warning.no-effect').map((w) => `${w.path}: ${w.message}`), lines: [] };
    } catch (error) {
      if (!isStackError(error)) throw error;
      return { issues: error.issues.map(({ code, path, message }) => ({ code, path, message })), warnings: [], lines: error.issues.map((i) => i.line) };
    }
  }
  const BASE = 'image: vllm/vllm-openai:v0.30.0\nservedModelName: org/m\n';

  it('refuses a server not launched as vLLM, naming the file, line and key', () => {
    const { issues, lines } = withServer(`${BASE}launch: image\nargs: ["--model", "m"]\n`);
    expect(issues).toEqual([{ code: 'values.conflict', path: 'launch', message: expect.stringContaining("is \"image\", but the stack gives this model adapters (m1), which app-serving serves through vLLM's --lora-modules") }]);
    expect(lines).toEqual([3]);
  });

  it("refuses each LoRA option of vLLM in args, however written", () => {
    const { issues, lines } = withServer(`${BASE}args:\n  - --max-model-len\n  - "4096"\n  - --max-loras=4\n  - --enable-lora\n`);
    expect(issues.map((i) => [i.path, i.message.split(',')[0]])).toEqual([
      ['args[2]', 'is --max-loras'],
      ['args[3]', 'is --enable-lora'],
    ]);
    expect(lines).toEqual([6, 7]);
  });

  it('warns about --lora-modules in a model without adapters: adapters app-serving does not know of', () => {
    const { issues, warnings } = withServer(`${BASE}args: ["--enable-lora", "--lora-modules", "x=/tmp/x"]\n`, '');
    expect(issues).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(/^args\[1\]: serves LoRA adapters app-serving does not know of/)]);
  });

  it('refuses mountModelVolume: false when adapters are on the volume', () => {
    const text = currentWith(TWO);
    const server = readFileSync(join(MODELS, 'generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2/values.yaml'), 'utf8');
    const models = tempRepo({
      'models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2/values.yaml': `${server}\nmountModelVolume: false\n`,
      'models/embedder/bge-small-en-v1.5-rke2/server-bge-small-rke2/values.yaml': readFileSync(join(MODELS, 'embedder/bge-small-en-v1.5-rke2/server-bge-small-rke2/values.yaml'), 'utf8'),
    });
    expect(problems(text, join(models, 'models')).filter((i) => i.code === 'values.conflict')).toEqual([
      { code: 'values.conflict', path: 'mountModelVolume', message: "is false, but the adapters qwen3-sql, qwen3-support are on the model's volume, which the server then does not mount: remove mountModelVolume: false" },
    ]);
  });

  it('the flags it refuses are the ones it writes', () => {
    const qwen = planOf(currentWith(TWO)).models[0] as LlmdRouterModelPlan;
    const args: string[] = (qwen.manifests.modelServer as any).spec.template.spec.containers[0].args;
    expect(args.filter((a) => a.startsWith('--') && (LORA_FLAGS as readonly string[]).includes(a)).sort()).toEqual([...LORA_FLAGS].sort());
  });
});

describe('adapters of a KServe v0.20 model (2026-08)', () => {
  const OVERLAY = 'model:\n  name: Qwen/Qwen2.5-0.5B-Instruct\ntemplate:\n  containers:\n    - name: main\n      env:\n        - name: VLLM_ADDITIONAL_ARGS\n          value: "--max-model-len 4096"\n';
  function kserve(overlay: string, adapters: string, source = '        modelSource:\n          harborRef: h.local/ai/qwen:1\n          modelUri: qwen\n          layout: directory\n          storageSize: 5Gi\n') {
    const dir = tempRepo({ 'models/generative/K/kserve-k/values.yaml': overlay });
    const text = `config:
  app-serving:upstream: 2026-08
  app-serving:cloudProvider: cloud
  app-serving:platform: kserve
  app-serving:harborHostname: h.local
  app-serving:harborUser: u
  app-serving:harborToken:
    secure: v1:x
  app-serving:models:
    generative:
      - name: K
        access:
          open: true
${source}${adapters}`;
    return { run: () => planOf(text, join(dir, 'models')), problems: () => problems(text, join(dir, 'models')) };
  }
  const THREE = `        maxLoraRank: 64
        adapters:
          - name: k-sql
            harborRef: h.local/ai-adapters/k-sql:v1
          - name: k-chat
            huggingFace:
              repo: org/k-chat
              revision: 0123abc
          - name: k-own
            path: loras/own
`;

  it('writes spec.model.lora from the stack, each source as a URI KServe takes, with the sizes KServe only writes when set', () => {
    const plan = kserve(OVERLAY, THREE).run();
    const model = plan.models[0] as KserveModelPlan;
    expect(getPath(model.spec, ['model', 'lora'])).toEqual({
      adapters: [
        { name: 'k-sql', uri: 'pvc://k-model/adapters/k-sql' },
        { name: 'k-chat', uri: 'hf://org/k-chat:0123abc' },
        { name: 'k-own', uri: 'pvc://k-model/loras/own' },
      ],
      maxRank: 64,
      maxAdapters: 3,
      maxCpuAdapters: 3,
    });
    expect(model.adapters.map((a) => [a.name, a.parent, a.path])).toEqual([
      ['k-sql', 'Qwen/Qwen2.5-0.5B-Instruct', `${KSERVE_LORA_MOUNT_ROOT}/k-sql`],
      ['k-chat', 'Qwen/Qwen2.5-0.5B-Instruct', `${KSERVE_LORA_MOUNT_ROOT}/k-chat`],
      ['k-own', 'Qwen/Qwen2.5-0.5B-Instruct', `${KSERVE_LORA_MOUNT_ROOT}/k-own`],
    ]);
    expect(getPath(model.spec, ['annotations', 'app-serving.io/adapters'])).toBe('k-sql=h.local/ai-adapters/k-sql:v1 k-chat=hf://org/k-chat@0123abc k-own=volume:loras/own');
    // The Harbor adapter is pulled by the model's Job; the Hub one by KServe's storage initializer, whose image is listed.
    expect(model.storage!.adapters!.items.map((i) => [i.name, i.ref])).toEqual([
      ['k-sql', 'h.local/ai-adapters/k-sql:v1'],
      ['k-own', null],
    ]);
    expect(model.images.map((i) => i.image)).toContain('kserve/storage-initializer:v0.20.0');
  });

  it("refuses an overlay that sets model.lora or vLLM's LoRA options itself (KServe would skip its own)", () => {
    const own = 'model:\n  name: Qwen/Qwen2.5-0.5B-Instruct\n  lora:\n    maxRank: 8\ntemplate:\n  containers:\n    - name: main\n      env:\n        - name: VLLM_ADDITIONAL_ARGS\n          value: "--max-model-len 4096 --lora-modules x=/y"\n';
    const issues = kserve(own, THREE).problems();
    expect(issues.map((i) => [i.code, i.path])).toEqual([
      ['values.conflict', 'model.lora'],
      ['values.conflict', 'template.containers[0].env[0].value'],
    ]);
  });

  it('refuses a Harbor adapter of a model whose weights come from Hugging Face (no ORAS in its download Job)', () => {
    const hf = '        modelSource:\n          huggingFace:\n            repo: org/m\n          storageSize: 5Gi\n';
    expect(kserve(OVERLAY, '        adapters:\n          - name: k-sql\n            harborRef: h.local/ai-adapters/k-sql:v1\n', hf).problems()).toEqual([
      { code: 'config.contradiction', path: 'models.generative[0].adapters[0].harborRef', message: expect.stringContaining("this model's weights come from Hugging Face, whose download Job has no ORAS") },
    ]);
  });
});

describe('facts the adapters rules rest on, held against upstream', () => {
  it("KServe v0.20's CRD: spec.model.lora has adapters (schemaless), maxRank, maxAdapters and maxCpuAdapters, integers ≥ 1", () => {
    const crd = readUpstreamYaml('current/crds/kserve-v0.20.0-serving.kserve.io_llminferenceservices.yaml')[0] as Values;
    const versions = getPath(crd, ['spec', 'versions']) as Values[];
    for (const version of versions) {
      const lora = getPath(version, ['schema', 'openAPIV3Schema', 'properties', 'spec', 'properties', 'model', 'properties', 'lora', 'properties']) as Record<string, Values>;
      expect(Object.keys(lora).sort()).toEqual(['adapters', 'maxAdapters', 'maxCpuAdapters', 'maxRank']);
      expect(lora.adapters).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
      for (const key of ['maxAdapters', 'maxCpuAdapters', 'maxRank']) expect(lora[key]).toEqual({ format: 'int32', minimum: 1, type: 'integer' });
    }
    // Every rank app-serving accepts is one the CRD accepts.
    expect(Math.min(...LORA_RANKS)).toBeGreaterThanOrEqual(1);
  });

  it("llm-d-modelservice v0.4.12 has no value for LoRA adapters (why the 2026-02 set refuses them)", () => {
    const values = readUpstream('charts/llm-d-modelservice-v0.4.12/values.yaml');
    const schema = readUpstream('charts/llm-d-modelservice-v0.4.12/values.schema.json');
    expect(values.toLowerCase()).not.toContain('lora');
    expect(schema.toLowerCase()).not.toContain('lora');
  });
});

describe('the adapters as plan and new-model write them', () => {
  it('describes each adapter by name, source and where the server gets it', () => {
    const text = `config:\n  app-serving:upstream: 2026-08\n  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:\n      - name: Qwen3-0.6B\n        access:\n          open: true\n        adapters:\n          - name: q-chat\n            huggingFace:\n              repo: org/q-chat\n`;
    const qwen = planOf(text).models[0] as LlmdRouterModelPlan;
    expect(describeAdapters(qwen.adapters, qwen.lora)).toEqual(['q-chat ← huggingface.co/org/q-chat (vLLM downloads it at start-up); max rank 16, 1 per batch']);
  });

  it('parses <name>=<source> with the stack schema\'s rules', () => {
    expect(parseAdapterOption('a=harbor.example.com/x/a:v1')).toEqual({ adapter: { name: 'a', harborRef: 'harbor.example.com/x/a:v1' } });
    expect(parseAdapterOption('a=hf://org/a@v2')).toEqual({ adapter: { name: 'a', huggingFace: { repo: 'org/a', revision: 'v2' } } });
    expect(parseAdapterOption('a=path:loras/a')).toEqual({ adapter: { name: 'a', path: 'loras/a' } });
    expect(parseAdapterOption('a')).toMatchObject({ problem: expect.stringContaining('write it as <name>=<source>') });
    expect(parseAdapterOption('a=harbor.example.com/x/a')).toMatchObject({ problem: expect.stringMatching(/^harborRef must be an OCI reference with a tag or digest/) });
    expect(parseAdapterOption('a=path:../up')).toMatchObject({ problem: expect.stringMatching(/^path must/) });
  });
});
