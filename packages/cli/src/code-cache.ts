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
 * turns it off. Only absolute folders are used (a relative HOME or setting means no cache).
 *
 * V8 checks little of what it is given: a cache whose bytes were changed after its header can crash
 * the process (SIGTRAP, SIGSEGV) or run other code, and a cache made from other code of the same
 * length is accepted. So nothing reaches V8 that this code did not write for this very source:
 *
 * - every folder from the cache's root down to the files is a real folder (no symbolic link),
 *   owned by the user running the command and writable by nobody else; the file too (opened
 *   without following a link, checked on the open descriptor). Anything else: no cache this run.
 * - each file starts with a header: a magic string, the CRC-32 of the source it was made from and
 *   the CRC-32 of the V8 data that follows. A file whose source or data checksum does not match is
 *   not given to V8: it is written again after the run. A checksum, not a cryptographic hash: it
 *   tells a changed bundle or damaged data (any change of up to 32 bits, others but for one in
 *   2^32), and only the user could have written a file that passed the checks above — who can run
 *   any code anyway. SHA-256 cost every run about 2 ms of a 100 ms command (node:crypto's loading
 *   and hashing 1.2 MB; node:zlib's CRC-32 is a fraction of both).
 *
 * Anything that goes wrong (an unwritable folder, a full disk, a damaged file) only costs the cache:
 * the command runs the same, and a partly written file is removed.
 *
 * The bundle must not use `import()`: a script compiled from a code cache cannot run one on Node 20
 * (rolldown's `dynamicImportInCjs: false` turns them into `require()`; a test holds the bundle to
 * it). On Node ≥ 22.1 Node's own compile cache (`module.enableCompileCache`) is used instead.
 */
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync, unlinkSync, writeSync, type Stats } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { Script } from 'node:vm';

/**
 * V8 gives a function to its optimizing compiler (TurboFan, on a second thread) once the function
 * has used up an "interrupt budget" of bytecode: 66 KB on Node 20. A command lasts about a tenth of
 * a second, so most of what TurboFan compiles then is thrown away at exit, and it takes CPU the
 * command needs (on 2 cores, `validate` of 50 models used 117 ms of CPU with V8's budget, 97 ms with
 * this one). {@link OPTIMIZATION_BUDGET} (8× V8's) leaves short commands to the interpreter and the
 * baseline compiler and still optimizes the hot code of long ones (`plan` of 500 models and
 * `render` of 100 were no slower; scripts/bench.mjs measures them).
 *
 * Set on Node 20 only, where it was measured (newer V8s tier up through Maglev first), before any
 * bundle code is compiled: V8 keys its code cache by its flags, so every run must start under the
 * same ones. Not where the user set the budget (NODE_OPTIONS or node's own arguments). True when set.
 */
export function raiseOptimizationBudget(
  execArgv: readonly string[] = process.execArgv,
  env: NodeJS.ProcessEnv = process.env,
  version: string = process.version,
  // node:v8 loaded only here, where it is used (Node 20), not by every run on other versions.
  setFlags: (flags: string) => void = (flags) => process.getBuiltinModule('node:v8').setFlagsFromString(flags),
): boolean {
  if (!/^v20\./.test(version)) return false;
  if ([...execArgv, env.NODE_OPTIONS ?? ''].some((arg) => /interrupt[-_]budget/.test(arg))) return false;
  setFlags(`--interrupt-budget=${OPTIMIZATION_BUDGET}`);
  return true;
}

/** The interrupt budget of {@link raiseOptimizationBudget}: 8× V8's default on Node 20 (67,584 bytes). */
export const OPTIMIZATION_BUDGET = 8 * 67_584;

/** The environment variable that moves the cache (an absolute folder) or turns it off (`off`). */
export const CODE_CACHE_ENV = 'APP_SERVING_CODE_CACHE';

