import { Buffer } from 'node:buffer';
import { withoutUrlCredentials, type AccessPlan } from '@app-serving/core';
import { clip } from './bounded.ts';
import { MAX_BODY_BYTES, readText, send, type Endpoint } from './http.ts';
import { Redactor, headerSecrets, urlSecrets } from './redact.ts';
import { checkResult, timed } from './result.ts';
import type { CheckResult } from './types.ts';

/**
 * The credentials a model's access asks for, from one token (`APP_SERVING_VERIFY_TOKEN`):
 * API keys: HTTP Basic, the token being `<key name>:<key>`; JWT: the token as a bearer token.
 * None for an open model, or without a token.
 */
export function accessHeaders(access: AccessPlan | undefined, token: string | undefined): Record<string, string> {
  if (!access || access.mode === 'open' || !token) return {};
  if (access.mode === 'apiKeys') return { authorization: `Basic ${Buffer.from(token, 'utf8').toString('base64')}` };
  return { authorization: `Bearer ${token}` };
}

/** The values a run must redact for a token: the token, and each form it is sent in. */
export function tokenSecrets(token: string | undefined): string[] {
  if (!token) return [];
  const parts = token.includes(':') ? token.slice(token.indexOf(':') + 1) : null;
  return [token, Buffer.from(token, 'utf8').toString('base64'), ...(parts && parts.length >= 8 ? [parts] : [])];
}

/** `headers` without credentials: `Authorization` and `Proxy-Authorization` (any case). */
export function withoutCredentials(headers: Readonly<Record<string, string>> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).filter(([name]) => !/^(proxy-)?authorization$/i.test(name)));
}

/** Most characters of the body a failed `refuses-anonymous` shows (cut after it is redacted whole). */
const BODY_SHOWN = 400;

/**
 * The check that a model with access refuses a caller without credentials: the same `GET
 * /v1/models` as the `models` check, with no `Authorization` header and no credentials in the URL
 * (Node sends a URL's `user:password@` as Basic credentials; a `?api_key=` is one too), must get
 * 401 or 403. A 2xx fails with "model X answers without credentials".
 */
export async function checkRefusesAnonymous(endpoint: Endpoint, model: string, access: AccessPlan, options: { timeoutMs: number; signal: AbortSignal }): Promise<CheckResult> {
  const path = '/v1/models';
  const target = `GET ${path} without credentials${endpoint.via ? ` via ${endpoint.via}` : ''}`;
  const expected = `HTTP 401 or 403: model ${model} takes ${access.mode === 'apiKeys' ? 'API keys' : 'JWTs'} only`;
  const anonymous: Endpoint = { ...endpoint, url: withoutUrlCredentials(endpoint.url), headers: withoutCredentials(endpoint.headers) };
  const redactor = new Redactor([...headerSecrets(endpoint.headers), ...urlSecrets(endpoint.url)]);
  return timed('refuses-anonymous', target, async () => {
    const signal = AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]);
    let status: number;
    let body: string;
    try {
      const response = await send(anonymous, { method: 'GET', path, signal });
      status = response.statusCode ?? 0;
      // Redacted whole, then cut: a credential the server echoes is never shown in part.
      body = clip(await readText(response, signal, MAX_BODY_BYTES, (text) => redactor.text(text)), BODY_SHOWN);
    } catch (error) {
      const got = redactor.text(error instanceof Error ? error.message : String(error));
      return checkResult('refuses-anonymous', 'fail', `GET ${path} without credentials: ${got}`, {
        target,
        failure: { expected, got, cause: 'the gateway could not be reached without credentials', httpStatus: null, body: null },
      });
    }
    if (status === 401 || status === 403) return checkResult('refuses-anonymous', 'pass', `refused without credentials (HTTP ${status})`, { target, data: { httpStatus: status } });
    const answers = status >= 200 && status < 300;
    const message = answers ? `model ${model} answers without credentials` : `GET ${path} without credentials: HTTP ${status}, not 401 or 403`;
    return checkResult('refuses-anonymous', 'fail', message, {
      target,
      failure: {
        expected,
        got: `HTTP ${status}`,
        cause: answers
          ? `the gateway does not enforce the model's access: check that the ${access.mode === 'apiKeys' ? 'EnvoyFilter (Istio) or SecurityPolicy (Envoy Gateway)' : 'RequestAuthentication and AuthorizationPolicy (Istio) or SecurityPolicy (Envoy Gateway)'} exists and is accepted (docs/access.md)`
          : null,
        httpStatus: status,
        body: body || null,
      },
    });
  });
}
