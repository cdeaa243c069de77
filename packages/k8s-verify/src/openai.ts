import type http from 'node:http';
import { checkSignal, formatMs } from './clock.ts';
import { bodyFailure, EPP_EMBEDDINGS_REJECTION, errorMessageOf, httpFailure, requestFailure, type RouteContext } from './diagnose.ts';
import { bodyChunks, parseJson } from './bounded.ts';
import { BodyError, bodyReadError, contentType, MAX_BODY_BYTES, MAX_SSE_EVENTS, readText, RequestError, send, snippet, SseParser, toRequestError, type Endpoint } from './http.ts';
import { headerSecrets, Redactor, urlSecrets } from './redact.ts';
import { checkResult, timed } from './result.ts';
import type { CheckName, CheckResult, JsonValue } from './types.ts';

/** Default timeout of one check, ms. */
export const DEFAULT_CHECK_TIMEOUT_MS = 30_000;
/** Default `max_tokens` of the chat and completions requests. */
export const DEFAULT_MAX_TOKENS = 32;

/** Options of the OpenAI-protocol checks. */
export interface HttpCheckOptions {
  /** Timeout of the check (its request, including a streamed body). @default 30000 */
  readonly timeoutMs?: number;
  /** Aborts the check (the run's deadline, a cancellation). */
  readonly signal?: AbortSignal;
  /** What the endpoint is, for the diagnosis of failures. @default { kind: 'direct' } */
  readonly route?: RouteHint;
  /** `max_tokens` of chat and completions requests. @default 32 */
  readonly maxTokens?: number;
}

/** What a diagnosis should know about the endpoint: see {@link RouteContext}. */
export type RouteHint = Omit<RouteContext, 'where' | 'transportProblem'>;

const CHAT_PROMPT = 'Reply with one short sentence: is the service up?';
const COMPLETION_PROMPT = 'The three primary colours are';
const EMBEDDING_INPUTS = ['app-serving verify: the first input', 'app-serving verify: a second, somewhat longer input sentence'];

interface Call {
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  /** Removes the endpoint's own secrets from a server's text, before anything cuts it into a snippet. */
  readonly clean: (text: string) => string;
  readonly ctx: () => RouteContext;
  readonly target: (method: string, path: string) => string;
}

function call(endpoint: Endpoint, options: HttpCheckOptions): Call {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  const where = whereOf(endpoint);
  return {
    timeoutMs,
    signal: checkSignal(timeoutMs, options.signal),
    clean: cleaner(endpoint),
    ctx: () => ({ ...(options.route ?? { kind: 'direct' }), where, transportProblem: endpoint.transportProblem?.() ?? null }),
    target: (method, path) => `${method} ${path}${endpoint.via ? ` via ${endpoint.via}` : ` at ${where}`}`,
  };
}

/**
 * The redaction of what a server sent, by the secrets this endpoint sends it (header values, the
 * URL's credentials and query): applied as the text arrives, so that a snippet cut from it never
 * holds half a token.
 */
function cleaner(endpoint: Endpoint): (text: string) => string {
  const secrets = [...headerSecrets(endpoint.headers), ...urlSecrets(endpoint.url)];
  if (secrets.length === 0) return (text) => text;
  const redactor = new Redactor(secrets);
  return (text) => redactor.text(text);
}

