/**
 * A real Kubernetes control plane for tests, on 127.0.0.1 with free ports: etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler, and kwok for simulated nodes and pods (no container
 * runtime). The commands are built from Go modules once and cached (../build.mjs).
 *
 * What is real: the API server (admission, defaulting, core validation, CRD OpenAPI schemas and CEL
 * rules, RBAC with token users), the controllers (Deployments, ReplicaSets, Jobs, EndpointSlices,
 * ServiceAccounts, the PV binder) and the scheduler (taints, tolerations, node selectors and
 * affinity, resources). What is simulated by kwok: the nodes and what their kubelet would report
 * (see kwok.ts), and exec / port-forward, which a test maps to local commands and ports.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { KubeConfig } from '@kubernetes/client-node';
import { ensureBinaries } from '../build.mjs';
import { kwokCrds, stages, KWOK_NODE_ANNOTATION } from './kwok.ts';
import { NODE_IP, insideTestNetns } from './pods/network.ts';
import { readUpstreamYaml, upstreamDir } from './upstream.ts';
import { DEFAULT_STORAGE_CLASSES, startProvisioner, storageClassObjects, type StorageClassSpec } from './storage.ts';
import { createCa, issueCertificate, type IssuedCertificate } from './pki.ts';


/** The users of the test cluster (static tokens; RBAC decides what each may do). */
export type TestUser = 'admin' | 'viewer' | 'nobody';

/** A set of upstream CRDs (see {@link StartOptions.crdSet}). */
export type CrdSet = '2026-02' | '2026-08';

export interface StartOptions {
  /** Install the upstream CRDs of {@link crdSet}. @default true */
  readonly upstreamCrds?: boolean;
  /**
   * Which set of upstream CRDs: the seed's (`2026-02`: `crds/` — Gateway API v1.4.1, GAIE v1.2.0,
   * Istio 1.28.5, KServe v0.18.1) or today's (`2026-08`: `current/crds/` — Gateway API v1.5.1,
   * GAIE v1.6.0, llm-d.ai v1alpha2, KServe v0.20.0, Envoy Gateway v1.8.1, Envoy AI Gateway v1.1,
   * KEDA, Prometheus Operator — plus Istio's from `crds/`, which `current/` does not carry). The two
   * conflict (same CRD names, other versions): a cluster installs one.
   * @default "2026-02"
   */
  readonly crdSet?: CrdSet;
  /**
   * More upstream CRD files to install, as pinned paths (e.g. `current/crds/envoy-gateway-v1.8.1.yaml`):
   * only files that conflict with nothing in `crds/` (their CRDs have other names).
   * @default none
   */
  readonly extraCrds?: readonly string[];
  /** Progress lines (start-up phases and timings). @default nothing */
  readonly log?: (line: string) => void;
  /**
   * The StorageClasses the cluster has, served by a simulated provisioner that makes a volume for
   * each claim (storage.ts); `[]` for a cluster without any (claims stay Pending).
   * @default DEFAULT_STORAGE_CLASSES: `hostpath` and the default class `standard`, both WaitForFirstConsumer
   */
  readonly storageClasses?: readonly StorageClassSpec[];
  /**
   * The API server's aggregation layer, for extension API servers (KEDA's metrics server behind
   * `v1beta1.external.metrics.k8s.io`): a front-proxy CA (`--requestheader-client-ca-file`) and the
   * proxy client certificate the API server presents to them (`--proxy-client-cert-file`,
   * `--proxy-client-key-file`); {@link TestCluster.issueCertificate} signs their serving certificates.
   * An APIService reaches its server through an ExternalName Service (`localhost`): no kube-proxy
   * runs here, and the aggregator resolves ExternalName Services to their name.
   * @default false
   */
  readonly aggregation?: boolean;
  /**
   * Extra flags of kube-controller-manager, e.g. `--horizontal-pod-autoscaler-sync-period=2s` for a
   * test that watches the HPA controller (its default is 15 s).
   */
  readonly controllerManagerArgs?: readonly string[];
  /**
   * The data-path tier (pods/runtime.ts): the test runs inside its own network namespace
   * (`tools/test-cluster/netns.mjs`), the API server serves on the node's address there
   * ({@link NODE_IP}, which real pods reach from their own namespaces; its certificate names it),
   * and kwok leaves the readiness of every pod but a Job's to the pod runtime.
   * @default false
   */
  readonly dataPath?: boolean;
}

/** A plain response of the API server. */
export interface ApiResponse {
  readonly status: number;
  readonly body: any;
}

