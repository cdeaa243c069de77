import net from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { hang, reply, sse, startModelServer } from '../test/model-server.ts';
import { checkAdapters, checkChat, checkChatStream, checkCompletions, checkEmbeddings, checkGatewayRejectsEmbeddings, checkModels } from './openai.ts';

const MODEL = 'test-model';
const gatewayRoute = { kind: 'gateway', route: 'HTTPRoute llm-d-sim on Gateway infra-sim-inference-gateway' } as const;

describe('against a correct OpenAI-compatible server', () => {
  it('passes every check, sending the served model name', async () => {
    const server = await startModelServer();
    const endpoint = { url: server.url };
    const results = [
      await checkModels(endpoint, MODEL),
      await checkChat(endpoint, MODEL),
      await checkChatStream(endpoint, MODEL),
      await checkCompletions(endpoint, MODEL),
      await checkEmbeddings(endpoint, MODEL),
    ];
    expect(results.map((r) => [r.name, r.status, r.message])).toEqual([
      ['models', 'pass', 'serves "test-model"'],
      ['chat', 'pass', 'answered "Yes, it is up."'],
      ['chat-stream', 'pass', expect.stringMatching(/^4 event\(s\), first token after \d+ ms, ended with \[DONE\]$/)],
      ['completions', 'pass', 'answered "red, yellow and blue."'],
      ['embeddings', 'pass', '2 vectors of dimension 8'],
    ]);
    expect(results.every((r) => r.failure === null)).toBe(true);
    expect(results[4]!.data).toEqual({ count: 2, dimension: 8 });
    expect(server.requests.map((r) => `${r.method} ${r.path} ${String(r.body?.model ?? '')}`)).toEqual([
      'GET /v1/models ',
      'POST /v1/chat/completions test-model',
      'POST /v1/chat/completions test-model',
      'POST /v1/completions test-model',
      'POST /v1/embeddings test-model',
    ]);
    expect(server.requests[2]!.body?.stream).toBe(true);
    expect(results[1]!.target).toBe(`POST /v1/chat/completions at 127.0.0.1:${server.port}`);
  });

  it('accepts a slow stream that finishes within the timeout, and measures its first token', async () => {
    const server = await startModelServer({ chunkDelayMs: 40 });
    const result = await checkChatStream({ url: server.url }, MODEL, { timeoutMs: 5000 });
    expect(result.status).toBe('pass');
    expect(result.data.events).toBe(4);
    expect(result.data.e2eMs as number).toBeGreaterThanOrEqual(120);
    expect(result.data.ttftMs as number).toBeLessThan(result.data.e2eMs as number);
  });

  it('sends the endpoint headers (a Host for a Gateway route, an Authorization for --base-url)', async () => {
    const server = await startModelServer();
    await checkModels({ url: server.url, headers: { host: 'models.example.internal', authorization: 'Bearer t0ken' } }, MODEL);
    expect(server.requests[0]!.headers.host).toBe('models.example.internal');
    expect(server.requests[0]!.headers.authorization).toBe('Bearer t0ken');
  });

  it('calls below a path prefix (KServe /<ns>/<name>)', async () => {
    const server = await startModelServer({ pathPrefix: '/llm-d-k/k' });
    expect((await checkModels({ url: `${server.url}/llm-d-k/k` }, MODEL)).status).toBe('pass');
    const wrong = await checkModels({ url: `${server.url}/llm-d-k/other` }, MODEL, { route: { kind: 'kserve', pathPrefix: '/llm-d-k/k' } });
    expect(wrong.failure).toMatchObject({ got: 'HTTP 404 with an empty body', httpStatus: 404 });
    expect(wrong.failure?.cause).toContain('the path prefix is wrong (expected /llm-d-k/k)');
  });
});