function whereOf(endpoint: Endpoint): string {
  try {
    const url = new URL(endpoint.url);
    return `${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return endpoint.url;
  }
}

/** A JSON request whose whole body is read: the answer, or a failed check. */
async function exchange(
  name: CheckName,
  endpoint: Endpoint,
  c: Call,
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  expected: string,
): Promise<{ ok: true; json: unknown; text: string } | { ok: false; result: CheckResult }> {
  const target = c.target(method, path);
  let response: http.IncomingMessage;
  let text: string;
  try {
    response = await send(endpoint, { method, path, body, signal: c.signal });
    text = await readText(response, c.signal, MAX_BODY_BYTES, c.clean);
  } catch (error) {
    const failure = requestFailure(expected, toRequestError(error, c.signal), c.timeoutMs, c.ctx(), partialOf(error));
    return { ok: false, result: checkResult(name, 'fail', `${method} ${path}: ${failure.got}`, { target, failure }) };
  }
  if (response.statusCode !== 200) {
    const failure = httpFailure(expected, response.statusCode ?? 0, text, path, c.ctx(), response.headers.location ?? null);
    return { ok: false, result: checkResult(name, 'fail', `${method} ${path}: HTTP ${response.statusCode}`, { target, failure }) };
  }
  try {
    return { ok: true, json: parseJson(text), text };
  } catch {
    const failure = bodyFailure(expected, `HTTP 200 with a body that is not JSON (content-type ${contentType(response) || 'none'})`, text, malformedCause(text, contentType(response)));
    return { ok: false, result: checkResult(name, 'fail', `${method} ${path}: malformed JSON`, { target, failure }) };
  }
}

function partialOf(error: unknown): string {
  // The partial body was redacted whole by readText, before this cut.
  return error instanceof BodyError && error.partial ? ` after part of the body ("${snippet(error.partial, 80)}")` : '';
}

function malformedCause(text: string, type: string): string {
  if (/^\s*[[{]/.test(text) && /nested deeper/.test(safeParseError(text))) return 'the server sent JSON nested hundreds of levels deep: not an OpenAI answer (a broken or hostile server)';
  if (/\b(NaN|-?Infinity)\b/.test(text)) return 'the server wrote NaN or Infinity into its JSON (not valid JSON): the model produced non-finite values';
  if (type === 'text/html' || /^\s*</.test(text)) return 'an HTML page answered instead of the model server: a proxy or ingress error page, or the wrong URL';
  if (!text.trim()) return 'the server sent an empty body';
  return 'the server answered something other than OpenAI-style JSON: a truncated body, or not an OpenAI-compatible server';
}

function safeParseError(text: string): string {
  try {
    parseJson(text);
    return '';
  } catch (error) {
    return (error as Error).message;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `GET /v1/models` lists `servedModelName`. */
export function checkModels(endpoint: Endpoint, servedModelName: string, options: HttpCheckOptions = {}): Promise<CheckResult> {
  const c = call(endpoint, options);
  const target = c.target('GET', '/v1/models');
  return timed('models', target, async () => {
    const expected = `HTTP 200 listing "${servedModelName}" in data[].id`;
    const answer = await exchange('models', endpoint, c, 'GET', '/v1/models', undefined, expected);
    if (!answer.ok) return answer.result;
    const data = isObject(answer.json) ? answer.json.data : undefined;
    if (!Array.isArray(data)) {
      return checkResult('models', 'fail', 'no data list in the answer', {
        target,
        failure: bodyFailure(expected, 'JSON without a "data" list', answer.text, 'not an OpenAI-compatible /v1/models answer'),
      });
    }
    const ids = data.map((m) => (isObject(m) && typeof m.id === 'string' ? m.id : null)).filter((id): id is string => id !== null);
    if (ids.includes(servedModelName)) {
      return checkResult('models', 'pass', `serves "${servedModelName}"`, { target, data: { served: ids } });
    }
    return checkResult('models', 'fail', `"${servedModelName}" is not served (served: ${ids.join(', ') || 'none'})`, {
      target,
      data: { served: ids },
      failure: bodyFailure(
        expected,
        ids.length ? `served: ${ids.map((id) => `"${id}"`).join(', ')}` : 'an empty model list',
        null,
        ids.length
          ? 'the server serves another name: the served model name comes from modelArtifacts.name (llm-d) or model.name (KServe) in the model\'s values; or the request reached another model\'s pods'
          : 'the server lists no model: still loading, or started without a model',
      ),
    });
  });
}

/** `POST /v1/chat/completions` answers 200 with a non-empty `choices[0].message.content`. */
export function checkChat(endpoint: Endpoint, servedModelName: string, options: HttpCheckOptions = {}): Promise<CheckResult> {
  const c = call(endpoint, options);
  return timed('chat', c.target('POST', '/v1/chat/completions'), () => chatOnce('chat', endpoint, c, servedModelName, options));
}

/** One chat request for `model`, as the check `name` reports it. */
async function chatOnce(name: 'chat' | 'adapters', endpoint: Endpoint, c: Call, model: string, options: HttpCheckOptions): Promise<Omit<CheckResult, 'durationMs'>> {
  const path = '/v1/chat/completions';
  const target = c.target('POST', path);
  const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
  const expected = 'HTTP 200 with a non-empty choices[0].message.content';
  const body = { model, messages: [{ role: 'user', content: CHAT_PROMPT }], max_tokens: maxTokens, temperature: 0 };
  const answer = await exchange(name, endpoint, c, 'POST', path, body, expected);
  if (!answer.ok) return answer.result;
  const choice = firstChoice(answer.json);
  const message = isObject(choice?.message) ? choice.message : undefined;
  if (!choice || !message) {
    return checkResult(name, 'fail', 'no choices[0].message in the answer', {
      target,
      failure: bodyFailure(expected, 'JSON without choices[0].message', answer.text, 'not an OpenAI-compatible chat answer'),
    });
  }
  return textOutcome(name, target, expected, answer.text, message.content, message.reasoning_content, choice.finish_reason, maxTokens, usageOf(answer.json));
}

/**
 * Each LoRA adapter of a model answers by name: `POST /v1/chat/completions` with `model: <adapter>`
 * through the model's own endpoint, one adapter after the other. One check for all of them (its
 * name stays unique per model): it passes when every adapter answers, and fails with the first
 * adapter that does not, naming it; `data.adapters` holds what each answered.
 */
export function checkAdapters(endpoint: Endpoint, adapters: readonly { readonly name: string; readonly parent: string }[], options: HttpCheckOptions = {}): Promise<CheckResult> {
  const c = call(endpoint, options);
  const target = c.target('POST', '/v1/chat/completions');
  return timed('adapters', target, async () => {
    const seen: Record<string, JsonValue>[] = [];
    for (const adapter of adapters) {
      const result = await chatOnce('adapters', endpoint, c, adapter.name, options);
      seen.push({ name: adapter.name, parent: adapter.parent, status: result.status, message: result.message });
      if (result.status === 'fail') {
        const failure = result.failure && {
          ...result.failure,
          cause:
            result.failure.httpStatus === 404
              ? `the server does not know "${adapter.name}": it was not loaded (the model server's --lora-modules, its log at start-up), or the request reached a server of another model`
              : result.failure.cause,
        };
        return checkResult('adapters', 'fail', `adapter "${adapter.name}" (of ${adapter.parent}): ${result.message}`, { target, failure, data: { adapters: seen } });
      }
    }
    return checkResult('adapters', 'pass', `${adapters.map((a) => `"${a.name}"`).join(', ')} ${adapters.length === 1 ? 'answers' : 'answer'} by name`, { target, data: { adapters: seen } });
  });
}

