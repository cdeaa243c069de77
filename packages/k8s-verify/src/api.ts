import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { BodyReadError, clip, formatLimit, jsonTooDeep, MAX_JSON_DEPTH, readBody } from './bounded.ts';
import { Redactor } from './redact.ts';

/** Largest answer of the API server read (a page of a list, or one object): 16 MiB. */
export const MAX_API_BODY_BYTES = 16 * 1024 * 1024;
/** Most pages of one list read (`limit` items each, `continue` tokens). */
export const MAX_LIST_PAGES = 1000;

/**
 * Why a call got no usable answer. `status` is the HTTP status when one came (the API server's own
 * error), else null (no answer, or an answer that is not the Kubernetes API's).
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    message: string,
    readonly status: number | null,
    /** What the server said (its Status message, or the first bytes of its body), redacted and cut. */
    readonly detail: string | null,
    /** `refused`, `timeout`, … for a transport failure; `answer` for an answer that is not the API's. */
    readonly kind: 'http' | 'answer' | 'transport',
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

export interface ApiRequest {
  readonly method?: 'GET' | 'POST';
  /** The API path, e.g. `/api/v1/namespaces/x/pods`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | undefined>>;
  readonly body?: unknown;
  readonly signal: AbortSignal;
}

/**
 * The Kubernetes REST calls preflight and verify make, in bounded memory: every answer is read by
 * the one bounded reader ({@link readBody}) to at most {@link MAX_API_BODY_BYTES} (a larger or
 * endless one is cut and the call fails), never decompressed (`Accept-Encoding: identity`; an
 * encoded answer is refused before a byte is read), never redirected, and parsed as JSON only when
 * it is JSON of sane depth. Every answer is redacted whole (the kubeconfig's secrets, in every
 * encoding) before anything reads it, so that no message cut from it can hold part of a secret.
 *
 * Built on the kubeconfig's own TLS and credential options (`applyToHTTPSOptions`), after
 * {@link resolveCredentials} has made them static: no request runs a plugin or reads a file.
 */
export class KubeApi {
  readonly #server: URL;
  readonly #redactor: Redactor;
  readonly #options: Promise<https.RequestOptions>;

