/**
 * Pods that are real processes (the data-path tier): what a kubelet and a container runtime do for
 * the pods a test names, on top of kwok, inside the tier's own network namespace (netns.mjs).
 *
 * kwok schedules nothing itself and gives each pod its address; in a cluster started with
 * `podLifecycle: 'runtime'` it marks a pod Running but never Ready (kwok.ts), and this runtime takes
 * it from there. For each pod that is Running, not a Job's (kwok finishes those) and not deleted:
 *
 * - a **real pod**, when the test's `run` maps at least one of its containers to a command: a network
 *   namespace of its own with the pod's address (network.ts), a root file system with its volumes
 *   (filesystem.ts), and each mapped container started from what the spec says — `run` turns the
 *   image's entry point, command and args into the local command (vLLM's entry point, Envoy's
 *   binary, the endpoint picker's), with the container's environment (`value`, `valueFrom`,
 *   `envFrom`) and the in-cluster API address. Its probes run for real (probes.ts): startup, then
 *   readiness (the pod's Ready condition, and so its Service endpoints) and liveness (a restart). A
 *   container that exits is restarted with a back-off and reported as the kubelet reports it
 *   (`CrashLoopBackOff`, the last exit, and with `terminationMessagePolicy: FallbackToLogsOnError`
 *   the end of its log as the termination message). Its other containers are marked ready.
 * - any other pod: Ready at once, its ports forwarded to the local server `standIn` gives for it
 *   (as the control-plane tiers do), or to nothing.
 *
 * A pod that goes (deleted, or its Deployment scaled down) has its processes stopped, its mounts and
 * its network namespace removed. `stop()` does that for every pod.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { TestCluster } from '../cluster.ts';
import { applyObjects } from '../objects.ts';
import { VolumeNotReady, fieldValue, podRoot, type PodRoot, type VolumeSources } from './filesystem.ts';
import { NODE_IP, podNetwork, type PodNetwork } from './network.ts';
import { runProbe } from './probes.ts';

type Values = Record<string, any>;

/** How one container of a pod runs here: the command inside the pod's root, and environment added to the container's own. */
export interface ContainerRun {
  readonly argv: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

export interface PodRuntimeOptions extends VolumeSources {
  /** The command a container runs as, or null to leave it simulated (ready at once, no process). */
  readonly run: (pod: Values, container: Values) => ContainerRun | null;
  /** For a pod without a real container: the local port (127.0.0.1) its ports are forwarded to, or null. */
  readonly standIn?: (pod: Values) => Promise<number | null> | number | null;
  /** Progress lines. */
  readonly log?: (line: string) => void;
  /** How often the pods are listed. @default 500 ms */
  readonly pollMs?: number;
}

/** What the runtime knows of one container it runs. */
export interface RunningContainer {
  readonly namespace: string;
  readonly pod: string;
  readonly container: string;
  readonly address: string;
  /** The container's log file (stdout and stderr, every restart appended). */
  readonly logFile: string;
  readonly restarts: number;
  readonly ready: boolean;
}

export interface PodRuntime {
  /** The containers run for real now. */
  containers(): RunningContainer[];
  /** The log of a real container (every run), or '' when there is none. */
  logs(namespace: string, pod: string, container: string): string;
  /** Stops every pod's processes and removes their namespaces and mounts. */
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The addresses the stand-in load balancer gives Services of type LoadBalancer (`<range>.<n>`). */
const LOAD_BALANCER_RANGE = '10.0.254';

/** The first restart waits this long, doubling up to {@link MAX_BACKOFF_MS}: the kubelet's CrashLoopBackOff (10 s to 5 min). */
const FIRST_BACKOFF_MS = 10_000;
const MAX_BACKOFF_MS = 300_000;
/** A pod whose set-up failed is tried again after this long, doubling up to {@link MAX_SETUP_RETRY_MS}. */
const SETUP_RETRY_MS = 1000;
const MAX_SETUP_RETRY_MS = 16_000;
/** What the kubelet keeps of a log as the termination message (`FallbackToLogsOnError`): 80 lines, 2,048 bytes. */
const MESSAGE_LINES = 80;
const MESSAGE_BYTES = 2048;

export interface ContainerState {
  readonly spec: Values;
  readonly run: ContainerRun | null;
  readonly logFile: string;
  child: ChildProcess | null;
  restarts: number;
  started: boolean;
  ready: boolean;
  startedAt: string;
  lastExit: { exitCode: number; reason: string; message?: string; startedAt: string; finishedAt: string } | null;
  waiting: { reason: string; message: string } | null;
}

export interface PodState {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly address: string;
  readonly dir: string;
  net: PodNetwork | null;
  root: PodRoot | null;
  readonly containers: ContainerState[];
  stopped: boolean;
  timers: NodeJS.Timeout[];
  /** The last status the API server took, to patch only on change. */
  sent: string;
  /** The patch under way (patches of one pod go one at a time). */
  patching?: Promise<void>;
  /** The ports the pod's PortForward maps now (sorted, joined). */
  forwarded: string;
}

/**
 * Writes a pod's status (its Ready condition and container statuses) when it changed: one patch at a
 * time per pod, each made from the pod's state when it is sent, and a change counted as written only
 * once the API server took it. Two probes turning at once (the Router's proxy and its EPP, at load)
 * otherwise sent two patches at once, the older one could land last, and the pod stayed not Ready
 * with both containers ready; a patch refused (a 5xx under load) was never sent again.
 */
export function podStatusPatcher(
  request: TestCluster['request'],
  log: (line: string) => void,
): (pod: Pick<PodState, 'namespace' | 'name' | 'containers' | 'stopped' | 'sent' | 'patching'>) => Promise<void> {
  const send = async (pod: Pick<PodState, 'namespace' | 'name' | 'containers' | 'stopped' | 'sent'>) => {
    if (pod.stopped) return;
    const ready = pod.containers.every((c) => !c.run || c.ready);
    const status = {
      conditions: [
        { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: new Date().toISOString() },
        { type: 'ContainersReady', status: ready ? 'True' : 'False', lastTransitionTime: new Date().toISOString() },
      ],
      containerStatuses: pod.containers.map((c) => ({
        name: c.spec.name,
        image: c.spec.image,
        imageID: '',
        ready: c.run ? c.ready : true,
        started: c.run ? c.started : true,
        restartCount: c.restarts,
        state: c.waiting ? { waiting: c.waiting } : { running: { startedAt: c.startedAt } },
        ...(c.lastExit ? { lastState: { terminated: c.lastExit } } : {}),
      })),
    };
    // Compared without the times, which change on every patch.
    const key = JSON.stringify({ ready, c: status.containerStatuses.map((s) => [s.ready, s.started, s.restartCount, s.state.waiting ? `${s.state.waiting.reason}: ${s.state.waiting.message}` : 'running']) });
    if (key === pod.sent) return;
    const res = await request('PATCH', `/api/v1/namespaces/${pod.namespace}/pods/${pod.name}/status`, { status }, { contentType: 'application/strategic-merge-patch+json' });
    if (res.status < 300 || res.status === 404) pod.sent = key;
    else log(`pod ${pod.namespace}/${pod.name}: status not patched: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  };
  return (pod) => {
    const next = (pod.patching ?? Promise.resolve()).then(() => send(pod)).catch((error: Error) => log(`pod ${pod.namespace}/${pod.name}: status not patched: ${error.message}`));
    pod.patching = next;
    return next;
  };
}

/** Starts the runtime over a cluster started with `podLifecycle: 'runtime'`. */
export async function startPodRuntime(cluster: TestCluster, options: PodRuntimeOptions): Promise<PodRuntime> {
  const log = options.log ?? (() => {});
  const apiPort = new URL(cluster.server).port;
  const pods = new Map<string, PodState>();
  const handled = new Set<string>();
  let stopping = false;

  const patchStatus = podStatusPatcher((method, path, body, opts) => cluster.request(method, path, body, opts), log);

  /**
   * kwok forwards only the ports its PortForward lists, where a kubelet forwards any port of the pod:
   * the pod's declared ports and every port a process of it listens on (Envoy's listeners are not
   * declared), refreshed as they open.
   */
  const refreshForwards = async (pod: PodState, podObject: Values) => {
    if (pod.stopped || !pod.net) return;
    const ports = [...new Set([...portsOf(podObject), ...listeningPorts(pod.net.name)])].sort((a, b) => a - b);
    const key = ports.join(',');
    if (key === pod.forwarded) return;
    pod.forwarded = key;
    await forward(cluster, pod.namespace, pod.name, ports.map((p) => ({ port: p, target: { address: pod.address, port: p } })));
  };

  /** The environment a container runs with: its own, then what every pod gets. */
  const environment = async (pod: PodState, state: ContainerState, podObject: Values) => ({
    ...(await containerEnv(cluster, podObject, state.spec)),
    KUBERNETES_SERVICE_HOST: NODE_IP,
    KUBERNETES_SERVICE_PORT: apiPort,
    HOSTNAME: pod.name,
    ...state.run!.env,
  });

  /**
   * Starts one run of a container; `made` is its environment when the pod's set-up made it. A restart
   * makes it again, and one that cannot (a Secret gone) waits as CreateContainerConfigError and tries again.
   */
  const startContainer = async (pod: PodState, state: ContainerState, podObject: Values, made?: Record<string, string>) => {
    if (pod.stopped || !state.run) return;
    let env: Record<string, string>;
    try {
      env = made ?? (await environment(pod, state, podObject));
    } catch (error) {
      state.waiting = { reason: 'CreateContainerConfigError', message: (error as Error).message.slice(0, 500) };
      log(`pod ${pod.namespace}/${pod.name}: container ${state.spec.name} not restarted: ${state.waiting.message}; again in ${SETUP_RETRY_MS} ms`);
      void patchStatus(pod);
      if (!pod.stopped) pod.timers.push(setTimeout(() => void startContainer(pod, state, podObject), SETUP_RETRY_MS));
      return;
    }
    if (pod.stopped) return;
    const workDir = state.spec.workingDir ?? '/';
    // The kubelet expands $(VAR) in command and args from the container's environment.
    const command = state.run.argv.map((arg) => expand(arg, env));
    const argv = ['ip', 'netns', 'exec', pod.net!.name, 'chroot', pod.root!.root, '/bin/sh', '-c', 'cd "$0" && exec "$@"', workDir, ...command];
    // stdout and stderr straight into the log file (a file, as a container runtime gives them: Envoy
    // opens /dev/stdout for its access log, which fails on the socket a Node pipe is).
    appendFileSync(state.logFile, `\n[runtime] ${new Date().toISOString()} start: ${command.join(' ')}\n`);
    const from = statSync(state.logFile).size;
    const fd = openSync(state.logFile, 'a');
    const child = spawn(argv[0]!, argv.slice(1), { env: env as NodeJS.ProcessEnv, stdio: ['ignore', fd, fd], detached: true });
    closeSync(fd);
    state.child = child;
    state.started = false;
    state.ready = false;
    state.waiting = null;
    state.startedAt = new Date().toISOString();
    const startedAt = state.startedAt;
    child.on('exit', (code, signal) => {
      state.child = null;
      state.ready = false;
      if (pod.stopped) return;
      const exitCode = code ?? 128 + (signal === 'SIGKILL' ? 9 : 15);
      const message = state.spec.terminationMessagePolicy === 'FallbackToLogsOnError' && exitCode !== 0 ? logTail(readFrom(state.logFile, from)) : undefined;
      state.lastExit = { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', ...(message && { message }), startedAt, finishedAt: new Date().toISOString() };
      const backoff = Math.min(FIRST_BACKOFF_MS * 2 ** state.restarts, MAX_BACKOFF_MS);
      state.restarts += 1;
      state.waiting = { reason: 'CrashLoopBackOff', message: `back-off ${Math.round(backoff / 1000)}s restarting failed container=${state.spec.name} pod=${pod.name}` };
      log(`pod ${pod.namespace}/${pod.name}: container ${state.spec.name} exited (${exitCode}); restart in ${backoff} ms`);
      void patchStatus(pod);
      pod.timers.push(setTimeout(() => void startContainer(pod, state, podObject), backoff));
    });
    void probeLoop(pod, state, child, podObject);
    void patchStatus(pod);
  };

  /** Startup, then readiness and liveness, for one run of a container (ends when that run ends). */
  const probeLoop = async (pod: PodState, state: ContainerState, child: ChildProcess, podObject: Values) => {
    const alive = () => state.child === child && !pod.stopped;
    const spec = state.spec;
    const period = (probe: Values | undefined, cap: number) => Math.min((probe?.periodSeconds ?? 10) * 1000, cap);
    if (spec.startupProbe) {
      await sleep(Math.min((spec.startupProbe.initialDelaySeconds ?? 0) * 1000, 5000));
      let failures = 0;
      while (alive() && !(await runProbe(spec.startupProbe, spec, pod.address))) {
        failures += 1;
        if (failures >= (spec.startupProbe.failureThreshold ?? 3) * Math.max(1, Math.round(((spec.startupProbe.periodSeconds ?? 10) * 1000) / period(spec.startupProbe, 2000)))) {
          log(`pod ${pod.namespace}/${pod.name}: container ${spec.name} failed its startup probe: killed`);
          killGroup(child, 'SIGKILL');
          return;
        }
        await sleep(period(spec.startupProbe, 2000));
      }
    }
    if (!alive()) return;
    state.started = true;
    await patchStatus(pod);
    let livenessFailures = 0;
    let lastLiveness = Date.now();
    const readiness = spec.readinessProbe;
    if (readiness?.initialDelaySeconds && !spec.startupProbe) await sleep(Math.min(readiness.initialDelaySeconds * 1000, 5000));
    while (alive()) {
      const ready = readiness ? await runProbe(readiness, spec, pod.address) : true;
      if (!alive()) return;
      if (ready !== state.ready) {
        state.ready = ready;
        log(`pod ${pod.namespace}/${pod.name}: container ${spec.name} ${ready ? 'ready' : 'not ready'}`);
        await patchStatus(pod);
      }
      const liveness = spec.livenessProbe;
      if (liveness && Date.now() - lastLiveness >= (liveness.periodSeconds ?? 10) * 1000) {
        lastLiveness = Date.now();
        if (await runProbe(liveness, spec, pod.address)) livenessFailures = 0;
        else if ((livenessFailures += 1) >= (liveness.failureThreshold ?? 3)) {
          log(`pod ${pod.namespace}/${pod.name}: container ${spec.name} failed its liveness probe ${livenessFailures} times: killed`);
          killGroup(child, 'SIGKILL');
          return;
        }
      }
      await refreshForwards(pod, podObject).catch((error) => log(`pod ${pod.namespace}/${pod.name}: port-forward not updated: ${(error as Error).message}`));
      await sleep(period(readiness, 2000));
    }
  };

  const startPod = async (object: Values) => {
    const { uid, namespace, name } = object.metadata;
    const containers: ContainerState[] = (object.spec.containers as Values[]).map((spec) => {
      const run = options.run(object, spec);
      return { spec, run, logFile: '', child: null, restarts: 0, started: false, ready: false, startedAt: new Date().toISOString(), lastExit: null, waiting: run ? { reason: 'ContainerCreating', message: '' } : null };
    });
    const dir = join(cluster.dir, 'pods', namespace, name);
    mkdirSync(dir, { recursive: true });
    const pod: PodState = { uid, namespace, name, address: object.status.podIP, dir, net: null, root: null, containers: containers.map((c) => ({ ...c, logFile: join(dir, `${c.spec.name}.log`) })), stopped: false, timers: [], sent: '', forwarded: '' };
    pods.set(uid, pod);
    const real = pod.containers.filter((c) => c.run);
    if (real.length === 0) {
      const port = await options.standIn?.(object);
      const ports = portsOf(object);
      if (port !== null && port !== undefined && ports.length > 0) await forward(cluster, namespace, name, ports.map((p) => ({ port: p, target: { address: '127.0.0.1', port } })));
      await patchStatus(pod);
      return;
    }
    await setUpPod(pod, object, real, 0);
  };

  /**
   * Makes a real pod's network and root and starts its containers. A failure is reported and tried
   * again, as the kubelet does: a volume whose Secret or ConfigMap is not there yet keeps the pod in
   * ContainerCreating until it is (the engine creates a chart's ConfigMap and its Deployment side by
   * side, so the pod may come first), anything else is a CreateContainerError; either is retried with
   * a doubling back-off until the pod goes.
   */
  const setUpPod = async (pod: PodState, object: Values, real: ContainerState[], attempt: number): Promise<void> => {
    if (pod.stopped) return;
    const { namespace, name } = pod;
    try {
      // Every container's environment first, so that none starts while another cannot.
      const envs = new Map<ContainerState, Record<string, string>>();
      for (const state of real) envs.set(state, await environment(pod, state, object));
      pod.net = podNetwork(pod.address);
      pod.root = await podRoot(cluster, object, real.map((c) => c.spec), join(pod.dir, 'fs'), options);
      if (pod.stopped) return tearDown(pod);
      log(`pod ${namespace}/${name}: real at ${pod.address} (${real.map((c) => c.spec.name).join(', ')})`);
      // verify reaches the pod's ports through kwok's port-forward, and runs `test` in its root.
      await refreshForwards(pod, object);
      await applyObjects(cluster, [{ apiVersion: 'kwok.x-k8s.io/v1alpha1', kind: 'Exec', metadata: { name, namespace }, spec: { execs: [{ local: { workDir: pod.root.root } }] } }]);
      for (const state of real) await startContainer(pod, state, object, envs.get(state));
    } catch (error) {
      tearDown(pod);
      pod.forwarded = '';
      const message = (error as Error).message.slice(0, 500);
      const reason = error instanceof VolumeNotReady ? 'ContainerCreating' : error instanceof ConfigNotReady ? 'CreateContainerConfigError' : 'CreateContainerError';
      const wait = Math.min(SETUP_RETRY_MS * 2 ** attempt, MAX_SETUP_RETRY_MS);
      log(`pod ${namespace}/${name}: not started (${reason}): ${message}; again in ${wait} ms`);
      for (const state of real) state.waiting = { reason, message };
      await patchStatus(pod);
      if (!pod.stopped) pod.timers.push(setTimeout(() => void setUpPod(pod, object, real, attempt + 1), wait));
    }
  };

  /** Removes a pod's root and network (each made again by the next try). */
  const tearDown = (pod: PodState) => {
    pod.root?.remove();
    pod.root = null;
    pod.net?.remove();
    pod.net = null;
  };

  const stopPod = async (pod: PodState) => {
    if (pod.stopped) return;
    pod.stopped = true;
    for (const timer of pod.timers) clearTimeout(timer);
    await Promise.all(pod.containers.map(async (c) => {
      const child = c.child;
      if (!child) return;
      const exited = new Promise((r) => child.once('exit', r));
      killGroup(child, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }));
    tearDown(pod);
    pods.delete(pod.uid);
  };

  // A load balancer, as a cloud's controller (or MetalLB) provides one: each Service of type
  // LoadBalancer gets an address in its status (Envoy Gateway programs a Gateway once its Service has
  // one). Traffic to it is not routed; clients here reach the pods' addresses.
  let balanced = 0;
  const loadBalancers = async () => {
    const res = await cluster.request('GET', '/api/v1/services');
    if (res.status !== 200) return;
    for (const service of (res.body as { items: Values[] }).items) {
      if (service.spec?.type !== 'LoadBalancer' || (service.status?.loadBalancer?.ingress ?? []).length > 0) continue;
      balanced += 1;
      const ip = `${LOAD_BALANCER_RANGE}.${balanced}`;
      await cluster.request('PATCH', `/api/v1/namespaces/${service.metadata.namespace}/services/${service.metadata.name}/status`, { status: { loadBalancer: { ingress: [{ ip }] } } }, { contentType: 'application/merge-patch+json' });
      log(`Service ${service.metadata.namespace}/${service.metadata.name}: load balancer ${ip}`);
    }
  };

  const poll = async () => {
    while (!stopping) {
      try {
        await loadBalancers();
        const res = await cluster.request('GET', '/api/v1/pods');
        if (res.status === 200) {
          const items = (res.body as { items: Values[] }).items;
          const live = new Set<string>();
          for (const object of items) {
            const uid: string = object.metadata.uid;
            if (object.metadata.deletionTimestamp) continue;
            live.add(uid);
            if (handled.has(uid) || object.status?.phase !== 'Running' || !object.status?.podIP) continue;
            if ((object.metadata.ownerReferences ?? []).some((o: Values) => o.kind === 'Job')) continue;
            handled.add(uid);
            void startPod(object);
          }
          for (const pod of [...pods.values()]) if (!live.has(pod.uid)) void stopPod(pod);
        }
      } catch (error) {
        log(`runtime: pods not listed: ${(error as Error).message}`);
      }
      await sleep(options.pollMs ?? 500);
    }
  };
  const loop = poll();

  return {
    containers: () =>
      [...pods.values()].flatMap((pod) =>
        pod.containers.filter((c) => c.run).map((c) => ({ namespace: pod.namespace, pod: pod.name, container: c.spec.name, address: pod.address, logFile: c.logFile, restarts: c.restarts, ready: c.ready })),
      ),
    logs: (namespace, pod, container) => {
      const file = join(cluster.dir, 'pods', namespace, pod, `${container}.log`);
      return existsSync(file) ? readFileSync(file, 'utf8') : '';
    },
    stop: async () => {
      stopping = true;
      await loop;
      await Promise.all([...pods.values()].map(stopPod));
    },
  };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {}
}

/** The TCP ports something listens on in a network namespace (`ss -ltn`). */
function listeningPorts(netns: string): number[] {
  const run = spawnSync('ip', ['netns', 'exec', netns, 'ss', '-ltnH'], { encoding: 'utf8' });
  if (run.status !== 0) return [];
  return run.stdout
    .split('\n')
    .map((line) => /:(\d+)\s/.exec(line.trim().split(/\s+/)[3] + ' ')?.[1])
    .filter((p): p is string => p !== undefined)
    .map(Number);
}

function portsOf(pod: Values): number[] {
  return [...new Set((pod.spec.containers as Values[]).flatMap((c) => ((c.ports ?? []) as Values[]).map((p) => Number(p.containerPort))))];
}

async function forward(cluster: TestCluster, namespace: string, pod: string, forwards: ReadonlyArray<{ port: number; target: { address: string; port: number } }>): Promise<void> {
  if (forwards.length === 0) return;
  await applyObjects(cluster, [{
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'PortForward',
    metadata: { name: pod, namespace },
    spec: { forwards: forwards.map((f) => ({ ports: [f.port], target: f.target })) },
  }]);
}

/** What a file holds from `offset` on (at most the last 64 KiB of it). */
function readFrom(file: string, offset: number): string {
  const size = statSync(file).size;
  const start = Math.max(offset, size - 65_536);
  const buffer = Buffer.alloc(Math.max(0, size - start));
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, start);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8');
}

/** The end of a container's output, as the kubelet keeps it for `FallbackToLogsOnError`: 80 lines, at most 2,048 bytes. */
export function logTail(text: string): string {
  const lines = text.replace(/\n+$/, '').split('\n');
  let tail = lines.slice(-MESSAGE_LINES).join('\n');
  while (Buffer.byteLength(tail) > MESSAGE_BYTES) tail = tail.slice(tail.indexOf('\n') + 1 || 1);
  return tail;
}

/**
 * A container's environment is missing a Secret, a ConfigMap or a key of one that it does not mark
 * optional: the kubelet reports CreateContainerConfigError and tries again.
 */
export class ConfigNotReady extends Error {}

/** A container's environment as the kubelet makes it: envFrom, then env in order, `$(VAR)` expanded. */
export async function containerEnv(cluster: TestCluster, pod: Values, container: Values): Promise<Record<string, string>> {
  const namespace: string = pod.metadata.namespace;
  const cache = new Map<string, Values | null>();
  const object = async (kind: 'secret' | 'configmap', name: string, optional: boolean | undefined): Promise<Values | null> => {
    const key = `${kind}/${name}`;
    if (!cache.has(key)) {
      const res = await cluster.request('GET', `/api/v1/namespaces/${namespace}/${kind}s/${name}`);
      if (res.status !== 200 && res.status !== 404) throw new ConfigNotReady(`${kind} "${name}": ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      cache.set(key, res.status === 200 ? (res.body as Values) : null);
    }
    const found = cache.get(key)!;
    if (!found && !optional) throw new ConfigNotReady(`${kind} "${name}" not found`);
    return found;
  };
  const dataOf = (o: Values | null, secret: boolean): Record<string, string> =>
    Object.fromEntries(Object.entries(o?.data ?? {}).map(([k, v]) => [k, secret ? Buffer.from(String(v), 'base64').toString('utf8') : String(v)]));
  const keyOf = async (kind: 'secret' | 'configmap', ref: Values): Promise<string | undefined> => {
    const value = dataOf(await object(kind, ref.name, ref.optional), kind === 'secret')[ref.key];
    if (value === undefined && !ref.optional) throw new ConfigNotReady(`couldn't find key ${ref.key} in ${kind === 'secret' ? 'Secret' : 'ConfigMap'} ${namespace}/${ref.name}`);
    return value;
  };
  const env: Record<string, string> = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };
  for (const from of (container.envFrom ?? []) as Values[]) {
    const data = from.configMapRef ? dataOf(await object('configmap', from.configMapRef.name, from.configMapRef.optional), false) : from.secretRef ? dataOf(await object('secret', from.secretRef.name, from.secretRef.optional), true) : {};
    for (const [k, v] of Object.entries(data)) env[`${from.prefix ?? ''}${k}`] = v;
  }
  for (const item of (container.env ?? []) as Values[]) {
    if (item.value !== undefined) env[item.name] = expand(String(item.value), env);
    else if (item.valueFrom?.fieldRef) env[item.name] = fieldValue(pod, item.valueFrom.fieldRef.fieldPath);
    else if (item.valueFrom?.secretKeyRef) {
      const value = await keyOf('secret', item.valueFrom.secretKeyRef);
      if (value !== undefined) env[item.name] = value;
    } else if (item.valueFrom?.configMapKeyRef) {
      const value = await keyOf('configmap', item.valueFrom.configMapKeyRef);
      if (value !== undefined) env[item.name] = value;
    } else if (item.valueFrom?.resourceFieldRef) env[item.name] = '1';
    else env[item.name] = '';
  }
  return env;
}

/** `$(VAR)` references in an env value, as the kubelet expands them (`$$` escapes). */
function expand(value: string, env: Readonly<Record<string, string>>): string {
  return value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (match, name: string | undefined) => (name === undefined ? '$' : (env[name] ?? match)));
}