/** `POST /v1/completions` answers 200 with a non-empty `choices[0].text`. */
export function checkCompletions(endpoint: Endpoint, servedModelName: string, options: HttpCheckOptions = {}): Promise<CheckResult> {
  const c = call(endpoint, options);
  const path = '/v1/completions';
  const target = c.target('POST', path);
  const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
  return timed('completions', target, async () => {
    const expected = 'HTTP 200 with a non-empty choices[0].text';
    const body = { model: servedModelName, prompt: COMPLETION_PROMPT, max_tokens: maxTokens, temperature: 0 };
    const answer = await exchange('completions', endpoint, c, 'POST', path, body, expected);
    if (!answer.ok) return answer.result;
    const choice = firstChoice(answer.json);
    if (!choice) {
      return checkResult('completions', 'fail', 'no choices[0] in the answer', {
        target,
        failure: bodyFailure(expected, 'JSON without choices[0]', answer.text, 'not an OpenAI-compatible completions answer'),
      });
    }
    return textOutcome('completions', target, expected, answer.text, choice.text, undefined, choice.finish_reason, maxTokens, usageOf(answer.json));
  });
}

function firstChoice(json: unknown): Record<string, unknown> | undefined {
  const choices = isObject(json) ? json.choices : undefined;
  return Array.isArray(choices) && isObject(choices[0]) ? choices[0] : undefined;
}

function usageOf(json: unknown): number | null {
  const usage = isObject(json) ? json.usage : undefined;
  return isObject(usage) && typeof usage.completion_tokens === 'number' ? usage.completion_tokens : null;
}

