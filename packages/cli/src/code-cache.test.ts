import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, CLI_ROOT } from '../test/run-cli.ts';
import { codeCacheDir, commandKey, OPTIMIZATION_BUDGET, raiseOptimizationBudget } from './code-cache.ts';

const scratch = mkdtempSync(join(tmpdir(), 'app-serving-code-cache-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const STACK = ['validate', '--stack', 'apps/app-serving/Pulumi.example.yaml'];

/** Every cache file under `dir` (they sit in `node-<version>-<arch>/<installation>/`), by name. */
function cacheFiles(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(at, entry.name));
      else files.set(entry.name, join(at, entry.name));
    }
  };
  walk(dir);
  return files;
}

describe("V8's optimization budget for a short command", () => {
  it("is raised to 8× V8's on Node 20", () => {
    const set: string[] = [];
    expect(raiseOptimizationBudget([], {}, 'v20.20.2', (flags) => set.push(flags))).toBe(true);
    expect(set).toEqual([`--interrupt-budget=${8 * 67_584}`]);
    expect(OPTIMIZATION_BUDGET).toBe(540_672);
  });

  it('is left as the user set it (node\'s arguments or NODE_OPTIONS), and on other Node versions', () => {
    const set: string[] = [];
    const never = (flags: string) => set.push(flags);
    expect(raiseOptimizationBudget(['--interrupt-budget=1000'], {}, 'v20.20.2', never)).toBe(false);
    expect(raiseOptimizationBudget([], { NODE_OPTIONS: '--max-old-space-size=4096 --interrupt_budget=1000' }, 'v20.20.2', never)).toBe(false);
    expect(raiseOptimizationBudget([], {}, 'v22.12.0', never)).toBe(false);
    expect(set).toEqual([]);
  });
});

describe('where the code cache lives', () => {
  it('APP_SERVING_CODE_CACHE moves it or turns it off; else XDG_CACHE_HOME, else ~/.cache', () => {
    expect(codeCacheDir({ APP_SERVING_CODE_CACHE: 'off' }, '/home/u')).toBeUndefined();
    expect(codeCacheDir({ APP_SERVING_CODE_CACHE: '0' }, '/home/u')).toBeUndefined();
    expect(codeCacheDir({ APP_SERVING_CODE_CACHE: '/var/cache/x' }, '/home/u')).toBe('/var/cache/x');
    expect(codeCacheDir({ XDG_CACHE_HOME: '/xdg' }, '/home/u')).toBe('/xdg/app-serving/code-cache');
    // A relative XDG_CACHE_HOME is invalid by the spec: ignored.
    expect(codeCacheDir({ XDG_CACHE_HOME: 'rel' }, '/home/u')).toBe('/home/u/.cache/app-serving/code-cache');
    expect(codeCacheDir({}, '')).toBeUndefined();
  });

  it('one cache per command: the first operand, or "other"', () => {
    expect(commandKey(['node', 'bin', 'validate', '--stack', 'x'])).toBe('validate');
    expect(commandKey(['node', 'bin', '--json', 'plan'])).toBe('plan');
    expect(commandKey(['node', 'bin', '--help'])).toBe('other');
    expect(commandKey(['node', 'bin', '../../etc'])).toBe('other');
  });
});

describe('the code cache of the built command', () => {
  it('is written by the first run, used as it is by the next, and changes no output', async () => {
    const dir = join(scratch, 'used');
    const plain = await cli(STACK, { env: { APP_SERVING_CODE_CACHE: 'off' } });
    expect(plain.code).toBe(0);

    const first = await cli(STACK, { env: { APP_SERVING_CODE_CACHE: dir } });
    expect(first).toEqual(plain);
    const files = cacheFiles(dir);
    const names = [...files.keys()];
    expect(names.some((n) => /^context-.*\.validate\.[0-9a-f]{8}\.bin$/.test(n)), names.join(' ')).toBe(true);
    expect(names.every((n) => n.includes('.validate.'))).toBe(true);
    for (const file of files.values()) expect(statSync(file).mode & 0o077, file).toBe(0);

    // V8 accepted every file: a refused one would be written again.
    const written = new Map([...files].map(([name, file]) => [name, statSync(file).mtimeMs]));
    const second = await cli(STACK, { env: { APP_SERVING_CODE_CACHE: dir } });
    expect(second).toEqual(plain);
    for (const [name, file] of cacheFiles(dir)) expect(statSync(file).mtimeMs, name).toBe(written.get(name));
  }, 180_000);

  it('a damaged cache is refused by V8 and written again; the output stays the same', async () => {
    const dir = join(scratch, 'damaged');
    const plain = await cli(STACK, { env: { APP_SERVING_CODE_CACHE: 'off' } });
    await cli(STACK, { env: { APP_SERVING_CODE_CACHE: dir } });
    const garbage = Buffer.from('not a V8 code cache '.repeat(50));
    for (const file of cacheFiles(dir).values()) writeFileSync(file, garbage);
    expect(await cli(STACK, { env: { APP_SERVING_CODE_CACHE: dir } })).toEqual(plain);
    for (const file of cacheFiles(dir).values()) expect(readFileSync(file).equals(garbage), file).toBe(false);
  }, 180_000);

  it('what an earlier build left is removed when the cache is written', async () => {
    const dir = join(scratch, 'stale');
    await cli(STACK, { env: { APP_SERVING_CODE_CACHE: dir } });
    const files = cacheFiles(dir);
    const [context] = [...files].find(([name]) => name.startsWith('context-'))!;
    const folder = join(files.get(context)!, '..');
    // An earlier build's chunk (no longer in the bundle) and an earlier content of this one.
    writeFileSync(join(folder, 'gone-AbCdEf12.validate.0123456789abcdef0123.bin'), 'x');
    writeFileSync(join(folder, context.replace(/\.[0-9a-f]{8}\.bin$/, '.ffffffff.bin')), 'x');
    rmSync(files.get(context)!);
    await cli(STACK, { env: { APP_SERVING_CODE_CACHE: dir } });
    expect([...cacheFiles(dir).keys()].sort()).toEqual([...files.keys()].sort());
  }, 180_000);

  it('a cache that cannot be written costs nothing but the cache', async () => {
    const blocked = join(scratch, 'a-file');
    writeFileSync(blocked, '');
    const plain = await cli(STACK, { env: { APP_SERVING_CODE_CACHE: 'off' } });
    expect(await cli(STACK, { env: { APP_SERVING_CODE_CACHE: blocked } })).toEqual(plain);
  }, 180_000);

  it('off writes nothing', async () => {
    const home = join(scratch, 'home');
    await cli(STACK, { env: { HOME: home, APP_SERVING_CODE_CACHE: 'off' } });
    expect(() => readdirSync(home)).toThrow();
  }, 180_000);

  it('the bundle holds no import(): code compiled from a cache cannot run one on Node 20', () => {
    const bundle = join(CLI_ROOT, 'dist', 'cli');
    const files = readdirSync(bundle).filter((f) => f.endsWith('.cjs'));
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) expect(readFileSync(join(bundle, file), 'utf8'), file).not.toMatch(/\bimport\s*\(/);
  });
});
