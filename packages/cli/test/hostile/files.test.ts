import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI_ROOT, REPO_ROOT } from '../run-cli.ts';
import { expectSafe, RAW_CONTROL, runCli, tempDir, type OnFinished } from './harness.ts';

/**
 * Stack files and model folders as a hostile or careless user writes them: every command exits
 * 0, 1 or 2 (never 70), quickly, in bounded memory, with no secret and no raw control character
 * in its output. A mutation fuzzer with a fixed seed adds generated cases to the hand-written ones.
 */

const FILES = {
  stack: 'Pulumi.h.yaml',
  gaie: 'models/generative/Sim/gaie-sim/values.yaml',
  ms: 'models/generative/Sim/ms-sim/values.yaml',
  kserve: 'models/generative/Qwen2.5-0.5B-Instruct/kserve-qwen25-05b/values.yaml',
} as const;

/** A repository with the kind stack's two models and the KServe example model, enabled together. */
function repo(onFinished: OnFinished, edit: Partial<Record<keyof typeof FILES, (text: string) => string | Buffer>> = {}): string {
  const dir = tempDir(onFinished);
  for (const model of ['generative/Sim', 'embedder/SimEmbeddings', 'generative/Qwen2.5-0.5B-Instruct']) {
    cpSync(join(REPO_ROOT, 'models', model), join(dir, 'models', model), { recursive: true });
  }
  const stack = [
    'config:',
    '  app-serving:cloudProvider: cloud',
    '  app-serving:models:',
    '    generative:',
    '      - name: Sim',
    '      - name: Qwen2.5-0.5B-Instruct',
    '        platform: kserve',
    '        modelSource:',
    '          huggingFace:',
    '            repo: Qwen/Qwen2.5-0.5B-Instruct',
    '          storageSize: 5Gi',
    '    embedder:',
    '      - name: SimEmbeddings',
    '',
  ].join('\n');
  writeFileSync(join(dir, FILES.stack), stack);
  for (const [key, fn] of Object.entries(edit)) {
    const file = join(dir, FILES[key as keyof typeof FILES]);
    writeFileSync(file, fn(readFileSync(file, 'utf8')));
  }
  return dir;
}

const stackArgs = (dir: string) => ['--stack', join(dir, FILES.stack), '--models-dir', join(dir, 'models')];
const SECRET = 'Sup3r-S3cret-value';

