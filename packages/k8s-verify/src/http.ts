import http from 'node:http';
import https from 'node:https';
import { abortKind } from './clock.ts';
import { BodyReadError, readBody } from './bounded.ts';

/** Where the HTTP checks send their requests. */
export interface Endpoint {
  /** Base URL: scheme, host, port and any path prefix (KServe's `/<namespace>/<name>`), no trailing `/`. */
  readonly url: string;
  /** Headers sent with every request (e.g. `Authorization` for `--base-url`, `Host` for a Gateway route). Redact their values. */
  readonly headers?: Readonly<Record<string, string>>;
  /** How the endpoint is reached, for messages. */
  readonly via?: string;
  /** The last problem of the transport under the endpoint (a port-forward error), if any. */
  readonly transportProblem?: () => string | null;
  /** Connection pool for the requests; default: a fresh connection per request. */
  readonly agent?: http.Agent;
}

/** Why a request got no (complete) answer. */
export type RequestErrorKind = 'refused' | 'reset' | 'dns' | 'tls' | 'timeout' | 'deadline' | 'aborted' | 'network' | 'too-large' | 'encoded';

/** Most bytes read of one response body (a JSON answer, or a whole SSE stream): 8 MiB. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** Most bytes of one SSE line, and of the `data` of one SSE event: 1 MiB. */
export const MAX_SSE_LINE_BYTES = 1024 * 1024;
/** Most SSE events read from one stream (a `max_tokens: 32` answer has about 35). */
export const MAX_SSE_EVENTS = 10_000;

/** `8 MiB`, `512 KiB`, `100 bytes`. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** A body or stream larger than the caps above: the check fails instead of reading on. */
export function tooLarge(what: string, limit: number): RequestError {
  return new RequestError('too-large', `${what} exceeded ${formatBytes(limit)} (${limit} bytes)`);
}

export class RequestError extends Error {
  override readonly name = 'RequestError';
  constructor(
    readonly kind: RequestErrorKind,
    message: string,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

/** Classifies a socket or abort error. */
export function toRequestError(error: unknown, signal: AbortSignal | undefined): RequestError {
  if (error instanceof RequestError) return error;
  const aborted = abortKind(signal);
  if (aborted) return new RequestError(aborted, aborted === 'deadline' ? String((signal!.reason as Error).message) : aborted);
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? null;
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case 'ECONNREFUSED':
      return new RequestError('refused', 'connection refused', code);
    case 'ECONNRESET':
    case 'EPIPE':
    case 'ECONNABORTED':
    case 'ERR_STREAM_PREMATURE_CLOSE':
      return new RequestError('reset', 'connection closed by the other side', code);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new RequestError('dns', 'host name does not resolve', code);
    default:
      if (message === 'socket hang up' || message === 'aborted') return new RequestError('reset', 'connection closed by the other side', code);
      // OpenSSL errors span several lines ("...:error:0A00010B:SSL routines:..."): the first says it.
      if (code && (/^ERR_TLS|CERT|SSL/.test(code) || /certificate|ssl|tls/i.test(message))) return new RequestError('tls', `TLS failed: ${tlsSummary(message, code)}`, code);
      return new RequestError('network', message, code);
  }
}

function tlsSummary(message: string, code: string): string {
  const first = message.split('\n')[0]!.replace(/^[0-9A-F]{6,}:error:[0-9A-F]+:/i, '').trim();
  if (/wrong version number|packet length too long|http request/i.test(message)) return `the server does not speak TLS here (${code}): use http://, or the TLS port`;
  return first.length > 160 ? `${first.slice(0, 159)}…` : first || code;
}

export interface SendOptions {
  readonly method: 'GET' | 'POST';
  /** Path below the endpoint URL, starting with `/`. */
  readonly path: string;
  readonly body?: unknown;
  readonly signal: AbortSignal;
}

/** `base` with `path` appended to its path (its query string, if any, kept: an API key or version parameter). */
export function joinUrl(base: string, path: string): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
  return url;
}

/** Sends a request; resolves when the response headers arrive. The body is left to read (or to drop). */
export function send(endpoint: Endpoint, options: SendOptions): Promise<http.IncomingMessage> {
  const url = joinUrl(endpoint.url, options.path);
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { accept: 'application/json, text/event-stream', ...endpoint.headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    if (options.signal.aborted) {
      reject(toRequestError(options.signal.reason, options.signal));
      return;
    }
    const request = lib.request(url, { method: options.method, headers, signal: options.signal, agent: endpoint.agent ?? false }, (response) => {
      // A response aborted later surfaces through its own stream; never as an unhandled error.
      response.on('error', () => undefined);
      resolve(response);
    });
    request.on('error', (error) => reject(toRequestError(error, options.signal)));
    request.end(body);
  });
}

