import net from 'node:net';
import { Writable } from 'node:stream';
import type { KubeConfig, V1Pod, V1Service, V1Job, V1Status } from '@kubernetes/client-node';

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
  const code = typeof (error as { code?: unknown })?.code === 'number' ? (error as { code: number }).code : null;
  if (code !== null) {
    const detail = statusMessage((error as { body?: unknown }).body);
    if (code === 403) {
      return new KubeError(`forbidden: cannot ${verb} ${where} (RBAC: grant "${verb}" on "${resource}")${detail ? `: ${detail}` : ''}`, 403, verb, resource, namespace);
    }
    if (code === 401) return new KubeError(`unauthorized: the API server rejected the kubeconfig's credentials (expired token?)`, 401, verb, resource, namespace);
    return new KubeError(`${verb} ${where}: HTTP ${code}${detail ? `: ${detail}` : ''}`, code, verb, resource, namespace);
  }
  const message = error instanceof Error ? error.message : String(error);
  const errno = (error as { code?: unknown; cause?: { code?: unknown } })?.code ?? (error as { cause?: { code?: unknown } })?.cause?.code;
  return new KubeError(`${verb} ${where}: cannot reach the API server (${typeof errno === 'string' ? errno : message})`, null, verb, resource, namespace);
}

function statusMessage(body: unknown): string | null {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return body.slice(0, 200) || null;
    }
  }
  return value && typeof value === 'object' && typeof (value as { message?: unknown }).message === 'string' ? (value as { message: string }).message : null;
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

export function podSummary(pod: V1Pod): PodSummary {
  const conditions = pod.status?.conditions ?? [];
  const ready = !pod.metadata?.deletionTimestamp && conditions.some((c) => c.type === 'Ready' && c.status === 'True');
  return {
    name: pod.metadata?.name ?? '',
    labels: pod.metadata?.labels ?? {},
    phase: pod.status?.phase ?? 'Unknown',
    ready,
    containers: (pod.spec?.containers ?? []).map((c) => ({ name: c.name, ports: (c.ports ?? []).map((p) => ({ name: p.name ?? null, containerPort: p.containerPort })) })),
    problem: ready ? null : podProblem(pod),
  };
}

function podProblem(pod: V1Pod): string {
  if (pod.metadata?.deletionTimestamp) return 'Terminating';
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False') return `${scheduled.reason ?? 'Unschedulable'}: ${short(scheduled.message ?? '')}`.replace(/: $/, '');
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const s of statuses) {
    const waiting = s.state?.waiting;
    if (waiting?.reason && waiting.reason !== 'PodInitializing' && waiting.reason !== 'ContainerCreating') {
      const last = s.lastState?.terminated;
      const lastPart = last?.reason ? ` (last exit: ${last.reason}${last.exitCode !== undefined ? ` ${last.exitCode}` : ''})` : '';
      return `container ${s.name}: ${waiting.reason}${waiting.message ? `: ${short(waiting.message)}` : ''}${lastPart}`;
    }
    const terminated = s.state?.terminated;
    if (terminated && terminated.exitCode !== 0) return `container ${s.name}: terminated ${terminated.reason ?? ''} (exit ${terminated.exitCode})`.replace('  ', ' ');
  }
  const notReady = statuses.find((s) => !s.ready && s.state?.running);
  if (notReady) return `container ${notReady.name} running but not ready (readiness probe failing: model still loading?)`;
  const waiting = statuses.find((s) => s.state?.waiting);
  if (waiting) return `container ${waiting.name}: ${waiting.state!.waiting!.reason ?? 'waiting'}`;
  return pod.status?.phase ?? 'not Ready';
}

function short(text: string, length = 140): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > length ? `${line.slice(0, length - 1)}…` : line;
}

export function serviceSummary(service: V1Service): ServiceSummary {
  return {
    name: service.metadata?.name ?? '',
    namespace: service.metadata?.namespace ?? '',
    selector: service.spec?.selector && Object.keys(service.spec.selector).length ? service.spec.selector : null,
    ports: (service.spec?.ports ?? []).map((p) => ({ name: p.name ?? null, port: p.port, targetPort: p.targetPort ?? p.port })),
  };
}

