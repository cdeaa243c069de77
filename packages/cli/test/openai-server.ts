import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

/** Options of {@link openAiServer}. */
export interface OpenAiServerOptions {
  /** Chat answers 500. */
  readonly broken?: boolean;
  /**
   * Answer like llm-d-inference-sim in `--mode echo`: chat repeats the last message, completions
   * the prompt, a stream sends it word by word.
   */
  readonly echo?: boolean;
  /** Embedding dimension (llm-d-inference-sim's default is 384). @default 4 */
  readonly dimension?: number;
}

/**
 * A minimal OpenAI-compatible server on 127.0.0.1 serving the given model names: models, chat
 * (plain and streaming), completions and embeddings.
 */
export async function openAiServer(models: readonly string[], options: OpenAiServerOptions = {}): Promise<string> {
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      const request = body
        ? (JSON.parse(body) as { model?: string; stream?: boolean; input?: string | string[]; prompt?: string; messages?: { content?: string }[] })
        : {};
      const said = options.echo ? (request.messages?.at(-1)?.content ?? request.prompt ?? '') : undefined;
      if (req.method === 'GET' && req.url === '/v1/models') return json(200, { object: 'list', data: models.map((id) => ({ id, object: 'model' })) });
      if (request.model !== undefined && !models.includes(request.model)) return json(404, { error: { message: `model ${request.model} not found` } });
      if (req.url === '/v1/chat/completions') {
        if (options.broken) return json(500, { error: { message: 'engine dead' } });
        if (request.stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          for (const word of said === undefined ? ['Hello', ' there'] : said.split(/(?= )/)) res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: word } }] })}\n\n`);
          res.end('data: [DONE]\n\n');
          return;
        }
        return json(200, { choices: [{ index: 0, message: { role: 'assistant', content: said ?? 'Hello there' }, finish_reason: 'stop' }], usage: { completion_tokens: 2 } });
      }
      if (req.url === '/v1/completions') return json(200, { choices: [{ index: 0, text: said ?? 'Dogs.', finish_reason: 'stop' }] });
      if (req.url === '/v1/embeddings') {
        const inputs = Array.isArray(request.input) ? request.input : [request.input];
        return json(200, { object: 'list', data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: Array.from({ length: options.dimension ?? 4 }, (_, j) => (j + 1) / 1000) })) });
      }
      json(404, { error: { message: 'not found' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