describe('HTTP errors are diagnosed', () => {
  it('400 from the EPP on embeddings through the Gateway names the GAIE v1.2 limitation', async () => {
    const server = await startModelServer({
      routes: { 'POST /v1/embeddings': reply(400, { error: { message: 'invalid chat-completions request: chat-completions request must have at least one message', code: 400 } }) },
    });
    const result = await checkEmbeddings({ url: server.url }, MODEL, { route: gatewayRoute });
    expect(result.status).toBe('fail');
    expect(result.message).toBe('POST /v1/embeddings: HTTP 400');
    expect(result.failure).toMatchObject({
      expected: 'HTTP 200 with 2 embeddings (one per input) of one dimension > 0, all finite numbers',
      got: 'HTTP 400',
      httpStatus: 400,
      body: '{"error":{"message":"invalid chat-completions request: chat-completions request must have at least one message","code":400}}',
    });
    expect(result.failure?.cause).toContain('the EPP of GAIE v1.2');
    expect(result.failure?.cause).toContain('ms-<slug>-embeddings Service on port 8200');
  });

  it('KServe: a failing /v1/embeddings is blamed on vLLM behind the workload Service, not on the EPP', async () => {
    // KServe v0.18.1 config-llm-router-route.yaml: only completions, chat and responses go to the
    // InferencePool; /v1/embeddings takes the catch-all rule to <name>-kserve-workload-svc.
    const kserve = { kind: 'kserve', pathPrefix: '/llm-d-k/k', workloadService: 'k-kserve-workload-svc', logs: 'kubectl logs -n llm-d-k -l app.kubernetes.io/name=k' } as const;
    const server = await startModelServer({
      routes: { 'POST /v1/embeddings': reply(400, { error: { message: 'invalid chat-completions request: chat-completions request must have at least one message', code: 400 } }) },
    });
    const result = await checkEmbeddings({ url: server.url }, MODEL, { route: kserve });
    expect(result.failure?.cause).toBe(
      "KServe's route sends /v1/embeddings past the scheduler, by its catch-all rule straight to the Service k-kserve-workload-svc; vLLM itself answered: invalid chat-completions request: chat-completions request must have at least one message (is the model served as an embedding model?) (kubectl logs -n llm-d-k -l app.kubernetes.io/name=k)",
    );
    const down = await startModelServer({ routes: { 'POST /v1/embeddings': reply(503, 'no healthy upstream') } });
    expect((await checkEmbeddings({ url: down.url }, MODEL, { route: kserve })).failure?.cause).toBe(
      "KServe's route sends /v1/embeddings past the scheduler, by its catch-all rule straight to the Service k-kserve-workload-svc; no vLLM pod behind it is Ready, or it has no endpoints (kubectl logs -n llm-d-k -l app.kubernetes.io/name=k)",
    );
    // A bodiless 500 on a pool path: the Gateway did not resolve the InferencePool backend.
    const unresolved = await startModelServer({ routes: { 'POST /v1/chat/completions': reply(500, '') } });
    expect((await checkChat({ url: unresolved.url }, MODEL, { route: kserve })).failure?.cause).toBe(
      "the Gateway answered 500 with no body: it could not resolve the InferencePool backend of KServe's route for /v1/chat/completions — plain Envoy Gateway (without Envoy AI Gateway) rejects it; the ready check names the missing prerequisite (docs/deployment-flow.md#kserve-prerequisites) (kubectl logs -n llm-d-k -l app.kubernetes.io/name=k)",
    );
    // Chat goes through the InferencePool: the EPP may be the one in trouble.
    const chat = await startModelServer({ routes: { 'POST /v1/chat/completions': reply(503, 'no healthy upstream') } });
    expect((await checkChat({ url: chat.url }, MODEL, { route: kserve })).failure?.cause).toContain('the InferencePool selects no pod, or the EPP is down');
  });

  it('404 through the Gateway points at the HTTPRoute', async () => {
    const server = await startModelServer({ routes: { 'POST /v1/chat/completions': reply(404, '') } });
    const result = await checkChat({ url: server.url }, MODEL, { route: gatewayRoute });
    expect(result.failure).toMatchObject({ got: 'HTTP 404 with an empty body', httpStatus: 404, body: null });
    expect(result.failure?.cause).toMatch(/^no route matched \/v1\/chat\/completions: the HTTPRoute llm-d-sim on Gateway infra-sim-inference-gateway is missing or not attached/);
  });

  it('404 for an unknown model says the name is not served', async () => {
    const server = await startModelServer({ models: ['other-model'] });
    const result = await checkChat({ url: server.url }, MODEL, { route: gatewayRoute });
    expect(result.failure?.httpStatus).toBe(404);
    expect(result.failure?.cause).toBe('the server does not serve this model name: "The model `test-model` does not exist."; compare the name with what /v1/models lists (the models check)');
  });

  it('500 says the model server failed and where to read its logs', async () => {
    const server = await startModelServer({ routes: { 'POST /v1/completions': reply(500, { error: { message: 'CUDA out of memory' } }) } });
    const result = await checkCompletions({ url: server.url }, MODEL, { route: { kind: 'service', logs: 'kubectl logs -n ns deploy/ms-x-decode' } });
    expect(result.failure).toMatchObject({ got: 'HTTP 500', httpStatus: 500, body: '{"error":{"message":"CUDA out of memory"}}', cause: 'the model server failed on this request: check its logs (kubectl logs -n ns deploy/ms-x-decode)' });
  });

  it('503 through the Gateway says it has no healthy backend', async () => {
    const server = await startModelServer({ routes: { 'GET /v1/models': reply(503, 'no healthy upstream', 'text/plain') } });
    const result = await checkModels({ url: server.url }, MODEL, { route: gatewayRoute });
    expect(result.failure).toMatchObject({ got: 'HTTP 503', body: 'no healthy upstream' });
    expect(result.failure?.cause).toMatch(/^the Gateway has no healthy backend/);
  });

  it('a body cut to its first 200 bytes', async () => {
    const server = await startModelServer({ routes: { 'GET /v1/models': reply(502, 'x'.repeat(500), 'text/plain') } });
    const result = await checkModels({ url: server.url }, MODEL);
    expect(result.failure?.body).toBe(`${'x'.repeat(200)}…`);
  });
});