/** The first bytes of every cache file (the format's version is in it). */
const MAGIC = Buffer.from('app-serving-v8-cache-2\n');
const HASH_BYTES = 4;
/** A cache file's header: {@link MAGIC}, the source's checksum, the data's. */
export const HEADER_BYTES = MAGIC.length + 2 * HASH_BYTES;

/**
 * The checksum of a cache file's header: CRC-32 (of the UTF-8 of a string), 4 bytes big-endian.
 * node:zlib is loaded here, where it is used, not by runs without a cache.
 */
export function checksum(bytes: string | Buffer): Buffer {
  const out = Buffer.alloc(HASH_BYTES);
  out.writeUInt32BE(process.getBuiltinModule('node:zlib').crc32(bytes));
  return out;
}
/** Largest cache file read: the bundle's biggest chunk gives a few hundred KB. */
export const MAX_CACHE_FILE_BYTES = 32 * 1024 * 1024;
/** Most folders created on the way to the cache (`~/.cache/app-serving/code-cache/node-…/…`). */
const MAX_NEW_FOLDERS = 16;

/** The folder of the cache, or undefined when it is off or there is no absolute place to put it. */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env, home: string = safeHomedir()): string | undefined {
  const setting = env[CODE_CACHE_ENV]?.trim();
  if (setting && /^(off|0|false|no)$/i.test(setting)) return undefined;
  // A relative folder would put the cache wherever the command happens to run.
  if (setting) return isAbsolute(setting) ? resolve(setting) : undefined;
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : home && isAbsolute(home) ? join(home, '.cache') : undefined;
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

/** The user running the command (the owner every cache folder and file must have); undefined where there are no uids. */
function currentUid(): number | undefined {
  return typeof process.getuid === 'function' ? process.getuid() : undefined;
}

/** A folder or file only its owner, the current user, can change: not a link, owned by us, not writable by group or others. */
export function isPrivate(stats: Stats, uid: number | undefined, kind: 'folder' | 'file'): boolean {
  if (kind === 'folder' ? !stats.isDirectory() : !stats.isFile()) return false;
  if (uid === undefined) return true;
  return stats.uid === uid && (stats.mode & 0o022) === 0;
}

/**
 * Makes `dir` (and what is missing above it, private to the user), then checks every folder from
 * `root` down to `dir`: each must be private ({@link isPrivate}). Bounded: no recursive mkdir (it
 * loops on some /proc paths), at most {@link MAX_NEW_FOLDERS} folders created. False when `dir`
 * cannot be used.
 */
export function preparePrivateDir(root: string, dir: string, uid: number | undefined = currentUid(), create = true): boolean {
  const chain: string[] = [];
  for (let at = dir; ; at = dirname(at)) {
    chain.unshift(at);
    if (at === root) break;
    if (dirname(at) === at || chain.length > MAX_NEW_FOLDERS) return false; // dir is not under root
  }
  // What is missing above the root is created too (~/.cache may not exist yet); it is not checked.
  const missing: string[] = [];
  for (let at = root; missing.length <= MAX_NEW_FOLDERS && !exists(at); at = dirname(at)) {
    if (dirname(at) === at) return false;
    missing.unshift(at);
  }
  try {
    if (create) for (const at of [...missing, ...chain]) mkdirOnce(at);
    return chain.every((at) => isPrivate(lstatSync(at), uid, 'folder'));
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether a process `pid` runs (a temporary file of a run still writing is left alone). */
function isRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function mkdirOnce(path: string): void {
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** A cache file's bytes: the header (magic, source checksum, data checksum), then V8's data. */
export function sealCache(source: Buffer, data: Buffer): Buffer {
  return Buffer.concat([MAGIC, source, checksum(data), data]);
}

/** V8's data in a cache file, when the header holds `sourceHash` and the checksum of the data that follows; else undefined. */
export function openCache(file: Buffer, sourceHash: Buffer): Buffer | undefined {
  if (file.length <= HEADER_BYTES || !file.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  if (!file.subarray(MAGIC.length, MAGIC.length + HASH_BYTES).equals(sourceHash)) return undefined;
  const data = file.subarray(HEADER_BYTES);
  return checksum(data).equals(file.subarray(MAGIC.length + HASH_BYTES, HEADER_BYTES)) ? data : undefined;
}

/** Reads a cache file that is private to the user (checked on the open descriptor, no link followed), at most {@link MAX_CACHE_FILE_BYTES}. */
export function readPrivateFile(file: string, uid: number | undefined = currentUid()): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch {
    return undefined; // not cached yet
  }
  try {
    const stats = fstatSync(fd);
    if (!isPrivate(stats, uid, 'file') || stats.size > MAX_CACHE_FILE_BYTES) return undefined;
    const buffer = Buffer.alloc(stats.size);
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Writes `bytes` to `file` through a temporary file created private (never through a link), then renames it; a partial file is removed. */
export function writePrivateFile(file: string, bytes: Buffer): void {
  const temporary = `${file}.${process.pid}.tmp`;
  let fd: number | undefined;
  try {
    fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600);
    for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written);
    closeSync(fd);
    fd = undefined;
    renameSync(temporary, file);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(temporary);
    } catch {
      // never created, or already gone
    }
    throw error;
  }
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
      const own = join(dir, 'node');
      if (!preparePrivateDir(dir, own)) return false;
      nodeCache(own);
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
  const versionDir = join(dir, `node-${process.version}-${process.arch}`, checksum(`${bundleDir}\0${flags}`).toString('hex'));
  // The folders are checked before anything is read from them; an unsafe folder means no cache.
  const usable = preparePrivateDir(dir, versionDir, currentUid(), false);
  const toWrite: { script: Script; file: string; stem: string; sourceHash: Buffer }[] = [];
  const proto = Module.prototype as unknown as CompilingModule;
  const compile = proto._compile;

  proto._compile = function compileWithCache(this: CompilingModule, content: string, filename: string): unknown {
    if (dirname(filename) !== bundleDir || !filename.endsWith('.cjs')) return compile.call(this, content, filename);
    const stem = `${basename(filename, '.cjs')}.${command}.`;
    const sourceHash = checksum(content);
    const file = join(versionDir, `${stem}${sourceHash.toString('hex')}.bin`);
    const stored = usable ? readPrivateFile(file) : undefined;
    const cachedData = stored && openCache(stored, sourceHash);
    // The wrapper Node itself puts around a CommonJS file (same line numbers).
    const script = new Script(`(function (exports, require, module, __filename, __dirname) { ${content}\n});`, {
      filename,
      ...(cachedData !== undefined && { cachedData }),
    });
    if (cachedData === undefined || script.cachedDataRejected === true) toWrite.push({ script, file, stem, sourceHash });
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return wrapper.call(this.exports, this.exports, createRequire(filename), this, filename, dirname(filename));
  };

  process.once('exit', () => {
    if (toWrite.length === 0) return;
    try {
      if (!preparePrivateDir(dir, versionDir)) return;
      // What an earlier build left goes, once: the same file and command with other content, files
      // the bundle no longer has (its chunks' names change with their content), and temporary
      // files of a run that died while writing.
      const kept = new Set(toWrite.map(({ file }) => basename(file)));
      for (const old of readdirSync(versionDir)) {
        const replaced = !kept.has(old) && toWrite.some(({ stem }) => old.startsWith(stem));
        const stale = old.endsWith('.tmp') ? !isRunning(Number(/\.(\d+)\.tmp$/.exec(old)?.[1])) : replaced || !exists(join(bundleDir, `${old.slice(0, old.indexOf('.'))}.cjs`));
        if (stale) rmSync(join(versionDir, old), { force: true });
      }
      for (const { script, file, sourceHash } of toWrite) writePrivateFile(file, sealCache(sourceHash, script.createCachedData()));
    } catch {
      // No cache this time: the command's result stands.
    }
  });
  return true;
}
