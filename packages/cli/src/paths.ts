import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { expandHome } from '@app-serving/core';
import { UsageError } from './errors.ts';

/**
 * Checks, before any work, that `file` can be written: not a folder, its folder exists and is
 * writable. A usage error (exit 2) naming the flag otherwise.
 */
export function checkWritableFile(flag: string, file: string): void {
  const path = resolve(file);
  if (existsSync(path) && statSync(path).isDirectory()) throw new UsageError(`${flag} ${JSON.stringify(file)}: is a folder; give a file name`);
  const dir = dirname(path);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`${flag} ${JSON.stringify(file)}: the folder ${dir} does not exist`);
  try {
    accessSync(dir, constants.W_OK);
    if (existsSync(path)) accessSync(path, constants.W_OK);
  } catch {
    throw new UsageError(`${flag} ${JSON.stringify(file)}: cannot write there (permission denied)`);
  }
}

/** Checks, before any work, that an input file given by a flag (`~/` expanded) is there: a usage error (exit 2) otherwise. */
export function checkExistingFile(flag: string, file: string): void {
  const path = expandHome(file, homedir());
  if (!existsSync(path)) throw new UsageError(`${flag} ${JSON.stringify(file)}: no such file`);
  if (statSync(path).isDirectory()) throw new UsageError(`${flag} ${JSON.stringify(file)}: is a folder; give a file`);
}

/** Checks, before any work, that `dir` is a folder that can be written, or can be created. */
export function checkWritableDir(flag: string, dir: string): void {
  let path = resolve(dir);
  if (existsSync(path) && !statSync(path).isDirectory()) throw new UsageError(`${flag} ${JSON.stringify(dir)}: is a file, not a folder`);
  // The nearest existing folder decides whether the rest can be created.
  while (!existsSync(path) && dirname(path) !== path) path = dirname(path);
  if (!statSync(path).isDirectory()) throw new UsageError(`${flag} ${JSON.stringify(dir)}: ${path} is a file, not a folder`);
  try {
    accessSync(path, constants.W_OK);
  } catch {
    throw new UsageError(`${flag} ${JSON.stringify(dir)}: cannot write into ${path} (permission denied)`);
  }
}
