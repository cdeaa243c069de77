import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAiServer } from './openai-server.ts';
import { collect, REPO_ROOT, type CliResult } from './run-cli.ts';
import { userDocs } from './docs-files.ts';

/**
 * The documentation, run as a user would follow it: every command of the `sh` blocks of the
 * README's tour and of docs/cli.md (and docs/verify.md, docs/upgrading.md) that needs no cluster is run exactly as
 * written, from the root of a scratch copy of the repository (so that `new-model` writes there),
 * with the built CLI; its exit code is checked, and so is every output sample the docs quote —
 * a `"…"` in a command's comment, and every block that starts with `$ <command>` followed by what
 * it prints. Docs and CLI cannot drift apart without this test failing.
 */

// docs/upgrading.md last: its walk-through moves the scratch copy's example stack to 2026-08.
const DOCS = ['README.md', 'docs/cli.md', 'docs/verify.md', 'docs/upgrading.md'];

/** Commands not run here, by design, each with the reason. Every entry must still be in the docs. */
const SKIPPED: Readonly<Record<string, string>> = {
  'npm ci && npm run example': 'installs and builds the whole repository: it is what runs before `npm test`, which runs this test',
  'npm test': 'runs the test suite this test is part of',
  'npx app-serving verify --stack apps/app-serving/Pulumi.<stack>.yaml --wait 10m': 'needs a deployed stack on a cluster',
  'npx app-serving preflight --stack apps/app-serving/Pulumi.<stack>.yaml': 'needs a cluster (test/preflight.test.ts runs preflight against the test control plane)',
  'app-serving verify --stack apps/app-serving/Pulumi.prod.yaml --wait 10m': 'needs a deployed stack on a cluster (the same run against a local server is the sample below it)',
  'app-serving preflight --stack apps/app-serving/Pulumi.example.yaml': 'needs a cluster (test/preflight.test.ts runs preflight against the test control plane)',
  'cd apps/app-serving && pulumi up --stack example': 'needs the Pulumi CLI and a cluster (apps/app-serving/test/deploy runs pulumi up against the test control plane)',
  'app-serving verify --stack apps/app-serving/Pulumi.example.yaml --wait 10m': 'needs a deployed stack on a cluster',
};

/** Exit codes other than 0 that the docs promise. */
const EXIT_CODES: Readonly<Record<string, number>> = {
  'app-serving validate --stack apps/app-serving/Pulumi.prod.yaml': 1,
};

/**
 * Files a sample needs that the repository does not have, written into the scratch copy: the
 * broken stack the validate sample of docs/cli.md describes (a schema error in one entry, a values
 * problem in another model's folder).
 */
const FIXTURES: Readonly<Record<string, string>> = {
  'apps/app-serving/Pulumi.prod.yaml': [
    'config:',
    '  app-serving:cloudProvider: cloud',
    '  app-serving:models:',
    '    generative:',
    '      - name: Qwen3-14B',
    '        nodeSelector: { workload: gpu }',
    '      - name: Qwen3-32B',
    '        nodeSelector: { workload: gpu }',
    '        modelSource:',
    '          harborRef: harbor.example.com/ai-models/qwen3-32b:2025-05',
    '          modelUri: hub/Qwen/Qwen3-32B',
    '          storageSize: 40 GB',
    '',
  ].join('\n'),
  'models/generative/Qwen3-14B/gaie-qwen3-14b/values.yaml': 'inferenceExtension:\n  replicas: 1\n',
  'models/generative/Qwen3-14B/ms-qwen3-14b/values.yaml': 'modelArtifacts:\n  name: Qwen/Qwen3-14B\n  uri: hf://Qwen/Qwen3-14B\n  labels:\n    llm-d.ai/model: qwen\n',
};

/** The base URL the verify sample of docs/verify.md shows; the test serves it on a free port instead. */
const SAMPLE_BASE_URL = 'http://127.0.0.1:18555';

