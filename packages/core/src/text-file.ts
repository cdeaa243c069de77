import { closeSync, constants, fstatSync, openSync, promises as fs, readSync, statfsSync, statSync, type Stats } from 'node:fs';

/**
 * The one bounded reader of files, for every tool of the project: the stack file, values files, a
 * local chart's `Chart.yaml` and package, a kubeconfig and the files it names. A file is read only
 * when it is a regular file on a disk (not a FIFO, a device, a socket, a folder, nor a file of
 * /proc or /sys, whose size says nothing of what a read returns), of at most its limit: the size is
 * checked on the opened descriptor before a byte is read, and the read loop stops at limit + 1
 * bytes whatever the size said (a file that grows while it is read). The asynchronous reader also
 * gives up when the run's deadline (an AbortSignal) passes (a file on a hung network mount).
 */

/** Largest stack file read: 1 MiB (the example stack is about 2 KiB). */
export const MAX_STACK_FILE_BYTES = 1024 * 1024;
/** Largest values file read: 4 MiB (the largest model values file is a few KiB). */
export const MAX_VALUES_FILE_BYTES = 4 * 1024 * 1024;

/** Why a file was not read. */
export type FileLimitReason = 'not-a-file' | 'pseudo-file' | 'too-large' | 'unreadable';

/**
 * A file that cannot be read within the bounds. Its message is a plain sentence that completes
 * "the <what> <file> …": `is not a regular file (a FIFO): …`, `is larger than 4 MiB (… bytes)`,
 * `cannot be read (EACCES: permission denied)`. `code` is the file system's error code, if any.
 */
export class FileLimitError extends Error {
  override readonly name = 'FileLimitError';
  constructor(
    message: string,
    readonly reason: FileLimitReason,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

/** `4 MiB`, `64 KiB`, `100 bytes`. */
export function formatLimit(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

// File systems whose files report a size unrelated to what a read returns (statfs(2) f_type,
// linux/magic.h): /proc/self/mem reads EIO, /proc/kcore is 128 TiB, a /sys attribute is "4096".
const PSEUDO_FILE_SYSTEMS = new Map<number, string>([
  [0x9fa0, '/proc'],
  [0x62656572, '/sys'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x62656570, 'configfs'],
  [0xde5e81e4, 'efivarfs'],
  [0xcafe4a11, 'bpf'],
]);

const ERRNO_TEXT: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOENT: 'no such file',
  ENOTDIR: 'a part of the path is not a folder',
  ELOOP: 'a loop of symbolic links',
  ENAMETOOLONG: 'the path is too long',
  EIO: 'an input/output error',
  EISDIR: 'it is a folder',
  ENXIO: 'no such device',
  EMFILE: 'too many open files',
};

/** `EACCES: permission denied`: an error code with what it means. */
export function describeErrno(code: string | null | undefined): string {
  if (!code) return 'an error';
  return ERRNO_TEXT[code] ? `${code}: ${ERRNO_TEXT[code]}` : code;
}

function unreadable(error: unknown): FileLimitError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? null;
  return new FileLimitError(`cannot be read (${describeErrno(code)})`, 'unreadable', code);
}

/** What a non-regular file is, for a message. */
export function fileKind(stats: Stats): string {
  if (stats.isDirectory()) return 'a folder';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isSocket()) return 'a socket';
  return 'not a file';
}

/**
 * The type of the file system each device holds (`statfs`'s `f_type`), asked once per device: a
 * device number names one mounted file system, so every file of it shares the answer (a plan reads
 * a hundred values files of one disk). Undefined where statfs failed; a failure is not kept, so the
 * next file of the device asks again.
 */
const fileSystemTypes = new Map<number, number>();

function fileSystemType(path: string, device: number): number | undefined {
  const known = fileSystemTypes.get(device);
  if (known !== undefined) return known;
  try {
    const type = Number(statfsSync(path).type);
    fileSystemTypes.set(device, type);
    return type;
  } catch {
    return undefined;
  }
}

/** The problem of a file that is not a regular file on disk, or null. */
function kindProblem(path: string, stats: Stats): FileLimitError | null {
  if (!stats.isFile()) return new FileLimitError(`is not a regular file (${fileKind(stats)}): give the path of a file`, 'not-a-file');
  const type = fileSystemType(path, stats.dev);
  const pseudo = type === undefined ? undefined : PSEUDO_FILE_SYSTEMS.get(type);
  if (pseudo) return new FileLimitError(`is a file of ${pseudo}, not a file on disk (its size says nothing of what reading it returns): give the path of a file`, 'pseudo-file');
  return null;
}

function tooLarge(size: number | null, limit: number): FileLimitError {
  return new FileLimitError(`is larger than ${formatLimit(limit)}${size === null ? '' : ` (${size} bytes)`}`, 'too-large');
}

/** Open flags: never block on a FIFO nobody writes, never become the controlling terminal. */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/**
 * Reads a regular file of at most `limit` bytes, synchronously (core's planning is synchronous).
 * Throws a {@link FileLimitError} for a missing or unreadable file, a FIFO, a device, a folder, a
 * file of /proc or /sys, or one larger than `limit` — checked before a byte is read, and again
 * while reading.
 */