function textOutcome(
  name: 'chat' | 'completions' | 'adapters',
  target: string,
  expected: string,
  raw: string,
  content: unknown,
  reasoning: unknown,
  finishReason: unknown,
  maxTokens: number,
  tokens: number | null,
): Omit<CheckResult, 'durationMs'> {
  const data: Record<string, JsonValue> = { finishReason: typeof finishReason === 'string' ? finishReason : null, completionTokens: tokens };
  if (typeof content === 'string' && content.trim()) {
    return checkResult(name, 'pass', `answered "${preview(content)}"`, { target, data: { ...data, content: preview(content, 120) } });
  }
  if (typeof reasoning === 'string' && reasoning.trim()) {
    // A reasoning model that spent max_tokens thinking: the server generates, which is what a smoke test asks.
    return checkResult(name, 'pass', `answered with reasoning_content only ("${preview(reasoning)}"): a reasoning model out of max_tokens`, {
      target,
      data: { ...data, reasoning: preview(reasoning, 120) },
    });
  }
  const field = name === 'completions' ? 'choices[0].text' : 'choices[0].message.content';
  const got = content === undefined || content === null ? `no ${field}` : typeof content === 'string' ? `an empty ${field}` : `a ${field} that is not a string`;
  const cause =
    finishReason === 'length'
      ? `the model stopped at max_tokens (${maxTokens}) before producing any content`
      : 'the model produced no text: check the model server logs, the chat template, and the stop settings';
  return checkResult(name, 'fail', `empty content${typeof finishReason === 'string' ? ` (finish_reason: ${finishReason})` : ''}`, {
    target,
    data,
    failure: bodyFailure(expected, got, raw, cause),
  });
}

function preview(text: string, length = 40): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > length ? `${line.slice(0, length - 1)}…` : line;
}

/** What came back from a streamed chat request. */
export interface StreamOutcome {
  /** HTTP status (0 when no answer came). */
  readonly status: number;
  readonly contentType: string;
  /** The body of a non-SSE or non-200 answer. */
  readonly body: string | null;
  /** SSE events received (not counting `[DONE]`). */
  readonly events: number;
  readonly done: boolean;
  readonly content: string;
  readonly reasoning: string;
  /** Request sent → first non-empty delta. */
  readonly ttftMs: number | null;
  /** Request sent → `[DONE]` (or failure). */
  readonly e2eMs: number;
  /** `usage.completion_tokens` when the server sent it. */
  readonly usageTokens: number | null;
  /** Events with a non-empty delta. */
  readonly contentChunks: number;
  /** The request or the stream failed (reset, timeout, …). */
  readonly error: RequestError | null;
  /** The first `data:` payload that was not JSON. */
  readonly malformed: string | null;
  /** An `error` object sent inside the stream. */
  readonly serverError: string | null;
  /** The last event received, for messages. */
  readonly lastEvent: string | null;
}