interface Command {
  readonly file: string;
  readonly line: number;
  /** The command as written (continuation lines joined), without its trailing comment. */
  readonly command: string;
  /** Output samples quoted in the comment (`"ok … 2 models"`), `…` standing for anything. */
  readonly quoted: readonly string[];
  /** For a `$ <command>` block: what it prints. */
  readonly output?: string;
}

/** Every command of the fenced `sh` blocks and every `$ <command>` block of a Markdown file. */
function commandsOf(file: string): Command[] {
  const lines = readFileSync(join(REPO_ROOT, file), 'utf8').split('\n');
  const commands: Command[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const fence = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!fence) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end += 1;
    const body = lines.slice(start, end);
    i = end;
    if (fence[1] === '' && body[0]?.startsWith('$ ')) {
      commands.push({ file, line: start + 1, command: body[0].slice(2), quoted: [], output: `${body.slice(1).join('\n')}\n` });
      continue;
    }
    if (fence[1] !== 'sh') continue;
    for (let j = 0; j < body.length; j += 1) {
      const first = j;
      let text = body[j]!;
      while (text.endsWith('\\') && j + 1 < body.length) text = `${text.slice(0, -1)} ${body[++j]!.trim()}`;
      const { command, comment } = splitComment(text);
      if (!command) continue;
      commands.push({ file, line: start + first + 1, command: command.replace(/\s+/g, ' '), quoted: [...comment.matchAll(/"([^"]+)"/g)].map((m) => m[1]!) });
    }
  }
  return commands;
}

/** `cmd args   # comment` → the command and the comment (a `#` outside quotes, after a space). */
function splitComment(text: string): { command: string; comment: string } {
  let quote: string | null = null;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) return { command: text.slice(0, i).trim(), comment: text.slice(i + 1) };
  }
  return { command: text.trim(), comment: '' };
}

let scratch: string;
let baseUrl: string;

beforeAll(() => {
  // A scratch copy of what the commands read: the stacks, the models, and the installed
  // node_modules (linked), so that `npx app-serving` finds the built CLI as in the repository.
  scratch = mkdtempSync(join(tmpdir(), 'app-serving-docs-'));
  cpSync(join(REPO_ROOT, 'models'), join(scratch, 'models'), { recursive: true });
  mkdirSync(join(scratch, 'apps/app-serving'), { recursive: true });
  for (const name of readdirSync(join(REPO_ROOT, 'apps/app-serving')).filter((f) => /^Pulumi\..*\.yaml$/.test(f))) {
    cpSync(join(REPO_ROOT, 'apps/app-serving', name), join(scratch, 'apps/app-serving', name));
  }
  writeFileSync(join(scratch, 'package.json'), '{ "name": "app-serving-docs-test", "private": true }\n');
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(scratch, 'node_modules'), 'dir');
  for (const [path, text] of Object.entries(FIXTURES)) {
    mkdirSync(dirname(join(scratch, path)), { recursive: true });
    writeFileSync(join(scratch, path), text);
  }
  // `less` behaves as `cat` when its output is not a terminal; where it is not installed, a stand-in does that.
  mkdirSync(join(scratch, '.bin'));
  writeFileSync(join(scratch, '.bin', 'less-fallback'), '#!/bin/sh\nexec cat "$@"\n');
  chmodSync(join(scratch, '.bin', 'less-fallback'), 0o755);
  // A git history, as a checkout has, for `diff --base HEAD~1`: the copy, then a commit on top.
  writeFileSync(join(scratch, '.gitignore'), 'node_modules\n.bin\n');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=docs-test', '-c', 'user.email=docs-test@example.com', ...args], { cwd: scratch, stdio: 'ignore' });
  // On `main`, as the walk-through of docs/upgrading.md has it (`diff --base main` once its change is committed on a branch).
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  git('commit', '-q', '--allow-empty', '-m', 'head');
});

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