export interface TestCluster {
  /** `https://127.0.0.1:<port>` */
  readonly server: string;
  /** A kubeconfig file of the `admin` user (system:masters). */
  readonly kubeconfigPath: string;
  /** The working folder: logs (`logs/*.log`), pod file systems (`pods/`), kubeconfigs. */
  readonly dir: string;
  /** Seconds from the start to a ready control plane. */
  readonly startSeconds: number;
  /** A kubeconfig file for a user: `viewer` has the `view` ClusterRole, `nobody` no permission at all. */
  kubeconfigFor(user: TestUser): string;
  /** A loaded client-node KubeConfig for a user. */
  kubeConfig(user?: TestUser): Promise<KubeConfig>;
  /** A raw request to the API server as a user; `body` is parsed JSON (or the text). */
  request(method: string, path: string, body?: unknown, options?: { user?: TestUser; contentType?: string; timeoutMs?: number }): Promise<ApiResponse>;
  /** The audit log: every mutating request the API server received (verb, user, resource). */
  mutations(): AuditEvent[];
  /**
   * With `aggregation`: a certificate for an extension server (server and client use), signed by the
   * cluster's extension CA, in `<dir>/pki-ext/<name>/` (`tls.crt`, `tls.key`, `ca.crt`).
   */
  issueCertificate(name: string, sans: { dns?: readonly string[]; ips?: readonly string[] }): IssuedCertificate;
  /** Stops every process and removes the working folder. */
  stop(): Promise<void>;
}

/** One line of the audit log, reduced to what tests assert. */
export interface AuditEvent {
  readonly verb: string;
  readonly user: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly uri: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Stops a child process: SIGTERM, SIGKILL after 5 s; resolves once it has exited (at once if it had). */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** A TCP port free on 127.0.0.1 right now (the OS picks it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const PDEATHSIG = existsSync('/usr/bin/setpriv') ? ['/usr/bin/setpriv', '--pdeathsig', 'SIGKILL', '--'] : [];

/**
 * Go's garbage collector target for the Go programs the tests run (the control plane here, the
 * Pulumi engine and provider in ./pulumi.ts): a collection when the heap has grown by 400% of what
 * the last one left, not Go's 100%. A test cluster lives minutes, and CPU is what the whole test run
 * is short of (2 cores). Measured with process accounting over one test file
 * (apps/app-serving/test/deploy/2026-08.test.ts): the Pulumi CLI's CPU 24 → 21 s. A GOGC of the
 * caller's own is kept.
 *
 * Not the API server ({@link API_SERVER_GC}): its heap is big, and 400% of it is more than the
 * machine has for five of them. With a set's CRDs it keeps about 0.9 GB alive (pprof's in-use heap:
 * the CRDs' schemas, their OpenAPI and CEL); at GOGC=400 one grew to 4.2 GB (its next collection at
 * 5.6 GB), and the five that run at once in CI (four deploy test files and the data-path tier) held
 * 15.5 GB of 24: memory available fell to 1.2 GB, the kernel killed an API server, and test clusters
 * did not start within their guards (CI of 755c28c, 2026-12-06; at Go's default the five held at
 * most 7.7 GB). Its CPU saved at 400 was 8 s per test file.
 */
export const TEST_GOGC = '400';

/**
 * The API server's collector: none by proportion (`GOGC=off`), one whenever the Go runtime's memory
 * reaches 1600 MiB (`GOMEMLIMIT`). What it costs is its start, when its heap grows from nothing to
 * the set's CRDs: at Go's default it collects at every doubling, each collection marking all that it
 * has built so far. After the start, its memory is about where Go's default keeps it (with
 * 2026-08's CRDs, 530 MB live after a collection, 870 MB in use, Go's next collection at 1.04 GB,
 * 1.2 GB resident at most), so the limit leaves room above it, and the five API servers that run
 * at once in CI hold at most about as much as at Go's default (7.7 GB, above). A 2026-08 control
 * plane to ready, the API server's CPU and peak resident memory (/proc; a scratch script calling
 * startCluster twice per setting, the idle machine, 2026-12-07): Go's default 15.3, 15.3 and 15.7 s,
 * 1.2 GB; GOGC=200 13.3 and 14.1 s, 1.8 GB; off with 1200 MiB 10.1 and 10.8 s, 1.3 GB; with 1400
 * MiB 10.9 and 11.4 s, 1.5 GB; with 1800 MiB 9.8 and 10.0 s, 1.8 GB. 1600 MiB: room above what it
 * keeps, at the CPU of the larger limits.
 */
export const API_SERVER_GC: Readonly<Record<'GOGC' | 'GOMEMLIMIT', string>> = Object.freeze({ GOGC: 'off', GOMEMLIMIT: '1600MiB' });

/**
 * `env` for the Go program `program`: the API server with {@link API_SERVER_GC}, every other with
 * {@link TEST_GOGC}; unless `env` sets GOGC or GOMEMLIMIT itself (a person measuring), kept as it is.
 */
export function withTestGoGc(env: NodeJS.ProcessEnv, program: string): NodeJS.ProcessEnv {
  if (env.GOGC || env.GOMEMLIMIT) return env;
  return program === 'kube-apiserver' ? { ...env, ...API_SERVER_GC } : { ...env, GOGC: TEST_GOGC };
}

/**
 * Starts a control plane and resolves when it is ready: the API server answers /readyz, the CRDs are
 * Established, the controller manager has created the `default` ServiceAccount, and kwok serves.
 */
export async function startCluster(options: StartOptions = {}): Promise<TestCluster> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const bin: string = ensureBinaries({ log });
  if (options.dataPath && !insideTestNetns()) throw new Error('startCluster({ dataPath: true }) runs inside the data-path tier\'s network namespace: start the test under `node tools/test-cluster/netns.mjs --`');
  const host = options.dataPath ? NODE_IP : '127.0.0.1';
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-cluster-'));
  const logs = join(dir, 'logs');
  mkdirSync(logs);
  const children: Array<{ name: string; child: ChildProcess }> = [];
  let stopped = false;
  let stopProvisioner: (() => Promise<void>) | undefined;

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await stopProvisioner?.();
    // Reverse order: kwok and the controllers before the API server, etcd last.
    for (const { child } of [...children].reverse()) await stopChild(child);
    removeAllButLogs(dir);
  };

