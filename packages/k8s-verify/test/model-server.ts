import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

/** Handles one request; `body` is the parsed JSON body (or undefined). */
export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: Record<string, unknown> | undefined) => void;

export interface ModelServerOptions {
  /** Served model ids. @default ['test-model'] */
  readonly models?: readonly string[];
  /** Added before every answer (a model server that takes time). */
  readonly latencyMs?: number;
  /** Embedding dimension. @default 8 */
  readonly dimension?: number;
  /** Content deltas of a streamed answer. @default ['Yes', ', it', ' is', ' up.'] */
  readonly streamChunks?: readonly string[];
  /** Pause between streamed chunks (a slow stream). @default 0 */
  readonly chunkDelayMs?: number;
  /** Overrides by `METHOD /path`, e.g. `'POST /v1/chat/completions'`. */
  readonly routes?: Readonly<Record<string, Handler>>;
  /** Answer 401 to every request whose `Authorization` header is not exactly this (a gateway that enforces a key). */
  readonly requireAuthorization?: string;
  /** Serve only below this prefix (a Gateway route like KServe's `/<ns>/<name>`); other paths get an empty 404. */
  readonly pathPrefix?: string;
}

export interface ModelServer {
  readonly url: string;
  readonly port: number;
  /** Every request received: `METHOD /path`, headers and body. */
  readonly requests: { method: string; path: string; headers: http.IncomingHttpHeaders; body: Record<string, unknown> | undefined }[];
  close(): Promise<void>;
}

/**
 * A local OpenAI-compatible server on 127.0.0.1 (ephemeral port), answering like vLLM: models,
 * chat (plain and SSE), completions, embeddings, vLLM's 404 for an unknown model. Faults are
 * injected per route. Closed (with every connection) when the test finishes.
 */
export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const models = options.models ?? ['test-model'];
  const requests: ModelServer['requests'] = [];
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void) => {
    if (!ms) return fn();
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  const server = http.createServer((req, res) => {
    res.on('error', () => undefined);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> | undefined;
      try {
        body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
      } catch {
        body = undefined;
      }
      const full = (req.url ?? '/').split('?')[0]!;
      requests.push({ method: req.method ?? 'GET', path: full, headers: req.headers, body });
      const prefix = options.pathPrefix ?? '';
      if (prefix && !full.startsWith(`${prefix}/`)) {
        res.writeHead(404);
        res.end();
        return;
      }
      if (options.requireAuthorization !== undefined && req.headers.authorization !== options.requireAuthorization) {
        res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Basic realm="model"' });
        res.end('User authentication failed. Missing username and password.');
        return;
      }
      const path = full.slice(prefix.length);
      const key = `${req.method} ${path}`;
      later(options.latencyMs ?? 0, () => (options.routes?.[key] ?? defaultRoute(key))(req, res, body));
    });
  });

  const json = (res: http.ServerResponse, status: number, value: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  const unknownModel = (res: http.ServerResponse, body: Record<string, unknown> | undefined): boolean => {
    if (body && typeof body.model === 'string' && !models.includes(body.model)) {
      json(res, 404, { error: { message: `The model \`${body.model}\` does not exist.`, type: 'NotFoundError', param: 'model', code: 404 } });
      return true;
    }
    return false;
  };

  const defaultRoute = (key: string): Handler => {
    switch (key) {
      case 'GET /v1/models':
        return (_req, res) => json(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', owned_by: 'test' })) });
      case 'POST /v1/chat/completions':
        return (_req, res, body) => {
          if (unknownModel(res, body)) return;
          if (body?.stream) return sse(res, options.streamChunks ?? ['Yes', ', it', ' is', ' up.'], options.chunkDelayMs ?? 0, later);
          json(res, 200, {
            id: 'chatcmpl-1',
            object: 'chat.completion',
            model: body?.model,
            choices: [{ index: 0, message: { role: 'assistant', content: 'Yes, it is up.' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
          });
        };
      case 'POST /v1/completions':
        return (_req, res, body) => {
          if (unknownModel(res, body)) return;
          json(res, 200, { id: 'cmpl-1', object: 'text_completion', choices: [{ index: 0, text: ' red, yellow and blue.', finish_reason: 'stop' }], usage: { completion_tokens: 6 } });
        };
      case 'POST /v1/embeddings':
        return (_req, res, body) => {
          if (unknownModel(res, body)) return;
          const inputs = Array.isArray(body?.input) ? body.input : [body?.input];
          const dim = options.dimension ?? 8;
          json(res, 200, {
            object: 'list',
            data: inputs.map((_, i) => ({ object: 'embedding', index: i, embedding: Array.from({ length: dim }, (_, j) => (i + 1) * 0.01 * (j + 1)) })),
            usage: { prompt_tokens: 8, total_tokens: 8 },
          });
        };
      default:
        return (_req, res) => json(res, 404, { detail: 'Not Found' });
    }
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= new Promise<void>((resolve) => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      server.close(() => resolve());
    }));
  onTestFinished(close);
  return { url: `http://127.0.0.1:${port}`, port, requests, close };
}

/** Writes an OpenAI chat stream: one chunk per delta (`chunkDelayMs` apart), then `[DONE]`. */
export function sse(res: http.ServerResponse, deltas: readonly string[], chunkDelayMs: number, later: (ms: number, fn: () => void) => void, end: 'done' | 'cut' = 'done'): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (i: number) => {
    if (i < deltas.length) {
      res.write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: deltas[i] }, finish_reason: null }] })}\n\n`);
      later(chunkDelayMs, () => send(i + 1));
    } else if (end === 'done') {
      res.write('data: [DONE]\n\n');
      res.end();
    } else {
      // Close the connection after what was written, without the terminating chunk: a cut stream.
      res.socket?.end();
    }
  };
  send(0);
}

/** A JSON answer with any status. */
export function reply(status: number, body: unknown, contentType = 'application/json'): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': contentType });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

/** Accepts the request and never answers. */
export const hang: Handler = () => undefined;
