import { isAbsolute, relative, sep } from 'node:path';

/** A path as shown in messages: relative to the working directory when inside it, else absolute. */
export function displayPath(path: string, cwd: string = process.cwd()): string {
  const rel = relative(cwd, path);
  if (rel === '') return '.';
  if (rel.startsWith('..') || isAbsolute(rel)) return path;
  return rel.split(sep).join('/');
}
