/**
 * The pod runtime itself (tools/test-cluster/src/pods): real processes for the pods the test names,
 * each in a network namespace of its own at the address kwok gave it, Ready when its readiness probe
 * passes (so its Service's endpoints follow), reachable by name through the tier's DNS, restarted
 * and reported as the kubelet reports a crashing container, and gone with its pod.
 */
import { request } from 'node:http';
import { createSocket } from 'node:dgram';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCluster } from '@app-serving/k8s-verify';
import {
  NODE_IP,
  applyObjects,
  createNodes,
  list,
  startCluster,
  startClusterDns,
  startPodRuntime,
  waitFor,
  type ClusterDns,
  type PodRuntime,
  type TestCluster,
  dnsAnswer as answer,
  parseDnsQuery as parseQuery,
} from '@app-serving/test-cluster';


const ECHO = join(import.meta.dirname, 'fixtures', 'echo-server.mjs');
const NS = 'runtime-test';

function get(url: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text || 'null') }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** An A query to the tier's DNS server; the addresses answered (null: NXDOMAIN). */
function resolveName(name: string): Promise<string[] | null> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    const labels = name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
    const query = Buffer.concat([Buffer.from([0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]), ...labels, Buffer.from([0, 0, 1, 0, 1])]);
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error(`no DNS answer for ${name}`));
    }, 10_000);
    socket.on('message', (message) => {
      clearTimeout(timer);
      socket.close();
      const rcode = message.readUInt16BE(2) & 0xf;
      if (rcode === 3) return resolve(null);
      const count = message.readUInt16BE(6);
      const out: string[] = [];
      for (let i = 0; i < count; i += 1) out.push([...message.subarray(message.length - 4 - 16 * (count - 1 - i), message.length - 16 * (count - 1 - i))].join('.'));
      resolve(out.sort());
    });
    socket.send(query, 53, NODE_IP);
  });
}

const echoDeployment = (name: string, replicas: number, env: Record<string, string>, extra: Record<string, unknown> = {}, podSpec: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: NS },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        containers: [
          {
            name: 'echo',
            image: 'test.local/echo:1',
            ports: [{ name: 'http', containerPort: 8080 }],
            env: [
              { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
              ...Object.entries(env).map(([k, v]) => ({ name: k, value: v })),
            ],
            readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 1 },
            terminationMessagePolicy: 'FallbackToLogsOnError',
            ...extra,
          },
        ],
        ...podSpec,
      },
    },
  },
});

