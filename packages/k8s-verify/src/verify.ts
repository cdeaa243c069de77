import http from 'node:http';
import https from 'node:https';
import { shellCommand, type DeploymentPlan, type AnyLlmdModelPlan, type EndpointPlan, type ModelPlan } from '@app-serving/core';
import {
  checkEndpointAnswers,
  checkEndpointModels,
  checkEndpointRefusesAnonymous,
  checkEndpointRefusesUngranted,
  checkEndpointUnknownModel,
  endpointAccessHeaders,
  grantedNames,
} from './endpoint-checks.ts';
import { accessHeaders, checkRefusesAnonymous, tokenSecrets, withoutCredentials } from './access.ts';
import { DEFAULT_BACKOFF, DeadlineError, anySignal, checkSignal, systemClock, type Backoff, type Clock } from './clock.ts';
import { checkPulled, probeKserveAddress, probeReady, type Probe } from './cluster-checks.ts';
import { labelSelector, type Cluster } from './cluster.ts';
import { EndpointError, ENVOY_GATEWAY_SYSTEM_NAMESPACE, openEnvoyGatewayEndpoint, openKserveEndpoint, openServiceEndpoint, type OpenEndpoint } from './endpoints.ts';
import { MAX_DURATION_MS } from './duration.ts';
import { VerifyError } from './errors.ts';
import { joinUrl, type Endpoint } from './http.ts';
import { connectCluster } from './kubeconfig.ts';
import { loadCheck, MAX_LOAD_CONCURRENCY, MAX_LOAD_REQUESTS, runLoadProbe } from './load.ts';
import {
  checkAdapters,
  checkChat,
  checkChatStream,
  checkCompletions,
  checkEmbeddings,
  checkGatewayRejectsEmbeddings,
  checkModels,
  DEFAULT_CHECK_TIMEOUT_MS,
  DEFAULT_MAX_TOKENS,
  type HttpCheckOptions,
  type RouteHint,
} from './openai.ts';
import { bounded } from './bounded.ts';
import { displayUrl, headerSecrets, Redactor, urlSecrets } from './redact.ts';
import { checkResult, skipped } from './result.ts';
import {
  RESULT_SCHEMA_VERSION,
  type CheckName,
  type CheckResult,
  type CheckStatus,
  type EndpointInfo,
  type EndpointResult,
  type LoadProbeResult,
  type ModelResult,
  type VerifyEvent,
  type VerifyResult,
  type VerifyTarget,
} from './types.ts';

/** Options of {@link verifyPlan}; each maps to an `app-serving verify` flag where one is named. */
export interface VerifyOptions {
  /**
   * `--base-url`: check this OpenAI-compatible endpoint directly, with no cluster access at all
   * (`ready`, `pulled`, `address` and `gateway-rejects-embeddings` are skipped). KServe models get
   * their `/<namespace>/<name>` prefix appended unless the URL already ends with it.
   */
  readonly baseUrl?: string;
  /** Headers sent with every model request (e.g. `Authorization: Bearer …` for `--base-url`). Their values never appear in results or events. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The credential for models whose `access` is not open (CLI: `APP_SERVING_VERIFY_TOKEN`): for API
   * keys `<key name>:<key>`, sent as HTTP Basic; for JWT the token, sent as a bearer token. Never
   * appears in results or events. Such models also get the `refuses-anonymous` check.
   */
  readonly token?: string;
  /** `--kubeconfig`. */
  readonly kubeconfig?: string;
  /** `--context`. */
  readonly context?: string;
  /** A cluster connection to use instead of loading a kubeconfig (tests, or a caller that has one). Not closed by the run. */
  readonly cluster?: Cluster;
  /** How to reach the models' Services: port-forward (default outside the cluster) or their in-cluster DNS names (default in-cluster). */
  readonly endpoints?: 'port-forward' | 'service-dns';
  /** `--model`: verify only these models (folder names or slugs). */
  readonly models?: readonly string[];
  /** `--wait`: keep retrying `ready` (and KServe `address`) with exponential backoff for up to this long, ms. @default 0 */
  readonly waitMs?: number;
  /** `--timeout`: the timeout of each check (each request in it), ms. @default 30000 */
  readonly timeoutMs?: number;
  /** The whole run's deadline, ms; checks still running then fail, later ones are skipped. @default waitMs + 300000 */
  readonly deadlineMs?: number;
  /** `--load <n> --concurrency <c>`: the latency probe (generative models). */
  readonly load?: { readonly requests: number; readonly concurrency: number };
  /** `max_tokens` of the chat and completions requests. @default 32 */
  readonly maxTokens?: number;
  /**
   * `--endpoint-url`: check the stack's endpoint at this URL (its base, without `/v1`), e.g. where an
   * ingress or load balancer exposes it. Without it the endpoint is reached through the cluster
   * (its Gateway's Service), unless `--base-url` is given (then it is not checked).
   */
  readonly endpointUrl?: string;
  /** `--no-endpoint`: leave the stack's endpoint out. @default true (checked when the plan has one) */
  readonly endpoint?: boolean;
  /** Where Envoy Gateway runs its proxies (KServe, port-forward mode). @default 'envoy-gateway-system' */
  readonly envoyGatewayNamespace?: string;
  /** Receives progress as it happens. Exceptions it throws are ignored. */
  readonly onProgress?: (event: VerifyEvent) => void;
  /** Cancels the run (Ctrl-C): running checks fail as cancelled, the rest are skipped. */
  readonly signal?: AbortSignal;
  /** Time source of `--wait` (tests pass a fake one). */
  readonly clock?: Clock;
  /** Backoff of `--wait`. @default { initialMs: 1000, maxMs: 15000, factor: 2 } */
  readonly backoff?: Partial<Backoff>;
}