function run(command: string): Promise<CliResult> {
  const shim = join(scratch, '.bin');
  const script = `command -v less >/dev/null 2>&1 || less() { "${shim}/less-fallback" "$@"; }\n${command}`;
  return collect('bash', ['-o', 'pipefail', '-c', script], {
    cwd: scratch,
    env: {
      PATH: [join(scratch, 'node_modules', '.bin'), process.env.PATH ?? ''].join(delimiter),
      HOME: process.env.HOME,
      // The docs' `git commit` needs an identity; the user's own is not the test's business.
      GIT_AUTHOR_NAME: 'docs-test',
      GIT_AUTHOR_EMAIL: 'docs-test@example.com',
      GIT_COMMITTER_NAME: 'docs-test',
      GIT_COMMITTER_EMAIL: 'docs-test@example.com',
      NO_COLOR: '1',
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
    },
  });
}

/** Timings and column widths vary from run to run; the words do not. */
function normalise(text: string): string {
  return text
    .split(baseUrl)
    .join(SAMPLE_BASE_URL)
    // A duration is a duration: a check that took 1.4 s on a loaded machine prints seconds.
    .replace(/\b\d+(\.\d+)? m?s\b/g, 'N ms')
    .replace(/[ \t]+/g, ' ')
    .replace(/ +\n/g, '\n')
    .trimEnd();
}

const all = DOCS.flatMap(commandsOf);

