/**
 * A minimal OpenAI-compatible server on 127.0.0.1 that stands in for the model servers behind the
 * simulated pods (kwok runs no container): a pod's port-forward points at it. It serves the given
 * model names — `/v1/models`, chat (plain and streamed), completions, embeddings — under any path
 * prefix (KServe routes `/<namespace>/<name>/v1/…`), and records the requests it got. Where it stands
 * in for a gateway that controls access, `authorize` refuses what that gateway would.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ModelServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** `METHOD path` of every request, in order. */
  readonly requests: string[];
  close(): Promise<void>;
}

/** A refusal: the status and message a gateway would answer a request with. */
export interface Refusal {
  readonly status: number;
  readonly message: string;
}

export interface ModelServerOptions {
  /**
   * What the gateway in front checks, where the server stands in for a gateway that controls access:
   * a refusal for a request it would refuse (answered before anything else), else undefined.
   */
  readonly authorize?: (req: IncomingMessage) => Refusal | undefined;
}

/** Starts the server; close it when done. */
export async function startModelServer(models: readonly string[], options: ModelServerOptions = {}): Promise<ModelServer> {
  const requests: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const refusal = options.authorize?.(req);
    if (refusal) {
      requests.push(`${req.method} ${req.url} ${refusal.status}`);
      req.resume();
      res.writeHead(refusal.status, { 'content-type': 'text/plain' });
      res.end(refusal.message);
      return;
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > 1_000_000) req.destroy();
    });
    req.on('end', () => {
      requests.push(`${req.method} ${req.url}`);
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      let request: { model?: string; stream?: boolean; input?: unknown } = {};
      try {
        request = body ? JSON.parse(body) : {};
      } catch {
        return json(400, { error: { message: 'not JSON' } });
      }
      const path = (req.url ?? '').replace(/\?.*$/, '').replace(/^.*?(?=\/v1\/)/, '');
      if (req.method === 'GET' && path === '/v1/models') return json(200, { object: 'list', data: models.map((id) => ({ id, object: 'model' })) });
      if (request.model !== undefined && !models.includes(request.model)) return json(404, { error: { message: `model ${request.model} not found` } });
      if (path === '/v1/chat/completions') {
        if (request.stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          for (const word of ['Hello', ' there']) res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: word } }] })}\n\n`);
          res.end('data: [DONE]\n\n');
          return;
        }
        return json(200, { choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }], usage: { completion_tokens: 2 } });
      }
      if (path === '/v1/completions') return json(200, { choices: [{ index: 0, text: 'Dogs.', finish_reason: 'stop' }] });
      if (path === '/v1/embeddings') {
        const inputs = Array.isArray(request.input) ? request.input : [request.input];
        return json(200, { object: 'list', data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: [0.001, 0.002, 0.003, 0.004] })) });
      }
      json(404, { error: { message: `not found: ${path}` } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
