import net from 'node:net';
import { Writable } from 'node:stream';
import type { KubeConfig, V1Pod, V1Service, V1Job, V1Status } from '@kubernetes/client-node';
import { ApiError, KubeApi } from './api.ts';
import { clip } from './bounded.ts';

/** Most output of an exec kept (the pulled check runs `test -f`, which prints nothing). */
const MAX_EXEC_OUTPUT = 64 * 1024;
/** Items per page of a list call. */
const LIST_PAGE = 500;

/**
 * What the checks need from the Kubernetes API, and nothing more: the smallest surface that a
 * Role can grant (see the README's RBAC section). {@link connectCluster} implements it with
 * `@kubernetes/client-node`; every call takes an AbortSignal, so no API call can hang a run.
 */
export interface Cluster {
  /** The kubeconfig context, or null in-cluster. */
  readonly context: string | null;
  /** Where the configuration came from (`--kubeconfig <path>`, `KUBECONFIG`, `in-cluster`, …). */
  readonly source: string;
  /** True when running inside the cluster (a verify Job): Service DNS names resolve. */
  readonly inCluster: boolean;
  /** The kubeconfig's secrets (tokens, passwords, keys): redacted from every result, also when the API server echoes them. */
  readonly secrets?: readonly string[];
  /** `list pods` with an equality label selector. */
  listPods(namespace: string, selector: Readonly<Record<string, string>>, signal: AbortSignal): Promise<PodSummary[]>;
  /** `get services`; null when it does not exist. */
  readService(namespace: string, name: string, signal: AbortSignal): Promise<ServiceSummary | null>;
  /** `list services` with an equality label selector. */
  listServices(namespace: string, selector: Readonly<Record<string, string>>, signal: AbortSignal): Promise<ServiceSummary[]>;
  /** `get jobs`; null when it does not exist (never created, or removed by its TTL). */
  readJob(namespace: string, name: string, signal: AbortSignal): Promise<JobSummary | null>;
  /** `get` a namespaced custom object; null when it does not exist. */
  readCustomObject(ref: CustomObjectRef, signal: AbortSignal): Promise<Record<string, unknown> | null>;
  /** `create pods/exec`: runs `command` in a container and returns its exit code. */
  exec(namespace: string, pod: string, container: string, command: readonly string[], signal: AbortSignal): Promise<ExecOutcome>;
  /** `create pods/portforward`: a local listener on 127.0.0.1 (ephemeral port) tunnelled to `port` of the pod. */
  openTunnel(namespace: string, pod: string, port: number): Promise<Tunnel>;
  /** Closes every tunnel still open. */
  close(): Promise<void>;
}

export interface CustomObjectRef {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespace: string;
  readonly name: string;
}

/** A pod, reduced to what readiness and port-forwarding need. */
export interface PodSummary {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly phase: string;
  /** The `Ready` condition is True (and the pod is not terminating). */
  readonly ready: boolean;
  readonly containers: readonly { readonly name: string; readonly ports: readonly { readonly name: string | null; readonly containerPort: number }[] }[];
  /** Why the pod is not Ready, in a few words (`ImagePullBackOff: …`, `Unschedulable: 0/3 nodes …`), else null. */
  readonly problem: string | null;
}

export interface ServiceSummary {
  readonly name: string;
  readonly namespace: string;
  readonly selector: Readonly<Record<string, string>> | null;
  readonly ports: readonly { readonly name: string | null; readonly port: number; readonly targetPort: number | string }[];
}

export interface JobSummary {
  readonly name: string;
  readonly active: number;
  readonly succeeded: number;
  readonly failed: number;
  /** A `Complete` condition is True, or `succeeded` ≥ 1. */
  readonly complete: boolean;
  /** The `Failed` condition when True. */
  readonly failedCondition: { readonly reason: string; readonly message: string } | null;
}

export interface ExecOutcome {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A port-forward: `url` is `http://127.0.0.1:<localPort>`. */
export interface Tunnel {
  readonly url: string;
  readonly localPort: number;
  readonly namespace: string;
  readonly pod: string;
  readonly port: number;
  /** The last error of the tunnel (RBAC denial, pod gone, nothing listening in the pod), else null. */
  problem(): string | null;
  close(): Promise<void>;
}

/** The part of a WebSocket (the `ws` package, under client-node) the tunnels use. */
interface WebSocket {
  on(event: 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  close(): void;
  terminate(): void;
}

/** An API call that failed: `status` is the HTTP status (403, 404, …), or null when the API server gave no answer. */
export class KubeError extends Error {
  override readonly name = 'KubeError';
  constructor(
    message: string,
    readonly status: number | null,
    readonly verb: string,
    readonly resource: string,
    readonly namespace: string,
  ) {
    super(message);
  }

