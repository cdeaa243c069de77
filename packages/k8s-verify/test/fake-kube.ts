import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { WebSocketServer, type WebSocket } from 'ws';
import { onTestFinished } from 'vitest';

/** A pod of the fake cluster. */
export interface FakePod {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** @default true */
  ready?: boolean;
  /** @default 'Running' */
  phase?: string;
  /** @default [{ name: 'vllm' }] */
  readonly containers?: readonly { readonly name: string; readonly ports?: readonly { readonly name?: string; readonly containerPort: number }[] }[];
  /** Pod port → a port on 127.0.0.1 that port-forwards reach. */
  readonly forward?: Readonly<Record<number, number>>;
  /** Files that exist in the pod (for `test -f`). */
  files?: string[];
  /** Extra `status` fields (containerStatuses, conditions) to describe a pod that is not Ready. */
  readonly status?: Record<string, unknown>;
}

export interface FakeService {
  readonly namespace: string;
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly selector?: Readonly<Record<string, string>>;
  readonly ports: readonly { readonly name?: string; readonly port: number; readonly targetPort: number | string }[];
}

export interface FakeJob {
  readonly namespace: string;
  readonly name: string;
  status: Record<string, unknown>;
}

export interface FakeCustomObject {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespace: string;
  readonly name: string;
  object: Record<string, unknown>;
}

/** The state of the fake cluster; tests change it between calls. */
export interface FakeKubeState {
  pods: FakePod[];
  services: FakeService[];
  jobs: FakeJob[];
  customObjects: FakeCustomObject[];
  /** Denied requests as `<verb> <resource>`: `list pods`, `get services`, `create pods/exec`, `create pods/portforward`, … */
  forbidden: Set<string>;
  /** Called before each API request is answered (`GET /api/v1/…`), e.g. to make pods Ready after N polls; `'hang'` leaves it unanswered. */
  onRequest?: (method: string, path: string) => void | 'hang';
}

export interface FakeKube {
  readonly url: string;
  readonly state: FakeKubeState;
  /** Every request: `GET /api/v1/namespaces/x/pods?labelSelector=…` (decoded), and `EXEC ns/pod container: cmd…`, `PORTFORWARD ns/pod:port`. */
  readonly log: string[];
  /** A KubeConfig whose current context points at this server. */
  kubeConfig(): KubeConfig;
  close(): Promise<void>;
}

/**
 * A fake Kubernetes API server on 127.0.0.1 (node:http + ws), implementing exactly what the checks
 * use, with the exec and port-forward framing `@kubernetes/client-node` speaks (v4.channel.k8s.io:
 * `[channel][payload]` frames; exec status on channel 3; port-forward data on 0, errors on 1, each
 * first frame prefixed with the port as uint16 LE). Port-forwards tunnel to real local sockets.
 */