describe('wrong answers are diagnosed', () => {
  it('a wrong served model name lists what /v1/models returned', async () => {
    const server = await startModelServer({ models: ['Qwen/Qwen3-0.6B', 'other'] });
    const result = await checkModels({ url: server.url }, MODEL);
    expect(result.status).toBe('fail');
    expect(result.message).toBe('"test-model" is not served (served: Qwen/Qwen3-0.6B, other)');
    expect(result.failure).toMatchObject({ expected: 'HTTP 200 listing "test-model" in data[].id', got: 'served: "Qwen/Qwen3-0.6B", "other"' });
    expect(result.failure?.cause).toContain('modelArtifacts.name (llm-d) or model.name (KServe)');
    expect(result.data).toEqual({ served: ['Qwen/Qwen3-0.6B', 'other'] });
  });

  it('empty content fails, naming max_tokens when the model stopped there', async () => {
    const server = await startModelServer({
      routes: { 'POST /v1/chat/completions': reply(200, { choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'length' }] }) },
    });
    const result = await checkChat({ url: server.url }, MODEL, { maxTokens: 7 });
    expect(result.status).toBe('fail');
    expect(result.message).toBe('empty content (finish_reason: length)');
    expect(result.failure).toMatchObject({ expected: 'HTTP 200 with a non-empty choices[0].message.content', got: 'an empty choices[0].message.content', cause: 'the model stopped at max_tokens (7) before producing any content' });
    expect(server.requests[0]!.body?.max_tokens).toBe(7);
  });

  it('a reasoning model that answered only reasoning_content still passes, and says so', async () => {
    const server = await startModelServer({
      routes: { 'POST /v1/chat/completions': reply(200, { choices: [{ index: 0, message: { role: 'assistant', content: null, reasoning_content: 'Let me think' }, finish_reason: 'length' }] }) },
    });
    const result = await checkChat({ url: server.url }, MODEL);
    expect(result.status).toBe('pass');
    expect(result.message).toBe('answered with reasoning_content only ("Let me think"): a reasoning model out of max_tokens');
  });

  it('empty completions text fails', async () => {
    const server = await startModelServer({ routes: { 'POST /v1/completions': reply(200, { choices: [{ index: 0, text: '   ', finish_reason: 'stop' }] }) } });
    const result = await checkCompletions({ url: server.url }, MODEL);
    expect(result.failure).toMatchObject({ got: 'an empty choices[0].text', cause: 'the model produced no text: check the model server logs, the chat template, and the stop settings' });
  });

  it('malformed JSON fails with the start of the body', async () => {
    const server = await startModelServer({ routes: { 'POST /v1/chat/completions': reply(200, '{"choices": [{"message": {"content": "hi"', 'application/json') } });
    const result = await checkChat({ url: server.url }, MODEL);
    expect(result.message).toBe('POST /v1/chat/completions: malformed JSON');
    expect(result.failure).toMatchObject({ got: 'HTTP 200 with a body that is not JSON (content-type application/json)', body: '{"choices": [{"message": {"content": "hi"' });
    expect(result.failure?.cause).toMatch(/^the server answered something other than OpenAI-style JSON/);
  });

  it('an HTML error page is recognised as one', async () => {
    const server = await startModelServer({ routes: { 'GET /v1/models': reply(200, '<html><body>Login</body></html>', 'text/html') } });
    const result = await checkModels({ url: server.url }, MODEL);
    expect(result.failure?.cause).toMatch(/^an HTML page answered instead of the model server/);
  });

  it('embeddings of mixed dimensions fail', async () => {
    const server = await startModelServer({ routes: { 'POST /v1/embeddings': reply(200, { data: [{ index: 0, embedding: [0.1, 0.2, 0.3] }, { index: 1, embedding: [0.1, 0.2] }] }) } });
    const result = await checkEmbeddings({ url: server.url }, MODEL);
    expect(result.message).toBe('mixed dimensions 3, 2');
    expect(result.failure).toMatchObject({ got: 'vectors of dimensions 3, 2' });
    expect(result.failure?.cause).toMatch(/^one model answers vectors of a single dimension/);
  });

  it('embeddings with NaN fail, as strings or as bare NaN in the JSON', async () => {
    const asString = await startModelServer({ routes: { 'POST /v1/embeddings': reply(200, { data: [{ index: 0, embedding: [0.1, 'NaN'] }, { index: 1, embedding: [0.1, 0.2] }] }) } });
    const strings = await checkEmbeddings({ url: asString.url }, MODEL);
    expect(strings.message).toBe('embedding 0 has a non-finite value');
    expect(strings.failure?.got).toBe('embedding 0[1] is "NaN", not a finite number');

    const bare = await startModelServer({ routes: { 'POST /v1/embeddings': reply(200, '{"data":[{"index":0,"embedding":[0.1,NaN]},{"index":1,"embedding":[0.1,0.2]}]}') } });
    const raw = await checkEmbeddings({ url: bare.url }, MODEL);
    expect(raw.message).toBe('POST /v1/embeddings: malformed JSON');
    expect(raw.failure?.cause).toBe('the server wrote NaN or Infinity into its JSON (not valid JSON): the model produced non-finite values');
  });

  it('the wrong number of embeddings fails', async () => {
    const server = await startModelServer({ routes: { 'POST /v1/embeddings': reply(200, { data: [{ index: 0, embedding: [0.1, 0.2] }] }) } });
    const result = await checkEmbeddings({ url: server.url }, MODEL);
    expect(result.message).toBe('1 vector(s) for 2 inputs');
    expect(result.failure?.got).toBe('1 embedding(s) for 2 inputs');
  });
});

