import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HEADER_BYTES, checksum, sealCache } from '../../src/code-cache.ts';
import { CLI_ROOT, REPO_ROOT } from '../run-cli.ts';
import { expectSafe, runCli, tempDir, type HostileResult, type OnFinished } from './harness.ts';

/**
 * The V8 code cache under attack: files damaged by flipping bytes (not by truncation: V8 itself
 * refuses a short file), a cache made from other code of the same length, folders another user
 * owns or can write, a FIFO or a link where a file should be, a disk that fills up, a relative
 * HOME and a folder under /proc. Each run gives the output of a run without the cache, exit 0,
 * and never crashes or runs code the command did not ship.
 */

const STACK = ['validate', '--stack', join(REPO_ROOT, 'apps/app-serving/Pulumi.example.yaml')];
const BUNDLE = join(CLI_ROOT, 'dist', 'cli');

/** Every cache file under `dir`, by name. */
function cacheFiles(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(at, entry.name));
      else files.set(entry.name, join(at, entry.name));
    }
  };
  if (existsSync(dir)) walk(dir);
  return files;
}

let plainRun: Promise<HostileResult> | undefined;
/** The output without a cache: what every run below must print. */
function plain(): Promise<HostileResult> {
  plainRun ??= runCli(STACK, { env: { APP_SERVING_CODE_CACHE: 'off' } });
  return plainRun;
}

async function expectPlain(result: HostileResult, what: string, reference: HostileResult | Promise<HostileResult> = plain()): Promise<void> {
  expectSafe(result, what, { codes: [0] });
  reference = await reference;
  expect(reference.code).toBe(0);
  expect(result.stdout, what).toBe(reference.stdout);
}

/** A cache folder written by one run of validate; returns the folder and the main bundle file's cache. */
async function warmCache(onFinished: OnFinished): Promise<{ dir: string; main: string }> {
  const dir = join(tempDir(onFinished), 'cache');
  await expectPlain(await runCli(STACK, { env: { APP_SERVING_CODE_CACHE: dir } }), 'first run');
  const main = [...cacheFiles(dir)].find(([name]) => name.startsWith('main.validate.'))?.[1];
  expect(main, [...cacheFiles(dir).keys()].join(' ')).toBeDefined();
  return { dir, main: main! };
}

/**
 * V8's cache for `dist/cli/main.cjs` with one character of its first `require("./output-…")`
 * changed: other code of the very same length, which V8 alone would accept for main.cjs.
 */
function otherCodeSameLength(): { data: Buffer; sourceHash: Buffer } {
  const file = join(BUNDLE, 'main.cjs');
  const script = [
    "const { Script } = require('node:vm');",
    "const fs = require('node:fs');",
    'const [file] = process.argv.slice(1);',
    "let content = fs.readFileSync(file, 'utf8');",
    "const at = content.indexOf('require(\"./output-');",
    "if (at < 0) throw new Error('no require of output in main.cjs');",
    "content = content.slice(0, at + 12) + 'x' + content.slice(at + 13);",
    "const s = new Script(`(function (exports, require, module, __filename, __dirname) { ${content}\\n});`, { filename: file });",
    "process.stdout.write(JSON.stringify({ data: s.createCachedData().toString('base64'), content }));",
  ].join('\n');
  const made = spawnSync(process.execPath, ['-e', script, file], { encoding: 'utf8' });
  expect(made.status, made.stderr).toBe(0);
  const { data, content } = JSON.parse(made.stdout) as { data: string; content: string };
  return { data: Buffer.from(data, 'base64'), sourceHash: checksum(content) };
}

const mainSourceHash = () => checksum(readFileSync(join(BUNDLE, 'main.cjs'), 'utf8'));