interface Run {
  readonly cluster: Cluster | null;
  readonly baseUrl: string | null;
  readonly endpointUrl: string | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly token: string | undefined;
  readonly mode: 'port-forward' | 'service-dns';
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  readonly waitMs: number;
  readonly clock: Clock;
  readonly backoff: Backoff;
  readonly load: { readonly requests: number; readonly concurrency: number } | null;
  readonly maxTokens: number;
  readonly envoyNamespace: string;
  readonly agents: { readonly http: http.Agent; readonly https: https.Agent };
  readonly redactor: Redactor;
  readonly emit: (event: VerifyEvent) => void;
}

/**
 * Verifies every enabled model of a plan (or those `options.models` names), concurrently, and
 * returns what each check found. Never throws for a check that fails: failures are results. Throws
 * a {@link VerifyError} only before any check runs (unknown model, bad option, no kubeconfig).
 */
export async function verifyPlan(plan: DeploymentPlan, options: VerifyOptions = {}): Promise<VerifyResult> {
  const startedAt = new Date();
  const started = performance.now();
  validate(options);
  const models = selectModels(plan, options.models);
  const ownSecrets = [...headerSecrets(options.headers), ...tokenSecrets(options.token), ...(options.baseUrl ? urlSecrets(options.baseUrl) : [])];
  let redactor = new Redactor(ownSecrets);
  const emit = (event: VerifyEvent) => {
    try {
      options.onProgress?.(bounded(redactor.deep(event)));
    } catch {
      // A progress display must not break the run.
    }
  };

  const deadlineMs = options.deadlineMs ?? (options.waitMs ?? 0) + 300_000;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new DeadlineError(deadlineMs)), deadlineMs);
  const signal = options.signal ? anySignal([deadline.signal, options.signal]) : deadline.signal;

  const ownCluster = !options.baseUrl && !options.cluster;
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  let cluster: Cluster | null = null;
  try {
    cluster = options.baseUrl
      ? null
      : (options.cluster ?? (await connectCluster({ kubeconfig: options.kubeconfig, context: options.context, stackKubeconfig: plan.kubeconfig, signal })));
    // The kubeconfig's secrets too: an API server (or a port-forwarded pod) may echo them back.
    if (cluster?.secrets?.length) redactor = new Redactor([...ownSecrets, ...cluster.secrets]);
    const mode = options.endpoints ?? (cluster?.inCluster ? 'service-dns' : 'port-forward');
    const target: VerifyTarget = cluster
      ? { mode: 'cluster', context: cluster.context, source: cluster.source, endpoints: mode }
      : { mode: 'base-url', baseUrl: displayUrl(options.baseUrl!) };
    const run: Run = {
      cluster,
      baseUrl: options.baseUrl ?? null,
      endpointUrl: options.endpointUrl ?? null,
      headers: options.headers ?? {},
      token: options.token,
      mode,
      signal,
      timeoutMs: options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS,
      waitMs: options.waitMs ?? 0,
      clock: options.clock ?? systemClock,
      backoff: { ...DEFAULT_BACKOFF, ...options.backoff },
      load: options.load ?? null,
      maxTokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
      envoyNamespace: options.envoyGatewayNamespace ?? ENVOY_GATEWAY_SYSTEM_NAMESPACE,
      agents,
      redactor,
      emit,
    };
    emit({ type: 'run-start', stack: plan.stack, models: models.map((m) => m.name), target });
    const checkEndpoint = plan.endpoint !== null && options.endpoint !== false;
    const [results, endpoint] = await Promise.all([
      Promise.all(models.map((model) => verifyModel(model, run, plan.endpoint))),
      checkEndpoint ? verifyEndpoint(plan.endpoint!, models, run) : Promise.resolve(null),
    ]);
    const counts: Record<CheckStatus, number> = { pass: 0, fail: 0, skip: 0, info: 0 };
    for (const check of [...results.flatMap((m) => m.checks), ...(endpoint?.checks ?? [])]) counts[check.status] += 1;
    const result: VerifyResult = bounded(redactor.deep({
      schemaVersion: RESULT_SCHEMA_VERSION,
      stack: plan.stack,
      ok: counts.fail === 0,
      startedAt: startedAt.toISOString(),
      durationMs: Math.round(performance.now() - started),
      target,
      deadlineExceeded: deadline.signal.aborted,
      counts,
      models: results,
      endpoint,
    }));
    emit({ type: 'run-end', result });
    return result;
  } finally {
    clearTimeout(timer);
    agents.http.destroy();
    agents.https.destroy();
    if (ownCluster && cluster) await cluster.close();
  }
}