/** Sends a streamed chat request and reads the SSE stream to `[DONE]`, an error or the signal. */
export async function streamChat(endpoint: Endpoint, servedModelName: string, maxTokens: number, signal: AbortSignal): Promise<StreamOutcome> {
  const started = performance.now();
  const clean = cleaner(endpoint);
  const body = { model: servedModelName, messages: [{ role: 'user', content: CHAT_PROMPT }], max_tokens: maxTokens, temperature: 0, stream: true };
  const outcome = {
    status: 0,
    contentType: '',
    body: null as string | null,
    events: 0,
    done: false,
    content: '',
    reasoning: '',
    ttftMs: null as number | null,
    e2eMs: 0,
    usageTokens: null as number | null,
    contentChunks: 0,
    error: null as RequestError | null,
    malformed: null as string | null,
    serverError: null as string | null,
    lastEvent: null as string | null,
  };
  let response: http.IncomingMessage | undefined;
  try {
    response = await send(endpoint, { method: 'POST', path: '/v1/chat/completions', body, signal });
    outcome.status = response.statusCode ?? 0;
    outcome.contentType = contentType(response);
    if (outcome.status !== 200 || outcome.contentType !== 'text/event-stream') {
      outcome.body = await readText(response, signal, 64 * 1024, clean);
      return { ...outcome, e2eMs: performance.now() - started };
    }
    const parser = new SseParser();
    // Through the bounded reader: at most MAX_BODY_BYTES in all, never a compressed stream.
    read: for await (const chunk of bodyChunks(response, { limit: MAX_BODY_BYTES })) {
      // After [DONE], read the (empty) rest so that the connection goes back to the pool (keep-alive).
      if (outcome.done) continue;
      for (const raw of parser.feed(chunk)) {
        const data = clean(raw);
        if (data.trim() === '[DONE]') {
          outcome.done = true;
          continue read;
        }
        outcome.events += 1;
        if (outcome.events > MAX_SSE_EVENTS) throw new RequestError('too-large', `the stream exceeded ${MAX_SSE_EVENTS} events`);
        outcome.lastEvent = data.length > 4096 ? data.slice(0, 4096) : data;
        let json: unknown;
        try {
          json = parseJson(data);
        } catch {
          outcome.malformed = data.length > 4096 ? data.slice(0, 4096) : data;
          break read;
        }
        if (isObject(json) && json.error !== undefined) {
          outcome.serverError = errorMessageOf(JSON.stringify(json)) || 'an error event';
          break read;
        }
        const usage = usageOf(json);
        if (usage !== null) outcome.usageTokens = usage;
        const delta = firstChoice(json)?.delta;
        const piece = isObject(delta) ? `${typeof delta.content === 'string' ? delta.content : ''}` : '';
        const thought = isObject(delta) && typeof delta.reasoning_content === 'string' ? delta.reasoning_content : '';
        if (piece || thought) {
          outcome.contentChunks += 1;
          outcome.ttftMs ??= performance.now() - started;
        }
        outcome.content += piece;
        outcome.reasoning += thought;
      }
    }
    if (!outcome.done && !outcome.malformed && !outcome.serverError) {
      outcome.error = new RequestError('reset', 'the stream ended');
    }
  } catch (error) {
    outcome.error = bodyReadError(error, 'the stream', MAX_BODY_BYTES, signal);
    if (error instanceof BodyError) outcome.body = error.partial;
  } finally {
    // Stop reading: after a malformed event or an error the rest does not matter. A complete
    // response keeps its socket for the next request.
    if (response && !response.complete) response.destroy();
  }
  // A token the server spread over several deltas is whole again in the content.
  return { ...outcome, content: clean(outcome.content), reasoning: clean(outcome.reasoning), e2eMs: performance.now() - started };
}

