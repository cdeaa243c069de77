import { loadRenderer } from '../renderer.ts';
import { realpathSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import {
  deepEqual,
  diffDeployments,
  displayPath,
  isStackError,
  MAX_STACK_FILE_BYTES,
  readTextFile,
  stackSecretFingerprints,
  StackError,
  type DeploymentDiff,
  type DeploymentPlan,
  type DiffResource,
  type DiffSide,
} from '@app-serving/core';
import { loadAndPlan, resolveModelsDir, resolveStackFile, type StackOptions } from '../context.ts';
import { EXIT, UsageError } from '../errors.ts';
import { GitTree, gitTopLevel, repoRelative, resolveCommit, RevisionError } from '../git.ts';
import type { Output } from '../output.ts';
import { extractRevision } from '../revision.ts';
import { checkTempDir, makeTempDir, removeTempDir, trackChild } from '../temp.ts';
import { formatMarkdown, formatText, type DiffHeader } from './diff-format.ts';

interface DiffOptions extends StackOptions {
  readonly base?: string;
  readonly head?: string;
  readonly baseStack?: string;
  readonly baseModelsDir?: string;
  readonly json?: boolean;
  readonly format?: string;
  readonly exitCode?: boolean;
}

/** Where one side of the diff comes from, as the output names it. */
export interface SideInfo {
  /** The git ref given (`--base main`), or null for files on disk. */
  readonly ref: string | null;
  /** The commit the ref names, or null. */
  readonly commit: string | null;
  /** The stack file (a path, `<ref>:<path>` for a git ref). */
  readonly stack: string;
  /** False when the stack file does not exist there: every model is added (or removed). */
  readonly exists: boolean;
}

interface LoadedSide {
  readonly info: SideInfo;
  readonly plan: DeploymentPlan | null;
  readonly secrets: Record<string, string>;
}

const FORMATS = ['text', 'markdown', 'json'] as const;

/**
 * `app-serving diff`: what changes in the cluster between two revisions of a stack, offline. Both
 * revisions are planned and rendered with the same code as `render`; core compares them.
 */
export default async function diff({ options, output }: { options: DiffOptions; output: Output }): Promise<number> {
  const format = options.json ? 'json' : (options.format ?? 'text');
  if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format ${format}: must be one of ${FORMATS.join(', ')}`);
  if ((options.base === undefined) === (options.baseStack === undefined)) {
    throw new UsageError('give the revision to compare with: --base <git-ref> (e.g. origin/main), or --base-stack <file> [--base-models-dir <dir>]');
  }
  if (options.baseModelsDir !== undefined && options.baseStack === undefined) throw new UsageError('--base-models-dir goes with --base-stack (with --base, the models folder is read at the ref)');

  // The temporary folder is checked first: a git ref is copied into it, and Pulumi's runtime needs it.
  checkTempDir();
  const cwd = process.cwd();
  // Both sides are loaded before either's problems are reported: every problem in one pass.
  const head = await attempt(() => (options.head !== undefined ? loadFromGit(options.head, '--head', options, cwd) : loadWorkingTree(options)));
  const base = await attempt(() => (options.base !== undefined ? loadFromGit(options.base, '--base', options, cwd) : loadFiles(options.baseStack!, options.baseModelsDir)));
  if ('error' in head && 'error' in base && isStackError(head.error) && isStackError(base.error)) throw new StackError([...base.error.issues, ...head.error.issues]);
  if ('error' in head) throw head.error;
  if ('error' in base) throw base.error;

  const result = await compare(base.side, head.side);
  const header: DiffHeader = { base: base.side.info, head: head.side.info };
  if (format === 'json') output.json({ base: header.base, head: header.head, ...result });
  else output.out(format === 'markdown' ? formatMarkdown(result, header) : formatText(result, header, output.color));
  return options.exitCode && result.changed ? EXIT.problems : EXIT.ok;
}

async function attempt(load: () => LoadedSide | Promise<LoadedSide>): Promise<{ side: LoadedSide } | { error: unknown }> {
  try {
    return { side: await load() };
  } catch (error) {
    return { error };
  }
}

/**
 * Renders both sides and diffs them. A model whose plan is the same on both sides (and nothing
 * stack-wide differs: the stack's settings, its secrets) registers the same resources on both, so
 * only the other models are rendered — with the same code as `render`.
 */
async function compare(base: LoadedSide, head: LoadedSide): Promise<DeploymentDiff> {
  // The base is the same Pulumi stack as the head: same stack name, so that URNs match.
  const stackName = head.plan?.stack ?? base.plan?.stack ?? 'stack';
  const basePlan = base.plan && { ...base.plan, stack: stackName };
  const headPlan = head.plan && { ...head.plan, stack: stackName };
  const same = basePlan && headPlan ? unchangedModels(basePlan, headPlan, deepEqual(base.secrets, head.secrets)) : null;
  // Nothing differs (the usual case for a pull request that touches other files): nothing to render,
  // and Pulumi is not even loaded.
  if (same && same.models.size === basePlan!.models.length && same.models.size === headPlan!.models.length && same.stackWide) {
    return diffDeployments({ plan: basePlan, resources: [] }, { plan: headPlan, resources: [] });
  }
  const skip = same?.models ?? new Set<string>();
  const renderStack = await loadRenderer();
  const render = async (plan: DeploymentPlan | null, secrets: Record<string, string>): Promise<DiffResource[]> => {
    if (!plan) return [];
    const placeholders: Record<string, string> & { apiKeys?: Record<string, string> } = Object.fromEntries(Object.entries(secrets).filter(([key]) => !key.startsWith('apiKeys.')).map(([key, fp]) => [key, `app-serving-diff-${fp}`]));
    // A key's placeholder stands for its ciphertext: a rotated key changes the hashes it renders into, never showing one.
    const keys = Object.entries(secrets).filter(([key]) => key.startsWith('apiKeys.'));
    if (keys.length > 0) placeholders.apiKeys = Object.fromEntries(keys.map(([key, fp]) => [key.slice('apiKeys.'.length), `app-serving-diff-${fp}`]));
    const changed = { ...plan, models: plan.models.filter((m) => !skip.has(m.name)) };
    return (await renderStack(changed, { secrets: placeholders, secretDigests: true })).resources;
  };
  const baseResources = await render(basePlan, base.secrets);
  const headResources = await render(headPlan, head.secrets);
  return diffDeployments({ plan: basePlan, resources: baseResources, secrets: base.secrets }, { plan: headPlan, resources: headResources, secrets: head.secrets } satisfies DiffSide);
}

/**
 * Whether nothing stack-wide differs (the stack's settings, its secrets), and then the names of the
 * models planned identically on both sides (else none: a stack-wide change may reach every model).
 */
function unchangedModels(base: DeploymentPlan, head: DeploymentPlan, sameSecrets: boolean): { stackWide: boolean; models: Set<string> } {
  const stackWide = (p: DeploymentPlan) => ({ ...p, file: '', models: [], images: [], warnings: [] });
  if (!sameSecrets || !deepEqual(plain(stackWide(base)), plain(stackWide(head)))) return { stackWide: false, models: new Set() };
  const byName = new Map(head.models.map((m) => [m.name, m]));
  const models = new Set<string>();
  for (const model of base.models) {
    const other = byName.get(model.name);
    if (other && deepEqual(plain(model, model.folder), plain(other, other.folder))) models.add(model.name);
  }
  return { stackWide: true, models };
}

/** A JSON copy, the model folder's path replaced (two checkouts of one model compare equal). */
function plain(value: unknown, folder?: string): unknown {
  const text = JSON.stringify(value);
  return JSON.parse(folder ? text.split(JSON.stringify(folder).slice(1, -1)).join('<model>') : text);
}

/** The fingerprints of a stack file's secrets, read through core's bounded reader (planning has read it already: nothing when it has gone since). */
function fingerprintsOf(file: string): Record<string, string> {
  try {
    const read = readTextFile(file, MAX_STACK_FILE_BYTES);
    return 'text' in read ? stackSecretFingerprints(read.text) : {};
  } catch {
    return {};
  }
}

function loadWorkingTree(options: DiffOptions): LoadedSide {
  const { file, plan } = loadAndPlan(options);
  return { info: { ref: null, commit: null, stack: displayPath(file), exists: true }, plan, secrets: fingerprintsOf(file) };
}

function loadFiles(stack: string, modelsDir: string | undefined): LoadedSide {
  const options = { stack, ...(modelsDir !== undefined && { modelsDir }) };
  let side: ReturnType<typeof loadAndPlan>;
  try {
    side = loadAndPlan(options);
  } catch (error) {
    // The messages name --stack and --models-dir: here they are --base-stack and --base-models-dir.
    throw relabel(error, null, (text) => text.replace(/(^|[^-\w])--stack\b/g, '$1--base-stack').replace(/(^|[^-\w])--models-dir\b/g, '$1--base-models-dir'));
  }
  return { info: { ref: null, commit: null, stack: displayPath(side.file), exists: true }, plan: side.plan, secrets: fingerprintsOf(side.file) };
}

/**
 * One side at a git ref: exactly the files planning reads — the stack file, the values files of
 * its enabled models — are read from git's object store (`git cat-file`) into a temporary folder
 * (the work tree is not touched), planned there, and the folder removed. The paths are the working
 * tree's: `--stack` and `--models-dir` (or their defaults), relative to the repository's top.
 * Nothing above the temporary folder is looked at, and no link is followed out of the repository.
 */
async function loadFromGit(ref: string, option: '--base' | '--head', options: DiffOptions, cwd: string): Promise<LoadedSide> {
  const top = gitTopLevel(cwd);
  const commit = resolveCommit(top, ref, option);
  const stackFile = options.stack !== undefined ? resolve(cwd, options.stack) : resolveStackFile({}, cwd);
  const stackRel = repoRelative(top, real(stackFile));
  if (stackRel === null) throw new UsageError(`${displayPath(stackFile)}: the stack file is outside the git repository ${top}`);
  const modelsDir = modelsDirFor(options, stackFile, cwd);
  const modelsRel = modelsDir === null ? null : repoRelative(top, real(modelsDir));
  if (modelsDir !== null && modelsRel === null) throw new UsageError(`${displayPath(modelsDir)}: the models folder is outside the git repository ${top}`);

  const label = `${ref}:${stackRel}`;
  const tmp = makeTempDir('app-serving-diff-');
  const tree = new GitTree(top, commit, trackChild);
  // Every way the temporary folder can appear in a message (absolute, real, relative to the working directory).
  const rename = renamer(tmp, ref);
  try {
    let side: Awaited<ReturnType<typeof extractRevision>>;
    try {
      side = await extractRevision(tree, stackRel, modelsRel, tmp, (path) => `${ref}:${path}`);
    } catch (error) {
      if (error instanceof RevisionError) throw new UsageError(`${option} ${ref}: ${error.message}`);
      throw error;
    }
    if (!side.exists) return { info: { ref, commit, stack: label, exists: false }, plan: null, secrets: {} };
    let planned: ReturnType<typeof loadAndPlan> | undefined;
    let problems: unknown;
    if (side.issues.length === 0 || side.issues.every((i) => i.file !== `${ref}:${stackRel}`)) {
      try {
        planned = loadAndPlan({ stack: side.stackFile, modelsDir: side.modelsDir });
      } catch (error) {
        problems = error;
      }
    }
    if (side.issues.length > 0 || problems !== undefined) {
      const issues = [...side.issues, ...(isStackError(problems) ? problems.issues : [])];
      if (problems !== undefined && !isStackError(problems)) throw relabel(problems, option, rename);
      throw relabel(new StackError(issues), option, rename);
    }
    return { info: { ref, commit, stack: label, exists: true }, plan: relocate(planned!.plan, rename), secrets: fingerprintsOf(side.stackFile) };
  } finally {
    tree.close();
    removeTempDir(tmp);
  }
}

/**
 * Replaces the temporary folder in a text by `<ref>:`, in every form a message may hold it: as
 * given, its real path, and either relative to the working directory (a TMPDIR inside it).
 */
function renamer(tmp: string, ref: string): (text: string) => string {
  const forms = new Set<string>([tmp]);
  try {
    forms.add(realpathSync.native(tmp));
  } catch {
    // gone already
  }
  for (const form of [...forms]) forms.add(displayPath(form));
  const prefixes = [...forms].filter((f) => f !== '.' && f !== '').sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const prefix of prefixes) out = out.split(`${prefix}/`).join(`${ref}:`);
    return out;
  };
}

/** The models folder of the working tree's layout: `--models-dir`, else the first `models/` above the stack file, else null. */
function modelsDirFor(options: DiffOptions, stackFile: string, cwd: string): string | null {
  if (options.modelsDir !== undefined) return resolve(cwd, options.modelsDir);
  try {
    return resolveModelsDir({}, dirname(stackFile), cwd);
  } catch {
    return null;
  }
}

/** The real path of `path`, or of its folder when it does not exist (git reports real paths). */
function real(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    try {
      return resolve(realpathSync.native(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

/** The plan's paths (the stack file, model folders, image origins) as `<ref>:<path>`, not the temporary folder's: every string renamed. */
function relocate(plan: DeploymentPlan, rename: (text: string) => string): DeploymentPlan {
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return rename(value);
    if (Array.isArray(value)) return value.map(walk);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
    return value;
  };
  return walk(JSON.parse(JSON.stringify(plan))) as DeploymentPlan;
}

/** A problem of one side, named as that side: issue files as `<ref>:<path>`, usage errors with the option. */
function relabel(error: unknown, option: string | null, rename: (text: string) => string): unknown {
  if (isStackError(error)) return new StackError(error.issues.map((issue) => ({ ...issue, ...(issue.file !== undefined && { file: rename(issue.file) }), message: rename(issue.message) })));
  if (error instanceof UsageError) return new UsageError(`${option === null ? '' : `${option}: `}${rename(error.message)}`);
  return error;
}
