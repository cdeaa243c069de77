import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { withoutUrlCredentials, type EndpointAccessPlan, type EndpointModelList, type EndpointPlan } from '@app-serving/core';
import { clip } from './bounded.ts';
import { withoutCredentials } from './access.ts';
import { MAX_BODY_BYTES, readText, send, type Endpoint } from './http.ts';
import { checkChat, checkEmbeddings, type HttpCheckOptions } from './openai.ts';
import { Redactor, headerSecrets, urlSecrets } from './redact.ts';
import { checkResult, timed } from './result.ts';
import type { CheckName, CheckResult } from './types.ts';

/**
 * The checks of the stack's endpoint (docs/endpoint.md, docs/verify.md), through its one base URL:
 *
 * - `endpoint-models`: `GET /v1/models` lists exactly the models and adapters the endpoint serves
 *   (the plan's list: each id, and each adapter's `parent`), in OpenAI's shape;
 * - `endpoint-unknown-model`: a request for a model the endpoint does not serve is refused with
 *   404 and an OpenAI error body (`error.code: model_not_found`) that names `/v1/models`;
 * - `endpoint-refuses-anonymous`: with access, `GET /v1/models` without credentials gets 401 or 403;
 * - per model (and adapter) the credential grants: it answers by its name (`endpoint-chat`,
 *   `endpoint-embeddings`); per model it does not grant: refused with 401 or 403
 *   (`endpoint-refuses-ungranted`).
 *
 * The credential is verify's one token (`APP_SERVING_VERIFY_TOKEN`): `<key name>:<key>` for keys
 * (sent as `Authorization: Bearer <key>` or HTTP Basic, as the endpoint checks them), a JWT for
 * jwt (its models claim read, not verified, to know what it grants). Its values never appear in results.
 */

/** The credentials the endpoint asks for, from verify's token: none for an open endpoint or without a token. */
export function endpointAccessHeaders(access: EndpointAccessPlan, token: string | undefined): Record<string, string> {
  if (access.mode === 'open' || !token) return {};
  if (access.mode === 'jwt') return { authorization: `Bearer ${token}` };
  if (access.keyFormat === 'bearer') return { authorization: `Bearer ${token.includes(':') ? token.slice(token.indexOf(':') + 1) : token}` };
  return { authorization: `Basic ${Buffer.from(token, 'utf8').toString('base64')}` };
}

/**
 * The model names (as clients send them: served names, adapters) a token reaches through the
 * endpoint: every name when it is open; for a key, those of the models the stack grants the key
 * named before the `:`; for a JWT, those its models claim lists (with their adapters). null when not known (no token).
 */
export function grantedNames(endpoint: Pick<EndpointPlan, 'access' | 'models'>, token: string | undefined): Set<string> | null {
  const access = endpoint.access;
  if (access.mode === 'open') return new Set(endpoint.models.flatMap((m) => m.names));
  if (!token) return null;
  if (access.mode === 'apiKeys') {
    const key = token.includes(':') ? token.slice(0, token.indexOf(':')) : '';
    const granted = access.grants[key] ?? [];
    return new Set(endpoint.models.filter((m) => granted.includes(m.model)).flatMap((m) => m.names));
  }
  const claimed = jwtClaim(token, access.jwt!.modelsClaim);
  return new Set(endpoint.models.filter((m) => claimed.includes(m.servedName)).flatMap((m) => m.names));
}

/** The strings of a JWT's claim (a nested claim as `a.b`), read without verifying the token; none when it cannot be read. */
export function jwtClaim(token: string, claim: string): string[] {
  const payload = token.split('.')[1];
  if (!payload) return [];
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return [];
  }
  for (const key of claim.split('.')) value = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Most characters of a body a failed check shows (cut after it is redacted whole). */
const BODY_SHOWN = 400;

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly json: unknown;
}

/** One request to the endpoint; the answer's body redacted of the request's credentials. */
async function ask(endpoint: Endpoint, method: 'GET' | 'POST', path: string, body: unknown, options: { timeoutMs: number; signal: AbortSignal }): Promise<Answer> {
  const redactor = new Redactor([...headerSecrets(endpoint.headers), ...urlSecrets(endpoint.url)]);
  const signal = AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]);
  const response = await send(endpoint, { method, path, signal, ...(body !== undefined && { body }) });
  const answer = await readText(response, signal, MAX_BODY_BYTES, (t) => redactor.text(t));
  let json: unknown = undefined;
  try {
    json = JSON.parse(answer);
  } catch {
    // Not JSON: reported by the checks that need it.
  }
  return { status: response.statusCode ?? 0, body: answer, json };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const via = (endpoint: Endpoint) => (endpoint.via ? ` via ${endpoint.via}` : '');