describe('the documentation, followed word by word', () => {
  it('compares outputs without their timings, in ms or s (a loaded machine takes seconds)', () => {
    expect(normalise('models  PASS  1.4 s  serves "random"\n(2 models, 1.6 s)')).toBe(normalise('models PASS 299 ms serves "random"\n(2 models, 12 ms)'));
  });

  it('lists commands to run, and every skipped-by-design command is still in the docs', () => {
    expect(all.length).toBeGreaterThan(6);
    const written = new Set(all.map((c) => c.command));
    for (const skipped of Object.keys(SKIPPED)) expect(written, `SKIPPED lists "${skipped}", which no document shows any more`).toContain(skipped);
  });

  // Shown in the report as skipped, with the reason: not run here by design.
  it.skip.each(all.filter((c) => c.command in SKIPPED).map((c) => [`${c.file}:${c.line}`, c.command, SKIPPED[c.command]!] as const))(
    '%s `%s` is not run: %s',
    () => undefined,
  );

  it("the README's stack example validates, with no warning (its Harbor is the -rke2 values' Harbor)", { timeout: 600_000 }, async () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const example = /```yaml\n(config:\n[\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    writeFileSync(join(scratch, 'apps/app-serving/Pulumi.readme.yaml'), example!);
    const result = await run('app-serving validate --stack apps/app-serving/Pulumi.readme.yaml --json');
    expect(JSON.parse(result.stdout)).toEqual({ ok: true, stack: 'apps/app-serving/Pulumi.readme.yaml', models: ['Qwen3-0.6B-rke2'], issues: [], warnings: [] });
  });

  it("the stack template's trap: a block uncommented after `pulumi config set` moved it to the margin is reported with its line", { timeout: 600_000 }, async () => {
    // What Pulumi leaves of the template after `pulumi config set`: its comment lines at the margin.
    const rewritten = readFileSync(join(REPO_ROOT, 'apps/app-serving/Pulumi.TEMPLATE.yaml'), 'utf8')
      .split('\n')
      .map((line) => (line.trimStart().startsWith('#') ? line.trimStart() : line));
    // Then the user uncomments the charts block, as the template invites.
    const start = rewritten.indexOf('# app-serving:charts:');
    expect(start).toBeGreaterThan(0);
    let end = start;
    while (end < rewritten.length && rewritten[end]!.startsWith('#')) end += 1;
    const stack = [...rewritten.slice(0, start), ...rewritten.slice(start, end).map((line) => line.replace(/^# ?/, '')), ...rewritten.slice(end)];
    writeFileSync(join(scratch, 'apps/app-serving/Pulumi.trap.yaml'), stack.join('\n'));
    const result = await run('app-serving validate --stack apps/app-serving/Pulumi.trap.yaml');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(
      `apps/app-serving/Pulumi.trap.yaml:${start + 1}: app-serving:charts: "app-serving:charts" is outside "config:" (at the top level of the file), where Pulumi and validate ignore it: indent it and its block by two spaces under "config:", as "  app-serving:charts:"\n`,
    );
  });

  it.each(all.filter((c) => !(c.command in SKIPPED)).map((c) => [`${c.file}:${c.line}`, c] as const))('%s runs as written', { timeout: 600_000 }, async (_where, c) => {
    const needsServer = c.command.includes(SAMPLE_BASE_URL);
    if (needsServer) baseUrl = await openAiServer(['random', 'sim-embeddings'], { echo: true, dimension: 384 });
    const result = await run(needsServer ? c.command.split(SAMPLE_BASE_URL).join(baseUrl) : c.command);
    expect(result.code, `${c.command}\n${result.stdout}\n${result.stderr}`).toBe(EXIT_CODES[c.command] ?? 0);
    for (const quoted of c.quoted) {
      const parts = quoted.split('…').map((p) => p.trim()).filter(Boolean);
      let at = 0;
      for (const part of parts) {
        const found = result.stdout.indexOf(part, at);
        expect(found, `"${quoted}" in the output of ${c.command}:\n${result.stdout}`).toBeGreaterThanOrEqual(0);
        at = found + part.length;
      }
    }
    if (c.output !== undefined) {
      if (!needsServer) baseUrl = '\u0000';
      const expected = normalise(c.output);
      const shown = [normalise(result.stdout), normalise(result.stdout + result.stderr)];
      // The sample is what a terminal shows: stdout, with or without what went to stderr.
      if (!shown.includes(expected) && process.env.APP_SERVING_DOCS_ACTUAL) writeFileSync(process.env.APP_SERVING_DOCS_ACTUAL, `${c.file}:${c.line}\n${result.stdout}---stderr---\n${result.stderr}`, { flag: 'a' });
      expect(shown.includes(expected) ? expected : shown[1]).toBe(expected);
    }
  });
});

describe('the TypeScript of the docs', () => {
  // Each ```ts block, alone: a fragment may use names of earlier blocks (those errors are not
  // checked), but none may have a syntax or grammar error, such as an `export` inside an `if` (TS1184).
  const blocks = userDocs().flatMap((file) => {
    const lines = readFileSync(join(REPO_ROOT, file), 'utf8').split('\n');
    const found: Array<{ where: string; code: string }> = [];
    for (let i = 0; i < lines.length; i += 1) {
      if (!/^\s*```(ts|typescript)\s*$/.test(lines[i]!)) continue;
      const start = i + 1;
      let end = start;
      while (end < lines.length && !/^\s*```\s*$/.test(lines[end]!)) end += 1;
      found.push({ where: `${file}:${start + 1}`, code: lines.slice(start, end).join('\n') });
      i = end;
    }
    return found;
  });

  it('finds the blocks', () => {
    expect(blocks.length).toBeGreaterThan(10);
  });

  it.each(blocks.map((b) => [b.where, b] as const))('%s has no syntax or grammar error', (_where, block) => {
    const file = '/block.ts';
    const host = ts.createCompilerHost({});
    host.getSourceFile = (name, version) => (name === file ? ts.createSourceFile(name, block.code, version, true) : undefined);
    host.fileExists = (name) => name === file;
    host.readFile = (name) => (name === file ? block.code : undefined);
    const program = ts.createProgram([file], { noLib: true, types: [], noResolve: true, module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 }, host);
    const source = program.getSourceFile(file)!;
    const errors = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]
      .filter((d) => d.code < 2000)
      .map((d) => `TS${d.code} line ${source.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
    expect(errors).toEqual([]);
  });
});