export async function startFakeKube(initial: Partial<FakeKubeState> = {}): Promise<FakeKube> {
  const state: FakeKubeState = { pods: [], services: [], jobs: [], customObjects: [], forbidden: new Set(), ...initial };
  const log: string[] = [];
  const upstreams = new Set<net.Socket>();
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => (protocols.has('v4.channel.k8s.io') ? 'v4.channel.k8s.io' : false) });

  const status = (res: http.ServerResponse, code: number, reason: string, message: string) => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason, message, code }));
  };
  const ok = (res: http.ServerResponse, value: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  const matches = (labels: Readonly<Record<string, string>> | undefined, selector: string | null) =>
    (selector ?? '')
      .split(',')
      .filter(Boolean)
      .every((term) => {
        const [k, v] = term.split('=');
        return labels?.[k!] === v;
      });

  const podObject = (p: FakePod) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: p.name, namespace: p.namespace, labels: p.labels },
    spec: { containers: (p.containers ?? [{ name: 'vllm' }]).map((c) => ({ name: c.name, image: 'test', ports: c.ports?.map((x) => ({ ...x })) })) },
    status: {
      phase: p.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: p.ready === false ? 'False' : 'True' }],
      ...p.status,
    },
  });
  const serviceObject = (s: FakeService) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: s.name, namespace: s.namespace, labels: s.labels ?? {} },
    spec: { selector: s.selector, ports: s.ports.map((p) => ({ ...p, protocol: 'TCP' })) },
  });

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const selector = url.searchParams.get('labelSelector');
    log.push(`${req.method} ${url.pathname}${selector !== null ? `?labelSelector=${selector}` : ''}`);
    if (state.onRequest?.(req.method ?? 'GET', url.pathname) === 'hang') return;
    const deny = (verb: string, resource: string, ns: string) => {
      if (!state.forbidden.has(`${verb} ${resource}`)) return false;
      status(res, 403, 'Forbidden', `${resource} is forbidden: User "system:serviceaccount:ci:verify" cannot ${verb} resource "${resource}" in the namespace "${ns}"`);
      return true;
    };
    let m: RegExpExecArray | null;
    if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/pods$/.exec(url.pathname))) {
      if (deny('list', 'pods', m[1]!)) return;
      return ok(res, { apiVersion: 'v1', kind: 'PodList', metadata: {}, items: state.pods.filter((p) => p.namespace === m![1] && matches(p.labels, selector)).map(podObject) });
    }
    if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/services$/.exec(url.pathname))) {
      if (deny('list', 'services', m[1]!)) return;
      return ok(res, { apiVersion: 'v1', kind: 'ServiceList', metadata: {}, items: state.services.filter((s) => s.namespace === m![1] && matches(s.labels, selector)).map(serviceObject) });
    }
    if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/services\/([^/]+)$/.exec(url.pathname))) {
      if (deny('get', 'services', m[1]!)) return;
      const svc = state.services.find((s) => s.namespace === m![1] && s.name === m![2]);
      return svc ? ok(res, serviceObject(svc)) : status(res, 404, 'NotFound', `services "${m[2]}" not found`);
    }
    if ((m = /^\/apis\/batch\/v1\/namespaces\/([^/]+)\/jobs\/([^/]+)$/.exec(url.pathname))) {
      if (deny('get', 'jobs', m[1]!)) return;
      const job = state.jobs.find((j) => j.namespace === m![1] && j.name === m![2]);
      return job
        ? ok(res, { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: job.name, namespace: job.namespace }, spec: {}, status: job.status })
        : status(res, 404, 'NotFound', `jobs.batch "${m[2]}" not found`);
    }
    if ((m = /^\/apis\/([^/]+)\/([^/]+)\/namespaces\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname))) {
      const [, group, version, ns, plural, name] = m;
      if (deny('get', plural!, ns!)) return;
      const object = state.customObjects.find((o) => o.group === group && o.version === version && o.namespace === ns && o.plural === plural && o.name === name);
      return object ? ok(res, object.object) : status(res, 404, 'NotFound', `${plural}.${group} "${name}" not found`);
    }
    status(res, 404, 'NotFound', `the fake API server does not serve ${url.pathname}`);
  });

  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(exec|portforward)$/.exec(url.pathname);
    const refuse = (code: number, reason: string) => {
      const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code });
      socket.end(`HTTP/1.1 ${code} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    };
    if (!m) return refuse(404, 'NotFound');
    const [, ns, podName, kind] = m;
    if (state.forbidden.has(`create pods/${kind}`)) return refuse(403, 'Forbidden');
    const pod = state.pods.find((p) => p.namespace === ns && p.name === podName);
    if (!pod) return refuse(404, 'NotFound');
    wss.handleUpgrade(req, socket, head, (ws) => (kind === 'exec' ? onExec(ws, pod, url) : onPortForward(ws, pod, url)));
  });

  const frame = (channel: number, payload: Buffer | string) => Buffer.concat([Buffer.from([channel]), Buffer.isBuffer(payload) ? payload : Buffer.from(payload)]);

  function onExec(ws: WebSocket, pod: FakePod, url: URL) {
    const command = url.searchParams.getAll('command');
    const container = url.searchParams.get('container') ?? '';
    log.push(`EXEC ${pod.namespace}/${pod.name} ${container}: ${command.join(' ')}`);
    let code: number;
    if (command[0] === 'test' && command[1] === '-f') code = pod.files?.includes(command[2] ?? '') ? 0 : 1;
    else {
      code = 127;
      ws.send(frame(2, `exec: "${command[0]}": executable file not found in $PATH\n`));
    }
    const result =
      code === 0
        ? { metadata: {}, status: 'Success' }
        : { metadata: {}, status: 'Failure', message: `command terminated with non-zero exit code: exit status ${code}`, reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: String(code) }] } };
    ws.send(frame(3, JSON.stringify(result)), () => ws.close());
  }

  function onPortForward(ws: WebSocket, pod: FakePod, url: URL) {
    const port = Number(url.searchParams.get('ports'));
    log.push(`PORTFORWARD ${pod.namespace}/${pod.name}:${port}`);
    const portBytes = Buffer.from([port & 0xff, port >> 8]);
    ws.send(frame(0, portBytes));
    ws.send(frame(1, portBytes));
    const target = pod.forward?.[port];
    if (target === undefined) {
      ws.send(frame(1, `error forwarding port ${port} to pod ${pod.name}: dial tcp4 127.0.0.1:${port}: connect: connection refused`), () => ws.close());
      return;
    }
    const upstream = net.connect(target, '127.0.0.1');
    upstreams.add(upstream);
    upstream.on('data', (data: Buffer) => ws.send(frame(0, data)));
    upstream.on('error', (error) => ws.send(frame(1, `error forwarding port ${port}: ${error.message}`), () => ws.close()));
    upstream.on('close', () => {
      upstreams.delete(upstream);
      ws.close();
    });
    ws.on('message', (data: Buffer) => {
      if (data[0] === 0 && data.length > 1) upstream.write(data.subarray(1));
    });
    ws.on('close', () => upstream.destroy());
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= new Promise<void>((resolve) => {
      for (const client of wss.clients) client.terminate();
      for (const socket of upstreams) socket.destroy();
      wss.close();
      server.closeAllConnections();
      server.close(() => resolve());
    }));
  onTestFinished(close);
  return {
    url,
    state,
    log,
    kubeConfig() {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'fake', server: url, skipTLSVerify: true }],
        users: [{ name: 'verify', token: 'fake-token-not-a-secret' }],
        contexts: [{ name: 'fake', cluster: 'fake', user: 'verify' }],
        currentContext: 'fake',
      });
      return kc;
    },
    close,
  };
}