/** The body so far (redacted whole, never cut), when a read fails part-way. */
export class BodyError extends RequestError {
  constructor(
    cause: RequestError,
    readonly partial: string,
  ) {
    super(cause.kind, cause.message, cause.code);
  }
}

/**
 * Reads a whole body as text, through the one bounded reader ({@link readBody}): a body longer than
 * `limit` bytes is not read on (a {@link BodyError} of kind `too-large`, "the body exceeded N
 * bytes"), a compressed one is not read (kind `encoded`), so an endless or huge answer costs at most
 * `limit` bytes of memory. `redact` runs on the whole text (also on the part read before a failure)
 * before anyone can cut it: a secret is never cut in two and half shown.
 */
export async function readText(response: http.IncomingMessage, signal: AbortSignal, limit = MAX_BODY_BYTES, redact: (text: string) => string = (text) => text): Promise<string> {
  try {
    return redact((await readBody(response, { limit, signal })).toString('utf8'));
  } catch (error) {
    if (!(error instanceof BodyReadError)) throw new BodyError(toRequestError(error, signal), '');
    throw new BodyError(bodyReadError(error, 'the body', limit, signal), redact(error.partial.toString('utf8')));
  }
}

/** The {@link RequestError} of a body the bounded reader stopped reading (`what`: "the body", "the stream"). */
export function bodyReadError(error: unknown, what: string, limit: number, signal: AbortSignal): RequestError {
  if (!(error instanceof BodyReadError)) return toRequestError(error, signal);
  if (signal.aborted) return toRequestError(signal.reason, signal);
  if (error.kind === 'too-large') return tooLarge(what, limit);
  if (error.kind === 'encoded') return new RequestError('encoded', `the server ${error.message}`);
  if (error.kind === 'incomplete') return new RequestError('reset', `connection closed before ${what} was complete`);
  return toRequestError(error.cause, signal);
}

/** The first `bytes` bytes of a body, one line, for messages. */
export function snippet(text: string, bytes = 200): string {
  const buffer = Buffer.from(text, 'utf8');
  const cut = buffer.length > bytes ? `${buffer.subarray(0, bytes).toString('utf8').replace(/\uFFFD$/, '')}…` : text;
  return cut.replace(/[\r\n\t]+/g, ' ').replace(/[\u0000-\u001f\u007f]/g, '?').trim();
}

export function contentType(response: http.IncomingMessage): string {
  return String(response.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * Incremental parser of a `text/event-stream` body (WHATWG "server-sent events"): feed it text
 * chunks as they arrive; it returns the `data` of each complete event.
 */
export class SseParser {
  #buffer = '';
  #data: string[] = [];
  #dataBytes = 0;
  /** The last chunk ended in "\r": a "\n" starting the next one belongs to that line end ("\r\n" split across chunks). */
  #skipLf = false;
  readonly #maxLine: number;

  /** @param maxLine most bytes of one line and of one event's data; more throws a `too-large` RequestError. */
  constructor(maxLine = MAX_SSE_LINE_BYTES) {
    this.#maxLine = maxLine;
  }

  feed(text: string): string[] {
    if (this.#skipLf && text !== '') {
      if (text.startsWith('\n')) text = text.slice(1);
      this.#skipLf = false;
    }
    this.#buffer += text;
    const events: string[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.#buffer);
      if (!match) break;
      const line = this.#buffer.slice(0, match.index);
      this.#buffer = this.#buffer.slice(match.index + match[0].length);
      // A line ended by a lone "\r" at the end of the chunk: it ends now (CR-only streams end every
      // line so), and a "\n" that opens the next chunk is the rest of a "\r\n".
      if (match[0] === '\r' && this.#buffer === '') this.#skipLf = true;
      if (line === '') {
        if (this.#data.length) events.push(this.#data.join('\n'));
        this.#data = [];
        this.#dataBytes = 0;
      } else if (line.startsWith('data:')) {
        const data = line.slice(line[5] === ' ' ? 6 : 5);
        this.#dataBytes += Buffer.byteLength(data) + 1;
        if (this.#dataBytes > this.#maxLine) throw tooLarge('an SSE event', this.#maxLine);
        this.#data.push(data);
      }
      // Comments (":"), "event:", "id:" and "retry:" lines carry nothing the checks need.
    }
    // An endless line (no newline ever): fail at the cap instead of buffering it all.
    if (Buffer.byteLength(this.#buffer) > this.#maxLine) throw tooLarge('an SSE line', this.#maxLine);
    return events;
  }

  /** Text received after the last complete event (an event cut mid-way), at most 4 KiB. */
  get pending(): string {
    return [...this.#data, this.#buffer].join('\n').slice(0, 4096);
  }
}