describe('streams are checked to [DONE]', () => {
  it('a stream cut before [DONE] fails, saying how far it got', async () => {
    const server = await startModelServer({ routes: { 'POST /v1/chat/completions': (_req, res) => sse(res, ['Hel', 'lo'], 0, (_ms, fn) => fn(), 'cut') } });
    const result = await checkChatStream({ url: server.url }, MODEL, { route: { kind: 'service', logs: 'kubectl logs x' } });
    expect(result.status).toBe('fail');
    expect(result.message).toBe('stream cut before [DONE] (2 event(s))');
    expect(result.failure?.got).toMatch(/^the stream ended after 2 event\(s\) without data: \[DONE\]; last event: /);
    expect(result.failure?.cause).toBe('the server or a proxy cut the stream before it finished: a model-server crash or restart, or a Gateway/proxy stream timeout (kubectl logs x)');
    expect(result.data).toMatchObject({ events: 2, done: false, content: 'Hello' });
  });

  it('a stream that ends cleanly without [DONE] fails the same way', async () => {
    const server = await startModelServer({
      routes: {
        'POST /v1/chat/completions': (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(`data: ${JSON.stringify({ choices: [{ delta: { content: 'hi' } }] })}\n\n`);
        },
      },
    });
    const result = await checkChatStream({ url: server.url }, MODEL);
    expect(result.failure?.got).toMatch(/^the stream ended after 1 event\(s\) without data: \[DONE\]/);
  });

  it('a stream too slow for the timeout fails as stalled', async () => {
    const server = await startModelServer({ chunkDelayMs: 10_000 });
    // Chunks 10 s apart: only the 300 ms timeout can end it before the second (the messages say so).
    const result = await checkChatStream({ url: server.url }, MODEL, { timeoutMs: 300 });
    expect(result.failure?.got).toMatch(/^no \[DONE\] within 300 ms: 1 event\(s\) received; last event: /);
    expect(result.failure?.cause).toMatch(/^the stream is too slow or stalled \(1 event\(s\) in 300 ms\)/);
  });

  it('a malformed event fails', async () => {
    const server = await startModelServer({
      routes: {
        'POST /v1/chat/completions': (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(`data: ${JSON.stringify({ choices: [{ delta: { content: 'hi' } }] })}\n\ndata: {"choices": [\n\ndata: [DONE]\n\n`);
        },
      },
    });
    const result = await checkChatStream({ url: server.url }, MODEL);
    expect(result.message).toBe('malformed event after 1 good one(s)');
    expect(result.failure?.got).toBe('a data: line that is not JSON: "{"choices": ["');
  });

  it('an error event inside the stream fails with its message', async () => {
    const server = await startModelServer({
      routes: {
        'POST /v1/chat/completions': (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(`data: ${JSON.stringify({ error: { message: 'engine dead', code: 500 } })}\n\ndata: [DONE]\n\n`);
        },
      },
    });
    const result = await checkChatStream({ url: server.url }, MODEL);
    expect(result.message).toBe('error event in the stream: engine dead');
  });

  it('an answer that is not a stream fails', async () => {
    const server = await startModelServer({ routes: { 'POST /v1/chat/completions': reply(200, { choices: [{ message: { content: 'hi' } }] }) } });
    const result = await checkChatStream({ url: server.url }, MODEL);
    expect(result.message).toBe('not a stream (content-type application/json)');
    expect(result.failure?.cause).toBe('the server ignored "stream": true, or a proxy buffered and rewrote the stream');
  });

  it('[DONE] without any content fails', async () => {
    const server = await startModelServer({ streamChunks: ['', ''] });
    const result = await checkChatStream({ url: server.url }, MODEL);
    expect(result.message).toBe('2 event(s), [DONE], but no content');
  });

  it('CRLF line endings and split chunks are parsed', async () => {
    const server = await startModelServer({
      routes: {
        'POST /v1/chat/completions': (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
          const text = `: keep-alive\r\n\r\ndata: ${JSON.stringify({ choices: [{ delta: { content: 'ok' } }] })}\r\n\r\ndata: [DONE]\r\n\r\n`;
          for (const piece of text.match(/[\s\S]{1,7}/g)!) res.write(piece);
          res.end();
        },
      },
    });
    const result = await checkChatStream({ url: server.url }, MODEL);
    expect(result.status).toBe('pass');
    expect(result.data).toMatchObject({ events: 1, done: true, content: 'ok' });
  });
});

