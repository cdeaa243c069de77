import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { startModelServer, type Handler } from '../test/model-server.ts';
import { MAX_BODY_BYTES, MAX_SSE_LINE_BYTES, SseParser } from './http.ts';
import { checkChat, checkChatStream, checkModels, streamChat } from './openai.ts';

const MODEL = 'test-model';
const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;

/** Writes `piece()` whenever the socket drains, until the client goes away: an endless body. */
function endless(head: Record<string, string>, piece: () => string): Handler {
  return (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(200, head);
    let open = true;
    res.on('close', () => (open = false));
    const pump = () => {
      while (open && res.write(piece()));
      if (open) res.once('drain', pump);
    };
    pump();
  };
}

const sse = { 'content-type': 'text/event-stream' };

describe('bodies and streams are bounded in memory, whatever --timeout says', () => {
  it('an endless well-formed SSE stream fails at the byte cap, long before the timeout', async () => {
    const server = await startModelServer({ routes: { 'POST /v1/chat/completions': endless(sse, () => chunk('x'.repeat(2000))) } });
    const before = process.memoryUsage().rss;
    const result = await checkChatStream({ url: server.url }, MODEL, { timeoutMs: 120_000 });
    expect(result.status).toBe('fail');
    expect(result.message).toMatch(new RegExp(`^the stream exceeded 8 MiB \\(${MAX_BODY_BYTES} bytes\\)`));
    expect(result.failure?.got).toMatch(/without data: \[DONE\]/);
    // Held to the caps: far below the 1.2 GB an unbounded reader reached.
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
  });

  it('one endless data: line without a newline fails at the line cap', async () => {
    const server = await startModelServer({ routes: { 'POST /v1/chat/completions': (_req, res) => endless(sse, () => 'y'.repeat(64 * 1024))(_req, res, undefined) } });
    // The first write opens the data: line; every later one continues it.
    server.requests.length = 0;
    const result = await checkChatStream({ url: server.url }, MODEL, { timeoutMs: 120_000 });
    expect(result.status).toBe('fail');
    expect(result.message).toMatch(/^an SSE line exceeded 1 MiB/);
  });

  it('oversized events fail, even when the stream ends with [DONE]', async () => {
    const big = 'z'.repeat(2 * MAX_SSE_LINE_BYTES);
    const server = await startModelServer({
      routes: {
        'POST /v1/chat/completions': (_req, res) => {
          res.writeHead(200, sse);
          for (let i = 0; i < 5; i += 1) res.write(chunk(big));
          res.end('data: [DONE]\n\n');
        },
      },
    });
    const outcome = await streamChat({ url: server.url }, MODEL, 32, AbortSignal.timeout(60_000));
    expect(outcome.done).toBe(false);
    expect(outcome.error?.kind).toBe('too-large');
  });

  it('an endless JSON body fails at the byte cap', async () => {
    const server = await startModelServer({ routes: { 'GET /v1/models': endless({ 'content-type': 'application/json' }, () => ' '.repeat(64 * 1024)) } });
    const result = await checkModels({ url: server.url }, MODEL, { timeoutMs: 120_000 });
    expect(result.status).toBe('fail');
    expect(result.message).toMatch(/the body exceeded 8 MiB/);
  });

  it('the parser refuses an event whose data lines add up past the cap', () => {
    const parser = new SseParser(100);
    expect(() => parser.feed(`${'data: aaaaaaaaaa\n'.repeat(20)}\n`)).toThrow(/an SSE event exceeded 100 bytes/);
    expect(() => new SseParser(100).feed('data: '.padEnd(200, 'b'))).toThrow(/an SSE line exceeded 100 bytes/);
  });
});

describe('messages that say what is really wrong', () => {
  it('a redirect names its Location, or says it has none', async () => {
    const server = await startModelServer({
      routes: {
        'GET /v1/models': (_req, res) => {
          res.writeHead(302);
          res.end();
        },
        'POST /v1/chat/completions': (_req, res) => {
          res.writeHead(301, { location: 'https://elsewhere.example.com/v1/chat/completions' });
          res.end();
        },
      },
    });
    const models = await checkModels({ url: server.url }, MODEL);
    expect(models.failure?.got).toBe('HTTP 302: a redirect without a Location header');
    const chat = await checkChat({ url: server.url }, MODEL);
    expect(chat.failure?.got).toBe('HTTP 301: a redirect to https://elsewhere.example.com/v1/chat/completions');
    expect(chat.failure?.cause).toMatch(/does not follow redirects/);
  });

  it('a TLS error is one line', async () => {
    const server = await startModelServer();
    const result = await checkModels({ url: server.url.replace('http:', 'https:') }, MODEL, { timeoutMs: 5000 });
    expect(result.status).toBe('fail');
    expect(result.failure?.got).not.toContain('\n');
    expect(result.failure?.got).toMatch(/^TLS failed: /);
  });
});
