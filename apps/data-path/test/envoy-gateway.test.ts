/**
 * The tier's gateway, before any app-serving stack: the real Envoy Gateway controller (installed from
 * its release's chart, run as a pod) reconciles a GatewayClass, a Gateway, an HTTPRoute and a
 * SecurityPolicy, creates its proxy Deployment, and the real Envoy started from that Deployment's
 * own bootstrap gets its configuration over xDS and enforces the policy, routing to real pods.
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ENVOY_GATEWAY_SYSTEM,
  applyObjects,
  createNodes,
  installEnvoyGateway,
  list,
  startCluster,
  startClusterDns,
  startPodRuntime,
  waitFor,
  type ClusterDns,
  type PodRuntime,
  type TestCluster,
} from '@app-serving/test-cluster';
import { dataPathRunner } from './images.ts';
import { ENVOY_GATEWAY_VERSION, dataPathTools, envoyGatewayChartDir } from './tools.ts';

const ECHO = join(import.meta.dirname, 'fixtures', 'echo-server.mjs');
const NS = 'eg-test';

function call(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { timeout: 20_000, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe.skipIf(process.env.APP_SERVING_NETNS !== '1')('the real Envoy Gateway and Envoy', () => {
  let cluster: TestCluster;
  let runtime: PodRuntime;
  let dns: ClusterDns;
  let proxy: string;

  beforeAll(async () => {
    const tools = dataPathTools();
    cluster = await startCluster({ dataPath: true, crdSet: '2026-08' });
    dns = await startClusterDns(cluster);
    const run = dataPathRunner(tools);
    runtime = await startPodRuntime(cluster, {
      run: (pod, container) => (container.image === 'test.local/echo:1' ? { argv: [process.execPath, ECHO] } : run(pod, container)),
      log: (line) => console.log(line),
    });
    await createNodes(cluster, [{ name: 'node-1' }]);
    await installEnvoyGateway(cluster, { chartDir: envoyGatewayChartDir(), version: ENVOY_GATEWAY_VERSION, binary: tools.envoyGateway });
    await waitFor(cluster, `/apis/apps/v1/namespaces/${ENVOY_GATEWAY_SYSTEM}/deployments/envoy-gateway`, (d) => d.status?.readyReplicas === 1, 240_000);
    const htpasswd = `ci:{SHA}${createHash('sha1').update('s3cret-key-of-the-test').digest('base64')}`;
    await applyObjects(cluster, [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'eg-test' }, spec: { controllerName: 'gateway.envoyproxy.io/gatewayclass-controller' } },
      { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'gw', namespace: NS }, spec: { gatewayClassName: 'eg-test', listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }] } },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'echo', namespace: NS },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'echo' } },
          template: {
            metadata: { labels: { app: 'echo' } },
            spec: { containers: [{ name: 'echo', image: 'test.local/echo:1', ports: [{ name: 'http', containerPort: 8080 }], env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }], readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 } }] },
          },
        },
      },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo', namespace: NS }, spec: { selector: { app: 'echo' }, ports: [{ port: 80, targetPort: 'http' }] } },
      { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'echo', namespace: NS }, spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'echo', port: 80 }] }] } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'echo-users', namespace: NS }, stringData: { '.htpasswd': `${htpasswd}\n` } },
      {
        apiVersion: 'gateway.envoyproxy.io/v1alpha1',
        kind: 'SecurityPolicy',
        metadata: { name: 'echo', namespace: NS },
        spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'echo' }], basicAuth: { users: { name: 'echo-users' } } },
      },
    ]);
    // Envoy Gateway makes the proxy; the runtime runs it; it is Ready once Envoy has its listeners.
    const deployment = await waitFor(cluster, `/apis/apps/v1/namespaces/${ENVOY_GATEWAY_SYSTEM}/deployments?labelSelector=${encodeURIComponent(`gateway.envoyproxy.io/owning-gateway-name=gw`)}`, (l) => l.items[0]?.status?.readyReplicas === 1, 300_000);
    const pods = await list(cluster, `/api/v1/namespaces/${ENVOY_GATEWAY_SYSTEM}/pods?labelSelector=${encodeURIComponent(`gateway.envoyproxy.io/owning-gateway-name=gw`)}`);
    const port = (deployment.items[0].spec.template.spec.containers.find((c: any) => c.name === 'envoy').ports as any[]).find((p) => p.name?.startsWith('http'))?.containerPort ?? 10080;
    proxy = `http://${pods[0].status.podIP}:${port}`;
  }, 900_000);

  afterAll(async () => {
    for (const c of runtime?.containers() ?? []) if (c.namespace === ENVOY_GATEWAY_SYSTEM) console.log(`--- ${c.pod}/${c.container}\n${runtime.logs(c.namespace, c.pod, c.container).slice(-3000)}`);
    await runtime?.stop();
    await dns?.stop();
    await cluster?.stop();
  });

  it('accepts the objects: GatewayClass, Gateway Programmed, route and policy Accepted', async () => {
    const gateway = await waitFor(cluster, `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/gateways/gw`, (g) => g.status?.conditions?.some((c: any) => c.type === 'Programmed' && c.status === 'True'), 120_000);
    expect(gateway.status.conditions.find((c: any) => c.type === 'Accepted').status).toBe('True');
    const policy = await waitFor(cluster, `/apis/gateway.envoyproxy.io/v1alpha1/namespaces/${NS}/securitypolicies/echo`, (p) => p.status?.ancestors?.[0]?.conditions?.some((c: any) => c.type === 'Accepted'), 60_000);
    expect(policy.status.ancestors[0].conditions.find((c: any) => c.type === 'Accepted').status).toBe('True');
  });

  it('enforces the policy and routes to the real pod: none 401, wrong 401, right 200', async () => {
    expect((await call(`${proxy}/x`)).status).toBe(401);
    expect((await call(`${proxy}/x`, { authorization: basic('ci', 'wrong-key-of-the-test') })).status).toBe(401);
    const ok = await call(`${proxy}/x`, { authorization: basic('ci', 's3cret-key-of-the-test') });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text)).toMatchObject({ path: '/x' });
    expect(dns.queries).toContain(`envoy-gateway.${ENVOY_GATEWAY_SYSTEM}.svc.cluster.local`);
  });
});