/** `GET /v1/models` through the endpoint lists exactly the plan's models and adapters (ids and parents), in OpenAI's shape. */
export function checkEndpointModels(endpoint: Endpoint, expected: EndpointModelList, options: { timeoutMs: number; signal: AbortSignal }): Promise<CheckResult> {
  const target = `GET /v1/models${via(endpoint)}`;
  const want = expected.data.map((d) => `${d.id}${d.parent ? ` (adapter of ${d.parent})` : ''}`).sort();
  const wanted = `HTTP 200, {"object": "list", "data": [...]} listing exactly: ${want.join(', ') || 'no model'}`;
  return timed('endpoint-models', target, async () => {
    let answer: Answer;
    try {
      answer = await ask(endpoint, 'GET', '/v1/models', undefined, options);
    } catch (error) {
      const got = error instanceof Error ? error.message : String(error);
      return checkResult('endpoint-models', 'fail', `GET /v1/models: ${got}`, { target, failure: { expected: wanted, got, cause: 'the endpoint could not be reached', httpStatus: null, body: null } });
    }
    const fail = (message: string, cause: string | null) =>
      checkResult('endpoint-models', 'fail', message, { target, failure: { expected: wanted, got: message, cause, httpStatus: answer.status, body: clip(answer.body, BODY_SHOWN) || null } });
    if (answer.status !== 200) return fail(`HTTP ${answer.status}, not 200`, answer.status === 401 || answer.status === 403 ? 'the credential is refused: set APP_SERVING_VERIFY_TOKEN to a key the endpoint takes (<name>:<key>) or a valid JWT' : 'the endpoint does not answer /v1/models itself: check its Gateway and its /v1/models answer (docs/endpoint.md)');
    const json = answer.json;
    if (!isObject(json) || json.object !== 'list' || !Array.isArray(json.data)) return fail('not an OpenAI model list ({"object": "list", "data": [...]})', 'the answer comes from something other than the endpoint\'s own /v1/models');
    const bad = json.data.filter((d) => !isObject(d) || typeof d.id !== 'string' || d.object !== 'model');
    if (bad.length > 0) return fail(`${bad.length} entries of data are not {"id": …, "object": "model"}`, null);
    const got = (json.data as Record<string, unknown>[]).map((d) => `${String(d.id)}${typeof d.parent === 'string' ? ` (adapter of ${d.parent})` : ''}`).sort();
    const missing = want.filter((w) => !got.includes(w));
    const extra = got.filter((g) => !want.includes(g));
    if (missing.length || extra.length) {
      return fail(
        `the list is not the stack's: ${[missing.length ? `missing ${missing.join(', ')}` : '', extra.length ? `not the stack's ${extra.join(', ')}` : ''].filter(Boolean).join('; ')}`,
        'the endpoint answers from an older deployment, or the request reached a model server instead of the endpoint',
      );
    }
    return checkResult('endpoint-models', 'pass', `lists exactly the stack's ${got.length} models and adapters`, { target, data: { models: got } });
  });
}

/** A request for a model the endpoint does not serve is refused: 404 and an OpenAI error (`model_not_found`) naming `/v1/models`. */
export function checkEndpointUnknownModel(endpoint: Endpoint, options: { timeoutMs: number; signal: AbortSignal }): Promise<CheckResult> {
  const name = `app-serving-verify-no-such-model-${randomBytes(4).toString('hex')}`;
  const path = '/v1/chat/completions';
  const target = `POST ${path} for "${name}"${via(endpoint)}`;
  const wanted = 'HTTP 404 with {"error": {"code": "model_not_found", "message": "… GET /v1/models …"}}';
  return timed('endpoint-unknown-model', target, async () => {
    let answer: Answer;
    try {
      answer = await ask(endpoint, 'POST', path, { model: name, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 }, options);
    } catch (error) {
      const got = error instanceof Error ? error.message : String(error);
      return checkResult('endpoint-unknown-model', 'fail', `${target}: ${got}`, { target, failure: { expected: wanted, got, cause: 'the endpoint could not be reached', httpStatus: null, body: null } });
    }
    const error = isObject(answer.json) && isObject(answer.json.error) ? answer.json.error : null;
    const problem =
      answer.status !== 404
        ? `HTTP ${answer.status}, not 404`
        : !error
          ? 'not an OpenAI error body ({"error": {...}})'
          : error.code !== 'model_not_found'
            ? `error.code is ${JSON.stringify(error.code)}, not "model_not_found"`
            : typeof error.message !== 'string' || !error.message.includes('/v1/models')
              ? 'the error message does not name /v1/models'
              : null;
    if (!problem) return checkResult('endpoint-unknown-model', 'pass', 'refused with 404 model_not_found, naming /v1/models', { target, data: { httpStatus: answer.status } });
    return checkResult('endpoint-unknown-model', 'fail', `an unknown model: ${problem}`, {
      target,
      failure: {
        expected: wanted,
        got: problem,
        cause:
          answer.status === 403
            ? "the endpoint's authorization refuses a name no model serves before it can answer 404: its AuthorizationPolicy (Istio) lacks the rule for unknown names"
            : answer.status >= 200 && answer.status < 300
              ? 'a model answered for a name it does not serve: the request reached a model server without the endpoint routing it by name'
              : "the Gateway's own not-found page answered instead of the endpoint's (its entry route, or the Lua filter on Istio)",
        httpStatus: answer.status,
        body: clip(answer.body, BODY_SHOWN) || null,
      },
    });
  });
}