function validate(options: VerifyOptions): void {
  const positive = (value: number | undefined, flag: string, zeroOk = false) => {
    if (value !== undefined && (!Number.isFinite(value) || value < 0 || (!zeroOk && value === 0))) {
      throw new VerifyError('invalid-option', `${flag} must be a ${zeroOk ? 'non-negative' : 'positive'} duration, not ${value}`);
    }
    if (value !== undefined && value > MAX_DURATION_MS) throw new VerifyError('invalid-option', `${flag} is too long: at most 24 days (596h) can be timed`);
  };
  positive(options.timeoutMs, '--timeout');
  positive(options.waitMs, '--wait', true);
  positive(options.deadlineMs, 'the deadline (--deadline plus --wait)');
  if (options.maxTokens !== undefined && !(Number.isInteger(options.maxTokens) && options.maxTokens > 0)) {
    throw new VerifyError('invalid-option', `maxTokens must be a whole number > 0, not ${options.maxTokens}`);
  }
  if (options.load) {
    const { requests, concurrency } = options.load;
    if (!Number.isInteger(requests) || requests < 1 || requests > MAX_LOAD_REQUESTS) {
      throw new VerifyError('invalid-option', `--load must be a whole number from 1 to ${MAX_LOAD_REQUESTS}, not ${requests}`);
    }
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_LOAD_CONCURRENCY) {
      throw new VerifyError('invalid-option', `--concurrency must be a whole number from 1 to ${MAX_LOAD_CONCURRENCY}, not ${concurrency}`);
    }
  }
  if (options.baseUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new VerifyError('invalid-option', `--base-url ${displayUrl(options.baseUrl)} is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new VerifyError('invalid-option', `--base-url must be http:// or https://, not ${url.protocol}`);
    if (options.kubeconfig || options.context || options.cluster) {
      throw new VerifyError('invalid-option', '--base-url checks an endpoint without the cluster: drop --kubeconfig/--context, or drop --base-url to verify through the cluster');
    }
  }
  if (options.endpointUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(options.endpointUrl);
    } catch {
      throw new VerifyError('invalid-option', `--endpoint-url ${displayUrl(options.endpointUrl)} is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new VerifyError('invalid-option', `--endpoint-url must be http:// or https://, not ${url.protocol}`);
  }
}

/** The models to verify: every model of the plan, or those named (by folder name or slug). */
export function selectModels(plan: DeploymentPlan, names: readonly string[] | undefined): ModelPlan[] {
  if (!names || names.length === 0) return [...plan.models];
  const unknown = names.filter((n) => !plan.models.some((m) => m.name === n || m.slug === n));
  if (unknown.length) {
    throw new VerifyError(
      'unknown-model',
      `--model ${unknown.join(', ')}: not an enabled model of stack ${plan.stack} (models: ${plan.models.map((m) => m.name).join(', ') || 'none'})`,
    );
  }
  return plan.models.filter((m) => names.includes(m.name) || names.includes(m.slug));
}

function abortMessage(signal: AbortSignal): string {
  const reason = signal.reason as Error | undefined;
  return reason instanceof DeadlineError ? reason.message : 'the run was cancelled';
}

/** One model: cluster checks, then the HTTP checks through its endpoint(s). */
async function verifyModel(model: ModelPlan, run: Run, stackEndpoint: EndpointPlan | null): Promise<ModelResult> {
  const started = performance.now();
  const checks: CheckResult[] = [];
  const endpoints: EndpointInfo[] = [];
  const opened: OpenEndpoint[] = [];
  let load: LoadProbeResult | null = null;
  run.emit({ type: 'model-start', model: model.name });

  const record = (result: CheckResult): CheckResult => {
    const safe = bounded(run.redactor.deep(result));
    checks.push(safe);
    run.emit({ type: 'check-end', model: model.name, result: safe });
    return safe;
  };
  const step = async (name: CheckName, body: () => Promise<CheckResult>): Promise<CheckResult> => {
    if (run.signal.aborted) return record(skipped(name, `not run: ${abortMessage(run.signal)}`));
    run.emit({ type: 'check-start', model: model.name, check: name });
    return record(await body());
  };
  const cluster = run.cluster;
  const noCluster = 'not checked: --base-url (no cluster access)';

  try {
    if (cluster) {
      await step('ready', async () => (await waitFor('ready', model, run, (signal) => probeReady(cluster, model, { timeoutMs: run.timeoutMs, signal, envoyNamespace: run.envoyNamespace }))).result);
      await step('pulled', () => checkPulled(cluster, model, { timeoutMs: run.timeoutMs, signal: run.signal }));
    } else {
      record(skipped('ready', noCluster));
      record(skipped('pulled', noCluster));
    }

    let address: string | null = null;
    if (model.platform === 'kserve') {
      if (cluster) {
        await step('address', async () => {
          const probe = await waitFor('address', model, run, (signal) => probeKserveAddress(cluster, model, { timeoutMs: run.timeoutMs, signal }));
          address = probe.address?.url ?? null;
          return probe.result;
        });
      } else record(skipped('address', noCluster));
    }

    const role: EndpointInfo['role'] = run.baseUrl ? 'base-url' : model.platform === 'kserve' ? 'kserve' : model.category === 'embedder' ? 'embeddings' : 'gateway';
    // A model with no gateway of its own behind the stack's endpoint (the Router's proxy): its access
    // is the endpoint's to enforce, checked there; its own proxy takes no credentials.
    const byEndpoint = model.platform === 'llm-d' && model.gateway.kind === 'router-proxy' && stackEndpoint !== null && stackEndpoint.models.some((e) => e.model === model.name && e.category === model.category);
    // A model with access gets the token in the form its gateway checks (it replaces any Authorization of `headers`).
    const credentials = byEndpoint ? {} : accessHeaders(model.access, run.token);
    const primary = await acquire(role, async () => withHeaders(await primaryEndpoint(model, run, address), credentials), run, endpoints, opened);
    const hint = routeHint(model, run);
    const httpOptions: HttpCheckOptions = { timeoutMs: run.timeoutMs, signal: run.signal, route: hint, maxTokens: run.maxTokens };
    const name = servedName(model);
    const steps: [CheckName, (e: Endpoint) => Promise<CheckResult>][] =
      model.category === 'generative'
        ? [
            ['models', (e) => checkModels(e, name, httpOptions)],
            ['chat', (e) => checkChat(e, name, httpOptions)],
            ['chat-stream', (e) => checkChatStream(e, name, httpOptions)],
            ['completions', (e) => checkCompletions(e, name, httpOptions)],
            ...(model.adapters.length > 0 ? [['adapters', (e: Endpoint) => checkAdapters(e, model.adapters, httpOptions)] as [CheckName, (e: Endpoint) => Promise<CheckResult>]] : []),
          ]
        : [
            ['models', (e) => checkModels(e, name, httpOptions)],
            ['embeddings', (e) => checkEmbeddings(e, name, httpOptions)],
          ];
    if (model.access && model.access.mode !== 'open') {
      const access = model.access;
      steps.splice(1, 0, [
        'refuses-anonymous',
        byEndpoint
          ? async () => checkResult('refuses-anonymous', 'info', `not checked here: the model has no gateway of its own; the stack's endpoint enforces its access (see the endpoint's checks)`)
          : (e) => checkRefusesAnonymous(e, model.name, access, { timeoutMs: run.timeoutMs, signal: run.signal }),
      ]);
    }
    for (const [i, [check, body]] of steps.entries()) {
      if ('error' in primary) {
        if (run.signal.aborted) record(skipped(check, `not run: ${abortMessage(run.signal)}`));
        else if (i === 0) record(endpointFailure(check, role, primary.error));
        else record(skipped(check, `not run: no ${role} endpoint (see ${steps[0]![0]})`));
        continue;
      }
      await step(check, () => body(primary.endpoint));
    }

    if (model.platform === 'llm-d' && model.category === 'embedder') {
      if (!cluster) record(skipped('gateway-rejects-embeddings', 'not checked: --base-url (the Gateway is reached through the cluster)'));
      else {
        await step('gateway-rejects-embeddings', async () => {
          const gateway = await acquire('gateway', () => gatewayEndpoint(model, run), run, endpoints, opened);
          const embeddingsService = `${model.embeddingService?.name ?? 'the embeddings Service'}:${model.embeddingService?.port ?? ''}`.replace(/:$/, '');
          if ('error' in gateway) {
            return checkResult('gateway-rejects-embeddings', 'info', `the Gateway could not be reached (${gateway.error}); not needed: clients use ${embeddingsService}`);
          }
          return checkGatewayRejectsEmbeddings(gateway.endpoint, name, { ...httpOptions, route: { kind: 'gateway', route: null }, embeddingsService });
        });
      }
    }

    if (run.load && model.category === 'generative') {
      const stream = checks.find((c) => c.name === 'chat-stream');
      if ('error' in primary || stream?.status !== 'pass') {
        record(skipped('load', 'not run: the chat-stream check did not pass'));
      } else {
        await step('load', async () => {
          const t0 = performance.now();
          load = await runLoadProbe(primary.endpoint, name, { ...run.load!, timeoutMs: run.timeoutMs, signal: run.signal, maxTokens: run.maxTokens });
          return loadCheck(load, `POST /v1/chat/completions (stream) × ${load.requests}${primary.endpoint.via ? ` via ${primary.endpoint.via}` : ''}`, performance.now() - t0);
        });
      }
    }
  } finally {
    await Promise.all(opened.map((e) => e.close().catch(() => undefined)));
  }

  const result: ModelResult = run.redactor.deep({
    name: model.name,
    slug: model.slug,
    category: model.category,
    platform: model.platform,
    namespace: model.namespace,
    servedModelName: servedName(model),
    ok: !checks.some((c) => c.status === 'fail'),
    durationMs: Math.round(performance.now() - started),
    endpoints,
    checks,
    load,
  });
  run.emit({ type: 'model-end', result });
  return result;
}

/** The label the endpoint's events carry in place of a model's name. */
function endpointLabel(endpoint: EndpointPlan): string {
  return `endpoint ${endpoint.namespace}/${endpoint.name}`;
}

/**
 * The stack's endpoint, through its one base URL (endpoint-checks.ts): `/v1/models` exact, an
 * unknown model refused as the docs say, access refused without credentials, and each model (and
 * adapter) of those verified answering by its name when the credential grants it, refused when not.
 */
async function verifyEndpoint(endpoint: EndpointPlan, models: readonly ModelPlan[], run: Run): Promise<EndpointResult> {
  const started = performance.now();
  const label = endpointLabel(endpoint);
  const checks: CheckResult[] = [];
  const infos: EndpointInfo[] = [];
  const opened: OpenEndpoint[] = [];
  run.emit({ type: 'model-start', model: label });
  const record = (result: CheckResult): CheckResult => {
    const safe = bounded(run.redactor.deep(result));
    checks.push(safe);
    run.emit({ type: 'check-end', model: label, result: safe });
    return safe;
  };
  const step = async (name: CheckName, body: () => Promise<CheckResult>): Promise<CheckResult> => {
    if (run.signal.aborted) return record(skipped(name, `not run: ${abortMessage(run.signal)}`));
    run.emit({ type: 'check-start', model: label, check: name });
    return record(await body());
  };
  const options = { timeoutMs: run.timeoutMs, signal: run.signal };
  const selected = endpoint.models.filter((e) => models.some((m) => m.name === e.model && m.category === e.category));
  const names: CheckName[] = ['endpoint-models', 'endpoint-unknown-model', ...(endpoint.access.mode !== 'open' ? (['endpoint-refuses-anonymous'] as const) : [])];
  try {
    if (run.baseUrl && !run.endpointUrl) {
      for (const name of names) record(skipped(name, 'not checked: --base-url checks the models one by one; give --endpoint-url to check the stack\'s endpoint'));
    } else {
      // The listener's host name, when the endpoint has one: requests for other hosts are not served.
      const host: Record<string, string> = endpoint.hostname !== null && !endpoint.hostname.startsWith('*') ? { host: endpoint.hostname } : {};
      const acquired = await acquire('endpoint', () => openStackEndpoint(endpoint, run), run, infos, opened);
      if ('error' in acquired) {
        names.forEach((name, i) => record(i === 0 ? endpointFailure(name, 'endpoint', acquired.error) : skipped(name, `not run: no endpoint (see ${names[0]})`)));
      } else {
        const base: Endpoint = { ...acquired.endpoint, headers: { ...withoutCredentials(acquired.endpoint.headers), ...host } };
        const credentials = endpointAccessHeaders(endpoint.access, run.token);
        const credited: Endpoint = { ...base, headers: { ...base.headers, ...credentials } };
        const granted = grantedNames(endpoint, run.token);
        const noToken = 'not checked: the endpoint takes credentials and none was given (APP_SERVING_VERIFY_TOKEN: <key name>:<key>, or a JWT)';
        if (endpoint.access.mode !== 'open' && granted === null) {
          record(skipped('endpoint-models', noToken));
          record(skipped('endpoint-unknown-model', noToken));
        } else {
          await step('endpoint-models', () => checkEndpointModels(credited, endpoint.list, options));
          await step('endpoint-unknown-model', () => checkEndpointUnknownModel(credited, options));
        }
        if (endpoint.access.mode !== 'open') await step('endpoint-refuses-anonymous', () => checkEndpointRefusesAnonymous(base, endpoint.access, options));
        const hint = { kind: 'gateway' as const, route: `the endpoint's route of each model on Gateway ${endpoint.namespace}/${endpoint.name}` };
        for (const model of selected) {
          for (const name of model.names) {
            if (granted === null) record({ ...skipped(model.category === 'generative' ? 'endpoint-chat' : 'endpoint-embeddings', noToken), data: { model: name } });
            else if (granted.has(name)) await step(model.category === 'generative' ? 'endpoint-chat' : 'endpoint-embeddings', () => checkEndpointAnswers(credited, name, model.category, { ...options, route: hint, maxTokens: run.maxTokens }));
          }
          // One name per model suffices to show its grants hold (an adapter is granted with its model).
          if (granted !== null && !granted.has(model.servedName)) await step('endpoint-refuses-ungranted', () => checkEndpointRefusesUngranted(credited, model.servedName, model.category, options));
        }
      }
    }
  } finally {
    await Promise.all(opened.map((e) => e.close().catch(() => undefined)));
  }
  const result: EndpointResult = run.redactor.deep({
    name: endpoint.name,
    namespace: endpoint.namespace,
    class: endpoint.class,
    ok: !checks.some((c) => c.status === 'fail'),
    durationMs: Math.round(performance.now() - started),
    endpoints: infos,
    checks,
  });
  return result;
}

/** The endpoint's URL: `--endpoint-url`, its Service's in-cluster name, or a port-forward to the Gateway's pods. */
async function openStackEndpoint(endpoint: EndpointPlan, run: Run): Promise<Endpoint & { via: string; close?: () => Promise<void> }> {
  if (run.endpointUrl) return { url: run.endpointUrl.replace(/\/+$/, ''), via: `--endpoint-url ${displayUrl(run.endpointUrl)}` };
  if (run.mode === 'service-dns') return { url: endpoint.service.url, via: `Service ${endpoint.service.namespace}/${endpoint.service.name}:${endpoint.port} (in-cluster DNS)` };
  const signal = checkSignal(run.timeoutMs, run.signal);
  if (endpoint.class === 'envoy') return openEnvoyGatewayEndpoint(run.cluster!, { name: endpoint.name, namespace: endpoint.namespace }, endpoint.port, signal, run.envoyNamespace);
  return openServiceEndpoint(run.cluster!, endpoint.namespace, endpoint.service.name, endpoint.port, signal);
}

/** The endpoint with `extra` headers on top of its own (an `Authorization` of any case replaced). */
function withHeaders<E extends Endpoint>(endpoint: E, extra: Readonly<Record<string, string>>): E {
  if (Object.keys(extra).length === 0) return endpoint;
  return { ...endpoint, headers: { ...withoutCredentials(endpoint.headers), ...extra } };
}

/** The model name the server answers to. */
function servedName(model: ModelPlan): string {
  return model.platform === 'kserve' ? model.servedModelName : model.modelServer.servedModelName;
}

/** Retries a probe under `--wait`: exponential backoff while it fails in a way that may pass later. */
async function waitFor<P extends Probe>(name: CheckName, model: ModelPlan, run: Run, probe: (signal: AbortSignal) => Promise<P>): Promise<P> {
  const started = performance.now();
  const until = run.clock.now() + run.waitMs;
  let delay = run.backoff.initialMs;
  for (let attempt = 1; ; attempt += 1) {
    const outcome = await probe(run.signal);
    const final = (): P => ({ ...outcome, result: { ...outcome.result, attempts: attempt, durationMs: Math.round(performance.now() - started) } });
    const remaining = until - run.clock.now();
    if (outcome.result.status !== 'fail' || !outcome.retryable || run.signal.aborted || remaining <= 0) return final();
    const sleep = Math.min(delay, remaining);
    run.emit({ type: 'check-retry', model: model.name, check: name, attempt, retryInMs: Math.round(sleep), message: outcome.result.message });
    try {
      await run.clock.sleep(sleep, run.signal);
    } catch {
      return final();
    }
    delay = Math.min(delay * run.backoff.factor, run.backoff.maxMs);
  }
}

type Acquired = { endpoint: Endpoint } | { error: string };

/** Opens an endpoint, records it, and keeps it for closing. */
async function acquire(role: EndpointInfo['role'], open: () => Promise<Endpoint & { via: string; close?: () => Promise<void> }>, run: Run, infos: EndpointInfo[], opened: OpenEndpoint[]): Promise<Acquired> {
  if (run.signal.aborted) return { error: abortMessage(run.signal) };
  try {
    const endpoint = await open();
    if (endpoint.close) opened.push(endpoint as OpenEndpoint);
    const agent = endpoint.url.startsWith('https:') ? run.agents.https : run.agents.http;
    const headers = { ...run.headers, ...endpoint.headers };
    infos.push({ role, url: displayUrl(endpoint.url), via: endpoint.via, error: null });
    return { endpoint: { ...endpoint, headers, agent } };
  } catch (error) {
    const message = error instanceof EndpointError ? error.message : error instanceof Error ? error.message : String(error);
    infos.push({ role, url: null, via: run.mode, error: message });
    return { error: message };
  }
}

function endpointFailure(check: CheckName, role: EndpointInfo['role'], error: string): CheckResult {
  const cause = /forbidden/.test(error)
    ? 'the kubeconfig user lacks the RBAC to port-forward (see the README Role: get services, list pods, create pods/portforward)'
    : /no Ready pod/.test(error)
      ? 'the pods behind the Service are not Ready (see the ready check; rerun with --wait)'
      : /not found/.test(error)
        ? 'the Service does not exist: the release that creates it is not installed, or the plan differs from what was deployed'
        : null;
  return checkResult(check, 'fail', `cannot reach the ${role} endpoint: ${error}`, {
    failure: { expected: `an open ${role} endpoint to send requests to`, got: error, cause, httpStatus: null, body: null },
  });
}

async function primaryEndpoint(model: ModelPlan, run: Run, address: string | null): Promise<Endpoint & { via: string; close?: () => Promise<void> }> {
  if (run.baseUrl) {
    const prefix = model.platform === 'kserve' && !new URL(run.baseUrl).pathname.replace(/\/+$/, '').endsWith(model.pathPrefix) ? model.pathPrefix : '';
    return { url: joinUrl(run.baseUrl, prefix).toString(), via: `base URL ${displayUrl(run.baseUrl)}${prefix}` };
  }
  const signal = checkSignal(run.timeoutMs, run.signal);
  if (model.platform === 'kserve') {
    if (!address) throw new EndpointError('the LLMInferenceService reports no address (see the address check)');
    if (run.mode === 'service-dns') return { url: address.replace(/\/$/, ''), via: 'the address KServe reports (in-cluster)' };
    return openKserveEndpoint(run.cluster!, model, address, signal, run.envoyNamespace);
  }
  if (model.category === 'generative') return gatewayEndpoint(model, run);
  const service = model.embeddingService;
  if (!service) throw new EndpointError(`the plan of embedder ${model.name} has no embeddings Service`);
  if (run.mode === 'service-dns') return { url: service.url, via: `Service ${service.name}:${service.port} (in-cluster DNS)` };
  return openServiceEndpoint(run.cluster!, model.namespace, service.name, service.port, signal);
}

async function gatewayEndpoint(model: AnyLlmdModelPlan, run: Run): Promise<Endpoint & { via: string; close?: () => Promise<void> }> {
  if (run.mode === 'service-dns') return { url: model.gateway.url, via: `Service ${model.gateway.service}:${model.gateway.port} (in-cluster DNS)` };
  const signal = checkSignal(run.timeoutMs, run.signal);
  // Envoy Gateway's Service is in its own namespace under a hashed name: found by its labels, as for KServe.
  if (onEnvoyGateway(model)) return openEnvoyGatewayEndpoint(run.cluster!, { name: model.gateway.name, namespace: model.namespace }, model.gateway.port, signal, run.envoyNamespace);
  return openServiceEndpoint(run.cluster!, model.namespace, model.gateway.service, model.gateway.port, signal);
}

/** A 2026-08 llm-d model behind a Gateway of Envoy Gateway (`router.gatewayClass: envoy`). */
function onEnvoyGateway(model: AnyLlmdModelPlan): boolean {
  return model.upstream === '2026-08' && model.router.gatewayClass === 'envoy';
}

function routeHint(model: ModelPlan, run: Run): RouteHint {
  if (model.platform === 'kserve') {
    return {
      kind: run.baseUrl ? 'direct' : 'kserve',
      pathPrefix: model.pathPrefix,
      workloadService: model.workloadService,
      logs: shellCommand(['kubectl', 'logs', '-n', model.namespace, '-l', labelSelector(model.podLabels)]),
    };
  }
  const logs = shellCommand(['kubectl', 'logs', '-n', model.namespace, `deploy/${model.modelServer.decodeDeployment}`]);
  if (run.baseUrl) return { kind: 'direct', logs };
  if (model.category === 'embedder') return { kind: 'service', logs };
  if (model.gateway.kind === 'router-proxy') return { kind: 'gateway', route: `the Router's proxy in Service ${model.gateway.service} (standalone mode)`, logs };
  return { kind: 'gateway', route: `HTTPRoute ${model.httpRoute} on Gateway ${model.gateway.name}`, logs };
}

