import { isAbsolute, relative, sep } from 'node:path';

/** A path as shown in messages: relative to the working directory when inside it, else absolute. */
export function displayPath(path: string, cwd: string = process.cwd()): string {
  // The common case, a normalised path below the working directory: what relative() gives, without
  // resolving both paths (a plan shows every values file's path: relative() was ~1% of validate).
  if (sep === '/' && cwd !== '/' && path.length > cwd.length + 1 && path[cwd.length] === '/' && path.startsWith(cwd) && NORMALISED.test(cwd) && NORMALISED.test(path)) {
    return path.slice(cwd.length + 1);
  }
  const rel = relative(cwd, path);
  if (rel === '') return '.';
  if (rel.startsWith('..') || isAbsolute(rel)) return path;
  return rel.split(sep).join('/');
}

/** An absolute POSIX path without `.` or `..` segments, doubled or trailing slashes. */
const NORMALISED = /^\/(?!.*\/\.{0,2}(?:\/|$))/;
