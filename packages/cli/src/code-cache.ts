/**
 * A V8 code cache for the command's own bundle (`dist/cli/*.cjs`), so a command starts without
 * compiling its code again. On Node 20 most of a cold `validate` beyond node's own start is
 * compiling and interpreting code that has not been compiled yet; the cache holds the bytecode of
 * every function a command ran, because it is made after the command has run (V8's
 * `createCachedData()` then includes the functions compiled lazily along the way). One cache per
 * bundle file, per content and per command: `validate` and `render` run different code.
 *
 * The cache lives in `$APP_SERVING_CODE_CACHE`, else `$XDG_CACHE_HOME/app-serving/code-cache`,
 * else `~/.cache/app-serving/code-cache` (created private to the user); `APP_SERVING_CODE_CACHE=off`
 * turns it off. V8 refuses a cache made by another V8 version or with other flags, and a file's
 * cache is keyed by a hash of its content, so a stale cache is never used. Anything that goes wrong
 * (an unwritable folder, a damaged file) only costs the cache: the command runs the same.
 *
 * The bundle must not use `import()`: a script compiled from a code cache cannot run one on Node 20
 * (rolldown's `dynamicImportInCjs: false` turns them into `require()`; a test holds the bundle to
 * it). On Node ≥ 22.1 Node's own compile cache (`module.enableCompileCache`) is used instead.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { Script } from 'node:vm';

/** The environment variable that moves the cache (a folder) or turns it off (`off`). */
export const CODE_CACHE_ENV = 'APP_SERVING_CODE_CACHE';

/** The folder of the cache, or undefined when it is off or there is no home to put it in. */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env, home: string = safeHomedir()): string | undefined {
  const setting = env[CODE_CACHE_ENV]?.trim();
  if (setting && /^(off|0|false|no)$/i.test(setting)) return undefined;
  if (setting) return resolve(setting);
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : home ? join(home, '.cache') : undefined;
  return base ? join(base, 'app-serving', 'code-cache') : undefined;
}

function safeHomedir(): string {
  try {
    return homedir();
  } catch {
    return '';
  }
}

/** The part of the cache key that names the command: `validate`, `plan`, … (`other` for the rest). */
export function commandKey(argv: readonly string[]): string {
  const command = argv.slice(2).find((arg) => !arg.startsWith('-'));
  return command !== undefined && /^[a-z][a-z-]{0,30}$/.test(command) ? command : 'other';
}

export interface CodeCacheOptions {
  /** The folder of the bundle whose files are cached (`dist/cli`). */
  readonly bundleDir: string;
  /** `process.argv`: the command names the cache. */
  readonly argv?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
}

interface CompilingModule {
  _compile(content: string, filename: string): unknown;
  exports: unknown;
}

/**
 * Caches the compiled code of every CommonJS file of `bundleDir` loaded from now on. Returns
 * whether a cache is in use.
 */
export function enableCodeCache(options: CodeCacheOptions): boolean {
  const env = options.env ?? process.env;
  const dir = codeCacheDir(env);
  if (dir === undefined) return false;
  const nodeCache = (Module as unknown as { enableCompileCache?: (dir: string) => unknown }).enableCompileCache;
  if (typeof nodeCache === 'function') {
    try {
      nodeCache(join(dir, 'node'));
      return true;
    } catch {
      return false;
    }
  }
  const bundleDir = resolve(options.bundleDir);
  const command = commandKey(options.argv ?? process.argv);
  // Per Node version, per installation (two projects' copies of the CLI never evict each other)
  // and per V8 flags (V8 refuses a cache made under other flags: runs with and without a flag
  // would otherwise overwrite each other's cache every time).
  const flags = `${process.execArgv.join(' ')}\0${env.NODE_OPTIONS ?? ''}`;
  const versionDir = join(dir, `node-${process.version}-${process.arch}`, createHash('sha1').update(`${bundleDir}\0${flags}`).digest('hex').slice(0, 12));
  const toWrite: { script: Script; file: string; stem: string }[] = [];
  const proto = Module.prototype as unknown as CompilingModule;
  const compile = proto._compile;

  proto._compile = function compileWithCache(this: CompilingModule, content: string, filename: string): unknown {
    if (dirname(filename) !== bundleDir || !filename.endsWith('.cjs')) return compile.call(this, content, filename);
    const stem = `${basename(filename, '.cjs')}.${command}.`;
    const file = join(versionDir, `${stem}${createHash('sha1').update(content).digest('hex').slice(0, 20)}.bin`);
    let cachedData: Buffer | undefined;
    try {
      cachedData = readFileSync(file);
    } catch {
      // not cached yet
    }
    // The wrapper Node itself puts around a CommonJS file (same line numbers).
    const script = new Script(`(function (exports, require, module, __filename, __dirname) { ${content}\n});`, {
      filename,
      ...(cachedData !== undefined && { cachedData }),
    });
    if (cachedData === undefined || script.cachedDataRejected === true) toWrite.push({ script, file, stem });
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return wrapper.call(this.exports, this.exports, createRequire(filename), this, filename, dirname(filename));
  };

  process.once('exit', () => {
    if (toWrite.length === 0) return;
    try {
      mkdirSync(versionDir, { recursive: true, mode: 0o700 });
      // What an earlier build left goes, once: the same file and command with other content, and
      // files the bundle no longer has (its chunks' names change with their content).
      const kept = new Set(toWrite.map(({ file }) => basename(file)));
      for (const old of readdirSync(versionDir)) {
        const replaced = !kept.has(old) && toWrite.some(({ stem }) => old.startsWith(stem));
        if (replaced || !existsSync(join(bundleDir, `${old.slice(0, old.indexOf('.'))}.cjs`))) rmSync(join(versionDir, old), { force: true });
      }
      for (const { script, file } of toWrite) {
        const temporary = `${file}.${process.pid}.tmp`;
        writeFileSync(temporary, script.createCachedData(), { mode: 0o600 });
        renameSync(temporary, file);
      }
    } catch {
      // No cache this time: the command's result stands.
    }
  });
  return true;
}
