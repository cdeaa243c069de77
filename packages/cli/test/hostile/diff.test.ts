import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectSafe, runCli, tempDir, type OnFinished } from './harness.ts';

/**
 * `diff --base <ref>` on crafted git repositories: refs and file names with quotes and pathspec
 * magic, links out of the repository, a models folder missing at the ref, huge and countless files
 * it does not need, a blobless clone without its promisor, a submodule, a broken TMPDIR and an
 * interrupted run. Every run exits 0, 1 or 2, reads only the stack file and the values files it
 * needs from git's object store, and leaves nothing behind.
 */

const GIT = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();

function git(cwd: string, ...args: string[]): string {
  const result = spawnSync(GIT, ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=main', '-c', 'protocol.file.allow=always', '-c', 'gc.auto=0', '-c', 'maintenance.auto=false', ...args], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout.trim();
}

const STACK = (models: string[] = ['Gen']) =>
  `config:\n  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:\n${models.map((m) => `      - name: ${m}\n        nodeSelector: { workload: gpu }\n`).join('')}`;
const GAIE = 'inferenceExtension:\n  replicas: 1\n';
const ms = (image = 'ghcr.io/llm-d/llm-d-inference-sim:v0.10.2') =>
  `modelArtifacts:\n  name: org/gen\n  uri: hf://org/gen\ndecode:\n  containers:\n    - name: vllm\n      image: ${image}\n      modelCommand: imageDefault\n`;

function write(dir: string, files: Record<string, string | Buffer | null>): void {
  for (const [path, content] of Object.entries(files)) {
    if (content === null) continue;
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** A repository with one commit of `files` (a stack `Pulumi.t.yaml` and the model `Gen` unless given; `null`: leave that file out). */
function repo(onFinished: OnFinished, files: Record<string, string | Buffer | null> = {}, into?: string): string {
  const dir = into ?? join(tempDir(onFinished), 'repo');
  mkdirSync(dir, { recursive: true });
  write(dir, { 'Pulumi.t.yaml': STACK(), 'models/generative/Gen/gaie-gen/values.yaml': GAIE, 'models/generative/Gen/ms-gen/values.yaml': ms(), ...files });
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'one');
  return dir;
}

/** A `git` on the PATH that logs every object requested from `git cat-file` (one line each) before the real git answers. */
function loggingGit(onFinished: OnFinished): { bin: string; log: string } {
  const bin = join(tempDir(onFinished), 'bin');
  const log = join(bin, '..', 'cat-file.log');
  mkdirSync(bin);
  writeFileSync(join(bin, 'git'), `#!/bin/sh\nif [ "$1" = cat-file ]; then tee -a "${log}" | "${GIT}" "$@"; exit $?; fi\nexec "${GIT}" "$@"\n`);
  chmodSync(join(bin, 'git'), 0o755);
  writeFileSync(log, '');
  return { bin, log };
}

const env = (extra: NodeJS.ProcessEnv = {}) => ({ APP_SERVING_CODE_CACHE: 'off', ...extra });

describe.concurrent('diff --base on crafted repositories', { timeout: 600_000 }, () => {
  it('no models folder at the ref: nothing above the temporary folder is read (a models/ planted in TMPDIR stays out)', async ({ onTestFinished }) => {
    const dir = join(tempDir(onTestFinished), 'repo');
    mkdirSync(dir);
    write(dir, { 'Pulumi.t.yaml': STACK() });
    git(dir, 'init', '-q');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'stack only');
    write(dir, { 'models/generative/Gen/gaie-gen/values.yaml': GAIE, 'models/generative/Gen/ms-gen/values.yaml': ms() });
    // Any local user can create /tmp/models: here, a TMPDIR of the test's own.
    const tmp = tempDir(onTestFinished);
    write(tmp, { 'models/generative/Gen/gaie-gen/values.yaml': GAIE, 'models/generative/Gen/ms-gen/values.yaml': ms('evil.example.com/planted:1') });
    for (const args of [[], ['-m', 'models']]) {
      const result = await runCli(['diff', '--base', 'HEAD', '--stack', 'Pulumi.t.yaml', ...args, '--json'], { cwd: dir, env: env({ TMPDIR: tmp }) });
      expectSafe(result, `no models at the ref ${args.join(' ')}`, { codes: [1], secrets: ['planted'] });
      expect(result.stdout).toMatch(/HEAD:models\/generative\/Gen/);
    }
  });

  it('reads exactly the stack and the values files it needs: 20,000 other files and a 300 MB file are never read', async ({ onTestFinished }) => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 20_000; i += 1) many[`models/generative/Other${Math.floor(i / 100)}/notes-${i}.txt`] = `${i}\n`;
    const dir = repo(onTestFinished, { ...many, 'models/generative/Gen/weights.bin': Buffer.alloc(300 * 1024 * 1024) });
    write(dir, { 'models/generative/Gen/gaie-gen/values.yaml': 'inferenceExtension:\n  replicas: 2\n' });
    const { bin, log } = loggingGit(onTestFinished);
    const result = await runCli(['diff', '--base', 'HEAD', '--stack', 'Pulumi.t.yaml', '--json'], { cwd: dir, env: env({ PATH: `${bin}:${process.env.PATH}` }) });
    // Rendering loads Pulumi: about 200 MB of its own; the 300 MB file must not add to it.
    expectSafe(result, 'many files', { codes: [0], maxPeakBytes: 400 * 1024 * 1024 });
    expect(JSON.parse(result.stdout).summary.update).toBe(1);
    const requested = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    expect(requested.length, 'objects requested from git cat-file').toBeLessThan(60);
  });

  it('a relative link to a shared values folder is followed as validate follows it', async ({ onTestFinished }) => {
    const dir = join(tempDir(onTestFinished), 'repo');
    mkdirSync(dir);
    write(dir, { 'shared/ms-gen/values.yaml': ms() });
    mkdirSync(join(dir, 'models/generative/Gen'), { recursive: true });
    symlinkSync('../../../shared/ms-gen', join(dir, 'models/generative/Gen/ms-gen'));
    repo(onTestFinished, { 'models/generative/Gen/ms-gen/values.yaml': null }, dir);
    expectSafe(await runCli(['validate', '--stack', 'Pulumi.t.yaml'], { cwd: dir, env: env() }), 'validate', { codes: [0] });
    const same = await runCli(['diff', '--base', 'HEAD', '--head', 'HEAD', '--stack', 'Pulumi.t.yaml', '--json'], { cwd: dir, env: env() });
    expectSafe(same, 'diff of a ref with itself', { codes: [0] });
    expect(JSON.parse(same.stdout).changed).toBe(false);
    write(dir, { 'shared/ms-gen/values.yaml': ms('ghcr.io/llm-d/llm-d-inference-sim:v0.10.3') });
    const changed = await runCli(['diff', '--base', 'HEAD', '--stack', 'Pulumi.t.yaml', '--json'], { cwd: dir, env: env() });
    expectSafe(changed, 'a change in the shared folder', { codes: [0] });
    expect(JSON.parse(changed.stdout).models[0].images.changed).toHaveLength(1);
  });

  it('links out of the repository, or to an absolute path, are never followed: the host file stays out of the PR comment', async ({ onTestFinished }) => {
    const root = tempDir(onTestFinished);
    const secret = join(root, 'host-secret.yaml');
    writeFileSync(secret, 'inferenceExtension:\n  replicas: 1\nleaked: HOST-FILE-CONTENT\n');
    for (const target of [secret, '../../../../../host-secret.yaml']) {
      const dir = join(root, `repo-${target.startsWith('/') ? 'absolute' : 'relative'}`);
      mkdirSync(join(dir, 'models/generative/Gen/gaie-gen'), { recursive: true });
      symlinkSync(target, join(dir, 'models/generative/Gen/gaie-gen/values.yaml'));
      repo(onTestFinished, { 'models/generative/Gen/gaie-gen/values.yaml': null }, dir);
      // The working tree's file is a plain one: the ref's link is what would leak.
      unlinkSync(join(dir, 'models/generative/Gen/gaie-gen/values.yaml'));
      writeFileSync(join(dir, 'models/generative/Gen/gaie-gen/values.yaml'), GAIE);
      const result = await runCli(['diff', '--base', 'HEAD', '--stack', 'Pulumi.t.yaml', '--format', 'markdown'], { cwd: dir, env: env() });
      expectSafe(result, target, { codes: [1], secrets: ['HOST-FILE-CONTENT'] });
      expect(result.stdout).toMatch(/HEAD:models\/generative\/Gen\/gaie-gen\/values\.yaml: .*symbolic link (to an absolute path|out of the repository)/);
    }
  });

  it('a link loop and a link to a missing file at the ref: problems, bounded', async ({ onTestFinished }) => {
    const dir = join(tempDir(onTestFinished), 'repo');
    mkdirSync(join(dir, 'models/generative/Gen'), { recursive: true });
    symlinkSync('gaie-gen', join(dir, 'models/generative/Gen/gaie-x'));
    symlinkSync('gaie-x', join(dir, 'models/generative/Gen/gaie-gen'));
    symlinkSync('nowhere/values.yaml', join(dir, 'models/generative/Gen/ms-gen'));
    repo(onTestFinished, { 'models/generative/Gen/gaie-gen/values.yaml': null, 'models/generative/Gen/ms-gen/values.yaml': null }, dir);
    const result = await runCli(['diff', '--base', 'HEAD', '--head', 'HEAD', '--stack', 'Pulumi.t.yaml'], { cwd: dir, env: env() });
    expectSafe(result, 'link loop', { codes: [1] });
  });

  for (const ref of ['fe"at', "it's", 'a\\b', 'x$(touch pwned)', 'emoji-✓', 'semi;colon']) {
    it(`a branch named ${JSON.stringify(ref)}: no internal error; an unknown one gets a quoted fetch hint`, async ({ onTestFinished }) => {
      const dir = repo(onTestFinished);
      const valid = spawnSync(GIT, ['check-ref-format', '--branch', ref], { cwd: dir }).status === 0;
      if (valid) {
        git(dir, 'branch', ref);
        write(dir, { 'models/generative/Gen/gaie-gen/values.yaml': 'inferenceExtension:\n  replicas: 3\n' });
        const result = await runCli(['diff', '--base', ref, '--stack', 'Pulumi.t.yaml', '--json'], { cwd: dir, env: env() });
        expectSafe(result, ref, { codes: [0] });
        expect(JSON.parse(result.stdout).base.ref).toBe(ref);
      }
      const unknown = `no-such/${ref}`;
      const missing = await runCli(['diff', '--base', unknown, '--stack', 'Pulumi.t.yaml'], { cwd: dir, env: env() });
      expectSafe(missing, unknown, { codes: [2] });
      const hint = /`(git fetch [^`]*)`/.exec(missing.stderr.replace(/\\x1b\[[0-9;]*m/g, ''))?.[1];
      expect(hint, missing.stderr).toBeDefined();
      // Pasted into a shell, the hint passes the ref as one argument and runs nothing else.
      const words = spawnSync('sh', ['-c', hint!.replace(/^git /, 'printf "%s\\n" ')], { cwd: dir, encoding: 'utf8' });
      expect(words.stdout.split('\n').slice(0, -1)).toEqual(['fetch', 'origin', unknown]);
      expect(existsSync(join(dir, 'pwned'))).toBe(false);
    });
  }

  for (const name of [':(glob)Pulumi.t.yaml', ':!Pulumi.t.yaml', 'Pulumi.[t].yaml', ':(attr:x)P.yaml']) {
    it(`a stack file named ${JSON.stringify(name)}: read literally, no pathspec magic`, async ({ onTestFinished }) => {
      const dir = repo(onTestFinished, { [name]: STACK() });
      write(dir, { 'models/generative/Gen/gaie-gen/values.yaml': 'inferenceExtension:\n  replicas: 2\n' });
      const result = await runCli(['diff', '--base', 'HEAD', '--stack', name, '--json'], { cwd: dir, env: env() });
      expectSafe(result, name, { codes: [0] });
      const json = JSON.parse(result.stdout);
      expect([json.base.exists, json.summary.update]).toEqual([true, 1]);
    });
  }

  it('a blobless clone whose promisor is gone: a usage error that says to fetch, not an internal error', async ({ onTestFinished }) => {
    const origin = repo(onTestFinished);
    git(origin, 'config', 'uploadpack.allowFilter', 'true');
    const clone = join(tempDir(onTestFinished), 'clone');
    git(dirname(clone), 'clone', '-q', '--no-checkout', '--filter=blob:none', `file://${origin}`, clone);
    git(clone, 'remote', 'set-url', 'origin', join(dirname(clone), 'gone'));
    write(clone, { 'Pulumi.t.yaml': STACK(), 'models/generative/Gen/gaie-gen/values.yaml': GAIE, 'models/generative/Gen/ms-gen/values.yaml': ms() });
    const result = await runCli(['diff', '--base', 'origin/main', '--stack', 'Pulumi.t.yaml'], { cwd: clone, env: env() });
    expectSafe(result, 'blobless', { codes: [2] });
    expect(result.stderr).toMatch(/--base origin\/main: .*(not in the repository|lack objects).*fetch/);
  });

  it('a stack inside a submodule, diffed from the superproject: read at the commit the superproject records', async ({ onTestFinished }) => {
    const root = tempDir(onTestFinished);
    const sub = repo(onTestFinished, {}, join(root, 'sub-origin'));
    const top = join(root, 'top');
    mkdirSync(top);
    writeFileSync(join(top, 'README'), 'top\n');
    git(top, 'init', '-q');
    git(top, 'submodule', 'add', '-q', sub, 'sub');
    git(top, 'add', '-A');
    git(top, 'commit', '-q', '-m', 'with submodule');
    write(top, { 'sub/models/generative/Gen/gaie-gen/values.yaml': 'inferenceExtension:\n  replicas: 4\n' });
    const result = await runCli(['diff', '--base', 'HEAD', '--stack', 'sub/Pulumi.t.yaml', '--json'], { cwd: top, env: env() });
    expectSafe(result, 'submodule', { codes: [0] });
    const json = JSON.parse(result.stdout);
    expect([json.base.exists, json.summary.create, json.summary.update]).toEqual([true, 0, 1]);
  });

  it('TMPDIR missing, a file, or read-only: diff and render exit 2 naming TMPDIR', async ({ onTestFinished }) => {
    const dir = repo(onTestFinished);
    const scratch = tempDir(onTestFinished);
    writeFileSync(join(scratch, 'file'), '');
    mkdirSync(join(scratch, 'ro'), { mode: 0o500 });
    const places = [join(scratch, 'missing'), join(scratch, 'file'), ...(process.getuid?.() === 0 ? [] : [join(scratch, 'ro')])];
    for (const tmp of places) {
      for (const args of [['diff', '--base', 'HEAD', '--stack', 'Pulumi.t.yaml'], ['render', '--stack', 'Pulumi.t.yaml']]) {
        const result = await runCli(args, { cwd: dir, env: env({ TMPDIR: tmp }) });
        expectSafe(result, `${args[0]} TMPDIR=${tmp}`, { codes: [2] });
        expect(result.stderr).toMatch(/TMPDIR/);
      }
    }
  });

  it('a full TMPDIR (writes fail part-way): exit 2, nothing left behind', async ({ onTestFinished }) => {
    const big = `inferenceExtension:\n  replicas: 1\n${'# padding\n'.repeat(500)}`;
    const dir = repo(onTestFinished, { 'models/generative/Gen/gaie-gen/values.yaml': big });
    const tmp = tempDir(onTestFinished);
    const result = await runCli(['diff', '--base', 'HEAD', '--stack', 'Pulumi.t.yaml'], { cwd: dir, env: env({ TMPDIR: tmp }), fileSizeLimitBlocks: 4 });
    expectSafe(result, 'full TMPDIR', { codes: [2] });
    expect(result.stderr).toMatch(/no space left/);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('interrupted (SIGTERM) while reading the ref: the temporary folder is removed', async ({ onTestFinished }) => {
    const dir = repo(onTestFinished);
    const bin = join(tempDir(onTestFinished), 'bin');
    mkdirSync(bin);
    // A git that hangs when asked for objects (the temporary folder exists by then), and says so in a file.
    const marker = join(bin, '..', 'asked');
    writeFileSync(join(bin, 'git'), `#!/bin/sh\ncase "$1" in cat-file|ls-tree) : > "${marker}"; exec sleep 600;; esac\nexec "${GIT}" "$@"\n`);
    chmodSync(join(bin, 'git'), 0o755);
    const tmp = tempDir(onTestFinished);
    const result = await runCli(['diff', '--base', 'HEAD', '--stack', 'Pulumi.t.yaml'], {
      cwd: dir,
      env: env({ TMPDIR: tmp, PATH: `${bin}:${process.env.PATH}` }),
      interrupt: { signal: 'SIGTERM', whenFile: marker },
      killAfterMs: 60_000,
    });
    expect(result.signal ?? result.code, result.stderr).toBe('SIGTERM');
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('TMPDIR inside the working directory: problems name <ref>:<file>, never the temporary path', async ({ onTestFinished }) => {
    const dir = repo(onTestFinished, { 'models/generative/Gen/gaie-gen/values.yaml': 'inferenceExtension: [\n' });
    mkdirSync(join(dir, 'tmp'));
    const result = await runCli(['diff', '--base', 'HEAD', '--stack', 'Pulumi.t.yaml'], { cwd: dir, env: env({ TMPDIR: join(dir, 'tmp') }) });
    expectSafe(result, 'TMPDIR in cwd', { codes: [1] });
    expect(result.stdout).toMatch(/^HEAD:models\/generative\/Gen\/gaie-gen\/values\.yaml:\d+: /m);
    expect(result.stdout + result.stderr).not.toMatch(/app-serving-diff-/);
  });
});