export function readBoundedFileSync(path: string, limit: number): Buffer {
  let before: Stats;
  try {
    before = statSync(path);
  } catch (error) {
    throw unreadable(error);
  }
  const kind = kindProblem(path, before);
  if (kind) throw kind;
  if (before.size > limit) throw tooLarge(before.size, limit);
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (error) {
    throw unreadable(error);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new FileLimitError(`is not a regular file (${fileKind(stats)}): give the path of a file`, 'not-a-file');
    if (stats.size > limit) throw tooLarge(stats.size, limit);
    const buffer = Buffer.alloc(Math.min(limit, stats.size) + 1);
    let length = 0;
    for (;;) {
      let read: number;
      try {
        read = readSync(fd, buffer, length, buffer.length - length, length);
      } catch (error) {
        throw unreadable(error);
      }
      if (read === 0) break;
      length += read;
      if (length > limit) throw tooLarge(null, limit);
      // The size said less than the file holds (it grew): read on, up to limit + 1.
      if (length === buffer.length) return Buffer.concat([buffer, readRest(fd, length, limit)]);
    }
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

/** The bytes after `offset` of a file that grew while it was read, refusing more than `limit` in all. */
function readRest(fd: number, offset: number, limit: number): Buffer {
  const buffer = Buffer.alloc(limit + 1 - offset);
  let length = 0;
  for (;;) {
    let read: number;
    try {
      read = readSync(fd, buffer, length, buffer.length - length, offset + length);
    } catch (error) {
      throw unreadable(error);
    }
    if (read === 0) return buffer.subarray(0, length);
    length += read;
    if (offset + length > limit) throw tooLarge(null, limit);
  }
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * Reads a regular file of at most `limit` bytes, as {@link readBoundedFileSync} does, and gives up
 * when `signal` aborts (rejecting with its reason): a file on a hung mount cannot outlast the run.
 */
export async function readBoundedFile(path: string, limit: number, signal?: AbortSignal): Promise<Buffer> {
  const work = (async () => {
    let before: Stats;
    try {
      before = await fs.stat(path);
    } catch (error) {
      throw unreadable(error);
    }
    const kind = kindProblem(path, before);
    if (kind) throw kind;
    if (before.size > limit) throw tooLarge(before.size, limit);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(path, OPEN_FLAGS);
    } catch (error) {
      throw unreadable(error);
    }
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw new FileLimitError(`is not a regular file (${fileKind(stats)}): give the path of a file`, 'not-a-file');
      if (stats.size > limit) throw tooLarge(stats.size, limit);
      const buffer = Buffer.alloc(limit + 1);
      let length = 0;
      for (;;) {
        if (signal?.aborted) throw signal.reason;
        let bytesRead: number;
        try {
          ({ bytesRead } = await handle.read(buffer, length, buffer.length - length, length));
        } catch (error) {
          throw unreadable(error);
        }
        if (bytesRead === 0) break;
        length += bytesRead;
        if (length > limit) throw tooLarge(null, limit);
      }
      return buffer.subarray(0, length);
    } finally {
      await handle.close().catch(() => undefined);
    }
  })();
  work.catch(() => undefined);
  return signal ? Promise.race([work, aborted(signal)]) : work;
}

/**
 * Reads a UTF-8 text file of at most `limit` bytes. A larger file, or one holding NUL bytes
 * (binary), is refused without reading it all, so that a wrong `--stack` cannot cost gigabytes
 * of memory and thousands of meaningless parse errors; so is a FIFO, a device, a folder or a file
 * of /proc (a problem, never a hang). Throws the file system error (with its `code`) when the
 * file cannot be opened or read (missing, no permission). `bytes` are the file's bytes as read
 * (for a tool that writes the file back and must keep what it does not change: `migrate`).
 */
export function readTextFile(file: string, limit: number): { text: string; bytes: Buffer } | { problem: string; readonly notAFile?: true } {
  let bytes: Buffer;
  try {
    bytes = readBoundedFileSync(file, limit);
  } catch (error) {
    if (!(error instanceof FileLimitError)) throw error;
    if (error.reason === 'unreadable') throw Object.assign(new Error(error.message), { code: error.code ?? 'EIO' });
    if (error.reason === 'too-large') return { problem: textTooLarge(statSize(file), limit) };
    // A FIFO, a device, a folder, a file of /proc: `notAFile`, for an issue code that says so.
    return { problem: error.message, notAFile: true };
  }
  const decoded = decodeText(bytes);
  return 'problem' in decoded ? decoded : { text: decoded.text, bytes };
}

function statSize(file: string): number | null {
  try {
    return statSync(file).size;
  } catch {
    return null;
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

function textTooLarge(size: number | null, limit: number): string {
  const shown = size === null || size <= limit ? '' : ` (${size} bytes)`;
  return `is ${size !== null && size > limit * 2 ? 'far ' : ''}larger than ${formatLimit(limit)}${shown}: not a ${limit === MAX_STACK_FILE_BYTES ? 'stack' : 'values'} file? (the limit guards against reading a wrong or hostile file)`;
}