describe.concurrent('hand-written hostile files', { timeout: 600_000 }, () => {
  it('the unmodified fixture validates (the baseline of every mutation)', async ({ onTestFinished }) => {
    const dir = repo(onTestFinished);
    const result = await runCli(['validate', ...stackArgs(dir)]);
    expectSafe(result, 'baseline', { codes: [0] });
  });

  for (const key of ['ms', 'kserve', 'stack'] as const) {
    it(`a self-referencing YAML alias in the ${key} file: exit 1 with file and line`, async ({ onTestFinished }) => {
      const dir = repo(onTestFinished, { [key]: (t: string) => `${t}\nextraLoop: &l\n  again: *l\n` });
      const result = await runCli(['validate', ...stackArgs(dir)]);
      expectSafe(result, 'alias cycle', { codes: [1] });
      expect(result.stdout).toMatch(/\.yaml:\d+: YAML alias \*l refers to its own anchor/);
    });
  }

  it('an alias bomb in a values file: exit 1 with a line', async ({ onTestFinished }) => {
    const rows = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i += 1) rows.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
    const dir = repo(onTestFinished, { gaie: (t) => `${t}\n${rows.join('\n')}\n` });
    const result = await runCli(['plan', '--json', ...stackArgs(dir)]);
    expectSafe(result, 'alias bomb', { codes: [1] });
    expect(JSON.parse(result.stdout).issues[0].message).toMatch(/too many nodes/);
  });

  it('a 10 MB random stack file: refused at once, a few lines of output', async ({ onTestFinished }) => {
    // A seeded xorshift fill: the same 10 MB on every run.
    const random = Buffer.alloc(10 * 1024 * 1024);
    let x = 12;
    for (let i = 0; i < random.length; i += 1) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      random[i] = x & 0xff;
    }
    const dir = repo(onTestFinished, { stack: () => random });
    const result = await runCli(['validate', ...stackArgs(dir)]);
    expectSafe(result, '10 MB stack', { codes: [1] });
    expect(result.stdout.length + result.stderr.length).toBeLessThan(2000);
    expect(result.stdout).toMatch(/larger than 1 MiB/);
  });

  it('20,000 problems: 100 printed, the rest counted', async ({ onTestFinished }) => {
    const many = Array.from({ length: 20_000 }, (_, i) => `  app-serving:unknown${i}: 1`).join('\n');
    const dir = repo(onTestFinished, { stack: (t) => `${t}${many}\n` });
    const result = await runCli(['validate', ...stackArgs(dir)]);
    expectSafe(result, 'many problems', { codes: [1] });
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(101);
    expect(lines.at(-1)).toBe('… and 19,900 more');
  });

  it('an image reference with shell syntax or a newline: validate and images exit 1 naming file, line and key', async ({ onTestFinished }) => {
    const image = 'ghcr.io/x/y:v1;touch${IFS}pwned;echo';
    const dir = repo(onTestFinished, { ms: (t) => t.replace(/image: \S+/, `image: "${image}"`), kserve: (t) => `${t}\nextra:\n  image: "ghcr.io/x/y:v1\\nrm -rf /"\n` });
    for (const command of [['validate'], ['images', '--mirror-to', 'harbor.local/p']]) {
      const result = await runCli([...command, ...stackArgs(dir)]);
      expectSafe(result, command[0]!, { codes: [1] });
      expect(result.stdout).toMatch(/ms-sim\/values\.yaml:\d+: routing\.proxy\.image: is not a valid image reference/);
      expect(result.stdout).toMatch(/kserve-qwen25-05b\/values\.yaml:\d+: extra\.image: holds white space or a control character/);
      expect(result.stdout).not.toContain('pwned');
    }
  });

  it('the printed skopeo commands run exactly as printed, whatever --archive-dir holds', async ({ onTestFinished }) => {
    const dir = repo(onTestFinished);
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'skopeo'), '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done >> "$SKOPEO_LOG"\n');
    chmodSync(join(bin, 'skopeo'), 0o755);
    const archive = "out dir;touch pwned;$(touch pwned2)'";
    const result = await runCli(['images', '--mirror-to', 'harbor.local/p', '--archive-dir', archive, ...stackArgs(dir)]);
    expectSafe(result, 'images --archive-dir', { codes: [0] });
    const commands = result.stdout.split('\n').filter((l) => l.startsWith('skopeo '));
    expect(commands.length).toBeGreaterThan(0);
    const log = join(dir, 'skopeo.log');
    const run = spawnSync('sh', ['-c', commands.join('\n')], { cwd: dir, env: { PATH: `${bin}:${process.env.PATH}`, SKOPEO_LOG: log } });
    expect(run.status).toBe(0);
    expect(existsSync(join(dir, 'pwned')) || existsSync(join(dir, 'pwned2'))).toBe(false);
    const args = readFileSync(log, 'utf8').split('\n');
    expect(args.filter((a) => a.startsWith('oci-archive:')).every((a) => a.startsWith(`oci-archive:${archive}/`))).toBe(true);
  });

  for (const bad of ['harbor.local/p\nx', 'harbor.local/p #comment', 'harbor local/p', 'harbor.local/p;id']) {
    it(`--mirror-to ${JSON.stringify(bad)}: exit 2 in images and new-model, nothing written`, async ({ onTestFinished }) => {
      const dir = repo(onTestFinished);
      expectSafe(await runCli(['images', '--mirror-to', bad, ...stackArgs(dir)]), 'images', { codes: [2] });
      const made = await runCli(['new-model', 'New', '-c', 'generative', '--slug', 'new', '--mirror-to', bad, '--models-dir', join(dir, 'models')]);
      expectSafe(made, 'new-model', { codes: [2] });
      expect(existsSync(join(dir, 'models/generative/New'))).toBe(false);
    });
  }

  it('secrets in the wrong places: never printed by validate or plan --json', async ({ onTestFinished }) => {
    const kubeconfig = JSON.stringify(`apiVersion: v1\nusers:\n- user:\n    token: ${SECRET}\n`);
    const dir = repo(onTestFinished, {
      stack: (t) =>
        `${t}  app-serving:harborHostname: "https://robot:${SECRET}@harbor.local"\n  app-serving:kubeconfig: ${kubeconfig}\n  app-serving:charts:\n    infra:\n      repo: https://u:${SECRET}@charts.example.com/?token=${SECRET}\n`,
    });
    for (const command of [['validate'], ['plan', '--json'], ['images', '--json']]) {
      const result = await runCli([...command, ...stackArgs(dir)]);
      expectSafe(result, command.join(' '), { codes: [1], secrets: [SECRET] });
    }
  });

  it('a model name with ESC, CR and BEL: shown escaped', async ({ onTestFinished }) => {
    const dir = repo(onTestFinished, { stack: (t) => t.replace('- name: SimEmbeddings', '- name: "Sim\\e[2J\\rX\\a"') });
    const result = await runCli(['validate', ...stackArgs(dir)]);
    expectSafe(result, 'control characters in a name', { codes: [1] });
    expect(result.stdout).toMatch(/\\(x1b|u001b)\[2J/);
  });

  it('plan and images into a closed pipe: quiet exit, no EPIPE trace', async () => {
    for (const command of [['plan'], ['images'], ['render']]) {
      const result = await runCli(command, { closeStdoutEarly: true });
      expectSafe(result, `${command[0]} | head`, { codes: [0, 141] });
      expect(result.stderr).not.toMatch(/EPIPE|Error/);
    }
  });

  it('durations a timer cannot hold, and load settings beyond the caps: exit 2 at once', async () => {
    for (const flags of [
      ['--timeout', '600h'],
      ['--timeout', '1200h'],
      ['--deadline', '99999999999999h'],
      ['--wait', '500h', '--deadline', '500h'],
      ['--load', '5000000000'],
      ['--load', '50000', '--concurrency', '50000'],
      ['--load', '10', '--concurrency', '0'],
    ]) {
      const result = await runCli(['verify', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--base-url', 'http://127.0.0.1:9', ...flags]);
      expectSafe(result, flags.join(' '), { codes: [2] });
    }
  });

  it('output paths are checked before the work: --junit and render --out exit 2', async ({ onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    for (const junit of ['/nonexistent/r.xml', dir]) {
      const result = await runCli(['verify', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--base-url', 'http://127.0.0.1:9', '--junit', junit]);
      expectSafe(result, `--junit ${junit}`, { codes: [2] });
      expect(result.stderr).toMatch(/--junit/);
    }
    writeFileSync(join(dir, 'file'), '');
    const rendered = await runCli(['render', '--out', join(dir, 'file', 'out')]);
    expectSafe(rendered, 'render --out under a file', { codes: [2] });
  });

  it('new-model: a 300-character name, and a dangling symlink in the way (kept)', async ({ onTestFinished }) => {
    const dir = repo(onTestFinished);
    const long = await runCli(['new-model', 'M'.repeat(300), '-c', 'generative', '--slug', 'm', '--models-dir', join(dir, 'models')]);
    expectSafe(long, 'long name', { codes: [2] });
    symlinkSync(join(dir, 'nowhere'), join(dir, 'models/generative/Dang'));
    const dangling = await runCli(['new-model', 'Dang', '-c', 'generative', '--slug', 'dang', '--models-dir', join(dir, 'models')]);
    expectSafe(dangling, 'dangling symlink', { codes: [2] });
    expect(dangling.stderr).toMatch(/already exists/);
    expect(lstatSync(join(dir, 'models/generative/Dang')).isSymbolicLink()).toBe(true);
  });
});

// Hang guards: several runs of the command per test, beside every other project in CI (load 46 seen).
describe.concurrent('the world around the command', { timeout: 600_000 }, () => {
  const BIN = join(CLI_ROOT, 'bin', 'app-serving.js');
  /** Runs the CLI through `sh -c` (a shell prepares what a spawn cannot: a deleted cwd, a redirect). */
  const shell = (script: string, args: string[], cwd = REPO_ROOT) =>
    spawnSync('sh', ['-c', script, 'sh', process.execPath, BIN, ...args], { cwd, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: process.env.HOME, APP_SERVING_CODE_CACHE: 'off' }, timeout: 300_000 });

  it('a deleted working directory: exit 2 with what to do, not an internal error', ({ onTestFinished }) => {
    const root = tempDir(onTestFinished);
    for (const command of [['validate', '--stack', join(REPO_ROOT, 'apps/app-serving/Pulumi.example.yaml')], ['plan'], ['diff', '--base', 'HEAD'], ['new-model', 'X', '-c', 'generative', '--slug', 'x']]) {
      const dir = join(root, command[0]!);
      mkdirSync(dir);
      // The shell enters the folder, deletes it, then becomes the command: its working directory is gone.
      const result = spawnSync('sh', ['-c', 'cd "$1" && rmdir "$1" && shift && exec "$@"', 'sh', dir, process.execPath, BIN, ...command], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, HOME: process.env.HOME, APP_SERVING_CODE_CACHE: 'off' },
        timeout: 300_000,
      });
      expect(result.status, `${command[0]}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toMatch(/the working directory no longer exists/);
      expect(result.stderr).not.toMatch(/internal error|please report/);
    }
  });

  it('stdout on a full device (plan > /dev/full): one line and exit 2, no stack trace', () => {
    // The stack on the current set: no warning on stderr beside the one line.
    const current = ['--stack', 'apps/app-serving/Pulumi.current.yaml'];
    for (const command of [['plan', ...current], ['plan', '--json', ...current], ['validate', ...current], ['images', ...current]]) {
      const result = shell('node=$1; bin=$2; shift 2; exec "$node" "$bin" "$@" > /dev/full', command);
      expect(result.status, result.stderr).toBe(2);
      expect(result.stderr).toMatch(/^error: cannot write the output \(ENOSPC/);
      expect(result.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    }
  });

  it('render --out: an earlier render is replaced, a link among its files is never followed, other files stop it', async ({ onTestFinished }) => {
    const dir = tempDir(onTestFinished);
    const out = join(dir, 'out');
    const first = await runCli(['render', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--out', out]);
    expectSafe(first, 'first render', { codes: [0] });
    const files = readdirSync(out).sort();
    // An earlier render of more resources, and a link planted under a name render writes.
    writeFileSync(join(out, '99-stale-resource.yaml'), 'stale\n');
    const outside = join(dir, 'outside.txt');
    writeFileSync(outside, 'keep me\n');
    rmSync(join(out, files[0]!));
    symlinkSync(outside, join(out, files[0]!));
    const again = await runCli(['render', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--out', out]);
    expectSafe(again, 'second render', { codes: [0] });
    expect(again.stderr).toMatch(/replacing the \d+ files of an earlier render/);
    expect(readFileSync(outside, 'utf8')).toBe('keep me\n');
    expect(readdirSync(out).sort()).toEqual(files);
    expect(lstatSync(join(out, files[0]!)).isSymbolicLink()).toBe(false);
    writeFileSync(join(out, 'notes.md'), 'mine\n');
    const mixed = await runCli(['render', '--stack', 'apps/app-serving/Pulumi.kind.yaml', '--out', out]);
    expectSafe(mixed, 'a folder with other files', { codes: [2] });
    expect(mixed.stderr).toMatch(/notes\.md/);
    expect(readFileSync(join(out, 'notes.md'), 'utf8')).toBe('mine\n');
  });

  it('a UTF-16 stack file with a byte order mark, and CR-only line endings: read as YAML reads them', async ({ onTestFinished }) => {
    const dir = repo(onTestFinished);
    const text = readFileSync(join(dir, FILES.stack), 'utf8');
    for (const [name, bytes] of [
      ['UTF-16LE', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])],
      ['UTF-16BE', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()])],
      ['UTF-8 with BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])],
      ['CR-only', Buffer.from(text.replace(/\n/g, '\r'))],
    ] as const) {
      writeFileSync(join(dir, FILES.stack), bytes);
      writeFileSync(join(dir, FILES.ms), readFileSync(join(REPO_ROOT, 'models/generative/Sim/ms-sim/values.yaml'), 'utf8').replace(/\n/g, name === 'CR-only' ? '\r' : '\n'));
      const result = await runCli(['validate', ...stackArgs(dir)]);
      expectSafe(result, name, { codes: [0] });
    }
  });

  it('bidirectional and zero-width characters in a name: escaped in text, \\u escapes in JSON', async ({ onTestFinished }) => {
    const dir = repo(onTestFinished, { stack: (t) => t.replace('- name: SimEmbeddings', '- name: "Sim\\u202eexe.txt\\u200b\\u2066x\\ufeff"') });
    for (const command of [['validate'], ['plan', '--json']]) {
      const result = await runCli([...command, ...stackArgs(dir)]);
      expectSafe(result, command.join(' '), { codes: [1] });
      expect(result.stdout).toMatch(/\\u202e/);
      if (command[1] === '--json') expect(JSON.stringify(JSON.parse(result.stdout))).toContain('Sim\u202eexe.txt');
    }
  });
});

/** One generated mutation of one file of the fixture. */
const mutation = fc.record({
  file: fc.constantFrom('stack', 'gaie', 'ms', 'kserve') as fc.Arbitrary<keyof typeof FILES>,
  at: fc.double({ min: 0, max: 1, noNaN: true }),
  kind: fc.constantFrom('insert', 'truncate', 'duplicate-line', 'alias', 'nesting', 'proto', 'binary', 'image', 'huge-line'),
  text: fc.string({ unit: 'binary', maxLength: 24 }),
});

function mutate(text: string, m: { at: number; kind: string; text: string }): string | Buffer {
  const pos = Math.floor(m.at * text.length);
  const lines = text.split('\n');
  const line = Math.floor(m.at * lines.length);
  switch (m.kind) {
    case 'insert':
      return text.slice(0, pos) + m.text + text.slice(pos);
    case 'truncate':
      return text.slice(0, pos);
    case 'duplicate-line':
      return [...lines.slice(0, line + 1), ...lines.slice(line)].join('\n');
    case 'alias':
      return `${text}\nanchor: &a\n  loop: *a\n`;
    case 'nesting':
      return `${text}\ndeep: ${'['.repeat(2000)}${']'.repeat(2000)}\n`;
    case 'proto':
      return `${text}\n__proto__:\n  polluted: ${JSON.stringify(m.text)}\n`;
    case 'binary':
      return Buffer.concat([Buffer.from(text.slice(0, pos)), Buffer.from(m.text, 'latin1'), Buffer.from([0, 0xff, 0xfe])]);
    case 'image':
      return `${text}\nsidecar:\n  image: ${JSON.stringify(`ghcr.io/a/b:${m.text}`)}\n`;
    default:
      return `${text}\nhuge: "${'h'.repeat(300_000)}${m.text.replace(/["\\]/g, '')}"\n`;
  }
}

// A fixed seed and a bounded count: the same 12 cases on every run, a few seconds in all.
const CASES = fc.sample(mutation, { numRuns: 12, seed: 20261202 });

describe.concurrent('generated mutations (fast-check, fixed seed)', { timeout: 600_000 }, () => {
  CASES.forEach((m, i) => {
    it(`#${i} ${m.kind} in ${m.file}: exit 0/1/2, bounded, clean output`, async ({ onTestFinished }) => {
      const dir = repo(onTestFinished, { [m.file]: (t: string) => mutate(t, m) });
      const command = i % 3 === 0 ? ['plan', '--json'] : i % 3 === 1 ? ['validate'] : ['images', '--mirror-to', 'harbor.local/p'];
      const result = await runCli([...command, ...stackArgs(dir)]);
      expectSafe(result, `${JSON.stringify(m)} with ${command.join(' ')}`);
    });
  });
});
