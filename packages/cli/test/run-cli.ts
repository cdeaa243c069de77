import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onTestFinished } from 'vitest';

export const CLI_ROOT = join(import.meta.dirname, '..');
export const REPO_ROOT = join(CLI_ROOT, '..', '..');

/**
 * Whether the built command can run as the user nobody here (the tests of what another user may
 * do): as root, with `runuser`, in a checkout whose folders nobody may enter (a clone under a
 * `mktemp -d` folder, mode 700, is not one: there these tests are skipped, not failed).
 */
export const RUNS_AS_NOBODY =
  process.getuid?.() === 0 && spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, '-e', `require('fs').accessSync(${JSON.stringify(join(CLI_ROOT, 'bin', 'app-serving.js'))})`], { stdio: 'ignore' }).status === 0;
const BIN = join(CLI_ROOT, 'bin', 'app-serving.js');

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Spawns the built `app-serving` binary, as a user would, and collects its output. */
export function cli(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return collect(process.execPath, [BIN, ...args], { cwd: options.cwd ?? REPO_ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env } });
}

/** Spawns a command with no input and collects its exit code and output. */
export function collect(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A temporary repository with the given files (path → content), removed after the test. */
export function fixtureRepo(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-cli-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A minimal llm-d model folder. */
export function modelFiles(category: string, name: string, slug: string, ms = 'modelArtifacts:\n  name: org/m\n  uri: hf://org/m\n'): Record<string, string> {
  return {
    [`models/${category}/${name}/gaie-${slug}/values.yaml`]: 'inferenceExtension:\n  replicas: 1\n',
    [`models/${category}/${name}/ms-${slug}/values.yaml`]: ms,
  };
}

/** True when `text` holds ANSI escape codes. */
export function hasAnsi(text: string): boolean {
  return /\u001b\[/.test(text);
}
