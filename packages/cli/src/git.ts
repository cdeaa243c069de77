import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { UsageError } from './errors.ts';

/** Output limit of one git command: a models folder of a few thousand files fits many times over. */
const MAX_BUFFER = 512 * 1024 * 1024;

function git(cwd: string, args: readonly string[], input?: Buffer): { status: number | null; stdout: Buffer; stderr: string } {
  const result = spawnSync('git', args, { cwd, input, maxBuffer: MAX_BUFFER, env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' } });
  if (result.error) {
    const code = (result.error as NodeJS.ErrnoException).code;
    throw new UsageError(code === 'ENOENT' ? 'git is not installed (needed to read --base/--head refs): install git, or use --base-stack' : `git ${args[0]}: ${result.error.message}`);
  }
  return { status: result.status, stdout: result.stdout, stderr: result.stderr.toString('utf8').trim() };
}

/** The top folder of the git work tree holding `cwd`; a UsageError outside one. */
export function gitTopLevel(cwd: string): string {
  const out = git(cwd, ['rev-parse', '--show-toplevel']);
  if (out.status !== 0) throw new UsageError(`${cwd} is not inside a git repository: --base/--head read a git ref; use --base-stack <file> --base-models-dir <dir> instead`);
  return resolve(out.stdout.toString('utf8').trim());
}

/** The commit a ref names (a branch, tag, `HEAD~1`, a hash); a UsageError naming the option when there is none. */
export function resolveCommit(top: string, ref: string, option: string): string {
  if (ref === '' || /[\0\n]/.test(ref)) throw new UsageError(`${option}: not a git ref`);
  // --end-of-options: a ref that starts with "-" is a ref, never an option of git.
  const out = git(top, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
  if (out.status !== 0) throw new UsageError(`${option} ${ref}: no such commit, branch or tag in ${top} (fetch it first, e.g. \`${fetchCommand(top, ref)}\`; CI checkouts are often shallow: fetch-depth: 0)`);
  return out.stdout.toString('utf8').trim();
}

/** How to fetch a ref: `origin/main` is branch `main` of the remote `origin` (`git fetch origin main`). */
function fetchCommand(top: string, ref: string): string {
  const slash = ref.indexOf('/');
  const remotes = git(top, ['remote']).stdout.toString('utf8').split('\n').filter(Boolean);
  if (slash > 0 && remotes.includes(ref.slice(0, slash))) return `git fetch ${ref.slice(0, slash)} ${ref.slice(slash + 1)}`;
  return `git fetch ${remotes.includes('origin') || remotes.length === 0 ? 'origin' : remotes[0]} ${ref}`;
}

/**
 * Writes the files under `paths` (relative to the repository's top, `/`-separated) as they are in
 * `commit` into `dest`, keeping their relative paths. Reads git's object store only: the work tree,
 * the index and HEAD are untouched. Returns the paths written (files and symbolic links).
 */
export function extractPaths(top: string, commit: string, paths: readonly string[], dest: string): string[] {
  if (paths.length === 0) return [];
  const list = git(top, ['ls-tree', '-r', '-z', '--full-tree', commit, '--', ...paths]);
  if (list.status !== 0) throw new Error(`git ls-tree ${commit}: ${list.stderr}`);
  const entries: { mode: string; object: string; path: string }[] = [];
  for (const record of list.stdout.toString('utf8').split('\0')) {
    if (record === '') continue;
    const match = /^(\d+) (\w+) ([0-9a-f]+)\t([\s\S]+)$/.exec(record);
    if (!match || match[2] !== 'blob') continue; // submodules (commit entries) have no content here
    entries.push({ mode: match[1]!, object: match[3]!, path: match[4]! });
  }
  if (entries.length === 0) return [];
  const batch = git(top, ['cat-file', '--batch'], Buffer.from(entries.map((e) => `${e.object}\n`).join('')));
  if (batch.status !== 0) throw new Error(`git cat-file: ${batch.stderr}`);
  const root = resolve(dest);
  let offset = 0;
  const written: string[] = [];
  for (const entry of entries) {
    const newline = batch.stdout.indexOf(0x0a, offset);
    const header = batch.stdout.subarray(offset, newline).toString('utf8');
    const size = Number(header.split(' ')[2]);
    if (!Number.isInteger(size)) throw new Error(`git cat-file: unexpected header "${header}"`);
    const content = batch.stdout.subarray(newline + 1, newline + 1 + size);
    offset = newline + 1 + size + 1;
    const target = resolve(root, entry.path);
    // git never stores "..", but a path is checked anyway before anything is written.
    if (!target.startsWith(`${root}${sep}`)) continue;
    mkdirSync(dirname(target), { recursive: true });
    if (entry.mode === '120000') symlinkSync(content.toString('utf8'), target);
    else writeFileSync(target, content);
    written.push(entry.path);
  }
  return written;
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
