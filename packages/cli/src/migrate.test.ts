import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, cli, fixtureRepo } from '../test/run-cli.ts';

const EXAMPLE = readFileSync(join(REPO_ROOT, 'apps/app-serving/Pulumi.example.yaml'), 'utf8');
const UPSTREAM_LINES = '  # The set of upstream versions (docs/upgrading.md): 2026-08 is the llm-d Router v0.10 and KServe v0.20.\n  app-serving:upstream: 2026-08\n';

/** A repository holding a copy of a stack and the 2026-02 folders (gaie-, ms-, kserve-) of the models it names. */
function repoWith(stack: string, models: [string, string][]): string {
  const dir = fixtureRepo({ [`apps/app-serving/Pulumi.${stack}.yaml`]: readFileSync(join(REPO_ROOT, `apps/app-serving/Pulumi.${stack}.yaml`), 'utf8') });
  for (const [category, name] of models) {
    for (const folder of readdirSync(join(REPO_ROOT, 'models', category, name)).filter((f) => /^(gaie|ms|kserve)-/.test(f))) {
      cpSync(join(REPO_ROOT, 'models', category, name, folder), join(dir, 'models', category, name, folder), { recursive: true });
    }
  }
  return dir;
}
const exampleRepo = () =>
  repoWith('example', [
    ['generative', 'Qwen3-0.6B-rke2'],
    ['embedder', 'bge-small-en-v1.5-rke2'],
  ]);
const STACK = 'apps/app-serving/Pulumi.example.yaml';

function tree(dir: string, under = ''): string[] {
  return readdirSync(join(dir, under), { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? tree(dir, join(under, d.name)) : [join(under, d.name)])).sort();
}

