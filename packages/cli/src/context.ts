import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { CATEGORIES, displayPath, isStackError, loadStackFile, parseStackFile, planDeployment, stackNameFromFile, withModelFolderIssues, type DeploymentPlan, type StackConfig } from '@app-serving/core';
import { UsageError } from './errors.ts';

/** Options every stack command takes. */
export interface StackOptions {
  readonly stack?: string;
  readonly modelsDir?: string;
}

/** The built-in example stack, relative to the repository root. */
export const EXAMPLE_STACK = 'apps/app-serving/Pulumi.example.yaml';

/**
 * The stack file to read: `--stack`, else the repository's example stack found from `cwd` upwards.
 * Throws a UsageError that says what to pass when there is neither.
 */
export function resolveStackFile(options: StackOptions, cwd: string = process.cwd()): string {
  if (options.stack !== undefined) {
    const file = resolve(cwd, options.stack);
    if (!isFile(file)) throw new UsageError(`--stack ${options.stack}: no such file`);
    return file;
  }
  for (let dir = cwd; ; dir = dirname(dir)) {
    const candidate = join(dir, EXAMPLE_STACK);
    if (isFile(candidate)) return candidate;
    if (dirname(dir) === dir) break;
  }
  throw new UsageError(`no --stack given and no ${EXAMPLE_STACK} above ${cwd}: pass --stack <Pulumi.<stack>.yaml>`);
}

/**
 * The models folder: `--models-dir`, else the first `models/` folder (holding `generative/` or
 * `embedder/`) found from `from` upwards (the stack file's folder, or the working directory).
 */
export function resolveModelsDir(options: StackOptions, from: string, cwd: string = process.cwd()): string {
  if (options.modelsDir !== undefined) {
    const dir = resolve(cwd, options.modelsDir);
    if (!isDirectory(dir)) throw new UsageError(`--models-dir ${options.modelsDir}: no such directory`);
    return dir;
  }
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'models');
    if (isDirectory(join(candidate, 'generative')) || isDirectory(join(candidate, 'embedder'))) return candidate;
    if (dirname(dir) === dir) break;
  }
  throw new UsageError(`no models/ folder (with generative/ or embedder/) above ${displayPath(from)}: pass --models-dir <dir>`);
}

/**
 * Loads the stack and plans it: throws a StackError listing every problem. `read`: the stack
 * file's text as the caller read it (migrate reads the file once, and writes back what it read).
 */
export function loadAndPlan(options: StackOptions, read?: { readonly file: string; readonly text: string }): { file: string; config: StackConfig; plan: DeploymentPlan; modelsDir: string | null } {
  const file = read?.file ?? resolveStackFile(options);
  // The stack first: its own problems are reported even when no models folder can be found.
  // Rules across keys are checked by the planner, together with the model folders: one pass.
  let config: StackConfig;
  try {
    config = read ? parseStackFile(read.text, displayPath(file), stackNameFromFile(file), { checkRules: false }) : loadStackFile(file, displayPath(file), { checkRules: false });
  } catch (error) {
    // A stack file with problems: the model folders of the entries that parse are checked all the
    // same, so that one run reports both kinds (when the models folder can be found at all).
    if (!isStackError(error) || !error.partial) throw error;
    const modelsDir = modelsDirFor(error.partial, options, file, true);
    throw modelsDir === null ? error : withModelFolderIssues(error, modelsDir);
  }
  const modelsDir = modelsDirFor(config, options, file, false);
  return { file, config, plan: planDeployment(config, modelsDir ?? dirname(file)), modelsDir };
}

/** The models folder, when an enabled model (or `--models-dir`) needs one; `null` otherwise, or when `quiet` and it cannot be found. */
function modelsDirFor(config: StackConfig, options: StackOptions, file: string, quiet: boolean): string | null {
  const anyEnabled = CATEGORIES.some((category) => config.models[category].some((entry) => entry.enabled));
  if (!anyEnabled && options.modelsDir === undefined) return null;
  try {
    return resolveModelsDir(options, dirname(file));
  } catch (error) {
    if (quiet && error instanceof UsageError) return null;
    throw error;
  }
}

function isFile(path: string): boolean {
  return existsSync(path) && statSync(path).isFile();
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}
