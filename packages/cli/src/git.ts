import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join, resolve, sep } from 'node:path';
import { shellCommand } from '@app-serving/core';
import { UsageError } from './errors.ts';

/** Output limit of the one-line git commands (rev-parse): a path or a hash. */
const MAX_LINE_OUTPUT = 64 * 1024;
/** Time limit of one git command that answers from the repository alone (no network). */
const GIT_TIMEOUT_MS = 120_000;
/** Largest tree object read: about 300,000 entries. */
export const MAX_TREE_BYTES = 16 * 1024 * 1024;
/** Longest symbolic-link target read (git stores it as a blob; PATH_MAX is 4096). */
const MAX_LINK_BYTES = 4096;
/** Most symbolic links followed while resolving one path (Linux's own limit is 40). */
const MAX_LINK_HOPS = 40;

/**
 * The environment of every git command: no prompt, no lock taken on the index, and paths given on
 * the command line are literal (no pathspec magic such as `:(glob)` taken from a file name).
 */
function gitEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', GIT_LITERAL_PATHSPECS: '1' };
}

function notInstalled(error: NodeJS.ErrnoException): UsageError {
  return new UsageError(
    error.code === 'ENOENT' ? 'git is not installed (needed to read --base/--head refs): install git, or use --base-stack' : `git: ${error.message}`,
  );
}

function git(cwd: string, args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync('git', args, { cwd, maxBuffer: MAX_LINE_OUTPUT, timeout: GIT_TIMEOUT_MS, env: gitEnv() });
  if (result.error) throw notInstalled(result.error as NodeJS.ErrnoException);
  return { status: result.status, stdout: result.stdout.toString('utf8').trim(), stderr: result.stderr.toString('utf8').trim() };
}

/** The top folder of the git work tree holding `cwd`; a UsageError outside one. */
export function gitTopLevel(cwd: string): string {
  const out = git(cwd, ['rev-parse', '--show-toplevel']);
  if (out.status !== 0) throw new UsageError(`${cwd} is not inside a git repository: --base/--head read a git ref; use --base-stack <file> --base-models-dir <dir> instead`);
  return resolve(out.stdout);
}