  get forbidden(): boolean {
    return this.status === 403;
  }
}

/** Describes an API failure: a 403 names the RBAC rule that is missing. */
export function kubeErrorOf(error: unknown, verb: string, resource: string, namespace: string, signal?: AbortSignal): KubeError {
  if (error instanceof KubeError) return error;
  const where = namespace ? `${resource} in namespace ${namespace}` : resource;
  if (signal?.aborted) {
    const reason = signal.reason as Error | undefined;
    const what = reason?.name === 'TimeoutError' ? 'timed out' : (reason?.message ?? 'was cancelled');
    return new KubeError(`${verb} ${where}: the API call ${what}`, null, verb, resource, namespace);
  }
  if (error instanceof ApiError) {
    if (error.kind !== 'http' || error.status === null) return new KubeError(`${verb} ${where}: ${error.message}`, null, verb, resource, namespace);
    return httpKubeError(error.status, error.detail, verb, resource, namespace);
  }
  const code = typeof (error as { code?: unknown })?.code === 'number' ? (error as { code: number }).code : null;
  if (code !== null) return httpKubeError(code, statusMessage((error as { body?: unknown }).body), verb, resource, namespace);
  const message = error instanceof Error ? error.message : String(error);
  const errno = (error as { code?: unknown; cause?: { code?: unknown } })?.code ?? (error as { cause?: { code?: unknown } })?.cause?.code;
  return new KubeError(`${verb} ${where}: cannot reach the API server (${clip(typeof errno === 'string' ? errno : message.split('\n')[0]!, 200)})`, null, verb, resource, namespace);
}

function httpKubeError(code: number, detail: string | null, verb: string, resource: string, namespace: string): KubeError {
  const where = namespace ? `${resource} in namespace ${namespace}` : resource;
  if (code === 403) {
    return new KubeError(`forbidden: cannot ${verb} ${where} (RBAC: grant "${verb}" on "${resource}")${detail ? `: ${detail}` : ''}`, 403, verb, resource, namespace);
  }
  if (code === 401) return new KubeError(`unauthorized: the API server rejected the kubeconfig's credentials (expired token?)`, 401, verb, resource, namespace);
  return new KubeError(`${verb} ${where}: HTTP ${code}${detail ? `: ${detail}` : ''}`, code, verb, resource, namespace);
}

function statusMessage(body: unknown): string | null {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      // Cut with its mark: a secret cut here is redacted by the result's Redactor (see Redactor.text).
      return clip(body, 200) || null;
    }
  }
  return value && typeof value === 'object' && typeof (value as { message?: unknown }).message === 'string' ? clip((value as { message: string }).message, 300) : null;
}

/** The HTTP status of a WebSocket upgrade the API server refused (`Unexpected server response: 403`). */
function upgradeStatus(error: unknown): number | null {
  const e = error as { message?: unknown; error?: { message?: unknown } } | undefined;
  const text = `${String(e?.message ?? '')} ${String(e?.error?.message ?? '')}`;
  const match = /Unexpected server response: (\d{3})/.exec(text);
  return match ? Number(match[1]) : null;
}

function upgradeError(error: unknown, verb: string, resource: string, namespace: string, pod: string): KubeError {
  const status = upgradeStatus(error);
  if (status === 403) {
    // Over WebSocket the upgrade is a GET: clusters before 1.31 authorise it as `get`, later ones also as `create`.
    return new KubeError(`forbidden: cannot ${verb} ${resource} of pod ${pod} in namespace ${namespace} (RBAC: grant "get" and "create" on "${resource}")`, 403, verb, resource, namespace);
  }
  if (status === 404) return new KubeError(`pod ${namespace}/${pod} not found (it may have been replaced)`, 404, verb, resource, namespace);
  const e = error as { message?: unknown; error?: { message?: unknown } } | undefined;
  const message = String(e?.error?.message ?? e?.message ?? error);
  return new KubeError(`${verb} ${resource} of pod ${namespace}/${pod}: ${status ? `HTTP ${status}` : message}`, status, verb, resource, namespace);
}

/** An equality label selector (`a=b,c=d`), keys sorted. */
export function labelSelector(selector: Readonly<Record<string, string>>): string {
  return Object.keys(selector)
    .sort()
    .map((key) => `${key}=${selector[key]}`)
    .join(',');
}

