import { KSERVE_POOL_PATHS } from '@app-serving/core';
import { parseJson } from './bounded.ts';
import { formatMs } from './clock.ts';
import { snippet, type RequestError } from './http.ts';
import type { Failure } from './types.ts';

/** What a diagnosis knows about where a request went. */
export interface RouteContext {
  /**
   * - `gateway`: an llm-d Gateway (HTTPRoute → InferencePool → EPP → decode pod);
   * - `service`: straight to the model server (the embeddings Service);
   * - `kserve`: the KServe Gateway (managed HTTPRoute on the path prefix → EPP → vLLM);
   * - `direct`: any OpenAI-compatible URL (`--base-url`).
   */
  readonly kind: 'gateway' | 'service' | 'kserve' | 'direct';
  /** e.g. `HTTPRoute llm-d-sim on Gateway infra-sim-inference-gateway`. */
  readonly route?: string | null;
  /** KServe: `/<namespace>/<name>`. */
  readonly pathPrefix?: string | null;
  /**
   * KServe: the Service `<name>-kserve-workload-svc` in front of the vLLM pods, where the managed
   * route sends every path but completions, chat and responses (those go through the InferencePool
   * and its EPP).
   */
  readonly workloadService?: string | null;
  /** Where to read logs, e.g. `kubectl logs -n llm-d-sim deploy/ms-sim-llm-d-modelservice-decode`. */
  readonly logs?: string | null;
  /** Where the request went, e.g. `127.0.0.1:41235 (port-forward …)`. */
  readonly where: string;
  /** The last port-forward problem, if any. */
  readonly transportProblem?: string | null;
}

/** The message the EPP of GAIE v1.2 answers `/v1/embeddings` with (400). */
export const EPP_EMBEDDINGS_REJECTION = /must have at least one message|invalid chat-completions request/i;

/** A failure for an HTTP answer with an unexpected status (`location`: the Location header of a redirect). */
export function httpFailure(expected: string, status: number, body: string, path: string, ctx: RouteContext, location?: string | null): Failure {
  if (status >= 300 && status < 400) {
    const where = location ? `to ${snippet(location, 200)}` : 'without a Location header';
    return {
      expected,
      got: `HTTP ${status}: a redirect ${where}`,
      cause: location
        ? 'verify does not follow redirects: call the final URL (--base-url), or remove the redirect (an auth proxy or a http→https rule in front of the model server)'
        : 'a redirect without a Location header goes nowhere: a misconfigured proxy or ingress in front of the model server',
      httpStatus: status,
      body: body.trim() ? snippet(body) : null,
    };
  }
  return { expected, got: `HTTP ${status}${body.trim() ? '' : ' with an empty body'}`, cause: httpCause(status, body, path, ctx), httpStatus: status, body: body.trim() ? snippet(body) : null };
}

/** A failure for a 200 whose body is not what the check wants. */
export function bodyFailure(expected: string, got: string, body: string | null, cause: string | null, status = 200): Failure {
  return { expected, got, cause, httpStatus: status, body: body === null ? null : snippet(body) };
}

/** A failure for a request that got no (complete) answer. */
export function requestFailure(expected: string, error: RequestError, timeoutMs: number, ctx: RouteContext, extra = ''): Failure {
  return { expected, got: `${describeRequestError(error, timeoutMs)}${extra}`, cause: requestCause(error, timeoutMs, ctx), httpStatus: null, body: null };
}

function describeRequestError(error: RequestError, timeoutMs: number): string {
  switch (error.kind) {
    case 'timeout':
      return `no answer within ${formatMs(timeoutMs)}`;
    case 'deadline':
      return error.message;
    case 'aborted':
      return 'cancelled';
    default:
      return error.message;
  }
}

/** The `error.message` of an OpenAI-style error body, or the raw text. */
export function errorMessageOf(body: string): string {
  try {
    const parsed: unknown = parseJson(body);
    if (parsed && typeof parsed === 'object') {
      const error = (parsed as { error?: unknown; message?: unknown }).error ?? parsed;
      if (typeof error === 'string') return error;
      if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') return (error as { message: string }).message;
      if (typeof (parsed as { message?: unknown }).message === 'string') return (parsed as { message: string }).message;
    }
  } catch {
    // not JSON
  }
  return body.trim();
}

/** KServe: whether the managed route sends `path` through the InferencePool (and so its EPP), or past it. */
function kserveViaPool(path: string): boolean {
  const api = path.split('?')[0]!.replace(/\/+$/, '');
  return KSERVE_POOL_PATHS.some((p) => api.endsWith(p));
}