/** The same chat request with `"stream": true` returns a well-formed SSE stream with content, ending in `data: [DONE]`. */
export function checkChatStream(endpoint: Endpoint, servedModelName: string, options: HttpCheckOptions = {}): Promise<CheckResult> {
  const c = call(endpoint, options);
  const path = '/v1/chat/completions';
  const target = c.target('POST', `${path} (stream)`);
  const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
  return timed('chat-stream', target, async () => {
    const expected = 'HTTP 200 text/event-stream: JSON chunks with content, ending in data: [DONE]';
    const s = await streamChat(endpoint, servedModelName, maxTokens, c.signal);
    const fail = (message: string, failure: ReturnType<typeof bodyFailure>) => checkResult('chat-stream', 'fail', message, { target, failure, data: streamData(s) });
    if (s.status === 0 && s.error) {
      const failure = requestFailure(expected, s.error, c.timeoutMs, c.ctx());
      return fail(`no answer: ${failure.got}`, failure);
    }
    if (s.status !== 200) return fail(`HTTP ${s.status}`, httpFailure(expected, s.status, s.body ?? '', path, c.ctx()));
    if (s.contentType !== 'text/event-stream') {
      return fail(
        `not a stream (content-type ${s.contentType || 'none'})`,
        bodyFailure(expected, `HTTP 200 with content-type ${s.contentType || 'none'}`, s.body, 'the server ignored "stream": true, or a proxy buffered and rewrote the stream'),
      );
    }
    if (s.malformed !== null) {
      return fail(
        `malformed event after ${s.events - 1} good one(s)`,
        bodyFailure(expected, `a data: line that is not JSON: "${snippet(s.malformed, 120)}"`, null, 'the server or a proxy corrupted the stream (a proxy that re-chunks SSE, or a non-OpenAI server)'),
      );
    }
    if (s.serverError !== null) {
      return fail(`error event in the stream: ${preview(s.serverError, 80)}`, bodyFailure(expected, `an error event: "${snippet(s.serverError, 160)}"`, null, `the model server failed mid-stream: check its logs${options.route?.logs ? ` (${options.route.logs})` : ''}`));
    }
    if (!s.done && s.error?.kind === 'too-large') {
      return fail(`${s.error.message} (${s.events} event(s))`, {
        expected,
        got: `${s.error.message} after ${s.events} event(s), without data: [DONE]`,
        cause: `a ${DEFAULT_MAX_TOKENS}-token answer is a few KiB: the server streams without end or sends oversized events (a broken or hostile server, or a proxy that never closes the stream)`,
        httpStatus: 200,
        body: null,
      });
    }
    if (!s.done) {
      const error = s.error ?? new RequestError('reset', 'the stream ended');
      const last = s.lastEvent ? `; last event: "${snippet(s.lastEvent, 80)}"` : '';
      const got =
        error.kind === 'timeout'
          ? `no [DONE] within ${formatMs(c.timeoutMs)}: ${s.events} event(s) received${last}`
          : error.kind === 'deadline' || error.kind === 'aborted'
            ? `${error.message} after ${s.events} event(s), before [DONE]`
            : `the stream ended after ${s.events} event(s) without data: [DONE]${last}`;
      const cause =
        error.kind === 'timeout'
          ? s.events > 0
            ? `the stream is too slow or stalled (${s.events} event(s) in ${formatMs(c.timeoutMs)}): an overloaded model, or raise --timeout if it is just slow`
            : `no event within ${formatMs(c.timeoutMs)}: the model may be loading or overloaded, or a proxy buffers the stream`
          : error.kind === 'deadline'
            ? 'the whole run has a deadline and it passed during the stream'
            : `the server or a proxy cut the stream before it finished: a model-server crash or restart, or a Gateway/proxy stream timeout${options.route?.logs ? ` (${options.route.logs})` : ''}`;
      return fail(`stream cut before [DONE] (${s.events} event(s))`, { expected, got, cause, httpStatus: 200, body: null });
    }
    if (!s.content.trim() && !s.reasoning.trim()) {
      return fail(`${s.events} event(s), [DONE], but no content`, bodyFailure(expected, `${s.events} event(s) whose deltas carry no content`, null, 'the model produced no tokens: check the model server logs and the chat template'));
    }
    const ttft = s.ttftMs === null ? '' : `, first token after ${formatMs(s.ttftMs)}`;
    return checkResult('chat-stream', 'pass', `${s.events} event(s)${ttft}, ended with [DONE]`, { target, data: streamData(s) });
  });
}

function streamData(s: StreamOutcome): Record<string, JsonValue> {
  return {
    events: s.events,
    done: s.done,
    ttftMs: s.ttftMs === null ? null : Math.round(s.ttftMs),
    e2eMs: Math.round(s.e2eMs),
    content: s.content ? preview(s.content, 120) : null,
  };
}