/** A list, or nothing: the API server's answers are read as they come, whatever their shape. */
function list(value: unknown): Record<string, any>[] {
  return Array.isArray(value) ? value.filter((v): v is Record<string, any> => typeof v === 'object' && v !== null) : [];
}

function object(value: unknown): Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, any>) : {};
}

function text(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? clip(value, 300) : fallback;
}

function labels(value: unknown): Record<string, string> {
  return Object.fromEntries(Object.entries(object(value)).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

export function podSummary(pod: V1Pod): PodSummary {
  const p = object(pod);
  const metadata = object(p.metadata);
  const status = object(p.status);
  const conditions = list(status.conditions);
  const ready = !metadata.deletionTimestamp && conditions.some((c) => c.type === 'Ready' && c.status === 'True');
  return {
    name: text(metadata.name),
    labels: labels(metadata.labels),
    phase: text(status.phase, 'Unknown'),
    ready,
    containers: list(object(p.spec).containers).map((c) => ({
      name: text(c.name),
      ports: list(c.ports)
        .filter((port) => typeof port.containerPort === 'number')
        .map((port) => ({ name: typeof port.name === 'string' ? port.name : null, containerPort: port.containerPort as number })),
    })),
    problem: ready ? null : podProblem(p),
  };
}

function podProblem(pod: Record<string, any>): string {
  const metadata = object(pod.metadata);
  const status = object(pod.status);
  if (metadata.deletionTimestamp) return 'Terminating';
  const scheduled = list(status.conditions).find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False') return `${text(scheduled.reason, 'Unschedulable')}: ${short(text(scheduled.message))}`.replace(/: $/, '');
  const statuses = [...list(status.initContainerStatuses), ...list(status.containerStatuses)];
  for (const s of statuses) {
    const state = object(s.state);
    const waiting = object(state.waiting);
    const name = text(s.name);
    if (typeof waiting.reason === 'string' && waiting.reason !== 'PodInitializing' && waiting.reason !== 'ContainerCreating') {
      const last = object(object(s.lastState).terminated);
      const said = typeof last.message === 'string' ? lastErrorLine(last.message) : null;
      const lastPart = typeof last.reason === 'string' ? ` (last exit: ${text(last.reason)}${typeof last.exitCode === 'number' ? ` ${last.exitCode}` : ''}${said ? `: ${short(said)}` : ''})` : '';
      return `container ${name}: ${text(waiting.reason)}${typeof waiting.message === 'string' && waiting.message ? `: ${short(waiting.message)}` : ''}${lastPart}`;
    }
    const terminated = state.terminated ? object(state.terminated) : null;
    if (terminated && terminated.exitCode !== 0) return `container ${name}: terminated ${text(terminated.reason)} (exit ${typeof terminated.exitCode === 'number' ? terminated.exitCode : '?'})`.replace('  ', ' ');
  }
  const notReady = statuses.find((s) => !s.ready && object(s.state).running);
  if (notReady) return `container ${text(notReady.name)} running but not ready (readiness probe failing: model still loading?)`;
  const waiting = statuses.find((s) => object(s.state).waiting);
  if (waiting) return `container ${text(waiting.name)}: ${text(object(object(waiting.state).waiting).reason, 'waiting')}`;
  return text(status.phase, 'not Ready');
}

/**
 * The line of a container's termination message that says why it stopped: the last line that names
 * an error (argparse's `vllm serve: error: …`, a Python exception's `ValueError: …`), else the last
 * line. With `terminationMessagePolicy: FallbackToLogsOnError` (app-serving's model servers) the
 * kubelet puts the end of the log there.
 */
export function lastErrorLine(message: string): string | null {
  const lines = message.split('\n').map((l) => l.trim()).filter(Boolean);
  if (lines.length === 0) return null;
  return [...lines].reverse().find((l) => /error|exception|invalid|unrecognized|not supported|cannot|failed/i.test(l)) ?? lines[lines.length - 1]!;
}

function short(value: string, length = 140): string {
  const line = value.replace(/\s+/g, ' ').trim();
  return line.length > length ? `${line.slice(0, length - 1)}…` : line;
}

export function serviceSummary(service: V1Service): ServiceSummary {
  const s = object(service);
  const metadata = object(s.metadata);
  const spec = object(s.spec);
  const selector = labels(spec.selector);
  return {
    name: text(metadata.name),
    namespace: text(metadata.namespace),
    selector: Object.keys(selector).length ? selector : null,
    ports: list(spec.ports)
      .filter((p) => typeof p.port === 'number')
      .map((p) => ({ name: typeof p.name === 'string' ? p.name : null, port: p.port as number, targetPort: typeof p.targetPort === 'number' || typeof p.targetPort === 'string' ? (p.targetPort as number | string) : (p.port as number) })),
  };
}

export function jobSummary(job: V1Job): JobSummary {
  const j = object(job);
  const status = object(j.status);
  const conditions = list(status.conditions);
  const failed = conditions.find((c) => (c.type === 'Failed' || c.type === 'FailureTarget') && c.status === 'True');
  const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const succeeded = count(status.succeeded);
  return {
    name: text(object(j.metadata).name),
    active: count(status.active),
    succeeded,
    failed: count(status.failed),
    complete: succeeded > 0 || conditions.some((c) => (c.type === 'Complete' || c.type === 'SuccessCriteriaMet') && c.status === 'True'),
    failedCondition: failed ? { reason: text(failed.reason, 'Failed'), message: text(failed.message) } : null,
  };
}

/**
 * A {@link Cluster} over `@kubernetes/client-node` (imported on first use, so `--base-url` runs
 * never load it). `source` and `inCluster` describe where `kubeConfig` came from.
 */
export async function createCluster(kubeConfig: KubeConfig, meta: { source?: string; inCluster?: boolean; secrets?: readonly string[] } = {}): Promise<Cluster> {
  const k8s = await import('@kubernetes/client-node');
  const api = new KubeApi(kubeConfig, meta.secrets ?? []);
  const exec = new k8s.Exec(kubeConfig);
  const portForward = new k8s.PortForward(kubeConfig);
  const tunnels = new Set<Tunnel>();
  const ns = (namespace: string) => `/namespaces/${encodeURIComponent(namespace)}`;

  const orNull = async <T>(call: () => Promise<T>, verb: string, resource: string, namespace: string, signal: AbortSignal): Promise<T | null> => {
    try {
      return await call();
    } catch (error) {
      if (error instanceof ApiError && error.status === 404 && !signal.aborted) return null;
      throw kubeErrorOf(error, verb, resource, namespace, signal);
    }
  };
  const listOf = async <T>(path: string, selector: Readonly<Record<string, string>>, resource: string, namespace: string, signal: AbortSignal, summarise: (item: any) => T): Promise<T[]> => {
    try {
      return await api.list({ path, query: { labelSelector: labelSelector(selector) }, signal }, LIST_PAGE, summarise);
    } catch (error) {
      throw kubeErrorOf(error, 'list', resource, namespace, signal);
    }
  };

  const cluster: Cluster = {
    context: meta.inCluster ? null : kubeConfig.getCurrentContext() || null,
    source: meta.source ?? 'kubeconfig',
    inCluster: meta.inCluster ?? false,
    secrets: meta.secrets ?? [],

    async listPods(namespace, selector, signal) {
      const pods = await listOf(`/api/v1${ns(namespace)}/pods`, selector, 'pods', namespace, signal, podSummary);
      return pods.sort((a, b) => a.name.localeCompare(b.name));
    },

    async readService(namespace, name, signal) {
      const service = await orNull(() => api.request({ path: `/api/v1${ns(namespace)}/services/${encodeURIComponent(name)}`, signal }), 'get', 'services', namespace, signal);
      return service ? serviceSummary(service as V1Service) : null;
    },

    async listServices(namespace, selector, signal) {
      const services = await listOf(`/api/v1${ns(namespace)}/services`, selector, 'services', namespace, signal, serviceSummary);
      return services.sort((a, b) => a.name.localeCompare(b.name));
    },

    async readJob(namespace, name, signal) {
      const job = await orNull(() => api.request({ path: `/apis/batch/v1${ns(namespace)}/jobs/${encodeURIComponent(name)}`, signal }), 'get', 'jobs', namespace, signal);
      return job ? jobSummary(job as V1Job) : null;
    },

    async readCustomObject(ref, signal) {
      const resource = `${ref.plural}.${ref.group}`;
      const path = `/apis/${encodeURIComponent(ref.group)}/${encodeURIComponent(ref.version)}${ns(ref.namespace)}/${encodeURIComponent(ref.plural)}/${encodeURIComponent(ref.name)}`;
      const object: unknown = await orNull(() => api.request({ path, signal }), 'get', resource, ref.namespace, signal);
      return object && typeof object === 'object' ? (object as Record<string, unknown>) : null;
    },

    async exec(namespace, pod, container, command, signal) {
      let stdout = '';
      let stderr = '';
      const sink = (append: (text: string) => void) =>
        new Writable({
          write(chunk: Buffer, _encoding, done) {
            // Bounded: an exec that prints without end keeps only its first bytes.
            append(chunk.toString('utf8'));
            done();
          },
        });
      let socket: WebSocket | undefined;
      return await new Promise<ExecOutcome>((resolve, reject) => {
        let settled = false;
        const settle = (fn: () => void) => {
          if (settled) return;
          settled = true;
          signal.removeEventListener('abort', onAbort);
          fn();
        };
        const onAbort = () => {
          socket?.close();
          settle(() => reject(kubeErrorOf(undefined, 'create', 'pods/exec', namespace, signal)));
        };
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        exec
          .exec(
            namespace,
            pod,
            container,
            [...command],
            sink((t) => (stdout = keepFirst(stdout, t))),
            sink((t) => (stderr = keepFirst(stderr, t))),
            null,
            false,
            (status: V1Status) => settle(() => {
              const outcome = execOutcome(status, stdout, stderr);
              if (outcome instanceof Error) reject(new KubeError(`exec in pod ${namespace}/${pod}: ${outcome.message}`, null, 'create', 'pods/exec', namespace));
              else resolve(outcome);
            }),
          )
          .then((ws) => {
            socket = ws as unknown as WebSocket;
            if (settled) socket.close();
            socket.on('close', () => settle(() => reject(new KubeError(`exec in pod ${namespace}/${pod}: the stream closed without an exit status`, null, 'create', 'pods/exec', namespace))));
          })
          .catch((error: unknown) => settle(() => reject(upgradeError(error, 'create', 'pods/exec', namespace, pod))));
      });
    },

    async openTunnel(namespace, pod, port) {
      const tunnel = await openPortForward(portForward, namespace, pod, port, () => tunnels.delete(tunnel));
      tunnels.add(tunnel);
      return tunnel;
    },

    async close() {
      await Promise.all([...tunnels].map((t) => t.close()));
    },
  };
  return cluster;
}

/**
 * `kept` with `more` appended, up to {@link MAX_EXEC_OUTPUT} characters; past that the output ends
 * in "…", the mark the result's Redactor reads to redact a secret the cut went through.
 */
function keepFirst(kept: string, more: string): string {
  if (kept.length >= MAX_EXEC_OUTPUT) return kept;
  const all = kept + more;
  return all.length <= MAX_EXEC_OUTPUT ? all : `${all.slice(0, MAX_EXEC_OUTPUT - 1)}…`;
}

/** An exec's V1Status: `Success` is exit 0; `NonZeroExitCode` carries the code in `details.causes[reason=ExitCode]`. */
export function execOutcome(status: V1Status, stdout: string, stderr: string): ExecOutcome | Error {
  if (status.status === 'Success') return { exitCode: 0, stdout, stderr };
  if (status.reason === 'NonZeroExitCode') {
    const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
    const code = Number(cause?.message);
    return { exitCode: Number.isInteger(code) ? code : 1, stdout, stderr };
  }
  return new Error(status.message || status.reason || 'exec failed');
}

async function openPortForward(
  portForward: import('@kubernetes/client-node').PortForward,
  namespace: string,
  pod: string,
  port: number,
  onClose: () => void,
): Promise<Tunnel> {
  let lastProblem: string | null = null;
  const sockets = new Set<net.Socket>();
  const streams = new Set<WebSocket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    // Errors the kubelet reports on the tunnel's error channel ("… connection refused").
    const errors = new Writable({
      write(chunk: Buffer, _encoding, done) {
        const text = chunk.toString('utf8').trim();
        if (text) lastProblem = `pod ${pod}: ${text}`;
        done();
      },
    });
    portForward
      .portForward(namespace, pod, [port], socket, errors, socket)
      .then((result) => {
        const ws = (typeof result === 'function' ? result() : result) as unknown as WebSocket | null;
        if (!ws) return socket.destroy();
        streams.add(ws);
        ws.on('close', () => {
          streams.delete(ws);
          socket.end();
        });
        ws.on('error', (error: Error) => {
          lastProblem = `pod ${pod}: ${error.message}`;
          socket.destroy();
        });
        socket.on('close', () => ws.close());
        if (socket.destroyed) ws.close();
      })
      .catch((error: unknown) => {
        lastProblem = upgradeError(error, 'create', 'pods/portforward', namespace, pod).message;
        socket.destroy();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const localPort = (server.address() as net.AddressInfo).port;
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${localPort}`,
    localPort,
    namespace,
    pod,
    port,
    problem: () => lastProblem,
    close() {
      closed ??= new Promise<void>((resolve) => {
        for (const ws of streams) ws.terminate();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
        onClose();
      });
      return closed;
    },
  };
}