/** With access, `GET /v1/models` without credentials gets 401 or 403. */
export function checkEndpointRefusesAnonymous(endpoint: Endpoint, access: EndpointAccessPlan, options: { timeoutMs: number; signal: AbortSignal }): Promise<CheckResult> {
  const anonymous: Endpoint = { ...endpoint, url: withoutUrlCredentials(endpoint.url), headers: withoutCredentials(endpoint.headers) };
  const target = `GET /v1/models without credentials${via(endpoint)}`;
  const wanted = `HTTP 401 or 403: the endpoint takes ${access.mode === 'apiKeys' ? 'API keys' : 'JWTs'} only`;
  return timed('endpoint-refuses-anonymous', target, async () => {
    let answer: Answer;
    try {
      answer = await ask(anonymous, 'GET', '/v1/models', undefined, options);
    } catch (error) {
      const got = error instanceof Error ? error.message : String(error);
      return checkResult('endpoint-refuses-anonymous', 'fail', `${target}: ${got}`, { target, failure: { expected: wanted, got, cause: 'the endpoint could not be reached without credentials', httpStatus: null, body: null } });
    }
    if (answer.status === 401 || answer.status === 403) return checkResult('endpoint-refuses-anonymous', 'pass', `refused without credentials (HTTP ${answer.status})`, { target, data: { httpStatus: answer.status } });
    return checkResult('endpoint-refuses-anonymous', 'fail', answer.status >= 200 && answer.status < 300 ? 'the endpoint answers without credentials' : `HTTP ${answer.status}, not 401 or 403`, {
      target,
      failure: { expected: wanted, got: `HTTP ${answer.status}`, cause: "the endpoint does not enforce its access: check its SecurityPolicy (Envoy Gateway) or its keys' EnvoyFilter and AuthorizationPolicy (Istio)", httpStatus: answer.status, body: clip(answer.body, BODY_SHOWN) || null },
    });
  });
}

/** A model the credential is not granted is refused by name: 401 or 403. */
export function checkEndpointRefusesUngranted(endpoint: Endpoint, name: string, category: 'generative' | 'embedder', options: { timeoutMs: number; signal: AbortSignal }): Promise<CheckResult> {
  const path = category === 'generative' ? '/v1/chat/completions' : '/v1/embeddings';
  const target = `POST ${path} for "${name}"${via(endpoint)}`;
  const wanted = `HTTP 401 or 403: the credential is not granted ${name}`;
  const body = category === 'generative' ? { model: name, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 } : { model: name, input: 'ping' };
  return timed('endpoint-refuses-ungranted', target, async () => {
    let answer: Answer;
    try {
      answer = await ask(endpoint, 'POST', path, body, options);
    } catch (error) {
      const got = error instanceof Error ? error.message : String(error);
      return checkResult('endpoint-refuses-ungranted', 'fail', `${target}: ${got}`, { target, data: { model: name }, failure: { expected: wanted, got, cause: 'the endpoint could not be reached', httpStatus: null, body: null } });
    }
    if (answer.status === 401 || answer.status === 403) return checkResult('endpoint-refuses-ungranted', 'pass', `"${name}" refused to this credential (HTTP ${answer.status})`, { target, data: { model: name, httpStatus: answer.status } });
    return checkResult('endpoint-refuses-ungranted', 'fail', answer.status >= 200 && answer.status < 300 ? `"${name}" answers a credential the stack does not grant it` : `HTTP ${answer.status}, not 401 or 403`, {
      target,
      data: { model: name },
      failure: { expected: wanted, got: `HTTP ${answer.status}`, cause: "the endpoint does not hold each model's grants: check the model route's SecurityPolicy authorization (Envoy Gateway) or the AuthorizationPolicy (Istio)", httpStatus: answer.status, body: clip(answer.body, BODY_SHOWN) || null },
    });
  });
}

/** A model (or adapter) answers by its name through the endpoint: the chat or embeddings check, under the endpoint's name. */
export async function checkEndpointAnswers(endpoint: Endpoint, name: string, category: 'generative' | 'embedder', options: HttpCheckOptions): Promise<CheckResult> {
  const check: CheckName = category === 'generative' ? 'endpoint-chat' : 'endpoint-embeddings';
  const result = category === 'generative' ? await checkChat(endpoint, name, options) : await checkEmbeddings(endpoint, name, options);
  return { ...result, name: check, data: { ...result.data, model: name } };
}
