import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** Largest stack file read: 1 MiB (the example stack is about 2 KiB). */
export const MAX_STACK_FILE_BYTES = 1024 * 1024;
/** Largest values file read: 4 MiB (the largest model values file is a few KiB). */
export const MAX_VALUES_FILE_BYTES = 4 * 1024 * 1024;

/**
 * Reads a UTF-8 text file of at most `limit` bytes. A larger file, or one holding NUL bytes
 * (binary), is refused without reading it all, so that a wrong `--stack` cannot cost gigabytes
 * of memory and thousands of meaningless parse errors. Throws the file system error (with its
 * `code`) when the file cannot be read. `bytes` are the file's bytes as read (for a tool that
 * writes the file back and must keep what it does not change: `migrate`).
 */
export function readTextFile(file: string, limit: number): { text: string; bytes: Buffer } | { problem: string } {
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
    const decoded = decodeText(bytes);
    return 'problem' in decoded ? decoded : { text: decoded.text, bytes };
  } finally {
    closeSync(fd);
  }
}

/**
 * The text of a file's bytes, as YAML reads them (YAML 1.2 §5.2): UTF-8, or UTF-16 with its byte
 * order mark (an editor's "Unicode" on Windows); a UTF-8 byte order mark is dropped. Line breaks
 * are CR, LF or CR LF: a lone CR (classic Mac line endings) is read as a line feed, as the YAML
 * spec reads it. A file with NUL bytes otherwise is binary. Bytes that are not UTF-8 (a Latin-1
 * `é` in a comment) are refused at their line, as the Go YAML library of Pulumi and Helm refuses
 * them (`yaml: invalid trailing UTF-8 octet`), instead of being read as U+FFFD.
 */
export function decodeText(bytes: Buffer): { text: string } | { problem: string } {
  let text: string;
  if ((bytes[0] === 0xff && bytes[1] === 0xfe && bytes[2] === 0 && bytes[3] === 0) || (bytes[0] === 0 && bytes[1] === 0 && bytes[2] === 0xfe && bytes[3] === 0xff)) {
    return { problem: 'is UTF-32 text: save it as UTF-8' };
  }
  if (bytes[0] === 0xff && bytes[1] === 0xfe) text = new TextDecoder('utf-16le').decode(bytes.subarray(2));
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) text = new TextDecoder('utf-16be').decode(bytes.subarray(2));
  else {
    if (bytes.includes(0)) return { problem: 'is a binary file, not YAML text' };
    text = bytes.toString('utf8');
    const invalid = text.includes('\ufffd') ? firstInvalidUtf8(bytes, text) : -1;
    if (invalid >= 0) {
      const line = bytes.subarray(0, invalid).reduce((n, b) => (b === 0x0a ? n + 1 : n), 1);
      return { problem: `is not UTF-8 text: line ${line} holds the byte 0x${bytes[invalid]!.toString(16)}, which UTF-8 does not allow there (Latin-1 or Windows-1252 text?): save it as UTF-8` };
    }
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  }
  if (text.includes('\0')) return { problem: 'is a binary file, not YAML text' };
  return { text: text.includes('\r') ? text.replace(/\r(?!\n)/g, '\n') : text };
}

/**
 * The offset of the first byte of `bytes` that is not valid UTF-8, or -1. `text` is their decoding,
 * which writes U+FFFD for such bytes: the valid prefix encodes back to the same bytes, so the
 * first difference is the first invalid byte (a U+FFFD written in the file encodes back as itself).
 */
function firstInvalidUtf8(bytes: Buffer, text: string): number {
  const back = Buffer.from(text, 'utf8');
  const length = Math.min(back.length, bytes.length);
  for (let i = 0; i < length; i++) if (back[i] !== bytes[i]) return i;
  return back.length === bytes.length ? -1 : length;
}

function tooLarge(size: number, limit: number): string {
  return `is ${size > limit * 2 ? 'far ' : ''}larger than ${limit / (1024 * 1024)} MiB (${size} bytes): not a ${limit === MAX_STACK_FILE_BYTES ? 'stack' : 'values'} file? (the limit guards against reading a wrong or hostile file)`;
}
