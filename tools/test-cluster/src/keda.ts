/**
 * A real KEDA (operator and metrics server, built from github.com/kedacore/keda/v2 at
 * KEDA_VERSION by ../keda.mjs) run against the test control plane, and a stand-in Prometheus.
 *
 * - The operator reconciles ScaledObjects: it creates their HPA (`keda-hpa-<name>`), queries the
 *   trigger's Prometheus, and scales the target between 0 and 1 itself (activation, cool-down).
 * - The metrics server (the adapter) serves `external.metrics.k8s.io/v1beta1` behind the API
 *   server's aggregation layer (`startCluster({ aggregation: true })`); the controller-manager's
 *   HPA controller reads the trigger's value there and scales between 1 and the maximum. The
 *   adapter asks the operator over gRPC with mutual TLS; both use a certificate of the cluster's
 *   extension CA.
 * - The stand-in Prometheus answers the query API (`/api/v1/query`) on 127.0.0.1 with the values
 *   a test sets per query, and records every query it was sent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ensureKeda } from '../keda.mjs';
import { createCrd, freePort, stopChild, type TestCluster } from './cluster.ts';

export const KEDA_NAMESPACE = 'keda';
/** The APIService KEDA's metrics server serves, and the Service the aggregator resolves it through. */
export const EXTERNAL_METRICS_API = 'v1beta1.external.metrics.k8s.io';
export const KEDA_METRICS_SERVICE = 'keda-metrics-apiserver';

export interface RunningKeda {
  /** The logs of the operator and the metrics server. */
  logs(): { operator: string; adapter: string };
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts KEDA's operator and metrics server against `cluster` (which must have been started with
 * `aggregation: true`), registers the metrics server as `v1beta1.external.metrics.k8s.io`, and
 * resolves once the API server serves that group through it.
 */
