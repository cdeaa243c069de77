import { chmodSync, chownSync, cpSync, existsSync, linkSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_ROOT, REPO_ROOT, RUNS_AS_NOBODY, cli, collect, fixtureRepo } from '../test/run-cli.ts';

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
    // Not silently: the router values its own server folder keeps it from writing are named.
    expect(result.stdout).toContain(
      'bge-small-en-v1.5-rke2 (embedder): models/embedder/bge-small-en-v1.5-rke2 has a server-* folder already: kept as it is; no router-bge-small-rke2/ is written either: the conversion of its gaie-bge-small-rke2 values would set router.epp.image — add what you need\n',
    );
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

  it('a stack file that is a symbolic link: the link stays, its target is replaced (mode kept), nothing is written through the link (M1)', async () => {
    const dir = exampleRepo();
    mkdirSync(join(dir, 'config-repo'));
    renameSync(join(dir, STACK), join(dir, 'config-repo/Pulumi.example.yaml'));
    chmodSync(join(dir, 'config-repo/Pulumi.example.yaml'), 0o640);
    symlinkSync('../../config-repo/Pulumi.example.yaml', join(dir, STACK));
    const before = statSync(join(dir, 'config-repo/Pulumi.example.yaml')).ino;
    const result = await cli(['migrate', '--stack', STACK, '--to', '2026-08'], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`${STACK} (a link: its target config-repo/Pulumi.example.yaml is replaced):\n`);
    expect(lstatSync(join(dir, STACK)).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(dir, STACK))).toBe('../../config-repo/Pulumi.example.yaml');
    expect(readFileSync(join(dir, 'config-repo/Pulumi.example.yaml'), 'utf8')).toBe(EXAMPLE.replace('config:\n', `config:\n${UPSTREAM_LINES}`));
    // Replaced by a rename (a new file), never rewritten in place: a stop can never leave it cut.
    expect(statSync(join(dir, 'config-repo/Pulumi.example.yaml')).ino).not.toBe(before);
    expect(statSync(join(dir, 'config-repo/Pulumi.example.yaml')).mode & 0o777).toBe(0o640);
    expect(readdirSync(join(dir, 'config-repo'))).toEqual(['Pulumi.example.yaml']);
    expect(readdirSync(join(dir, 'apps/app-serving'))).toEqual(['Pulumi.example.yaml']);
  });

  it.skipIf(process.getuid?.() !== 0)('as root: the stack file keeps its owner, group and mode (m9)', async () => {
    const dir = exampleRepo();
    chownSync(join(dir, STACK), 65534, 65534);
    chmodSync(join(dir, STACK), 0o640);
    chownSync(join(dir, 'models/generative/Qwen3-0.6B-rke2'), 65534, 65534);
    expect((await cli(['migrate', '--stack', STACK, '--to', '2026-08'], { cwd: dir })).code).toBe(0);
    const stat = statSync(join(dir, STACK));
    expect([stat.uid, stat.gid, stat.mode & 0o7777]).toEqual([65534, 65534, 0o640]);
    // The new folders in a model folder that is another user's are that user's, as the folder is.
    const server = statSync(join(dir, 'models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2/values.yaml'));
    expect([server.uid, server.gid]).toEqual([65534, 65534]);
    expect(statSync(join(dir, 'models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2')).uid).toBe(65534);
    expect(statSync(join(dir, 'models/embedder/bge-small-en-v1.5-rke2/server-bge-small-rke2/values.yaml')).uid).toBe(0);
  });

  it.skipIf(!RUNS_AS_NOBODY)('run by another user than the stack file’s owner: refused before anything is written (the new file would change owner) (m9)', async () => {
    const dir = exampleRepo();
    chmodSync(dir, 0o755);
    for (const d of ['apps', 'apps/app-serving']) chmodSync(join(dir, d), 0o777);
    for (const d of ['models/generative/Qwen3-0.6B-rke2', 'models/embedder/bge-small-en-v1.5-rke2']) chmodSync(join(dir, d), 0o777);
    chmodSync(join(dir, STACK), 0o666);
    const result = await collect('runuser', ['-u', 'nobody', '--', process.execPath, join(CLI_ROOT, 'bin/app-serving.js'), 'migrate', '--stack', STACK, '--to', '2026-08'], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir, APP_SERVING_CODE_CACHE: 'off' },
    });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`error: ${STACK} belongs to user 0: migrate replaces the file, and the new one would be yours; run it as that user (or as root, which keeps the owner)`);
    expect(readFileSync(join(dir, STACK), 'utf8')).toBe(EXAMPLE);
    expect(existsSync(join(dir, 'models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2'))).toBe(false);
  });

  it('a stack file with other hard links: refused before anything is written, saying why and what to do (m9)', async () => {
    const dir = exampleRepo();
    linkSync(join(dir, STACK), join(dir, 'Pulumi.example.yaml.link'));
    const result = await cli(['migrate', '--stack', STACK, '--to', '2026-08'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: ${STACK} has 2 hard links: migrate replaces the file (the new text renamed over it, so that a stop never leaves it cut), and the other names would keep the old text; remove the other links (or make them symbolic links) and run it again`);
    expect(readFileSync(join(dir, STACK), 'utf8')).toBe(EXAMPLE);
    expect(existsSync(join(dir, 'models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2'))).toBe(false);
  });

  it('the temporary file an earlier version left when it was stopped never blocks a run: removed, and said (m8)', async () => {
    const dir = exampleRepo();
    writeFileSync(join(dir, 'apps/app-serving/.Pulumi.example.yaml.app-serving-migrate'), '');
    const result = await cli(['migrate', '--stack', STACK, '--to', '2026-08'], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('note: apps/app-serving/.Pulumi.example.yaml.app-serving-migrate, the temporary file of an earlier version\'s interrupted migrate (never put in place), was removed\n');
    expect(readdirSync(join(dir, 'apps/app-serving'))).toEqual(['Pulumi.example.yaml']);
    expect(readFileSync(join(dir, STACK), 'utf8')).toBe(EXAMPLE.replace('config:\n', `config:\n${UPSTREAM_LINES}`));
  });

  it('bytes that are not UTF-8: refused at the file and line, nothing written (m10)', async () => {
    const dir = exampleRepo();
    const at = EXAMPLE.indexOf('config:\n') + 'config:\n'.length;
    writeFileSync(join(dir, STACK), Buffer.concat([Buffer.from(EXAMPLE.slice(0, at)), Buffer.from('  # caf'), Buffer.from([0xe9]), Buffer.from(' (Latin-1)\n'), Buffer.from(EXAMPLE.slice(at))]));
    const before = readFileSync(join(dir, STACK));
    const line = EXAMPLE.slice(0, at).split('\n').length;
    const result = await cli(['migrate', '--stack', STACK, '--to', '2026-08'], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`${STACK}: the stack file is not UTF-8 text: line ${line} holds the byte 0xe9, which UTF-8 does not allow there (Latin-1 or Windows-1252 text?): save it as UTF-8\n`);
    expect(readFileSync(join(dir, STACK)).equals(before)).toBe(true);
    expect(existsSync(join(dir, 'models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2'))).toBe(false);
    expect((await cli(['validate', '--stack', STACK], { cwd: dir })).code).toBe(1);
  });

  it('every byte of the lines it does not change is kept: a byte order mark, mixed LF and CR LF, tabs, non-ASCII; quotes kept on the value it sets (m11)', async () => {
    const dir = exampleRepo();
    const lines = EXAMPLE.split('\n');
    // A quoted upstream key, a comment with a tab and non-ASCII text, CR LF on some lines only.
    lines.splice(lines.indexOf('config:') + 1, 0, '  # café ✓\tnaïve', '  app-serving:upstream: "2026-02"  # pinned');
    const text = lines.map((l, i) => (i % 3 === 0 && i < lines.length - 1 ? `${l}\r` : l)).join('\n');
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    writeFileSync(join(dir, STACK), bytes);
    const result = await cli(['migrate', '--stack', STACK, '--to', '2026-08'], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    const after = readFileSync(join(dir, STACK));
    expect(after.equals(Buffer.from(bytes.toString('latin1').replace('"2026-02"', '"2026-08"'), 'latin1'))).toBe(true);
  });

  it('what an earlier version left when it was stopped between a model\'s two folders: a server folder as migrate writes it is finished with its router folder; an empty folder is refused, naming it', async () => {
    const clean = exampleRepo();
    expect((await cli(['migrate', '--stack', STACK, '--to', '2026-08'], { cwd: clean })).code).toBe(0);
    const dir = exampleRepo();
    // M2 repro 1: killed after the server folder of the first model was written.
    cpSync(join(clean, 'models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2'), join(dir, 'models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2'), { recursive: true });
    const result = await cli(['migrate', '--stack', STACK, '--to', '2026-08'], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Qwen3-0.6B-rke2 (generative): models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2 holds what migrate writes (an interrupted run left it): kept, and router-qwen3-06b-rke2 is written\n');
    for (const path of tree(join(clean, 'models'))) expect(readFileSync(join(dir, 'models', path), 'utf8'), path).toBe(readFileSync(join(clean, 'models', path), 'utf8'));
    expect(tree(join(dir, 'models'))).toEqual(tree(join(clean, 'models')));
    expect(readFileSync(join(dir, STACK), 'utf8')).toBe(readFileSync(join(clean, STACK), 'utf8'));

    // M2 repro 2: an empty router folder.
    const empty = exampleRepo();
    mkdirSync(join(empty, 'models/generative/Qwen3-0.6B-rke2/router-qwen3-06b-rke2'));
    const refused = await cli(['migrate', '--stack', STACK, '--to', '2026-08'], { cwd: empty });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('models/generative/Qwen3-0.6B-rke2/router-qwen3-06b-rke2 has no values.yaml (an empty folder: an interrupted migrate of an earlier version left such folders): remove it, or write its values, and run migrate again');
    expect(readFileSync(join(empty, STACK), 'utf8')).toBe(EXAMPLE);
    rmSync(join(empty, 'models/generative/Qwen3-0.6B-rke2/router-qwen3-06b-rke2'), { recursive: true });
    expect((await cli(['migrate', '--stack', STACK, '--to', '2026-08'], { cwd: empty })).code).toBe(0);
  });

  it('a stage another run left: --dry-run says so and touches nothing; a run undoes it, says so, then migrates', async () => {
    const dir = exampleRepo();
    // As a run stopped in its staging step leaves it (src/transaction.ts): H with its journal, a stage folder.
    const home = join(dir, 'apps/app-serving/.app-serving-migrate-Pulumi.example.yaml');
    const stage = join(dir, 'models/generative/Qwen3-0.6B-rke2/.app-serving-migrate-0123456789ab');
    mkdirSync(join(stage, 'server-qwen3-06b-rke2'), { recursive: true });
    writeFileSync(join(stage, 'server-qwen3-06b-rke2/values.yaml'), 'image: half');
    mkdirSync(home);
    const journal = {
      tool: 'app-serving migrate',
      version: 1,
      id: '0123456789ab',
      pid: 999999,
      host: (await import('node:os')).hostname(),
      processStart: null,
      started: '2026-12-01T10:00:00.000Z',
      file: { path: join(dir, STACK), before: '0'.repeat(64), after: '1'.repeat(64) },
      folders: [{ parent: join(dir, 'models/generative/Qwen3-0.6B-rke2'), name: 'server-qwen3-06b-rke2', files: { 'values.yaml': '2'.repeat(64) } }],
    };
    writeFileSync(join(home, 'prepared.json'), JSON.stringify(journal));
    const dry = await cli(['migrate', '--stack', STACK, '--to', '2026-08', '--dry-run'], { cwd: dir });
    expect(dry.code).toBe(0);
    expect(dry.stderr).toContain('note: an interrupted app-serving migrate (pid 999999, started 2026-12-01T10:00:00.000Z) left apps/app-serving/.app-serving-migrate-Pulumi.example.yaml: it had not reached its commit point; to be undone by the next run without --dry-run');
    expect(existsSync(stage)).toBe(true);
    const result = await cli(['migrate', '--stack', STACK, '--to', '2026-08', '--json'], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('it had not reached its commit point; undone — the stack file and model folders are as they were before it');
    expect(JSON.parse(result.stdout)).toMatchObject({ recovered: [{ kind: 'rolled-back', stage: 'apps/app-serving/.app-serving-migrate-Pulumi.example.yaml', pid: 999999, folders: [], dryRun: false }] });
    expect(existsSync(stage)).toBe(false);
    expect(existsSync(home)).toBe(false);
    expect(readFileSync(join(dir, 'models/generative/Qwen3-0.6B-rke2/server-qwen3-06b-rke2/values.yaml'), 'utf8')).toContain('# The model server of Qwen3-0.6B-rke2');
  });

  it('a run that is still at work (its journal names a live process): refused, nothing touched', async () => {
    const dir = exampleRepo();
    const home = join(dir, 'apps/app-serving/.app-serving-migrate-Pulumi.example.yaml');
    mkdirSync(home);
    const journal = { tool: 'app-serving migrate', version: 1, id: '0123456789ab', pid: process.pid, host: (await import('node:os')).hostname(), processStart: null, started: '2026-12-01T10:00:00.000Z', file: { path: join(dir, STACK), before: '0'.repeat(64), after: '1'.repeat(64) }, folders: [] };
    writeFileSync(join(home, 'prepared.json'), JSON.stringify(journal));
    const result = await cli(['migrate', '--stack', STACK, '--to', '2026-08'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: another app-serving migrate of ${STACK} is running (pid ${process.pid}, started 2026-12-01T10:00:00.000Z): wait for it\n`);
    expect(readdirSync(home)).toEqual(['prepared.json']);
    expect(readFileSync(join(dir, STACK), 'utf8')).toBe(EXAMPLE);
  });
});