  try {
    const [etcdPort, etcdPeerPort, apiPort, kwokPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const launch = (name: string, args: string[], env: NodeJS.ProcessEnv = process.env) => {
      const out = createWriteStream(join(logs, `${name}.log`));
      const argv = [...PDEATHSIG, join(bin, name), ...args];
      const child = spawn(argv[0]!, argv.slice(1), { cwd: dir, env: withTestGoGc(env, name), stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout!.pipe(out);
      child.stderr!.pipe(out);
      child.on('exit', (code, signal) => {
        if (!stopped) out.write(`\n[test-cluster] ${name} exited (${code ?? signal})\n`);
      });
      children.push({ name, child });
      return child;
    };
    const exitedEarly = (name: string) => {
      const entry = children.find((c) => c.name === name);
      return entry && (entry.child.exitCode !== null || entry.child.signalCode !== null);
    };
    const logTail = (name: string) => {
      try {
        return readFileSync(join(logs, `${name}.log`), 'utf8').split('\n').slice(-15).join('\n');
      } catch {
        return '(no log)';
      }
    };
    /**
     * Polls `probe` until it holds. A hang guard, not a timing: `seconds` without progress (a change
     * of what `progress` counts, when given) on a loaded machine is a hang. Started alone on an idle
     * machine the control plane is ready in about 9 s, and in 79-97 s at load 20 (20 busy loops
     * beside it, 2026-12-06) — each wait here took at most 28 s of that.
     */
    const waitFor = async (name: string, what: string, probe: () => Promise<boolean>, seconds = 180, progress?: () => number) => {
      let until = Date.now() + seconds * 1000;
      let done = progress?.();
      for (;;) {
        if (exitedEarly(name)) throw new Error(`${name} exited before ${what}:\n${logTail(name)}`);
        try {
          if (await probe()) return;
        } catch {}
        const now = progress?.();
        if (now !== done) {
          done = now;
          until = Date.now() + seconds * 1000;
        }
        if (Date.now() > until) throw new Error(`${name}: not ${what} after ${seconds} s${progress ? ' without progress' : ''}:\n${logTail(name)}`);
        await sleep(100);
      }
    };

    // etcd
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    launch('etcd', [
      '--name=test', `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`, `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`, `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-cluster=test=http://127.0.0.1:${etcdPeerPort}`,
      '--unsafe-no-fsync', '--log-level=warn',
    ]);
    await waitFor('etcd', 'healthy', async () => (await plainGet(`${etcdUrl}/health`)).includes('"health":"true"'));
    log(`etcd ready after ${secondsSince(started)} s`);

    // kube-apiserver
    const tokens: Record<TestUser, string> = { admin: token(), viewer: token(), nobody: token() };
    writeFileSync(join(dir, 'tokens.csv'), [
      `${tokens.admin},admin,uid-admin,"system:masters"`,
      `${tokens.viewer},viewer,uid-viewer`,
      `${tokens.nobody},nobody,uid-nobody`,
    ].join('\n') + '\n', { mode: 0o600 });
    const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(join(dir, 'sa.key'), keys.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    writeFileSync(join(dir, 'sa.pub'), keys.publicKey.export({ type: 'spki', format: 'pem' }));
    writeFileSync(join(dir, 'audit-policy.yaml'), stringify({
      apiVersion: 'audit.k8s.io/v1',
      kind: 'Policy',
      omitStages: ['RequestReceived'],
      rules: [{ level: 'Metadata', verbs: ['create', 'update', 'patch', 'delete', 'deletecollection'] }, { level: 'None' }],
    }));
    const certDir = join(dir, 'pki');
    // The aggregation layer: the API server proxies to extension servers with a client certificate
    // of the front-proxy CA, and publishes that CA (extension-apiserver-authentication) for them.
    const aggregationFlags: string[] = [];
    const extensionCa = options.aggregation ? createCa(join(dir, 'pki-ext'), 'extension-ca') : undefined;
    if (options.aggregation) {
      const frontProxyCa = createCa(join(dir, 'pki-front-proxy'), 'front-proxy-ca');
      const proxyClient = issueCertificate(frontProxyCa, join(dir, 'pki-front-proxy'), 'front-proxy-client');
      aggregationFlags.push(
        `--requestheader-client-ca-file=${frontProxyCa.cert}`,
        '--requestheader-allowed-names=front-proxy-client',
        '--requestheader-username-headers=X-Remote-User',
        '--requestheader-group-headers=X-Remote-Group',
        '--requestheader-extra-headers-prefix=X-Remote-Extra-',
        `--proxy-client-cert-file=${proxyClient.cert}`,
        `--proxy-client-key-file=${proxyClient.key}`,
      );
    }
    launch('kube-apiserver', [
      ...aggregationFlags,
      `--etcd-servers=${etcdUrl}`,
      `--bind-address=${host}`, `--advertise-address=${host}`, `--secure-port=${apiPort}`,
      `--cert-dir=${certDir}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      '--authorization-mode=RBAC',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${join(dir, 'sa.pub')}`, `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      '--allow-privileged=true',
      // Nodes start without the not-ready taint: kwok reports them Ready at once, and no node
      // lifecycle controller runs here to lift the taint (see the controller manager below).
      '--disable-admission-plugins=TaintNodesByCondition',
      // The built-in `kubernetes` Service's endpoint would be 127.0.0.1, which Endpoints reject.
      '--endpoint-reconciler-type=none',
      '--kubelet-preferred-address-types=InternalIP',
      `--audit-policy-file=${join(dir, 'audit-policy.yaml')}`, `--audit-log-path=${join(logs, 'audit.log')}`,
      '--audit-log-format=json', '--audit-log-mode=blocking',
      '--v=1',
    ]);
    const server = `https://${host}:${apiPort}`;
    const caFile = join(certDir, 'apiserver.crt');
    let ca = '';
    const api = (method: string, path: string, body?: unknown, opts: { user?: TestUser; contentType?: string; timeoutMs?: number } = {}) =>
      apiRequest(server, ca, tokens[opts.user ?? 'admin'], method, path, body, opts.contentType, opts.timeoutMs);
    await waitFor('kube-apiserver', 'ready', async () => {
      if (!ca) {
        if (!existsSync(caFile)) return false;
        ca = readFileSync(caFile, 'utf8');
      }
      return (await api('GET', '/readyz')).status === 200;
    });
    log(`kube-apiserver ready after ${secondsSince(started)} s`);

    // Kubeconfigs, one per user.
    const kubeconfigs = {} as Record<TestUser, string>;
    for (const user of Object.keys(tokens) as TestUser[]) {
      kubeconfigs[user] = join(dir, `kubeconfig-${user}.yaml`);
      writeFileSync(kubeconfigs[user], stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'test-cluster', cluster: { server, 'certificate-authority-data': Buffer.from(ca).toString('base64') } }],
        users: [{ name: user, user: { token: tokens[user] } }],
        contexts: [{ name: `test-cluster-${user}`, context: { cluster: 'test-cluster', user } }],
        'current-context': `test-cluster-${user}`,
      }), { mode: 0o600 });
    }

    // CRDs: kwok's Exec and PortForward, and the upstream ones.
    const crds = [...kwokCrds(), ...(options.upstreamCrds === false ? (options.extraCrds ?? []).flatMap((path) => crdsOf(path)) : upstreamCrds(options.crdSet ?? '2026-02', options.extraCrds))];
    // A few at a time: the API server compiles each CRD's schema and CEL rules (KServe's is 21,000
    // lines), and on a loaded 2-core machine all 35 at once can take longer than a request's timeout.
    const queue = [...crds];
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let crd = queue.shift(); crd; crd = queue.shift()) {
        const name = (crd as { metadata: { name: string } }).metadata.name;
        await createCrd(api, name, crd, log);
      }
    }));
    log(`${crds.length} CRDs created after ${secondsSince(started)} s`);
    const pending = new Set(servedResources(crds));
    await waitFor('kube-apiserver', 'serving every CRD', async () => {
      for (const resource of [...pending]) if (await inDiscovery(api, resource)) pending.delete(resource);
      return pending.size === 0;
    }, 180, () => pending.size);
    log(`${crds.length} CRDs served after ${secondsSince(started)} s`);
    // The viewer may read everything (the built-in `view` ClusterRole), nothing more.
    await api('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'test-cluster-viewer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'viewer' }],
    });

    // kube-controller-manager and kube-scheduler
    launch('kube-controller-manager', [
      `--kubeconfig=${kubeconfigs.admin}`, `--authentication-kubeconfig=${kubeconfigs.admin}`, `--authorization-kubeconfig=${kubeconfigs.admin}`,
      '--bind-address=127.0.0.1', '--secure-port=0', '--leader-elect=false',
      `--service-account-private-key-file=${join(dir, 'sa.key')}`, `--root-ca-file=${caFile}`,
      '--use-service-account-credentials=false',
      // kwok keeps no node heartbeat here: without the lifecycle controller no node turns NotReady.
      '--controllers=*,-nodelifecycle,-nodeipam,-ttl,-bootstrapsigner,-tokencleaner',
      '--concurrent-deployment-syncs=10', '--concurrent-job-syncs=10',
      ...(options.controllerManagerArgs ?? []),
      '--v=1',
    ]);
    launch('kube-scheduler', [
      `--kubeconfig=${kubeconfigs.admin}`, `--authentication-kubeconfig=${kubeconfigs.admin}`, `--authorization-kubeconfig=${kubeconfigs.admin}`,
      '--bind-address=127.0.0.1', '--secure-port=0', '--leader-elect=false', '--v=1',
    ]);

    // kwok: a kubelet for every node annotated kwok.x-k8s.io/node=fake. Exec runs local commands in
    // the pod's folder under pods/; `test` and friends see absolute paths inside that folder.
    writeFileSync(join(dir, 'kwok.yaml'), stages(options.dataPath ? 'runtime' : 'kwok').map((s) => stringify(s)).join('---\n'));
    const shims = join(dir, 'shims');
    mkdirSync(shims);
    writeFileSync(join(shims, 'test'), PODROOT_TEST_SHIM);
    chmodSync(join(shims, 'test'), 0o755);
    mkdirSync(join(dir, 'pods'));
    launch('kwok', [
      `--kubeconfig=${kubeconfigs.admin}`, `--config=${join(dir, 'kwok.yaml')}`,
      `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
      '--node-ip=127.0.0.1', `--node-port=${kwokPort}`, `--server-address=127.0.0.1:${kwokPort}`,
      `--tls-cert-file=${caFile}`, `--tls-private-key-file=${join(certDir, 'apiserver.key')}`,
      '--enable-crds=Exec,PortForward',
    ], { ...process.env, PATH: `${shims}:${process.env.PATH ?? '/usr/bin:/bin'}` });
    await waitFor('kwok', 'serving', async () => (await plainGet(`https://127.0.0.1:${kwokPort}/healthz`, true)).includes('ok'));
    await waitFor('kube-controller-manager', 'creating ServiceAccounts', async () => (await api('GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200);
    for (const storageClass of storageClassObjects(options.storageClasses ?? DEFAULT_STORAGE_CLASSES)) {
      const res = await api('POST', '/apis/storage.k8s.io/v1/storageclasses', storageClass);
      if (res.status >= 300) throw new Error(`StorageClass not created: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    }
    stopProvisioner = startProvisioner((method, path, body) => api(method, path, body), (path, onChange) => apiWatch(server, ca, tokens.admin, path, onChange));
    const startSeconds = secondsSince(started);
    log(`control plane ready after ${startSeconds} s`);

    const kcCache: Partial<Record<TestUser, KubeConfig>> = {};
    return {
      server,
      kubeconfigPath: kubeconfigs.admin,
      dir,
      startSeconds,
      kubeconfigFor: (user) => kubeconfigs[user],
      kubeConfig: async (user = 'admin') => {
        if (!kcCache[user]) {
          const { KubeConfig } = await import('@kubernetes/client-node');
          const kc = new KubeConfig();
          kc.loadFromFile(kubeconfigs[user]);
          kcCache[user] = kc;
        }
        return kcCache[user]!;
      },
      request: api,
      mutations: () => readAudit(join(logs, 'audit.log')),
      issueCertificate: (name, sans) => {
        if (!extensionCa) throw new Error('issueCertificate needs startCluster({ aggregation: true })');
        return issueCertificate(extensionCa, join(dir, 'pki-ext'), name, sans);
      },
      stop,
    };
  } catch (error) {
    const folder = dir;
    await stop().catch(() => {});
    throw new Error(`test cluster did not start (${folder}): ${(error as Error).message}`);
  }
}

/**
 * `test` as the pod sees it: absolute paths resolve under the exec's working folder (the pod's file
 * system, `pods/<namespace>/<pod>/` of the cluster's folder). Only kwok's exec uses it.
 */
const PODROOT_TEST_SHIM = `#!/bin/sh
# test(1) inside a simulated pod: absolute paths are under the pod's folder (the working directory).
root=$(pwd)
n=0
for a in "$@"; do
  case "$a" in /*) a="$root$a" ;; esac
  n=$((n + 1))
  set -- "$@" "$a"
done
shift $n
exec /usr/bin/test "$@"
`;

/**
 * Installs a set's CRDs into a running cluster, as an administrator upgrading a cluster does before
 * moving its stacks across: each CRD replaces the one of the same name (or is created), then the
 * call waits until every served version answers. What the old set had and the new one lacks stays.
 */
export async function installCrds(cluster: TestCluster, set: CrdSet): Promise<void> {
  await installCrdFiles(cluster, crdFiles(set));
}

/**
 * Installs (or updates) the CRDs of pinned upstream files, relative to the upstream folder, into a
 * running cluster, and resolves once every served version is in discovery: what a cluster's admin
 * does for a controller the stack needs that the cluster's set does not have (Envoy Gateway's on a
 * 2026-02 cluster, for a KServe model's access).
 */
export async function installCrdFiles(cluster: TestCluster, files: readonly string[]): Promise<void> {
  const crds = crdsOfFiles(files) as Array<{ metadata: { name: string; resourceVersion?: string } }>;
  // Each retried as a loaded API server needs (a 504 while it compiles a schema of megabytes).
  const api = (method: string, path: string, body?: unknown, opts: { timeoutMs?: number } = {}) => cluster.request(method, path, body, opts);
  for (const crd of crds) await applyCrd(api, crd.metadata.name, crd);
  const until = Date.now() + 180_000;
  for (const resource of servedResources(crds)) {
    while (!(await inDiscovery(api, resource))) {
      if (Date.now() > until) throw new Error(`CRD ${resource.crd} ${resource.version} not served`);
      await sleep(250);
    }
  }
}

/** A resource a CRD serves: its group's version and its plural name. */
interface ServedResource {
  readonly crd: string;
  readonly groupVersion: string;
  readonly version: string;
  readonly plural: string;
}

/** The resources discovery lists once `crds` are served: each CRD's plural in each served version. */
function servedResources(crds: readonly object[]): ServedResource[] {
  return crds.flatMap((crd) => {
    const { metadata, spec } = crd as { metadata: { name: string }; spec: { group: string; names: { plural: string }; versions: Array<{ name: string; served: boolean }> } };
    return spec.versions.filter((v) => v.served).map((v) => ({ crd: metadata.name, groupVersion: `${spec.group}/${v.name}`, version: v.name, plural: spec.names.plural }));
  });
}

/**
 * Whether discovery lists `resource` (a small answer: polling the list of CRDs itself would fetch
 * megabytes of schemas each time and slow the server down).
 */
async function inDiscovery(api: (method: string, path: string) => Promise<ApiResponse>, resource: ServedResource): Promise<boolean> {
  const res = await api('GET', `/apis/${resource.groupVersion}`);
  return res.status === 200 && (res.body as { resources: Array<{ name: string }> }).resources.some((r) => r.name === resource.plural);
}

/**
 * The CRDs of `current/crds/` installed beside `crds/` on a 2026-02 cluster: KEDA's and the
 * Prometheus Operator's name no CRD of `crds/` (../shared/upstream/README.md), and autoscaled models
 * create ScaledObjects, TriggerAuthentications and PodMonitors.
 */
export const CURRENT_CRDS_BESIDE = [
  'current/crds/keda-v2.20.2-keda.sh_scaledobjects.yaml',
  'current/crds/keda-v2.20.2-keda.sh_triggerauthentications.yaml',
  'current/crds/keda-v2.20.2-keda.sh_clustertriggerauthentications.yaml',
  'current/crds/prometheus-operator-v0.93.0-monitoring.coreos.com_podmonitors.yaml',
  'current/crds/prometheus-operator-v0.93.0-monitoring.coreos.com_servicemonitors.yaml',
] as const;

/**
 * The upstream CRD files of a set, relative to the upstream folder: 2026-02 is `crds/` and
 * {@link CURRENT_CRDS_BESIDE}; 2026-08 is `current/crds/` and Istio's from `crds/`.
 */
export function crdFiles(set: CrdSet): string[] {
  const list = (folder: string) =>
    readdirSync(join(upstreamDir(), folder))
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .map((f) => `${folder}/${f}`);
  if (set === '2026-02') return [...list('crds'), ...CURRENT_CRDS_BESIDE];
  return [...list('current/crds'), ...list('crds').filter((f) => f.startsWith('crds/istio-'))];
}

/** The CRDs of a set and of the extra files (each file once). */
function upstreamCrds(set: CrdSet, extra: readonly string[] = []): object[] {
  return crdsOfFiles([...crdFiles(set), ...extra]);
}

/** The CRDs of pinned upstream files (each file once). */
function crdsOfFiles(files: readonly string[]): object[] {
  return [...new Set(files)].flatMap((f) => crdsOf(f));
}

/** The CustomResourceDefinitions of one pinned upstream file. */
function crdsOf(path: string): object[] {
  return readUpstreamYaml(path).filter((doc): doc is { kind: string } => typeof doc === 'object' && doc !== null && (doc as { kind?: string }).kind === 'CustomResourceDefinition');
}

/**
 * Creates one CRD, retrying what a loaded API server answers while it compiles big schemas and CEL
 * rules: 429, a 5xx (a `504 Timeout` on KServe's 2 MB CRD was seen at load ~10) or no answer in time.
 * A 409 after such an answer means an earlier attempt got through. Bounded: 6 attempts, 1-16 s
 * apart, each with its own 3-minute request timeout.
 */
export async function createCrd(
  api: (method: string, path: string, body?: unknown, opts?: { timeoutMs?: number }) => Promise<ApiResponse>,
  name: string,
  crd: object,
  log: (line: string) => void = () => {},
  options: LoadRetryOptions = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 180_000;
  await underLoad(
    `CRD ${name}`,
    'created',
    // A plain create: server-side apply of a CRD this size spends seconds on its managed fields.
    () => api('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd, { timeoutMs }),
    { settled: (res, attempt) => res.status < 300 || (res.status === 409 && attempt > 1), retry: (res) => res.status === 429 || res.status >= 500 },
    log,
    options,
  );
}

/**
 * Installs one CRD into a running cluster: reads it before each attempt and replaces it (with the
 * resourceVersion read) or, absent, creates it; retries as {@link createCrd} does and on a 409 (the
 * object changed meanwhile, or an earlier attempt that got no answer went through: the next attempt
 * reads it again and replaces it).
 */
export async function applyCrd(
  api: (method: string, path: string, body?: unknown, opts?: { timeoutMs?: number }) => Promise<ApiResponse>,
  name: string,
  crd: { metadata: object },
  log: (line: string) => void = () => {},
  options: LoadRetryOptions = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 180_000;
  const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
  await underLoad(
    `CRD ${name}`,
    'installed',
    async () => {
      const current = await api('GET', path, undefined, { timeoutMs });
      if (current.status === 404) return api('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd, { timeoutMs });
      if (current.status !== 200) return current;
      const resourceVersion = (current.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      return api('PUT', path, { ...crd, metadata: { ...crd.metadata, resourceVersion } }, { timeoutMs });
    },
    { settled: (res) => res.status < 300, retry: (res) => res.status === 409 || res.status === 429 || res.status >= 500 },
    log,
    options,
  );
}

/** The bounds of {@link createCrd} and {@link applyCrd}: attempts, the first pause (doubling to 16×), each request's timeout. */
export interface LoadRetryOptions {
  readonly attempts?: number;
  readonly firstDelayMs?: number;
  readonly timeoutMs?: number;
}

/** One request tried until it settles, again after what a loaded API server answers; others throw. */
async function underLoad(
  what: string,
  verb: string,
  send: () => Promise<ApiResponse>,
  answers: { settled: (res: ApiResponse, attempt: number) => boolean; retry: (res: ApiResponse) => boolean },
  log: (line: string) => void,
  { attempts = 6, firstDelayMs = 1000 }: LoadRetryOptions,
): Promise<void> {
  let last = '';
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    let res: ApiResponse | undefined;
    try {
      res = await send();
    } catch (error) {
      last = (error as Error).message;
    }
    if (res && answers.settled(res, attempt)) return;
    if (res && !answers.retry(res)) throw new Error(`${what} not ${verb}: ${res.status} ${JSON.stringify(res.body).slice(0, 500)}`);
    if (res) last = `${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
    if (attempt < attempts) {
      log(`${what}: ${last}; trying again (${attempt}/${attempts})`);
      await sleep(firstDelayMs * 2 ** Math.min(attempt - 1, 4));
    }
  }
  throw new Error(`${what} not ${verb} after ${attempts} attempts: ${last}`);
}

function readAudit(file: string): AuditEvent[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { verb: string; user: { username: string }; objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string }; requestURI: string })
    .map((e) => ({
      verb: e.verb,
      user: e.user.username,
      resource: [e.objectRef?.resource, e.objectRef?.subresource].filter(Boolean).join('/'),
      ...(e.objectRef?.namespace ? { namespace: e.objectRef.namespace } : {}),
      ...(e.objectRef?.name ? { name: e.objectRef.name } : {}),
      uri: e.requestURI,
    }));
}

function token(): string {
  return randomBytes(24).toString('hex');
}

function secondsSince(start: number): number {
  return Math.round((Date.now() - start) / 100) / 10;
}

function plainGet(url: string, insecure = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = (url.startsWith('https') ? httpsRequest : httpRequest)(url, { rejectUnauthorized: !insecure, timeout: 2000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve(text));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

function apiRequest(server: string, ca: string, bearer: string, method: string, path: string, body?: unknown, contentType = 'application/json', timeoutMs = 60_000): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const req = httpsRequest(`${server}${path}`, {
      method,
      ca,
      timeout: timeoutMs,
      headers: {
        authorization: `Bearer ${bearer}`,
        accept: 'application/json',
        ...(payload === undefined ? {} : { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) }),
      },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {}
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timeout`)));
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/**
 * Removes a stopped control plane's folder. Inside a test run's own temporary folder
 * (APP_SERVING_TEST_RUN_DIR, ../tmpdir.mjs) it keeps the logs — `logs/` (each program's log, the
 * audit log) and the data-path tier's pods' `*.log` — and nothing else: the run's teardown removes
 * them with the folder when every test passed, and keeps them for a person to read when one failed.
 */
export function removeAllButLogs(dir: string, runDir = process.env.APP_SERVING_TEST_RUN_DIR): void {
  if (!runDir || !dir.startsWith(`${runDir}/`)) {
    rmSync(dir, { recursive: true, force: true });
    return;
  }
  const prune = (folder: string): boolean => {
    let kept = false;
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (prune(path)) kept = true;
      } else if (entry.isFile() && entry.name.endsWith('.log')) kept = true;
      else rmSync(path, { force: true });
    }
    if (!kept) rmSync(folder, { recursive: true, force: true });
    return kept;
  };
  prune(dir);
}

/** A watch (see storage.ts's WatchStream): `onChange` for each chunk of events the API server streams. */
function apiWatch(server: string, ca: string, bearer: string, path: string, onChange: () => void): { closed: Promise<void>; close(): void } {
  let req: ReturnType<typeof httpsRequest> | undefined;
  const closed = new Promise<void>((resolve) => {
    req = httpsRequest(`${server}${path}`, { method: 'GET', ca, headers: { authorization: `Bearer ${bearer}`, accept: 'application/json' } }, (res) => {
      if (res.statusCode !== 200) res.resume();
      else res.on('data', onChange);
      res.on('error', () => resolve());
    });
    // After the response's end too: the stream ended, or was destroyed by close().
    req.on('close', () => resolve());
    req.on('error', () => resolve());
    req.end();
  });
  return { closed, close: () => req?.destroy() };
}

/** Whether the test cluster's commands can be built here (Go on the PATH) or are already cached. */
export function goAvailable(): boolean {
  return spawnSync('go', ['version']).status === 0;
}