export async function startKeda(cluster: TestCluster, { log = () => {} }: { log?: (line: string) => void } = {}): Promise<RunningKeda> {
  const folder: string = ensureKeda({ log });
  const api = cluster.request;
  // The CRDs the operator watches that startCluster does not install (ScaledJob, CloudEventSource, …),
  // from the KEDA module at the same version.
  for (const file of readdirSync(join(folder, 'crds')).filter((f) => f.endsWith('.yaml')).sort()) {
    const crd = parse(readFileSync(join(folder, 'crds', file), 'utf8')) as { metadata: { name: string } };
    const existing = await api('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`);
    if (existing.status === 200) continue;
    await createCrd(api, crd.metadata.name, crd, log);
    const spec = (crd as unknown as { spec: { group: string; names: { plural: string }; versions: Array<{ name: string; served: boolean }> } }).spec;
    // Served before the operator starts: it watches every KEDA kind.
    const version = spec.versions.find((v) => v.served)!.name;
    const until = Date.now() + 120_000;
    for (;;) {
      const res = await api('GET', `/apis/${spec.group}/${version}`);
      if (res.status === 200 && (res.body as { resources: Array<{ name: string }> }).resources.some((r) => r.name === spec.names.plural)) break;
      if (Date.now() > until) throw new Error(`CRD ${crd.metadata.name} not served after 120 s`);
      await sleep(200);
    }
  }
  await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: KEDA_NAMESPACE } });
  const certificate = cluster.issueCertificate('keda', {
    dns: ['localhost', `keda-operator.${KEDA_NAMESPACE}.svc`, `keda-operator.${KEDA_NAMESPACE}.svc.cluster.local`, `${KEDA_METRICS_SERVICE}.${KEDA_NAMESPACE}.svc`],
    ips: ['127.0.0.1'],
  });
  const [grpcPort, securePort, operatorMetrics, probePort, adapterMetrics] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const env = { ...process.env, KUBECONFIG: cluster.kubeconfigPath, POD_NAMESPACE: KEDA_NAMESPACE, KEDA_CLUSTER_OBJECT_NAMESPACE: KEDA_NAMESPACE, WATCH_NAMESPACE: '' };
  const children: ChildProcess[] = [];
  const logFile = (name: string) => join(cluster.dir, 'logs', `${name}.log`);
  const launch = (name: string, args: string[]) => {
    const out = createWriteStream(logFile(name));
    const child = spawn(join(folder, 'bin', name), args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    children.push(child);
    return child;
  };
  launch('keda-operator', [
    `--metrics-service-bind-address=127.0.0.1:${grpcPort}`,
    `--metrics-bind-address=127.0.0.1:${operatorMetrics}`,
    `--health-probe-bind-address=127.0.0.1:${probePort}`,
    `--cert-dir=${certificate.dir}`,
    '--enable-cert-rotation=false',
    '--enable-webhook-patching=false',
    '--enable-apiservice-patching=false',
    '--leader-elect=false',
    '--zap-log-level=info',
  ]);
  launch('keda-adapter', [
    `--kubeconfig=${cluster.kubeconfigPath}`,
    `--lister-kubeconfig=${cluster.kubeconfigPath}`,
    `--authentication-kubeconfig=${cluster.kubeconfigPath}`,
    `--authorization-kubeconfig=${cluster.kubeconfigPath}`,
    `--secure-port=${securePort}`,
    '--bind-address=127.0.0.1',
    `--cert-dir=${certificate.dir}`,
    `--tls-cert-file=${certificate.cert}`,
    `--tls-private-key-file=${certificate.key}`,
    `--metrics-service-address=localhost:${grpcPort}`,
    `--port=${adapterMetrics}`,
    '--v=2',
  ]);
  const stop = async () => {
    for (const child of children) await stopChild(child);
  };
  const logs = () => ({
    operator: existsSync(logFile('keda-operator')) ? readFileSync(logFile('keda-operator'), 'utf8') : '',
    adapter: existsSync(logFile('keda-adapter')) ? readFileSync(logFile('keda-adapter'), 'utf8') : '',
  });
  try {
    // The aggregator reaches the metrics server through an ExternalName Service (no kube-proxy here).
    const service = await api('POST', `/api/v1/namespaces/${KEDA_NAMESPACE}/services`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: KEDA_METRICS_SERVICE, namespace: KEDA_NAMESPACE },
      spec: { type: 'ExternalName', externalName: 'localhost', ports: [{ name: 'https', port: securePort }] },
    });
    if (service.status >= 300) throw new Error(`Service ${KEDA_METRICS_SERVICE}: ${service.status} ${JSON.stringify(service.body).slice(0, 300)}`);
    const apiService = await api('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: EXTERNAL_METRICS_API },
      spec: {
        service: { namespace: KEDA_NAMESPACE, name: KEDA_METRICS_SERVICE, port: securePort },
        group: 'external.metrics.k8s.io',
        version: 'v1beta1',
        caBundle: Buffer.from(readFileSync(certificate.ca)).toString('base64'),
        groupPriorityMinimum: 100,
        versionPriority: 100,
      },
    });
    if (apiService.status >= 300) throw new Error(`APIService ${EXTERNAL_METRICS_API}: ${apiService.status} ${JSON.stringify(apiService.body).slice(0, 300)}`);
    // Hang guard for a loaded machine: the API server serves the group once the adapter answers.
    const until = Date.now() + 180_000;
    for (;;) {
      for (const child of children) {
        if (child.exitCode !== null) throw new Error(`${child.spawnfile} exited (${child.exitCode}):\n${Object.values(logs()).join('\n').split('\n').slice(-30).join('\n')}`);
      }
      const res = await api('GET', '/apis/external.metrics.k8s.io/v1beta1').catch(() => ({ status: 0, body: null }));
      if (res.status === 200) break;
      if (Date.now() > until) {
        const status = await api('GET', `/apis/apiregistration.k8s.io/v1/apiservices/${EXTERNAL_METRICS_API}`);
        throw new Error(`the external metrics API is not served after 180 s: ${JSON.stringify(status.body?.status ?? status.body)}\n${logs().adapter.split('\n').slice(-30).join('\n')}`);
      }
      await sleep(500);
    }
    log('KEDA: operator and metrics server ready, external.metrics.k8s.io served');
  } catch (error) {
    await stop();
    throw error;
  }
  return { logs, stop };
}

/** A stand-in Prometheus: the query API with values the test sets. */
export interface StandInPrometheus {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Sets the value every instant query of exactly `query` returns; `undefined` returns an empty vector. */
  set(query: string, value: number | undefined): void;
  /** The queries received, in order (de-duplicated). */
  queries(): string[];
  stop(): Promise<void>;
}

/**
 * Starts a stand-in Prometheus on 127.0.0.1: `GET|POST /api/v1/query` answers an instant vector
 * with the value set for the exact query (Prometheus's JSON: `{status, data: {resultType: vector,
 * result: [{metric, value: [time, "<value>"]}]}}`), `/-/ready` and `/api/v1/status/buildinfo`
 * answer as Prometheus does.
 */
export async function startPrometheus(): Promise<StandInPrometheus> {
  const values = new Map<string, number>();
  const seen = new Set<string>();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/-/ready') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('Prometheus Server is Ready.\n');
      return;
    }
    if (url.pathname === '/api/v1/status/buildinfo') return answer(200, { status: 'success', data: { version: '3.0.0-stand-in' } });
    if (url.pathname !== '/api/v1/query') return answer(404, { status: 'error', errorType: 'not_found', error: 'not found' });
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const query = url.searchParams.get('query') ?? new URLSearchParams(body).get('query') ?? '';
      seen.add(query);
      const value = values.get(query);
      const now = Date.now() / 1000;
      answer(200, { status: 'success', data: { resultType: 'vector', result: value === undefined ? [] : [{ metric: {}, value: [now, String(value)] }] } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    set: (query, value) => (value === undefined ? values.delete(query) : values.set(query, value)),
    queries: () => [...seen],
    stop: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