/** The commit a ref names (a branch, tag, `HEAD~1`, a hash); a UsageError naming the option when there is none. */
export function resolveCommit(top: string, ref: string, option: string): string {
  if (ref === '' || /[\0\n]/.test(ref)) throw new UsageError(`${option}: not a git ref`);
  // --end-of-options: a ref that starts with "-" is a ref, never an option of git.
  const out = git(top, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
  if (out.status !== 0 || !/^[0-9a-f]{40,64}$/.test(out.stdout)) {
    // The hint is a command to paste: the ref is quoted for the shell, whatever it holds.
    throw new UsageError(`${option} ${ref}: no such commit, branch or tag in ${top} (fetch it first, e.g. \`${fetchCommand(top, ref)}\`; CI checkouts are often shallow: fetch-depth: 0)`);
  }
  return out.stdout;
}

/** An object as `git cat-file` describes it; null when the repository does not have it. */
interface ObjectInfo {
  readonly type: string;
  readonly size: number;
  readonly oid: string;
}

/** How to fetch a ref: `origin/main` is branch `main` of the remote `origin` (`git fetch origin main`). */
function fetchCommand(top: string, ref: string): string {
  const slash = ref.indexOf('/');
  const remotes = git(top, ['remote']).stdout.split('\n').filter(Boolean);
  // A command to paste: every part quoted for the shell, whatever the ref holds.
  if (slash > 0 && remotes.includes(ref.slice(0, slash))) return shellCommand(['git', 'fetch', ref.slice(0, slash), ref.slice(slash + 1)]);
  return shellCommand(['git', 'fetch', remotes.includes('origin') || remotes.length === 0 ? 'origin' : remotes[0]!, ref]);
}

/**
 * One `git cat-file --batch` (or `--batch-check`) process, answering requests by object id in
 * order. Contents are only asked for once the size is known (the caller checks it first), so
 * nothing larger than the caller's limit is ever read.
 */
class CatFile {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #withContent: boolean;
  readonly #queue: { resolve: (value: { info: ObjectInfo | null; content: Buffer | null }) => void; reject: (error: Error) => void }[] = [];
  #pending = Buffer.alloc(0);
  #content: { info: ObjectInfo; buffer: Buffer; filled: number } | null = null;
  #stderr = '';
  #failure: Error | null = null;

  constructor(repo: string, withContent: boolean, track: (child: ChildProcessWithoutNullStreams) => void) {
    this.#withContent = withContent;
    this.#child = spawn('git', ['cat-file', withContent ? '--batch' : '--batch-check'], { cwd: repo, env: gitEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    track(this.#child);
    this.#child.stdin.on('error', () => undefined);
    this.#child.stdout.on('data', (chunk: Buffer) => this.#receive(chunk));
    this.#child.stderr.on('data', (chunk: Buffer) => {
      if (this.#stderr.length < 4096) this.#stderr += chunk.toString('utf8');
    });
    this.#child.on('error', (error) => this.#fail(notInstalled(error as NodeJS.ErrnoException)));
    this.#child.on('close', (code) => this.#fail(new Error(`git cat-file ended (exit ${code ?? 'by signal'})${this.#stderr.trim() ? `: ${this.#stderr.trim().split('\n')[0]}` : ''}`)));
  }

  request(oid: string): Promise<{ info: ObjectInfo | null; content: Buffer | null }> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolvePromise, reject) => {
      this.#queue.push({ resolve: resolvePromise, reject });
      this.#child.stdin.write(`${oid}\n`);
    });
  }

  close(): void {
    this.#child.stdin.end();
    if (this.#child.exitCode === null) this.#child.kill('SIGKILL');
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const waiting of this.#queue.splice(0)) waiting.reject(this.#failure);
  }

  #receive(chunk: Buffer): void {
    let data = this.#pending.length ? Buffer.concat([this.#pending, chunk]) : chunk;
    this.#pending = Buffer.alloc(0);
    while (data.length > 0) {
      if (this.#content) {
        const { buffer } = this.#content;
        const take = Math.min(buffer.length - this.#content.filled, data.length);
        data.copy(buffer, this.#content.filled, 0, take);
        this.#content.filled += take;
        data = data.subarray(take);
        if (this.#content.filled < buffer.length) return;
        // The content is followed by one newline.
        if (data.length === 0) return;
        data = data.subarray(1);
        const done = this.#content;
        this.#content = null;
        this.#queue.shift()?.resolve({ info: done.info, content: done.buffer });
        continue;
      }
      const newline = data.indexOf(0x0a);
      if (newline < 0) {
        this.#pending = Buffer.from(data);
        return;
      }
      const header = data.subarray(0, newline).toString('utf8');
      data = data.subarray(newline + 1);
      const match = /^([0-9a-f]{40,64}) (\S+) (\d+)$/.exec(header);
      if (!match) {
        // "<oid> missing", "<oid> ambiguous": the repository does not have it (a partial clone).
        this.#queue.shift()?.resolve({ info: null, content: null });
        continue;
      }
      const info = { oid: match[1]!, type: match[2]!, size: Number(match[3]) };
      if (!this.#withContent) {
        this.#queue.shift()?.resolve({ info, content: null });
        continue;
      }
      // Content is only requested for objects whose size was checked first.
      this.#content = { info, buffer: Buffer.alloc(info.size), filled: 0 };
    }
  }
}

/** A repository whose objects are read: the top one, or a submodule's. */
interface Repository {
  readonly dir: string;
  readonly check: CatFile;
  readonly batch: CatFile;
}

/** One entry of a tree object. */
interface TreeEntry {
  readonly mode: string;
  readonly oid: string;
}

/** What a path names at the commit. */
export type Found =
  | { readonly kind: 'tree'; readonly path: string; readonly entries: ReadonlyMap<string, TreeEntry>; readonly at: Location }
  | { readonly kind: 'blob'; readonly path: string; readonly oid: string; readonly repository: Repository }
  | { readonly kind: 'missing'; readonly path: string }
  | { readonly kind: 'problem'; readonly path: string; readonly message: string };

/** A folder the resolution has reached: its path components, and the repository and tree of each. */
type Location = readonly { readonly name: string; readonly repository: Repository; readonly tree: string }[];

/** Thrown for what stops reading a revision altogether: git failing, or an object the clone does not have. */
export class RevisionError extends Error {
  override readonly name = 'RevisionError';
}

/**
 * The files of one commit, read from git's object store only (`git cat-file`: the work tree, the
 * index and HEAD are never touched, and no file of the work tree is read). Paths are resolved one
 * component at a time, as the file system would: a symbolic link is followed when it stays inside
 * the repository and is relative (an absolute link, or one that leads out, is a problem, never
 * followed), at most 40 links per path; a submodule is entered at the commit the superproject
 * records, when the submodule is checked out here.
 */
export class GitTree {
  readonly #top: string;
  readonly #repositories = new Map<string, Repository>();
  readonly #trees = new Map<string, Map<string, TreeEntry>>();
  readonly #children = new Set<ChildProcessWithoutNullStreams>();
  #root: Location | undefined;

  /** `track` receives every git process started (to kill them when the command is interrupted). */
  constructor(
    top: string,
    readonly commit: string,
    readonly track: (child: ChildProcessWithoutNullStreams) => void = () => undefined,
  ) {
    this.#top = top;
  }

  /** Stops every git process of this reader. */
  close(): void {
    for (const repository of this.#repositories.values()) {
      repository.check.close();
      repository.batch.close();
    }
  }

  #repository(dir: string): Repository {
    let repository = this.#repositories.get(dir);
    if (!repository) {
      const track = (child: ChildProcessWithoutNullStreams) => this.track(child);
      repository = { dir, check: new CatFile(dir, false, track), batch: new CatFile(dir, true, track) };
      this.#repositories.set(dir, repository);
    }
    return repository;
  }

  /** The content of an object of at most `limit` bytes (its type checked); a RevisionError when the clone does not have it. */
  async #read(repository: Repository, oid: string, type: string, limit: number, path: string): Promise<Buffer | { tooLarge: number }> {
    const { info } = await this.#ask(repository.check, oid);
    if (!info) throw missingObject(path, oid, repository.dir);
    if (info.type !== type) throw new RevisionError(`${path}: git object ${oid} is a ${info.type}, not a ${type}`);
    if (info.size > limit) return { tooLarge: info.size };
    const { content } = await this.#ask(repository.batch, oid);
    if (!content) throw missingObject(path, oid, repository.dir);
    return content;
  }

  async #ask(cat: CatFile, oid: string): Promise<{ info: ObjectInfo | null; content: Buffer | null }> {
    try {
      return await cat.request(oid);
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new RevisionError(`${(error as Error).message}: the clone may lack objects of this revision (a partial or shallow clone that cannot fetch them): fetch them, e.g. git fetch --refetch origin, or use --base-stack`);
    }
  }

  async #tree(repository: Repository, oid: string, path: string): Promise<Map<string, TreeEntry>> {
    const key = `${repository.dir}\0${oid}`;
    const cached = this.#trees.get(key);
    if (cached) return cached;
    const content = await this.#read(repository, oid, 'tree', MAX_TREE_BYTES, path);
    if (!Buffer.isBuffer(content)) throw new RevisionError(`${path || '.'}: a folder of ${content.tooLarge} bytes of entries at the ref (more than ${MAX_TREE_BYTES}): not read`);
    const entries = parseTree(content, oid.length / 2);
    this.#trees.set(key, entries);
    return entries;
  }

  /** The root tree of `commit` in `repository`. */
  async #rootOf(repository: Repository, commit: string, path: string): Promise<string> {
    const content = await this.#read(repository, commit, 'commit', 1024 * 1024, path);
    const match = Buffer.isBuffer(content) ? /^tree ([0-9a-f]{40,64})\n/.exec(content.toString('utf8')) : null;
    if (!match) throw new RevisionError(`${path || '.'}: commit ${commit} has no tree`);
    return match[1]!;
  }

  /** The content of a blob found by {@link resolve}, at most `limit` bytes (else its size). */
  async content(found: Extract<Found, { kind: 'blob' }>, limit: number): Promise<Buffer | { tooLarge: number }> {
    return this.#read(found.repository, found.oid, 'blob', limit, found.path);
  }

  /** What `path` (relative to the repository's top, `/`-separated) names at the commit. */
  async resolve(path: string): Promise<Found> {
    if (!this.#root) {
      const top = this.#repository(this.#top);
      this.#root = [{ name: '', repository: top, tree: await this.#rootOf(top, this.commit, '') }];
    }
    let location: Location = this.#root;
    let rest = path.split('/');
    let hops = 0;
    const shown = () => location.slice(1).map((l) => l.name).join('/');
    while (rest.length > 0) {
      const [name, ...after] = rest;
      rest = after;
      if (name === '' || name === '.') continue;
      if (name === '..') {
        if (location.length === 1) return { kind: 'problem', path, message: `leads out of the repository (through "..")` };
        location = location.slice(0, -1);
        continue;
      }
      const here = location.at(-1)!;
      const entries = await this.#tree(here.repository, here.tree, shown());
      const entry = entries.get(name!);
      const at = shown() ? `${shown()}/${name}` : name!;
      if (!entry) return { kind: 'missing', path };
      if (entry.mode === '120000') {
        if (++hops > MAX_LINK_HOPS) return { kind: 'problem', path, message: `more than ${MAX_LINK_HOPS} symbolic links to follow (a loop?)` };
        const target = await this.#read(here.repository, entry.oid, 'blob', MAX_LINK_BYTES, at);
        if (!Buffer.isBuffer(target)) return { kind: 'problem', path, message: `${at} is a symbolic link with a target of ${target.tooLarge} bytes` };
        const text = target.toString('utf8');
        if (text.startsWith('/')) return { kind: 'problem', path, message: `${at} is a symbolic link to an absolute path (${text}): diff reads only the repository at the ref; make it a relative link inside the repository` };
        if (text.includes('\0') || text === '') return { kind: 'problem', path, message: `${at} is a symbolic link with no usable target` };
        // Relative to the folder holding the link, as the file system resolves it.
        const steps = text.split('/');
        let depth = location.length - 1;
        for (const step of steps) {
          if (step === '..') depth -= 1;
          else if (step !== '' && step !== '.') depth += 1;
          if (depth < 0) return { kind: 'problem', path, message: `${at} is a symbolic link out of the repository (to ${text}): diff reads only the repository at the ref` };
        }
        rest = [...steps, ...rest];
        continue;
      }
      if (entry.mode === '160000') {
        // A submodule: its files are at the commit the superproject records, in the submodule's own repository.
        const dir = join(this.#top, ...location.slice(1).map((l) => l.name), name!);
        if (!isRepositoryTop(dir)) {
          return { kind: 'problem', path, message: `${at} is a submodule (at commit ${entry.oid.slice(0, 12)}) that is not checked out here: run git submodule update --init, or diff from inside it` };
        }
        const repository = this.#repository(dir);
        location = [...location, { name: name!, repository, tree: await this.#rootOf(repository, entry.oid, at) }];
        continue;
      }
      if (entry.mode === '40000' || entry.mode === '040000') {
        location = [...location, { name: name!, repository: here.repository, tree: entry.oid }];
        continue;
      }
      // A file: the path must end here.
      if (rest.some((r) => r !== '' && r !== '.')) return { kind: 'missing', path };
      return { kind: 'blob', path: at, oid: entry.oid, repository: here.repository };
    }
    const here = location.at(-1)!;
    return { kind: 'tree', path: shown(), entries: await this.#tree(here.repository, here.tree, shown()), at: location };
  }
}

function missingObject(path: string, oid: string, dir: string): RevisionError {
  return new RevisionError(
    `${path || '.'}: git object ${oid.slice(0, 12)} is not in the repository ${dir} (a partial or shallow clone that cannot fetch it?): fetch the ref completely, e.g. git fetch --refetch origin, or use --base-stack`,
  );
}

/** Whether `dir` is the top of a git work tree of its own (a checked-out submodule). */
function isRepositoryTop(dir: string): boolean {
  const out = spawnSync('git', ['rev-parse', '--show-toplevel'], { cwd: dir, maxBuffer: MAX_LINE_OUTPUT, timeout: GIT_TIMEOUT_MS, env: gitEnv() });
  return !out.error && out.status === 0 && resolve(out.stdout.toString('utf8').trim()) === resolve(dir);
}

/** The entries of a tree object: `<mode> <name>\0<binary hash>`, repeated. Names git itself would refuse are left out. */
function parseTree(content: Buffer, hashBytes: number): Map<string, TreeEntry> {
  const entries = new Map<string, TreeEntry>();
  let offset = 0;
  while (offset < content.length) {
    const space = content.indexOf(0x20, offset);
    const nul = content.indexOf(0, space + 1);
    if (space < 0 || nul < 0 || nul + 1 + hashBytes > content.length) break;
    const mode = content.subarray(offset, space).toString('latin1');
    const name = content.subarray(space + 1, nul).toString('utf8');
    const oid = content.subarray(nul + 1, nul + 1 + hashBytes).toString('hex');
    offset = nul + 1 + hashBytes;
    if (name === '' || name === '.' || name === '..' || name.includes('/')) continue;
    entries.set(name, { mode, oid });
  }
  return entries;
}

/** `a/b` inside `top`, `/`-separated; null when `path` is outside. */
export function repoRelative(top: string, path: string): string | null {
  const abs = resolve(path);
  if (abs === top) return '';
  if (!abs.startsWith(`${top}${sep}`)) return null;
  return abs.slice(top.length + 1).split(sep).join('/');
}

/** `join` for a repo-relative path. */
export function inside(dir: string, relative: string): string {
  return join(dir, ...relative.split('/'));
}