  constructor(kubeConfig: KubeConfig, secrets: readonly string[] = []) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new ApiError('the kubeconfig has no current cluster', null, null, 'answer');
    this.#server = new URL(cluster.server);
    this.#redactor = new Redactor(secrets);
    this.#options = (async () => {
      const options: https.RequestOptions = {};
      await kubeConfig.applyToHTTPSOptions(options);
      return options;
    })();
    this.#options.catch(() => undefined);
  }

  /** Redacts a text with the kubeconfig's secrets (for messages built from what the server said). */
  redact(text: string): string {
    return this.#redactor.text(text);
  }

  /** One call; resolves the parsed JSON of a 2xx answer, rejects with an {@link ApiError}. */
  async request(request: ApiRequest): Promise<unknown> {
    let options: https.RequestOptions;
    try {
      options = await this.#options;
    } catch (error) {
      throw new ApiError(`the kubeconfig's TLS settings cannot be used (${clip((error as Error).message.split('\n')[0]!, 200)})`, null, null, 'answer');
    }
    const url = new URL(this.#server.toString());
    url.pathname = `${url.pathname.replace(/\/+$/, '')}${request.path}`;
    for (const [key, value] of Object.entries(request.query ?? {})) if (value !== undefined) url.searchParams.set(key, value);
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    const headers: Record<string, string> = {
      ...(options.headers as Record<string, string> | undefined),
      accept: 'application/json',
      'accept-encoding': 'identity',
      ...(body !== undefined && { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }),
    };
    const lib = url.protocol === 'https:' ? https : http;
    const { status, type, location, text } = await new Promise<{ status: number; type: string; location: string | null; text: string }>((resolve, reject) => {
      if (request.signal.aborted) return reject(request.signal.reason);
      const req = lib.request(url, { ...options, headers, method: request.method ?? 'GET', signal: request.signal }, (response) => {
        const status = response.statusCode ?? 0;
        const type = String(response.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        const location = typeof response.headers.location === 'string' ? response.headers.location : null;
        // A redirect is not followed, nor read.
        if (status >= 300 && status < 400) {
          response.destroy();
          return resolve({ status, type, location, text: '' });
        }
        readBody(response, { limit: MAX_API_BODY_BYTES, signal: request.signal }).then(
          // Redacted whole before anything reads it: no message, cut or not, can hold a secret the server echoes.
          (body) => resolve({ status, type, location, text: this.#redactor.text(body.toString('utf8')) }),
          (error: unknown) => {
            if (!(error instanceof BodyReadError) || error.kind === 'stream') return reject(error instanceof BodyReadError ? (error.cause ?? error) : error);
            if (error.kind === 'incomplete') return reject(Object.assign(new Error('the connection closed before the answer was complete'), { code: 'ECONNRESET' }));
            reject(new ApiError(error.kind === 'too-large' ? `the API server's answer exceeded ${formatLimit(MAX_API_BODY_BYTES)}: not read on (an endless or oversized answer)` : `the API server ${error.message}`, null, null, 'answer'));
          },
        );
      });
      req.on('error', reject);
      req.end(body);
    }).catch((error: unknown) => {
      throw error instanceof ApiError ? error : transportError(error, request.signal);
    });

    if (status >= 300 && status < 400) {
      throw new ApiError(
        `the server answered HTTP ${status}, a redirect${location ? ` to ${clip(this.redact(location), 200)}` : ''}: the kubeconfig's server URL is not the API server itself (a proxy or a login page?); redirects are not followed`,
        null,
        null,
        'answer',
      );
    }
    const parsed = this.#json(text, type);
    if (status < 200 || status >= 300) {
      const message = parsed.ok && parsed.value && typeof parsed.value === 'object' && typeof (parsed.value as { message?: unknown }).message === 'string' ? (parsed.value as { message: string }).message : text.trim();
      throw new ApiError(`HTTP ${status}`, status, message ? this.#snippet(message) : null, 'http');
    }
    if (!parsed.ok) throw new ApiError(`the API server's answer is ${parsed.problem}`, null, null, 'answer');
    if (!parsed.value || typeof parsed.value !== 'object' || Array.isArray(parsed.value)) {
      throw new ApiError(`the API server answered ${parsed.value === null ? 'null' : Array.isArray(parsed.value) ? 'a JSON list' : `a JSON ${typeof parsed.value}`}, not a Kubernetes object`, null, null, 'answer');
    }
    return parsed.value;
  }

  /**
   * Every item of a list, a page of `limit` at a time, each reduced by `summarise` as it comes (so
   * a large list never sits in memory whole); at most {@link MAX_LIST_PAGES} pages.
   */
  async list<T>(request: ApiRequest, limit: number, summarise: (item: unknown) => T): Promise<T[]> {
    const out: T[] = [];
    let token: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
      const answer = (await this.request({ ...request, query: { ...request.query, limit: String(limit), ...(token && { continue: token }) } })) as { items?: unknown; metadata?: { continue?: unknown } };
      if (!Array.isArray(answer.items)) throw new ApiError('the API server answered a list without items: not a Kubernetes list', null, null, 'answer');
      for (const item of answer.items) out.push(summarise(item));
      token = typeof answer.metadata?.continue === 'string' && answer.metadata.continue !== '' ? answer.metadata.continue : undefined;
      if (!token) return out;
    }
    throw new ApiError(`the list has more than ${MAX_LIST_PAGES} pages of ${limit}: not read on`, null, null, 'answer');
  }

  #json(text: string, type: string): { ok: true; value: unknown } | { ok: false; problem: string } {
    if (type && type !== 'application/json' && !type.endsWith('+json')) {
      const html = type === 'text/html' || /^\s*</.test(text);
      return { ok: false, problem: `${html ? 'an HTML page' : `of type ${clip(type, 60)}`}, not the Kubernetes API's JSON: the kubeconfig's server URL points at something else (a proxy, a login page, a web server)` };
    }
    if (jsonTooDeep(text)) return { ok: false, problem: `JSON nested deeper than ${MAX_JSON_DEPTH} levels: not a Kubernetes object` };
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch {
      return { ok: false, problem: /^\s*</.test(text) ? 'an HTML page, not the Kubernetes API\'s JSON: the kubeconfig\'s server URL points at something else' : 'not JSON: a truncated answer, or not the Kubernetes API' };
    }
  }

  /** What the server said, redacted before it is cut (a token is never cut in two and half shown). */
  #snippet(text: string): string {
    return clip(this.redact(text).replace(/\s+/g, ' ').trim(), 300);
  }
}

function transportError(error: unknown, signal: AbortSignal): ApiError {
  if (signal.aborted) return new ApiError('aborted', null, null, 'transport', 'ABORTED');
  const e = error as NodeJS.ErrnoException & { cause?: { code?: string } };
  const code = typeof e?.code === 'string' ? e.code : (e?.cause?.code ?? null);
  const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
  return new ApiError(`cannot reach the API server (${clip(code ?? message, 200)})`, null, null, 'transport', code);
}
