import http from 'node:http';
import https from 'node:https';
import { StringDecoder } from 'node:string_decoder';
import { formatLimit } from '@app-serving/core';

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

// Files are read by core's one bounded reader (regular files only, size capped before reading,
// under the run's deadline): the kubeconfig and the files it names go through it too.
export { FileLimitError, readBoundedFile, formatLimit } from '@app-serving/core';

/** Why an answer's body was not read whole. */
export type BodyProblem = 'too-large' | 'encoded' | 'incomplete' | 'stream';

/**
 * A body that could not be read within the bounds. The message completes "<the server> …":
 * `answered more than 16 MiB: not read on`, `answered in content-encoding gzip though none was asked
 * for: not read`. `partial` holds what was read (at most the limit), for a message — redact it
 * whole before cutting it.
 */
export class BodyReadError extends Error {
  override readonly name = 'BodyReadError';
  constructor(
    readonly kind: BodyProblem,
    message: string,
    readonly partial: Buffer,
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}

/** The Content-Encoding of an answer, lower case; `identity` when there is none. */
export function contentEncoding(response: http.IncomingMessage): string {
  return String(response.headers['content-encoding'] ?? 'identity').trim().toLowerCase() || 'identity';
}

/**
 * The one bounded reader of HTTP answers (the API server's, Prometheus's, an OpenAI endpoint's): at
 * most `limit` bytes (the answer is destroyed at the first byte past it: an endless answer costs
 * the limit, no more), never decompressed (an answer in a Content-Encoding other than identity is
 * refused before a byte is read: nobody here asks for one, and inflating one is how a 1 MB gzip body
 * becomes 1 GiB), and given up when `signal` aborts (rejecting with its reason; the socket is
 * destroyed, so nothing keeps the run alive).
 */
export function readBody(response: http.IncomingMessage, bounds: { readonly limit: number; readonly signal: AbortSignal }): Promise<Buffer> {
  const { limit, signal } = bounds;
  const encoding = contentEncoding(response);
  if (encoding !== 'identity') {
    response.destroy();
    return Promise.reject(new BodyReadError('encoded', `answered in content-encoding ${clip(encoding, 40)} though none was asked for: not read`, Buffer.alloc(0)));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = () => {
      response.destroy();
      settle(() => reject(signal.reason));
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    response.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) {
        chunks.push(chunk.subarray(0, chunk.length - (size - limit)));
        response.destroy();
        settle(() => reject(new BodyReadError('too-large', `answered more than ${formatLimit(limit)}: not read on (an endless or oversized answer)`, Buffer.concat(chunks))));
        return;
      }
      chunks.push(chunk);
    });
    response.on('error', (error) => settle(() => reject(new BodyReadError('stream', 'the connection failed while the answer was read', Buffer.concat(chunks), error))));
    response.on('end', () => settle(() => (response.complete ? resolve(Buffer.concat(chunks)) : reject(new BodyReadError('incomplete', 'closed the connection before the answer was complete', Buffer.concat(chunks))))));
    response.on('close', () => settle(() => reject(new BodyReadError('incomplete', 'closed the connection before the answer was complete', Buffer.concat(chunks)))));
  });
}

/**
 * The body of an answer as text, chunk by chunk as it arrives (a stream of server-sent events),
 * within the same bounds as {@link readBody}: a compressed answer is refused before a byte is read,
 * and the stream is destroyed at the first byte past `limit`. The request's signal ends it.
 */
export async function* bodyChunks(response: http.IncomingMessage, bounds: { readonly limit: number }): AsyncGenerator<string> {
  const encoding = contentEncoding(response);
  if (encoding !== 'identity') {
    response.destroy();
    throw new BodyReadError('encoded', `answered in content-encoding ${clip(encoding, 40)} though none was asked for: not read`, Buffer.alloc(0));
  }
  const decoder = new StringDecoder('utf8');
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > bounds.limit) {
      response.destroy();
      throw new BodyReadError('too-large', `answered more than ${formatLimit(bounds.limit)}: not read on (an endless or oversized answer)`, Buffer.alloc(0));
    }
    const text = decoder.write(chunk);
    if (text) yield text;
  }
  const rest = decoder.end();
  if (rest) yield rest;
}

/** Why a GET got no usable JSON answer; the message completes "<the server> …" (`answered HTTP 503`). */
export class AnswerError extends Error {
  override readonly name = 'AnswerError';
  constructor(
    message: string,
    /** `transport`: no answer (refused, reset, DNS, TLS); `answer`: an answer that is not what was asked for. */
    readonly kind: 'transport' | 'answer',
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

/**
 * GETs `url` (http or https) and parses its JSON answer, bounded as {@link readBody} reads
 * (`Accept-Encoding: identity`; an encoded answer is refused), never redirected, JSON at most
 * {@link MAX_JSON_DEPTH} deep, under `signal` (rejecting with its reason when it aborts).
 * Rejects with an {@link AnswerError} otherwise. For servers outside the cluster (Prometheus).
 */
export async function getJson(url: string, options: { readonly limit: number; readonly signal: AbortSignal; readonly headers?: Readonly<Record<string, string>> }): Promise<unknown> {
  const target = new URL(url);
  const lib = target.protocol === 'https:' ? https : http;
  const { signal } = options;
  if (signal.aborted) throw signal.reason;
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const request = lib.request(target, { method: 'GET', headers: { accept: 'application/json', 'accept-encoding': 'identity', ...options.headers }, signal, agent: false }, resolve);
    request.on('error', (error) => reject(signal.aborted ? signal.reason : new AnswerError(`does not answer (${transportReason(error)})`, 'transport')));
    request.end();
  });
  const status = response.statusCode ?? 0;
  if (status >= 300 && status < 400) {
    response.destroy();
    throw new AnswerError(`answered HTTP ${status}, a redirect: not followed (give the address the server answers at)`, 'answer', status);
  }
  let body: Buffer;
  try {
    body = await readBody(response, { limit: options.limit, signal });
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (error instanceof BodyReadError) throw new AnswerError(error.kind === 'stream' ? `${error.message} (${transportReason(error.cause)})` : error.message, error.kind === 'stream' || error.kind === 'incomplete' ? 'transport' : 'answer', status);
    throw error;
  }
  if (status < 200 || status >= 300) throw new AnswerError(`answered HTTP ${status}`, 'answer', status);
  const text = body.toString('utf8');
  try {
    return parseJson(text);
  } catch (error) {
    const deep = error instanceof SyntaxError && /nested deeper/.test(error.message);
    throw new AnswerError(deep ? `answered JSON nested deeper than ${MAX_JSON_DEPTH} levels` : /^\s*</.test(text) ? 'answered an HTML page, not JSON' : 'answered something that is not JSON', 'answer', status);
  }
}

function transportReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return clip(typeof code === 'string' ? code : error instanceof Error ? error.message.split('\n')[0]! : String(error), 200);
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
