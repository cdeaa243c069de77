import { closeSync, ftruncateSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { CATEGORIES, isStackError, loadStackFile, MAX_STACK_FILE_BYTES, MAX_VALUES_FILE_BYTES, VALUES_FOLDERS, type Issue, type StackConfig } from '@app-serving/core';
import { UsageError } from './errors.ts';
import { inside, type Found, type GitTree } from './git.ts';

/** Most folder names of a category written for the "did you mean" of a model folder that is not at the ref. */
const MAX_LISTED_FOLDERS = 10_000;
/** A model folder name as core accepts it (never "..", never a path). */
const FOLDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** What {@link extractRevision} wrote, and the problems of reading the revision. */
export interface Extracted {
  /** False when the stack file does not exist at the ref. */
  readonly exists: boolean;
  /** The stack file in the temporary folder. */
  readonly stackFile: string;
  /** The models folder in the temporary folder (always there, empty when the ref has none). */
  readonly modelsDir: string;
  /** Problems of the revision itself: links out of the repository, a stack path that is a folder, … */
  readonly issues: readonly Issue[];
}

/**
 * Writes into `tmp` exactly what planning one revision reads, from git's object store: the stack
 * file, then, for each enabled model of it, its folder's values folders and their `values.yaml`
 * (a model folder not at the ref: the names of its category's folders, for the suggestion). No
 * other file is read or written: a models folder of 30,000 files costs a few objects. A file over
 * core's limit is written as an empty sparse file of its size, so that core reports it as too
 * large without it being read. Links are followed inside the repository only ({@link GitTree}).
 * The models folder is the working tree's (`modelsRel`), else the first `models/` above the
 * stack file at the ref, else an empty one: nothing above `tmp` is ever looked at.
 */
export async function extractRevision(tree: GitTree, stackRel: string, modelsRel: string | null, tmp: string, label: (path: string) => string): Promise<Extracted> {
  const issues: Issue[] = [];
  const problem = (path: string, message: string) => issues.push({ code: 'file.unreadable', path: '', message, file: label(path) });
  const stackFile = inside(tmp, stackRel);

  const stack = await tree.resolve(stackRel);
  const modelsAt = modelsRel ?? (await findModelsDir(tree, stackRel)) ?? 'models';
  const modelsDir = inside(tmp, modelsAt);
  makeDir(modelsDir);
  if (stack.kind === 'missing') return { exists: false, stackFile, modelsDir, issues };
  if (stack.kind === 'problem') {
    problem(stackRel, `the stack file at the ref: ${stack.message}`);
    return { exists: true, stackFile, modelsDir, issues };
  }
  if (stack.kind === 'tree') {
    problem(stackRel, 'is a folder at the ref, not a stack file');
    return { exists: true, stackFile, modelsDir, issues };
  }
  await writeBlob(tree, stack, stackFile, MAX_STACK_FILE_BYTES);

  const config = enabledModels(stackFile);
  if (!config) return { exists: true, stackFile, modelsDir, issues };
  const models = await tree.resolve(modelsAt);
  if (models.kind === 'problem') problem(modelsAt, models.message);
  if (models.kind !== 'tree') return { exists: true, stackFile, modelsDir, issues };

  const listed = new Set<string>();
  for (const category of CATEGORIES) {
    for (const entry of config.models[category]) {
      if (!entry.enabled || !FOLDER_NAME.test(entry.name)) continue;
      const folder = `${modelsAt}/${category}/${entry.name}`;
      const found = await tree.resolve(folder);
      if (found.kind === 'problem') problem(folder, found.message);
      else if (found.kind === 'tree') await writeModelFolder(tree, found, inside(tmp, folder), folder, problem);
      else {
        // Not at the ref: what core's message suggests instead (another category, a close name).
        for (const other of CATEGORIES) {
          if (other === category || listed.has(`${other}/${entry.name}`)) continue;
          listed.add(`${other}/${entry.name}`);
          if ((await tree.resolve(`${modelsAt}/${other}/${entry.name}`)).kind === 'tree') makeDir(inside(tmp, `${modelsAt}/${other}/${entry.name}`));
        }
        if (!listed.has(category)) {
          listed.add(category);
          await writeFolderNames(tree, `${modelsAt}/${category}`, inside(tmp, `${modelsAt}/${category}`));
        }
      }
    }
  }
  return { exists: true, stackFile, modelsDir, issues };
}

/** The first `models/` folder (holding `generative/` or `embedder/`) from the stack file's folder up to the top, at the ref. */
async function findModelsDir(tree: GitTree, stackRel: string): Promise<string | null> {
  const parts = stackRel.split('/').slice(0, -1);
  for (let depth = parts.length; depth >= 0; depth -= 1) {
    const candidate = [...parts.slice(0, depth), 'models'].join('/');
    for (const category of CATEGORIES) if ((await tree.resolve(`${candidate}/${category}`)).kind === 'tree') return candidate;
  }
  return null;
}

/** The stack file's config, or the part of it that parsed; null when nothing did (planning reports why). */
function enabledModels(stackFile: string): StackConfig | null {
  try {
    return loadStackFile(stackFile, stackFile, { checkRules: false });
  } catch (error) {
    return isStackError(error) ? (error.partial ?? null) : null;
  }
}

/** A model folder: its values folders (`gaie-*`, `ms-*`, `infra-*`, `kserve-*`, links followed) and their values.yaml. */
async function writeModelFolder(tree: GitTree, folder: Extract<Found, { kind: 'tree' }>, dest: string, path: string, problem: (path: string, message: string) => void): Promise<void> {
  makeDir(dest);
  const prefixes = Object.values(VALUES_FOLDERS).map((p) => `${p}-`);
  for (const name of folder.entries.keys()) {
    if (!prefixes.some((p) => name.startsWith(p) && name.length > p.length) || !FOLDER_NAME.test(name)) continue;
    const sub = `${path}/${name}`;
    const found = await tree.resolve(sub);
    if (found.kind === 'problem') problem(sub, found.message);
    if (found.kind !== 'tree') continue;
    makeDir(inside(dest, name));
    const values = await tree.resolve(`${sub}/values.yaml`);
    if (values.kind === 'problem') problem(`${sub}/values.yaml`, values.message);
    else if (values.kind === 'blob') await writeBlob(tree, values, inside(dest, `${name}/values.yaml`), MAX_VALUES_FILE_BYTES);
  }
}

/** The folder names of a category (empty folders), for core's suggestion of a close name. */
async function writeFolderNames(tree: GitTree, path: string, dest: string): Promise<void> {
  const found = await tree.resolve(path);
  if (found.kind !== 'tree') return;
  makeDir(dest);
  let count = 0;
  for (const [name, entry] of found.entries) {
    if (count >= MAX_LISTED_FOLDERS) break;
    if (!FOLDER_NAME.test(name) || (entry.mode !== '40000' && entry.mode !== '040000')) continue;
    makeDir(inside(dest, name));
    count += 1;
  }
}

/**
 * Writes a blob to `file`; one larger than `limit` is written as an empty (sparse) file of its
 * size, so that the reader sees how large it is without it being read or stored.
 */
async function writeBlob(tree: GitTree, blob: Extract<Found, { kind: 'blob' }>, file: string, limit: number): Promise<void> {
  const content = await tree.content(blob, limit);
  makeDir(dirname(file));
  let fd: number | undefined;
  try {
    fd = openSync(file, 'wx', 0o600);
    if (Buffer.isBuffer(content)) {
      for (let written = 0; written < content.length; ) written += writeSync(fd, content, written, content.length - written);
    } else ftruncateSync(fd, content.tooLarge);
  } catch (error) {
    throw tmpError(error);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function makeDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw tmpError(error);
  }
}

/** A temporary folder that cannot be written (full, read-only): the user's to fix. */
export function tmpError(error: unknown): UsageError {
  const code = (error as NodeJS.ErrnoException).code ?? String(error);
  return new UsageError(`cannot write the temporary copy of the revision (${code}${code === 'ENOSPC' || code === 'EFBIG' || code === 'EDQUOT' ? ': no space left' : ''}): free space in the temporary folder, or set TMPDIR to another one`);
}
