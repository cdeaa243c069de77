import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** Largest stack file read: 1 MiB (the example stack is about 2 KiB). */
export const MAX_STACK_FILE_BYTES = 1024 * 1024;
/** Largest values file read: 4 MiB (the largest model values file is a few KiB). */
export const MAX_VALUES_FILE_BYTES = 4 * 1024 * 1024;

/**
 * Reads a UTF-8 text file of at most `limit` bytes. A larger file, or one holding NUL bytes
 * (binary), is refused without reading it all, so that a wrong `--stack` cannot cost gigabytes
 * of memory and thousands of meaningless parse errors. Throws the file system error (with its
 * `code`) when the file cannot be read.
 */
export function readTextFile(file: string, limit: number): { text: string } | { problem: string } {
  const fd = openSync(file, 'r');
  try {
    const stat = fstatSync(fd);
    if (stat.isFile() && stat.size > limit) return { problem: tooLarge(stat.size, limit) };
    const buffer = Buffer.alloc(Math.min(limit + 1, stat.isFile() ? stat.size + 1 : limit + 1));
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      if (length > limit) return { problem: tooLarge(length, limit) };
      if (length === buffer.length) break;
    }
    const bytes = buffer.subarray(0, length);
    if (bytes.includes(0)) return { problem: 'is a binary file, not YAML text' };
    return { text: bytes.toString('utf8') };
  } finally {
    closeSync(fd);
  }
}

function tooLarge(size: number, limit: number): string {
  return `is ${size > limit * 2 ? 'far ' : ''}larger than ${limit / (1024 * 1024)} MiB (${size} bytes): not a ${limit === MAX_STACK_FILE_BYTES ? 'stack' : 'values'} file? (the limit guards against reading a wrong or hostile file)`;
}