/** `POST /v1/embeddings` answers one vector per input, all of one dimension > 0, all finite numbers. */
export function checkEmbeddings(endpoint: Endpoint, servedModelName: string, options: HttpCheckOptions = {}): Promise<CheckResult> {
  const c = call(endpoint, options);
  const path = '/v1/embeddings';
  const target = c.target('POST', path);
  return timed('embeddings', target, async () => {
    const expected = `HTTP 200 with ${EMBEDDING_INPUTS.length} embeddings (one per input) of one dimension > 0, all finite numbers`;
    const answer = await exchange('embeddings', endpoint, c, 'POST', path, { model: servedModelName, input: EMBEDDING_INPUTS }, expected);
    if (!answer.ok) return answer.result;
    const fail = (message: string, got: string, cause: string) => checkResult('embeddings', 'fail', message, { target, failure: bodyFailure(expected, got, answer.text, cause) });
    const data = isObject(answer.json) ? answer.json.data : undefined;
    if (!Array.isArray(data)) return fail('no data list in the answer', 'JSON without a "data" list', 'not an OpenAI-compatible embeddings answer');
    if (data.length !== EMBEDDING_INPUTS.length) {
      return fail(
        `${data.length} vector(s) for ${EMBEDDING_INPUTS.length} inputs`,
        `${data.length} embedding(s) for ${EMBEDDING_INPUTS.length} inputs`,
        'the server does not answer one embedding per input (a list input treated as one string?)',
      );
    }
    const ordered = [...data].sort((a, b) => (isObject(a) && isObject(b) ? Number(a.index ?? 0) - Number(b.index ?? 0) : 0));
    const dimensions: number[] = [];
    for (const [i, item] of ordered.entries()) {
      const vector = isObject(item) ? item.embedding : undefined;
      if (typeof vector === 'string') {
        return fail('base64 embeddings', `embedding ${i} is a string (base64), not a list of numbers`, 'the server answered encoding_format "base64" although the request asked for none (float is the default)');
      }
      if (!Array.isArray(vector)) return fail(`embedding ${i} missing`, `data[${i}].embedding is not a list`, 'not an OpenAI-compatible embeddings answer');
      const bad = vector.findIndex((x) => typeof x !== 'number' || !Number.isFinite(x));
      if (bad >= 0) {
        return fail(
          `embedding ${i} has a non-finite value`,
          `embedding ${i}[${bad}] is ${JSON.stringify(vector[bad])}, not a finite number`,
          'the model produced NaN/Infinity (fp16 overflow, broken weights) or the server serialises them as strings',
        );
      }
      dimensions.push(vector.length);
    }
    if (new Set(dimensions).size > 1) {
      return fail(`mixed dimensions ${dimensions.join(', ')}`, `vectors of dimensions ${dimensions.join(', ')}`, 'one model answers vectors of a single dimension: the answers come from different models, or the server truncates vectors');
    }
    if (dimensions[0] === 0) return fail('empty vectors', 'vectors of dimension 0', 'the server returned empty embeddings');
    return checkResult('embeddings', 'pass', `${dimensions.length} vectors of dimension ${dimensions[0]}`, { target, data: { count: dimensions.length, dimension: dimensions[0]! } });
  });
}

/**
 * Informational: sends `/v1/embeddings` through the model's Gateway and explains the answer.
 * With GAIE v1.2 the EPP rejects embeddings with 400; an embedder has no HTTPRoute, so 404 is
 * just as expected. Never fails: the status is `info` whatever comes back.
 */
export function checkGatewayRejectsEmbeddings(
  endpoint: Endpoint,
  servedModelName: string,
  options: HttpCheckOptions & { readonly embeddingsService?: string } = {},
): Promise<CheckResult> {
  const c = call(endpoint, options);
  const path = '/v1/embeddings';
  const target = c.target('POST', path);
  const use = options.embeddingsService ? `clients use ${options.embeddingsService}` : 'clients use the embeddings Service';
  return timed('gateway-rejects-embeddings', target, async () => {
    const info = (message: string, data: Record<string, JsonValue> = {}) => checkResult('gateway-rejects-embeddings', 'info', message, { target, data });
    let status: number;
    let text: string;
    try {
      const response = await send(endpoint, { method: 'POST', path, body: { model: servedModelName, input: EMBEDDING_INPUTS.slice(0, 1) }, signal: c.signal });
      status = response.statusCode ?? 0;
      text = await readText(response, c.signal, 64 * 1024, c.clean);
    } catch (error) {
      const e = toRequestError(error, c.signal);
      return info(`the Gateway did not answer (${e.message}); not needed for embeddings: ${use}`, { error: e.message });
    }
    const data = { httpStatus: status, body: text.trim() ? snippet(text) : null };
    if (status === 400 && EPP_EMBEDDINGS_REJECTION.test(text)) {
      return info(`400 from the EPP, as GAIE v1.2 answers /v1/embeddings ("${preview(errorMessageOf(text), 60)}"): expected; ${use}`, data);
    }
    if (status === 404) return info(`404: the Gateway has no route for this embedder (no HTTPRoute, by design); ${use}`, data);
    if (status === 200) return info(`200: the Gateway served embeddings (an EPP that accepts them, GAIE ≥ v1.5); ${use} all the same`, data);
    return info(`HTTP ${status} from the Gateway ("${preview(errorMessageOf(text), 60)}"); ${use}`, data);
  });
}