describe.skipIf(process.env.APP_SERVING_NETNS !== '1')('the pod runtime (real processes for pods)', () => {
  let cluster: TestCluster;
  let runtime: PodRuntime;
  let dns: ClusterDns;

  beforeAll(async () => {
    cluster = await startCluster({ dataPath: true, upstreamCrds: false });
    dns = await startClusterDns(cluster);
    runtime = await startPodRuntime(cluster, {
      run: (_pod, container) => (container.image === 'test.local/echo:1' ? { argv: [process.execPath, ECHO] } : null),
    });
    await createNodes(cluster, [{ name: 'node-1' }]);
    await applyObjects(cluster, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }]);
  });

  afterAll(async () => {
    await runtime?.stop();
    await dns?.stop();
    await cluster?.stop();
  });

  it('runs each pod at its own address, Ready only once its probe passes, reachable by its Service name', async () => {
    await applyObjects(cluster, [
      echoDeployment('echo', 2, { DELAY_MS: '1500' }),
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo', namespace: NS }, spec: { selector: { app: 'echo' }, ports: [{ port: 80, targetPort: 'http' }] } },
    ]);
    const deployment = await waitFor(cluster, `/apis/apps/v1/namespaces/${NS}/deployments/echo`, (d) => d.status?.readyReplicas === 2, 120_000);
    expect(deployment.status.readyReplicas).toBe(2);
    const pods = (await list(cluster, `/api/v1/namespaces/${NS}/pods?labelSelector=app%3Decho`)).filter((p) => !p.metadata.deletionTimestamp);
    const addresses = pods.map((p) => p.status.podIP).sort();
    expect(new Set(addresses).size).toBe(2);
    for (const pod of pods) {
      const answer = await get(`http://${pod.status.podIP}:8080/x`);
      expect(answer.body).toEqual({ pod: pod.metadata.name, ip: pod.status.podIP, path: '/x', host: `${pod.status.podIP}:8080` });
    }
    // DNS answers the Service's ready endpoints; other names are NXDOMAIN at once.
    await waitFor(cluster, `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Decho`, (l) =>
      l.items.flatMap((s: any) => s.endpoints ?? []).filter((e: any) => e.conditions?.ready).length === 2,
    );
    expect(await resolveName(`echo.${NS}.svc.cluster.local`)).toEqual(addresses);
    expect(await resolveName('example.com')).toBeNull();
    expect(dns.queries).toContain(`echo.${NS}.svc.cluster.local`);
    expect(runtime.containers().filter((c) => c.pod.startsWith('echo-')).map((c) => c.ready)).toEqual([true, true]);

    // kubectl port-forward (verify's way in): the API server, then kwok, to the pod's own address.
    const client = await createCluster(await cluster.kubeConfig());
    const tunnel = await client.openTunnel(NS, pods[0].metadata.name, 8080);
    try {
      expect((await get(`${tunnel.url}/through-the-api-server`)).body).toMatchObject({ pod: pods[0].metadata.name, path: '/through-the-api-server' });
    } finally {
      tunnel.close();
    }
  });

  it('reports a crashing container as the kubelet does: CrashLoopBackOff, the last exit, the end of its log', async () => {
    await applyObjects(cluster, [echoDeployment('crash', 1, { EXIT_AFTER_MS: '200' })]);
    const pod = await waitFor(cluster, `/api/v1/namespaces/${NS}/pods?labelSelector=app%3Dcrash`, (l) => l.items[0]?.status?.containerStatuses?.[0]?.lastState?.terminated, 60_000).then((l) => l.items[0]);
    const status = pod.status.containerStatuses[0];
    expect(status.state.waiting.reason).toBe('CrashLoopBackOff');
    expect(status.lastState.terminated).toMatchObject({ exitCode: 3, reason: 'Error', message: expect.stringContaining('argument --bogus not understood') });
    expect(status.ready).toBe(false);
    expect(pod.status.conditions.find((c: any) => c.type === 'Ready').status).toBe('False');
  });

  it('waits for the Secret and ConfigMap a pod needs, as the kubelet does, and starts it once they are there', async () => {
    // The engine creates a chart's ConfigMap and its Deployment side by side: the pod may come first.
    const container = (pod: any) => pod?.status?.containerStatuses?.[0];
    const waiting = (reason: string) => (l: any) => container(l.items[0])?.state?.waiting?.reason === reason;
    const pods = `/api/v1/namespaces/${NS}/pods?labelSelector=app%3Dlate`;
    await applyObjects(cluster, [
      echoDeployment('late', 1, {}, {
        env: [
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'ECHO_FILE', value: '/etc/late/message' },
          { name: 'GREETING', valueFrom: { secretKeyRef: { name: 'late-secret', key: 'greeting' } } },
          { name: 'NOT_THERE', valueFrom: { secretKeyRef: { name: 'no-such-secret', key: 'x', optional: true } } },
        ],
        volumeMounts: [{ name: 'late', mountPath: '/etc/late' }],
      }, { volumes: [{ name: 'late', configMap: { name: 'late-config' } }] }),
    ]);
    const deployment = `/apis/apps/v1/namespaces/${NS}/deployments/late`;
    let pod = (await waitFor(cluster, pods, waiting('CreateContainerConfigError'), 60_000)).items[0];
    expect(container(pod).state.waiting.message).toBe('secret "late-secret" not found');
    expect(runtime.containers().filter((c) => c.pod === pod.metadata.name)).toMatchObject([{ ready: false }]);
    await applyObjects(cluster, [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'late-secret', namespace: NS }, stringData: { other: 'x' } }]);
    pod = (await waitFor(cluster, pods, (l) => container(l.items[0])?.state?.waiting?.message?.startsWith("couldn't"), 60_000)).items[0];
    expect(container(pod).state.waiting).toEqual({ reason: 'CreateContainerConfigError', message: `couldn't find key greeting in Secret ${NS}/late-secret` });

    await applyObjects(cluster, [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'late-secret', namespace: NS }, stringData: { greeting: 'hello' } }]);
    pod = (await waitFor(cluster, pods, waiting('ContainerCreating'), 60_000)).items[0];
    expect(container(pod).state.waiting.message).toBe('MountVolume.SetUp failed for volume "late": configmap "late-config" not found');

    await applyObjects(cluster, [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late-config', namespace: NS }, data: { message: 'from the ConfigMap' } }]);
    await waitFor(cluster, deployment, (d) => d.status?.readyReplicas === 1, 60_000);
    pod = (await list(cluster, pods)).find((p) => !p.metadata.deletionTimestamp);
    expect(container(pod)).toMatchObject({ ready: true, restartCount: 0, state: { running: expect.anything() } });
    const answer = await get(`http://${pod.status.podIP}:8080/late`);
    expect(answer.body).toMatchObject({ pod: pod.metadata.name, file: 'from the ConfigMap', greeting: 'hello' });
    await cluster.request('DELETE', deployment);
  });

  it('stops the processes of a pod that goes', async () => {
    await cluster.request('PATCH', `/apis/apps/v1/namespaces/${NS}/deployments/echo`, { spec: { replicas: 1 } }, { contentType: 'application/merge-patch+json' });
    const until = Date.now() + 60_000;
    while (runtime.containers().filter((c) => c.pod.startsWith('echo-')).length !== 1) {
      if (Date.now() > until) throw new Error(`still running: ${JSON.stringify(runtime.containers())}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const left = (await list(cluster, `/api/v1/namespaces/${NS}/pods?labelSelector=app%3Decho`)).filter((p) => !p.metadata.deletionTimestamp);
    expect(left).toHaveLength(1);
    expect(runtime.containers().filter((c) => c.pod.startsWith('echo-')).map((c) => c.pod)).toEqual([left[0].metadata.name]);
  });

  it('parses and answers DNS queries', () => {
    const query = Buffer.from([0xab, 0xcd, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0x61, 5, 0x6c, 0x6f, 0x63, 0x61, 0x6c, 0, 0, 1, 0, 1]);
    const parsed = parseQuery(query)!;
    expect(parsed).toMatchObject({ id: 0xabcd, name: 'a.local', type: 1 });
    const reply = answer(query, parsed, ['10.0.0.7'], 0);
    expect([...reply.subarray(reply.length - 4)]).toEqual([10, 0, 0, 7]);
    expect(reply.readUInt16BE(6)).toBe(1);
  });
});
