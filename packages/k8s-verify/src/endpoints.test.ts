import { describe, expect, it } from 'vitest';
import { startFakeKube } from '../test/fake-kube.ts';
import { httpGet as get } from '../test/http-get.ts';
import { startModelServer } from '../test/model-server.ts';
import { createCluster } from './cluster.ts';
import { ENVOY_OWNING_GATEWAY_NAME, ENVOY_OWNING_GATEWAY_NAMESPACE, openEnvoyGatewayEndpoint, openKserveEndpoint, openServiceEndpoint } from './endpoints.ts';

const signal = () => AbortSignal.timeout(5000);
const owning = { [ENVOY_OWNING_GATEWAY_NAME]: 'gw', [ENVOY_OWNING_GATEWAY_NAMESPACE]: 'kserve' };

describe('openServiceEndpoint', () => {
  it('resolves a named targetPort on the first Ready pod, as kubectl port-forward svc/… does', async () => {
    const server = await startModelServer({ models: ['m'] });
    const kube = await startFakeKube({
      services: [{ namespace: 'ns', name: 'svc', selector: { app: 'm' }, ports: [{ name: 'http', port: 8200, targetPort: 'http' }] }],
      pods: [
        { namespace: 'ns', name: 'a-not-ready', labels: { app: 'm' }, ready: false },
        { namespace: 'ns', name: 'b-ready', labels: { app: 'm' }, containers: [{ name: 'vllm', ports: [{ name: 'http', containerPort: 8000 }] }], forward: { 8000: server.port } },
      ],
    });
    const cluster = await createCluster(kube.kubeConfig());
    const endpoint = await openServiceEndpoint(cluster, 'ns', 'svc', 8200, signal());
    expect(endpoint.via).toBe('port-forward svc/svc:8200 → pod/b-ready:8000');
    expect(await get(`${endpoint.url}/v1/models`)).toContain('"id":"m"');
    await endpoint.close();
  });

  it('says why it cannot open: no Service, no such port, no Ready pod', async () => {
    const kube = await startFakeKube({
      services: [{ namespace: 'ns', name: 'svc', selector: { app: 'm' }, ports: [{ port: 80, targetPort: 8080 }] }],
      pods: [{ namespace: 'ns', name: 'p', labels: { app: 'm' }, ready: false, phase: 'Pending' }],
    });
    const cluster = await createCluster(kube.kubeConfig());
    await expect(openServiceEndpoint(cluster, 'ns', 'nope', 80, signal())).rejects.toThrow('Service ns/nope not found');
    await expect(openServiceEndpoint(cluster, 'ns', 'svc', 8200, signal())).rejects.toThrow('Service ns/svc has no port 8200 (ports: 80)');
    await expect(openServiceEndpoint(cluster, 'ns', 'svc', 80, signal())).rejects.toThrow('no Ready pod behind Service ns/svc (selector app=m; p: Pending)');
  });
});

describe('openKserveEndpoint', () => {
  it('finds the Envoy proxy in the Gateway namespace too (Gateway namespace mode), keeping the path prefix', async () => {
    const server = await startModelServer({ models: ['m'], pathPrefix: '/ns/k' });
    const kube = await startFakeKube({
      services: [{ namespace: 'kserve', name: 'envoy-gw', labels: owning, selector: owning, ports: [{ port: 80, targetPort: 10080 }] }],
      pods: [{ namespace: 'kserve', name: 'envoy-gw-1', labels: owning, forward: { 10080: server.port } }],
    });
    const cluster = await createCluster(kube.kubeConfig());
    const endpoint = await openKserveEndpoint(cluster, { gateway: { name: 'gw', namespace: 'kserve' } }, 'http://kserve-gateway.example.internal/ns/k', signal());
    expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ns\/k$/);
    expect(endpoint.headers).toEqual({ host: 'kserve-gateway.example.internal' });
    expect(kube.log.slice(0, 2)).toEqual([
      'GET /api/v1/namespaces/envoy-gateway-system/services?labelSelector=gateway.envoyproxy.io/owning-gateway-name=gw,gateway.envoyproxy.io/owning-gateway-namespace=kserve',
      'GET /api/v1/namespaces/kserve/services?labelSelector=gateway.envoyproxy.io/owning-gateway-name=gw,gateway.envoyproxy.io/owning-gateway-namespace=kserve',
    ]);
    expect(await get(`${endpoint.url}/v1/models`)).toContain('"id":"m"');
    await endpoint.close();
  });

  it('explains when no Envoy Gateway Service can be found', async () => {
    const kube = await startFakeKube({ forbidden: new Set(['list services']) });
    const cluster = await createCluster(kube.kubeConfig());
    await expect(openKserveEndpoint(cluster, { gateway: { name: 'gw', namespace: 'kserve' } }, 'http://10.0.0.9/ns/k', signal())).rejects.toThrow(
      /^no Envoy Gateway Service for Gateway kserve\/gw \(labels gateway\.envoyproxy\.io\/owning-gateway-name=gw,gateway\.envoyproxy\.io\/owning-gateway-namespace=kserve\) to reach 10\.0\.0\.9: forbidden: cannot list services in namespace envoy-gateway-system .*; is Envoy Gateway running\? Otherwise use --base-url$/,
    );
  });
});

describe('openEnvoyGatewayEndpoint (a 2026-08 llm-d model of class envoy)', () => {
  it("finds the proxy Service Envoy Gateway made for the model's Gateway by its labels, whatever its hashed name", async () => {
    const server = await startModelServer({ models: ['m'] });
    const labels = { [ENVOY_OWNING_GATEWAY_NAME]: 'router-m-gateway', [ENVOY_OWNING_GATEWAY_NAMESPACE]: 'llm-d-m' };
    const kube = await startFakeKube({
      services: [{ namespace: 'envoy-gateway-system', name: 'envoy-llm-d-m-router-m-gateway-0123abcd', labels, selector: labels, ports: [{ port: 80, targetPort: 10080 }] }],
      pods: [{ namespace: 'envoy-gateway-system', name: 'envoy-1', labels, forward: { 10080: server.port } }],
    });
    const cluster = await createCluster(kube.kubeConfig());
    const endpoint = await openEnvoyGatewayEndpoint(cluster, { name: 'router-m-gateway', namespace: 'llm-d-m' }, 80, signal());
    expect(endpoint.via).toBe('port-forward svc/envoy-llm-d-m-router-m-gateway-0123abcd:80 → pod/envoy-1:10080');
    expect(await get(`${endpoint.url}/v1/models`)).toContain('"id":"m"');
    await endpoint.close();
    const none = await startFakeKube({});
    await expect(openEnvoyGatewayEndpoint(await createCluster(none.kubeConfig()), { name: 'router-m-gateway', namespace: 'llm-d-m' }, 80, signal())).rejects.toThrow(
      'no Envoy Gateway Service for Gateway llm-d-m/router-m-gateway (labels gateway.envoyproxy.io/owning-gateway-name=router-m-gateway,gateway.envoyproxy.io/owning-gateway-namespace=llm-d-m): envoy-gateway-system: none; llm-d-m: none; is Envoy Gateway running? Otherwise use --base-url',
    );
  });
});
