import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

/**
 * A minimal OpenAI-compatible server on 127.0.0.1 serving the given model names: models, chat
 * (plain and streaming), completions and embeddings. `broken` makes chat answer 500.
 */
export async function openAiServer(models: readonly string[], options: { broken?: boolean } = {}): Promise<string> {
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      const request = body ? (JSON.parse(body) as { model?: string; stream?: boolean; input?: string | string[] }) : {};
      if (req.method === 'GET' && req.url === '/v1/models') return json(200, { object: 'list', data: models.map((id) => ({ id, object: 'model' })) });
      if (request.model !== undefined && !models.includes(request.model)) return json(404, { error: { message: `model ${request.model} not found` } });
      if (req.url === '/v1/chat/completions') {
        if (options.broken) return json(500, { error: { message: 'engine dead' } });
        if (request.stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          for (const word of ['Hello', ' there']) res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: word } }] })}\n\n`);
          res.end('data: [DONE]\n\n');
          return;
        }
        return json(200, { choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }], usage: { completion_tokens: 2 } });
      }
      if (req.url === '/v1/completions') return json(200, { choices: [{ index: 0, text: 'Dogs.', finish_reason: 'stop' }] });
      if (req.url === '/v1/embeddings') {
        const inputs = Array.isArray(request.input) ? request.input : [request.input];
        return json(200, { object: 'list', data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3, 0.4] })) });
      }
      json(404, { error: { message: 'not found' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
