import type { ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from './errors.ts';

/**
 * Temporary folders and child processes of a command, removed and stopped however the command
 * ends: normally (the caller's `finally`), or interrupted (SIGINT, SIGTERM, SIGHUP): then the
 * folders are removed and the children killed before the process ends by that same signal, as a
 * shell expects (exit status 128 + the signal's number).
 */
const folders = new Set<string>();
const children = new Set<ChildProcess>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
let installed = false;

function onSignal(signal: NodeJS.Signals): void {
  cleanUp();
  for (const s of SIGNALS) process.removeListener(s, onSignal);
  process.kill(process.pid, signal);
}

/** Removes every folder and stops every child still registered. */
export function cleanUp(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  folders.clear();
}

function install(): void {
  if (installed) return;
  installed = true;
  for (const signal of SIGNALS) process.on(signal, onSignal);
  process.once('exit', cleanUp);
}

/** The temporary folder (TMPDIR), checked: a folder that exists and can be written. A UsageError naming TMPDIR otherwise. */
export function checkTempDir(): string {
  const dir = tmpdir();
  const fix = 'set TMPDIR to a folder that exists and can be written';
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (error) {
    throw new UsageError(`the temporary folder ${dir} (TMPDIR) cannot be used (${(error as NodeJS.ErrnoException).code ?? String(error)}): ${fix}`);
  }
  if (!isDir) throw new UsageError(`the temporary folder ${dir} (TMPDIR) is not a folder: ${fix}`);
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch {
    throw new UsageError(`the temporary folder ${dir} (TMPDIR) cannot be written: ${fix}`);
  }
  return dir;
}

/** A new private folder under TMPDIR, removed when the command ends or is interrupted. */
export function makeTempDir(prefix: string): string {
  const base = checkTempDir();
  install();
  let dir: string;
  try {
    dir = mkdtempSync(join(base, prefix));
  } catch (error) {
    throw new UsageError(`cannot create a temporary folder in ${base} (${(error as NodeJS.ErrnoException).code ?? String(error)}): free space there, or set TMPDIR to another folder`);
  }
  folders.add(dir);
  return dir;
}

/** Removes a folder made by {@link makeTempDir}. */
export function removeTempDir(dir: string): void {
  folders.delete(dir);
  rmSync(dir, { recursive: true, force: true });
}

/** Registers a child process to kill when the command is interrupted. */
export function trackChild(child: ChildProcess): void {
  install();
  children.add(child);
  child.once('exit', () => children.delete(child));
}