function httpCause(status: number, body: string, path: string, ctx: RouteContext): string | null {
  const message = errorMessageOf(body);
  const logs = ctx.logs ? ` (${ctx.logs})` : '';
  // KServe's route takes every path but completions, chat and responses by its catch-all rule
  // straight to the workload Service: no EPP on the way.
  const pastEpp = ctx.kind === 'kserve' && !kserveViaPool(path);
  const workload = `the Service ${ctx.workloadService ?? '<name>-kserve-workload-svc'}`;
  if (status === 400 && EPP_EMBEDDINGS_REJECTION.test(body) && !pastEpp) {
    if (!path.endsWith('/embeddings')) return 'the EPP (InferencePool endpoint picker) rejected the request body as not a chat/completions request';
    return 'the EPP of GAIE v1.2 (the InferencePool behind the Gateway) parses every body as chat or completions and rejects /v1/embeddings with this 400; call embedding models through their ms-<slug>-embeddings Service on port 8200, not the Gateway';
  }
  if (pastEpp && status >= 400 && status !== 404) {
    const answer = status === 503 || status === 502 ? `no vLLM pod behind it is Ready, or it has no endpoints` : `vLLM itself answered: ${message.slice(0, 160) || 'no reason given'}`;
    return `KServe's route sends ${path} past the scheduler, by its catch-all rule straight to ${workload}; ${answer}${path.endsWith('/embeddings') && status === 400 ? ' (is the model served as an embedding model?)' : ''}${logs}`;
  }
  if (status === 401 || status === 403) {
    return ctx.kind === 'direct'
      ? 'the endpoint wants credentials or refused them: give it a bearer token (app-serving verify reads APP_SERVING_VERIFY_TOKEN; the library takes an Authorization header in `headers`), whose value is never printed'
      : 'something on the path (Gateway policy, auth proxy) refused the request';
  }
  if (status === 404) {
    if (/model/i.test(message) && /(not|n't) (exist|found|served)|does not exist|unknown model|not found/i.test(message)) {
      return `the server does not serve this model name: "${message.slice(0, 120)}"; compare the name with what /v1/models lists (the models check)`;
    }
    switch (ctx.kind) {
      case 'gateway':
        return `no route matched ${path}: the ${ctx.route ?? 'HTTPRoute'} is missing or not attached (kubectl get httproute -o yaml: status.parents[].conditions Accepted/ResolvedRefs), or Istio runs without ENABLE_GATEWAY_API_INFERENCE_EXTENSION`;
      case 'kserve':
        return `no route matched ${ctx.pathPrefix ?? ''}${path}: the KServe HTTPRoute is not attached to the Gateway, or the path prefix is wrong (expected ${ctx.pathPrefix ?? '/<namespace>/<name>'})`;
      case 'service':
        return `the model server has no ${path}: not an OpenAI-compatible server, or an image without this endpoint (llm-d-inference-sim serves /v1/embeddings from v0.8.0)`;
      default:
        return `nothing serves ${path} at this URL: wrong base URL or path prefix, or not an OpenAI-compatible server`;
    }
  }
  if (status === 405) return `the server does not accept this method on ${path}`;
  if (status === 408 || status === 504) return `a proxy gave up waiting for the model server: the model may be overloaded or still loading${logs}`;
  if (status === 413) return 'the request is too large for a proxy or the server';
  if (status === 429) return 'the server is overloaded or rate-limiting (queue full); retry later or lower the probe concurrency';
  if (status === 503 || status === 502) {
    if (/no healthy upstream|upstream connect error|no endpoints|unavailable/i.test(body) || ctx.kind === 'gateway' || ctx.kind === 'kserve') {
      return `the Gateway has no healthy backend: the model pods are not Ready, the InferencePool selects no pod, or the EPP is down (see the ready check)${logs}`;
    }
    return `the model server is not ready (still loading the model?) or a proxy cannot reach it${logs}`;
  }
  if (status === 500 && ctx.kind === 'kserve' && !body.trim()) {
    // Gateway API: a rule whose backend is invalid answers 500; Envoy Gateway without Envoy AI
    // Gateway rejects the InferencePool backend of KServe's completions, chat and responses rules.
    return `the Gateway answered 500 with no body: it could not resolve the InferencePool backend of KServe's route for ${path} — plain Envoy Gateway (without Envoy AI Gateway) rejects it; the ready check names the missing prerequisite (docs/deployment-flow.md#kserve-prerequisites)${logs}`;
  }
  if (status >= 500) {
    if (/ext_?proc|external process|epp|endpoint picker|inference ?pool/i.test(body)) return `the EPP (endpoint picker) failed while routing the request: check the gaie-<slug>-epp pod logs`;
    return `the model server failed on this request: check its logs${logs}`;
  }
  if (status === 400) return `the server rejected the request: ${message.slice(0, 160) || 'no reason given'}`;
  return null;
}

function requestCause(error: RequestError, timeoutMs: number, ctx: RouteContext): string | null {
  const transport = ctx.transportProblem ? `port-forward: ${ctx.transportProblem}` : null;
  switch (error.kind) {
    case 'refused':
      return transport ?? `nothing listens at ${ctx.where}: wrong port, or the server/pod is not ready`;
    case 'reset':
      return transport ?? `the connection closed before a complete answer: the server crashed or restarted, or a proxy cut the request${ctx.logs ? ` (${ctx.logs})` : ''}`;
    case 'dns':
      return `the host does not resolve from here: a cluster-internal name? Run verify without --base-url (it port-forwards), or run it inside the cluster`;
    case 'tls':
      return 'the TLS handshake failed: wrong scheme (http vs https) or an untrusted certificate';
    case 'timeout':
      return transport ?? `no complete answer within ${formatMs(timeoutMs)}: the model may still be loading, be overloaded, or a proxy holds the request; raise --timeout if the model is just slow`;
    case 'deadline':
      return 'the whole run has a deadline and it passed before this check finished; raise --timeout or --wait';
    case 'aborted':
      return 'the run was cancelled';
    case 'too-large':
      return 'the server sent far more than a smoke-test answer: a body or stream without end, or the wrong endpoint';
    case 'encoded':
      return 'the server (or a proxy before it) compressed its answer though verify asks for none: verify never inflates an answer (a small compressed body can inflate to gigabytes)';
    default:
      return transport;
  }
}