describe.concurrent('a hostile or damaged code cache', { timeout: 600_000 }, () => {
  // Offsets from the end of the file's header into V8's data: its own header, the middle, the end.
  for (const [where, at] of [
    ['in V8 header', (size: number) => Math.min(8, size - 8)],
    ['early in the data', (size: number) => Math.min(64, size - 8)],
    ['in the middle', (size: number) => Math.floor(size / 2)],
    ['near the end', (size: number) => size - 16],
  ] as const) {
    it(`8 bytes flipped ${where} of every cache file: the output of a run without cache, and the files written again`, async ({ onTestFinished }) => {
      const { dir } = await warmCache(onTestFinished);
      const damaged = new Map<string, Buffer>();
      for (const file of cacheFiles(dir).values()) {
        const bytes = readFileSync(file);
        // The cache's own header (if any) stays: the damage is in what V8 would read.
        const header = bytes.subarray(0, 21).toString('latin1') === 'app-serving-v8-cache-' ? HEADER_BYTES : 0;
        const start = header + at(bytes.length - header);
        for (let i = start; i < start + 8 && i < bytes.length; i += 1) bytes[i] = bytes[i]! ^ 0xa5;
        writeFileSync(file, bytes);
        damaged.set(file, bytes);
      }
      await expectPlain(await runCli(STACK, { env: { APP_SERVING_CODE_CACHE: dir } }), `flipped ${where}`);
      for (const [file, bytes] of damaged) expect(readFileSync(file).equals(bytes), `${file} was not written again`).toBe(false);
      // And the rewritten cache is used as it is by the next run.
      await expectPlain(await runCli(STACK, { env: { APP_SERVING_CODE_CACHE: dir } }), `after ${where}`);
    });
  }

  it('a cache made from other code of the same length is not run (raw, or under a header naming that code)', async ({ onTestFinished }) => {
    const { dir, main } = await warmCache(onTestFinished);
    const other = otherCodeSameLength();
    for (const [what, bytes] of [
      ['raw V8 data', other.data],
      ['sealed for the other source', sealCache(other.sourceHash, other.data)],
    ] as const) {
      writeFileSync(main, bytes, { mode: 0o600 });
      await expectPlain(await runCli(STACK, { env: { APP_SERVING_CODE_CACHE: dir } }), what);
    }
  });

  it('a folder or file another user owns, or others can write, is not read (even by root)', async ({ onTestFinished }) => {
    const root = process.getuid?.() === 0;
    const { dir, main } = await warmCache(onTestFinished);
    const other = otherCodeSameLength();
    // Well formed in every way a hash can tell: only who could have written it gives it away.
    const forged = sealCache(mainSourceHash(), other.data);
    const folder = join(main, '..');
    const cases: [string, () => void][] = [
      ['the folder is mode 0777', () => chmodSync(folder, 0o777)],
      ['the cache root is mode 0777', () => chmodSync(dir, 0o777)],
      ['the file is mode 0666', () => chmodSync(main, 0o666)],
      ...(root
        ? ([
            ['the folder belongs to another user', () => chownSync(folder, 4242, 4242)],
            ['the file belongs to another user', () => chownSync(main, 4242, 4242)],
          ] as [string, () => void][])
        : []),
    ];
    for (const [what, make] of cases) {
      chmodSync(dir, 0o700);
      chmodSync(folder, 0o700);
      if (root) chownSync(folder, 0, 0);
      writeFileSync(main, forged);
      chmodSync(main, 0o600);
      if (root) chownSync(main, 0, 0);
      make();
      await expectPlain(await runCli(STACK, { env: { APP_SERVING_CODE_CACHE: dir } }), what);
      expect(readFileSync(main).equals(forged), `${what}: the forged file is left as it is (nothing written into an unsafe folder)`).toBe(
        !what.includes('file'),
      );
    }
  });

  it('a FIFO, or a link to /dev/zero, where a cache file should be: not read, no hang', async ({ onTestFinished }) => {
    const { dir, main } = await warmCache(onTestFinished);
    unlinkSync(main);
    expect(spawnSync('mkfifo', [main]).status).toBe(0);
    await expectPlain(await runCli(STACK, { env: { APP_SERVING_CODE_CACHE: dir }, killAfterMs: 40_000 }), 'FIFO');
    rmSync(main, { force: true });
    symlinkSync('/dev/zero', main);
    await expectPlain(await runCli(STACK, { env: { APP_SERVING_CODE_CACHE: dir }, killAfterMs: 40_000 }), 'link to /dev/zero');
  });

  it('the cache root is a link to another folder: neither read nor written', async ({ onTestFinished }) => {
    const { dir } = await warmCache(onTestFinished);
    const link = join(dir, '..', 'link');
    symlinkSync(dir, link);
    const garbage = Buffer.from('x'.repeat(2000));
    for (const file of cacheFiles(dir).values()) writeFileSync(file, garbage);
    await expectPlain(await runCli(STACK, { env: { APP_SERVING_CODE_CACHE: link } }), 'link root');
    for (const file of cacheFiles(dir).values()) expect(readFileSync(file).equals(garbage), file).toBe(true);
  });

  it('a disk that fills up while the cache is written: no partial file left behind', async ({ onTestFinished }) => {
    const dir = join(tempDir(onTestFinished), 'cache');
    // 2 blocks of 512 bytes: every cache file is larger, so each write fails part-way (EFBIG, as ENOSPC).
    await expectPlain(await runCli(STACK, { env: { APP_SERVING_CODE_CACHE: dir }, fileSizeLimitBlocks: 2 }), 'full disk');
    const names = [...cacheFiles(dir).keys()];
    expect(names.filter((name) => name.endsWith('.tmp')), names.join(' ')).toEqual([]);
    for (const file of cacheFiles(dir).values()) expect(statSync(file).size, file).toBeGreaterThan(1024);
  });

  it('a relative HOME (or cache setting) writes nothing under the working directory', async ({ onTestFinished }) => {
    const cwd = tempDir(onTestFinished);
    const reference = await runCli(STACK, { cwd, env: { APP_SERVING_CODE_CACHE: 'off' } });
    await expectPlain(await runCli(STACK, { cwd, env: { HOME: 'relative-home' } }), 'relative HOME', reference);
    await expectPlain(await runCli(STACK, { cwd, env: { HOME: cwd, APP_SERVING_CODE_CACHE: 'relative-cache' } }), 'relative setting', reference);
    expect(readdirSync(cwd)).toEqual([]);
  });

  for (const place of ['/proc/self', '/proc/self/fd', '/dev/null', '/sys']) {
    it(`APP_SERVING_CODE_CACHE=${place}: no cache, no spin`, async () => {
      await expectPlain(await runCli(STACK, { env: { APP_SERVING_CODE_CACHE: place }, killAfterMs: 40_000 }), place);
    });
  }

  it('8 first runs at once share one folder: every run gives the plain output', async ({ onTestFinished }) => {
    const dir = join(tempDir(onTestFinished), 'cache');
    mkdirSync(dir, { mode: 0o700 });
    const runs = await Promise.all(Array.from({ length: 8 }, () => runCli(STACK, { env: { APP_SERVING_CODE_CACHE: dir } })));
    for (const [i, run] of runs.entries()) await expectPlain(run, `parallel run ${i}`);
    expect([...cacheFiles(dir).keys()].filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});