export function jobSummary(job: V1Job): JobSummary {
  const conditions = job.status?.conditions ?? [];
  const failed = conditions.find((c) => (c.type === 'Failed' || c.type === 'FailureTarget') && c.status === 'True');
  const succeeded = job.status?.succeeded ?? 0;
  return {
    name: job.metadata?.name ?? '',
    active: job.status?.active ?? 0,
    succeeded,
    failed: job.status?.failed ?? 0,
    complete: succeeded > 0 || conditions.some((c) => (c.type === 'Complete' || c.type === 'SuccessCriteriaMet') && c.status === 'True'),
    failedCondition: failed ? { reason: failed.reason ?? 'Failed', message: failed.message ?? '' } : null,
  };
}

/** Per-call AbortSignal: client-node 1.x takes it through a request middleware. */
export function signalOptions(k8s: typeof import('@kubernetes/client-node'), signal: AbortSignal) {
  return {
    middleware: [
      {
        pre: (context: import('@kubernetes/client-node').RequestContext) => {
          context.setSignal(signal);
          return new k8s.Observable(Promise.resolve(context));
        },
        post: (context: import('@kubernetes/client-node').ResponseContext) => new k8s.Observable(Promise.resolve(context)),
      },
    ],
    middlewareMergeStrategy: 'append' as const,
  };
}

/**
 * A {@link Cluster} over `@kubernetes/client-node` (imported on first use, so `--base-url` runs
 * never load it). `source` and `inCluster` describe where `kubeConfig` came from.
 */
export async function createCluster(kubeConfig: KubeConfig, meta: { source?: string; inCluster?: boolean } = {}): Promise<Cluster> {
  const k8s = await import('@kubernetes/client-node');
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const batch = kubeConfig.makeApiClient(k8s.BatchV1Api);
  const custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  const exec = new k8s.Exec(kubeConfig);
  const portForward = new k8s.PortForward(kubeConfig);
  const tunnels = new Set<Tunnel>();

  const withSignal = (signal: AbortSignal) => signalOptions(k8s, signal);
  const orNull = async <T>(call: () => Promise<T>, verb: string, resource: string, namespace: string, signal: AbortSignal): Promise<T | null> => {
    try {
      return await call();
    } catch (error) {
      if ((error as { code?: unknown })?.code === 404 && !signal.aborted) return null;
      throw kubeErrorOf(error, verb, resource, namespace, signal);
    }
  };

  const cluster: Cluster = {
    context: meta.inCluster ? null : kubeConfig.getCurrentContext() || null,
    source: meta.source ?? 'kubeconfig',
    inCluster: meta.inCluster ?? false,

    async listPods(namespace, selector, signal) {
      try {
        const list = await core.listNamespacedPod({ namespace, labelSelector: labelSelector(selector) }, withSignal(signal));
        return list.items.map(podSummary).sort((a, b) => a.name.localeCompare(b.name));
      } catch (error) {
        throw kubeErrorOf(error, 'list', 'pods', namespace, signal);
      }
    },

    async readService(namespace, name, signal) {
      const service = await orNull(() => core.readNamespacedService({ namespace, name }, withSignal(signal)), 'get', 'services', namespace, signal);
      return service ? serviceSummary(service) : null;
    },

    async listServices(namespace, selector, signal) {
      try {
        const list = await core.listNamespacedService({ namespace, labelSelector: labelSelector(selector) }, withSignal(signal));
        return list.items.map(serviceSummary).sort((a, b) => a.name.localeCompare(b.name));
      } catch (error) {
        throw kubeErrorOf(error, 'list', 'services', namespace, signal);
      }
    },

    async readJob(namespace, name, signal) {
      const job = await orNull(() => batch.readNamespacedJob({ namespace, name }, withSignal(signal)), 'get', 'jobs', namespace, signal);
      return job ? jobSummary(job) : null;
    },

    async readCustomObject(ref, signal) {
      const resource = `${ref.plural}.${ref.group}`;
      const object: unknown = await orNull(
        () => custom.getNamespacedCustomObject({ group: ref.group, version: ref.version, namespace: ref.namespace, plural: ref.plural, name: ref.name }, withSignal(signal)),
        'get',
        resource,
        ref.namespace,
        signal,
      );
      return object && typeof object === 'object' ? (object as Record<string, unknown>) : null;
    },

    async exec(namespace, pod, container, command, signal) {
      let stdout = '';
      let stderr = '';
      const sink = (append: (text: string) => void) =>
        new Writable({
          write(chunk: Buffer, _encoding, done) {
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
            sink((t) => (stdout += t)),
            sink((t) => (stderr += t)),
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