describe('connections that fail are diagnosed', () => {
  it('connection refused: nothing listens', async () => {
    const port = await closedPort();
    const result = await checkModels({ url: `http://127.0.0.1:${port}` }, MODEL);
    expect(result.message).toBe('GET /v1/models: connection refused');
    expect(result.failure).toMatchObject({ got: 'connection refused', httpStatus: null, cause: `nothing listens at 127.0.0.1:${port}: wrong port, or the server/pod is not ready` });
  });

  it('a port-forward problem is the cause when there is one', async () => {
    const port = await closedPort();
    const endpoint = { url: `http://127.0.0.1:${port}`, transportProblem: () => 'forbidden: cannot create pods/portforward' };
    const result = await checkModels(endpoint, MODEL);
    expect(result.failure?.cause).toBe('port-forward: forbidden: cannot create pods/portforward');
  });

  it('a server that accepts the connection and never answers is bounded by the timeout', async () => {
    const server = await startModelServer({ routes: { 'POST /v1/chat/completions': hang } });
    // The server never answers: only the 250 ms timeout can end the check (the test's timeout guards a hang).
    const result = await checkChat({ url: server.url }, MODEL, { timeoutMs: 250 });
    expect(result.failure).toMatchObject({ got: 'no answer within 250 ms', httpStatus: null });
    expect(result.failure?.cause).toMatch(/^no complete answer within 250 ms: the model may still be loading/);
  });

  it('a TCP server that never speaks HTTP is bounded too', async () => {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((s) => sockets.add(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onTestFinished(() => new Promise<void>((r) => (sockets.forEach((s) => s.destroy()), server.close(() => r()))));
    const result = await checkChatStream({ url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}` }, MODEL, { timeoutMs: 200 });
    expect(result.failure?.got).toBe('no answer within 200 ms');
    expect(result.message).toBe('no answer: no answer within 200 ms');
  });

  it('a caller abort stops a check at once', async () => {
    const server = await startModelServer({ routes: { 'GET /v1/models': hang } });
    const controller = new AbortController();
    const pending = checkModels({ url: server.url }, MODEL, { signal: controller.signal });
    controller.abort(new Error('stop'));
    const result = await pending;
    expect(result.failure?.got).toBe('cancelled');
  });
});

describe('gateway-rejects-embeddings is informational', () => {
  it('explains the EPP 400', async () => {
    const server = await startModelServer({ routes: { 'POST /v1/embeddings': reply(400, { error: { message: 'invalid chat-completions request: chat-completions request must have at least one message' } }) } });
    const result = await checkGatewayRejectsEmbeddings({ url: server.url }, MODEL, { embeddingsService: 'ms-emb-embeddings:8200' });
    expect(result.status).toBe('info');
    expect(result.failure).toBeNull();
    expect(result.message).toBe('400 from the EPP, as GAIE v1.2 answers /v1/embeddings ("invalid chat-completions request: chat-completions request …"): expected; clients use ms-emb-embeddings:8200');
    expect(result.data.httpStatus).toBe(400);
  });

  it('explains a 404 (no HTTPRoute for an embedder), a 200, and no answer, without ever failing', async () => {
    const notFound = await startModelServer({ routes: { 'POST /v1/embeddings': reply(404, '') } });
    const served = await startModelServer();
    const port = await closedPort();
    const results = [
      await checkGatewayRejectsEmbeddings({ url: notFound.url }, MODEL),
      await checkGatewayRejectsEmbeddings({ url: served.url }, MODEL),
      await checkGatewayRejectsEmbeddings({ url: `http://127.0.0.1:${port}` }, MODEL),
    ];
    expect(results.map((r) => r.status)).toEqual(['info', 'info', 'info']);
    expect(results.map((r) => r.message)).toEqual([
      '404: the Gateway has no route for this embedder (no HTTPRoute, by design); clients use the embeddings Service',
      '200: the Gateway served embeddings (an EPP that accepts them, GAIE ≥ v1.5); clients use the embeddings Service all the same',
      'the Gateway did not answer (connection refused); not needed for embeddings: clients use the embeddings Service',
    ]);
  });
});

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('adapters: each LoRA adapter answers by its own name', () => {
  const adapters = [
    { name: 'sql-lora', parent: MODEL },
    { name: 'chat-lora', parent: MODEL },
  ];

  it('asks each adapter by name, one chat request each, and passes when every one answers', async () => {
    const server = await startModelServer({ models: [MODEL, 'sql-lora', 'chat-lora'] });
    const result = await checkAdapters({ url: server.url }, adapters);
    expect([result.name, result.status, result.message]).toEqual(['adapters', 'pass', '"sql-lora", "chat-lora" answer by name']);
    expect(server.requests.map((r) => `${r.method} ${r.path} ${String(r.body?.model)}`)).toEqual(['POST /v1/chat/completions sql-lora', 'POST /v1/chat/completions chat-lora']);
    expect(result.data.adapters).toEqual([
      { name: 'sql-lora', parent: MODEL, status: 'pass', message: 'answered "Yes, it is up."' },
      { name: 'chat-lora', parent: MODEL, status: 'pass', message: 'answered "Yes, it is up."' },
    ]);
  });

  it('fails on the first adapter the server does not know, naming it and why', async () => {
    const server = await startModelServer({ models: [MODEL, 'sql-lora'] });
    const result = await checkAdapters({ url: server.url }, adapters);
    expect(result.status).toBe('fail');
    expect(result.message).toBe(`adapter "chat-lora" (of ${MODEL}): POST /v1/chat/completions: HTTP 404`);
    expect(result.failure).toMatchObject({ httpStatus: 404, cause: expect.stringContaining('the server does not know "chat-lora": it was not loaded') });
    expect((result.data.adapters as unknown[]).length).toBe(2);
  });
});
