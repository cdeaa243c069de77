import { constants, promises as fs } from 'node:fs';

/**
 * Reading what others wrote, in bounded time and memory: files named in a kubeconfig, JSON from a
 * server, text that ends up in a message.
 */

/** Deepest JSON nesting parsed: a Kubernetes object is about 10 deep, an OpenAI answer less. */
export const MAX_JSON_DEPTH = 256;
/** Longest string kept in a result, a message or an event (a server's text, a kubeconfig's name). */
export const MAX_TEXT_LENGTH = 2000;
/** Most items of a list kept in a result's data (the model ids a server lists, …). */
export const MAX_LIST_ITEMS = 100;

/** A file that cannot be read within the bounds: not a regular file, too large, or unreadable. */
export class FileLimitError extends Error {
  override readonly name = 'FileLimitError';
}

function aborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_, reject) => {
    if (signal?.aborted) reject(signal.reason);
    signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * Reads a regular file of at most `limit` bytes. A FIFO, a device (`/dev/zero`), a socket or a
 * folder is refused before it is opened for reading (opened without blocking, checked again on the
 * descriptor); a file that grows past `limit` while it is read is refused at `limit + 1` bytes. The
 * read gives up when `signal` aborts (a file on a hung network mount).
 */
export async function readBoundedFile(path: string, limit: number, signal?: AbortSignal): Promise<Buffer> {
  const work = (async () => {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    } catch (error) {
      throw new FileLimitError(`cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw new FileLimitError(`is not a regular file (${kindOf(stats)}): give the path of a file`);
      if (stats.size > limit) throw new FileLimitError(`is larger than ${formatLimit(limit)} (${stats.size} bytes)`);
      const buffer = Buffer.alloc(limit + 1);
      let length = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
        if (bytesRead === 0) break;
        length += bytesRead;
        if (length > limit) throw new FileLimitError(`is larger than ${formatLimit(limit)}`);
      }
      return buffer.subarray(0, length);
    } finally {
      await handle.close().catch(() => undefined);
    }
  })();
  work.catch(() => undefined);
  return signal ? Promise.race([work, aborted(signal)]) : work;
}

function kindOf(stats: import('node:fs').Stats): string {
  if (stats.isDirectory()) return 'a folder';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isSocket()) return 'a socket';
  return 'not a file';
}

/** `4 MiB`, `64 KiB`. */
export function formatLimit(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * Whether `text`, read as JSON, nests deeper than `max` arrays and objects. One linear pass, so
 * that `[[[[…` a few MiB long is refused before `JSON.parse` builds millions of arrays from it.
 */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth -= 1;
  }
  return false;
}

/** `JSON.parse`, refusing nesting deeper than {@link MAX_JSON_DEPTH} (a SyntaxError, as for any other JSON it cannot read). */
export function parseJson(text: string): unknown {
  if (jsonTooDeep(text)) throw new SyntaxError(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  return JSON.parse(text);
}

/** `text` cut to `length` characters, ending in `… (N more characters)` when cut (never inside a surrogate pair). */
export function clip(text: string, length = MAX_TEXT_LENGTH): string {
  if (text.length <= length) return text;
  let cut = length - 1;
  if (/[\uD800-\uDBFF]/.test(text.charAt(cut - 1))) cut -= 1;
  return `${text.slice(0, cut)}… (${text.length - cut} more characters)`;
}

/** A copy of `value` whose strings are at most {@link MAX_TEXT_LENGTH} characters and lists at most {@link MAX_LIST_ITEMS} items. */
export function bounded<T>(value: T): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return clip(v);
    if (Array.isArray(v)) return v.slice(0, MAX_LIST_ITEMS).map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [clip(k, 200), walk(x)]));
    return v;
  };
  return walk(value) as T;
}