describe('migrate', { timeout: 600_000 }, () => {
  it('moves the example stack: the upstream key in place, the server and router folders written; the result validates with no warning; a second run has nothing to do', async () => {
    const dir = exampleRepo();
    const result = await cli(['migrate', '--stack', STACK, '--to', '2026-08'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(readFileSync(join(dir, STACK), 'utf8')).toBe(EXAMPLE.replace('config:\n', `config:\n${UPSTREAM_LINES}`));
    expect(tree(join(dir, 'models'))).toEqual([
      'embedder/bge-small-en-v1.5-rke2/gaie-bge-small-rke2/values.yaml',
      'embedder/bge-small-en-v1.5-rke2/ms-bge-small-rke2/values.yaml',
      'embedder/bge-small-en-v1.5-rke2/router-bge-small-rke2/values.yaml',
      'embedder/bge-small-en-v1.5-rke2/server-bge-small-rke2/values.yaml',
      'generative/Qwen3-0.6B-rke2/gaie-qwen3-06b-rke2/values.yaml',
      'generative/Qwen3-0.6B-rke2/ms-qwen3-06b-rke2/values.yaml',
      'generative/Qwen3-0.6B-rke2/router-qwen3-06b-rke2/values.yaml',
      'generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2/values.yaml',
    ]);
    expect(result.stdout).toContain('Qwen3-0.6B-rke2 (generative, llm-d): serves Qwen/Qwen3-0.6B on port 8000, 1 replica, as before\n  + wrote models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2/values.yaml\n');
    expect(result.stdout).toContain('Next (docs/upgrading.md): review with `app-serving diff --base HEAD --stack apps/app-serving/Pulumi.example.yaml` before you commit (`--base main` once it is committed on a branch)');
    // What could not be carried over: on stderr, at its file, line and key.
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^warning: models\/generative\/Qwen3-0\.6B-rke2\/gaie-qwen3-06b-rke2\/values\.yaml:12: inferenceExtension\.flags\.kv-cache-usage-percentage-metric: not carried over to router-qwen3-06b-rke2\/values\.yaml: /),
    ]);

    const validated = await cli(['validate', '--stack', STACK, '--json'], { cwd: dir });
    expect(JSON.parse(validated.stdout)).toEqual({ ok: true, stack: STACK, models: ['Qwen3-0.6B-rke2', 'bge-small-en-v1.5-rke2'], issues: [], warnings: [] });

    const again = await cli(['migrate', '--stack', STACK, '--to', '2026-08'], { cwd: dir });
    expect(again).toMatchObject({ code: 1, stdout: `${STACK}:9: upstream: the stack is on 2026-08 already (every enabled model): nothing to migrate\n` });
  });

  it('keeps the stack file\'s mode (a stack kept private stays private)', async () => {
    const dir = exampleRepo();
    chmodSync(join(dir, STACK), 0o600);
    expect((await cli(['migrate', '--stack', STACK, '--to', '2026-08'], { cwd: dir })).code).toBe(0);
    expect(statSync(join(dir, STACK)).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(dir, 'apps/app-serving'))).toEqual(['Pulumi.example.yaml']);
  });

  it('--dry-run prints the stack change and every file it would write, and writes nothing', async () => {
    const dir = exampleRepo();
    const before = tree(join(dir, 'models'));
    const result = await cli(['migrate', '-s', STACK, '--to', '2026-08', '--dry-run'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(tree(join(dir, 'models'))).toEqual(before);
    expect(readFileSync(join(dir, STACK), 'utf8')).toBe(EXAMPLE);
    expect(result.stdout).toContain(`app-serving migrate: ${STACK} → 2026-08 (dry run: nothing is written)\n\n${STACK}:\n  ~ upstream: 2026-08\n`);
    expect(result.stdout).toContain('  + would write models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2/values.yaml\n      # The model server of Qwen3-0.6B-rke2');
    expect(result.stdout).toContain('      image: harbor.example.com/images-llm-d/vllm/vllm-openai:v0.30.0\n');
  });

  it('--json: the changes, files, notes and warnings for a machine', async () => {
    const dir = exampleRepo();
    const result = await cli(['migrate', '-s', STACK, '--to', '2026-08', '--json'], { cwd: dir });
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(json).toMatchObject({
      stack: STACK,
      to: '2026-08',
      dryRun: false,
      stackChanges: ['upstream: 2026-08'],
      rewritten: false,
      files: [
        { path: 'models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2/values.yaml' },
        { path: 'models/generative/Qwen3-0.6B-rke2/router-qwen3-06b-rke2/values.yaml' },
        { path: 'models/embedder/bge-small-en-v1.5-rke2/server-bge-small-rke2/values.yaml' },
        { path: 'models/embedder/bge-small-en-v1.5-rke2/router-bge-small-rke2/values.yaml' },
      ],
      differences: [],
      validateWarnings: [],
    });
    expect((json.warnings as { code: string; path: string; line: number }[]).map((w) => [w.code, w.path, w.line])).toEqual([['warning.not-carried', 'inferenceExtension.flags.kv-cache-usage-percentage-metric', 12]]);
  });

  it('never overwrites: a model that has its server folder is left as it is, one with only a router folder gets its server folder', async () => {
    const dir = exampleRepo();
    const own = 'image: harbor.example.com/images-llm-d/michaelf34/infinity:0.0.77-cpu\nservedModelName: BAAI/bge-small-en-v1.5\nlaunch: image\ncommand: ["infinity_emb"]\nargs: ["v2", "--port", "8200"]\nport: 8200\n';
    mkdirSync(join(dir, 'models/embedder/bge-small-en-v1.5-rke2/server-bge-small-rke2'));
    writeFileSync(join(dir, 'models/embedder/bge-small-en-v1.5-rke2/server-bge-small-rke2/values.yaml'), own);
    mkdirSync(join(dir, 'models/generative/Qwen3-0.6B-rke2/router-qwen3-06b-rke2'));
    writeFileSync(join(dir, 'models/generative/Qwen3-0.6B-rke2/router-qwen3-06b-rke2/values.yaml'), 'router:\n  epp:\n    replicas: 1\n');
    const result = await cli(['migrate', '-s', STACK, '--to', '2026-08'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(readFileSync(join(dir, 'models/embedder/bge-small-en-v1.5-rke2/server-bge-small-rke2/values.yaml'), 'utf8')).toBe(own);
    expect(readFileSync(join(dir, 'models/generative/Qwen3-0.6B-rke2/router-qwen3-06b-rke2/values.yaml'), 'utf8')).toBe('router:\n  epp:\n    replicas: 1\n');
    expect(existsSync(join(dir, 'models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2/values.yaml'))).toBe(true);
    expect(existsSync(join(dir, 'models/embedder/bge-small-en-v1.5-rke2/router-bge-small-rke2'))).toBe(false);
    expect(result.stdout).toContain('bge-small-en-v1.5-rke2 (embedder): models/embedder/bge-small-en-v1.5-rke2 has a server-* folder already: kept as it is\n');
    expect(result.stdout).toContain('Qwen3-0.6B-rke2 (generative): models/generative/Qwen3-0.6B-rke2 has a router-* folder already: kept as it is (only server-qwen3-06b-rke2 is written)\n');
  });

  it('--model moves one model by its own upstream key; the other stays on 2026-02 (and validate still says so, once)', async () => {
    const dir = exampleRepo();
    const result = await cli(['migrate', '-s', STACK, '--to', '2026-08', '--model', 'bge-small-en-v1.5-rke2'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(readFileSync(join(dir, STACK), 'utf8')).toBe(EXAMPLE.replace('      - name: bge-small-en-v1.5-rke2\n', '      - name: bge-small-en-v1.5-rke2\n        upstream: 2026-08\n'));
    expect(existsSync(join(dir, 'models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2'))).toBe(false);
    const validated = await cli(['validate', '-s', STACK, '--json'], { cwd: dir });
    expect((JSON.parse(validated.stdout) as { warnings: { code: string; message: string }[] }).warnings.map((w) => w.code)).toEqual(['warning.upstream-superseded']);
  });

  it('a KServe stack: the key only, and a note that the LLMInferenceService moves to v1alpha2 (KServe v0.20)', async () => {
    const dir = repoWith('kserve', [['generative', 'Qwen2.5-0.5B-Instruct']]);
    const result = await cli(['migrate', '-s', 'apps/app-serving/Pulumi.kserve.yaml', '--to', '2026-08'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('note: KServe: Qwen2.5-0.5B-Instruct moves to v0.20.0 — LLMInferenceService serving.kserve.io/v1alpha2 (no files to write');
    expect(tree(join(dir, 'models'))).toEqual(['generative/Qwen2.5-0.5B-Instruct/kserve-qwen25-05b/values.yaml']);
  });

  it('writes nothing when the migrated stack would not validate (one of two KServe models moved alone: a cluster runs one KServe)', async () => {
    const dir = repoWith('kserve', [['generative', 'Qwen2.5-0.5B-Instruct']]);
    cpSync(join(dir, 'models/generative/Qwen2.5-0.5B-Instruct/kserve-qwen25-05b'), join(dir, 'models/generative/Other/kserve-other'), { recursive: true });
    const file = join(dir, 'apps/app-serving/Pulumi.kserve.yaml');
    const stack = `${readFileSync(file, 'utf8')}      - name: Other\n        enabled: true\n        modelSource:\n          huggingFace:\n            repo: Qwen/Qwen2.5-0.5B-Instruct\n          storageSize: 5Gi\n`;
    writeFileSync(file, stack);
    const result = await cli(['migrate', '-s', 'apps/app-serving/Pulumi.kserve.yaml', '--to', '2026-08', '--model', 'Other'], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error: the migrated stack would not validate, so nothing was written; its problems:');
    expect(result.stdout).toContain('a cluster runs one KServe');
    expect(readFileSync(file, 'utf8')).toBe(stack);
  });

  it('usage errors (exit 2): no --to, --to 2026-02, a model the stack does not have', async () => {
    const dir = exampleRepo();
    expect(await cli(['migrate', '-s', STACK], { cwd: dir })).toMatchObject({ code: 2, stderr: expect.stringContaining('give the set to move to: --to 2026-08') });
    expect(await cli(['migrate', '-s', STACK, '--to', '2026-02'], { cwd: dir })).toMatchObject({ code: 2, stderr: expect.stringContaining('migrate moves a stack to the current set (2026-08)') });
    expect(await cli(['migrate', '-s', STACK, '--to', '2026-09'], { cwd: dir })).toMatchObject({ code: 2, stderr: expect.stringContaining('--to 2026-09: the sets are 2026-02 and 2026-08') });
    expect(await cli(['migrate', '-s', STACK, '--to', '2026-08', '--model', 'Qwen3-0.6B'], { cwd: dir })).toMatchObject({ code: 2, stderr: expect.stringContaining('--model Qwen3-0.6B: no enabled model of apps/app-serving/Pulumi.example.yaml has that name') });
    expect(readFileSync(join(dir, STACK), 'utf8')).toBe(EXAMPLE);
  });
});
