import { envoyGatewayClassManifest, kserveGatewayManifest } from '@app-serving/core';
import { describe, expect, it } from 'vitest';
import { kservePlan, record } from '../test/harness.ts';
import { kubernetesProblems } from '../test/k8s-schemas.ts';
import { KserveGateway } from './kserve-gateway.ts';

describe('KserveGateway', () => {
  it('creates the Envoy GatewayClass, then the KServe ingress Gateway', async () => {
    const stack = kservePlan('kserve').kserve!;
    const g = stack.gateway;
    const rec = await record(() => new KserveGateway('gw', { name: g.name, namespace: g.namespace, className: g.className }));
    expect(rec.children('gw')).toEqual([
      'kubernetes:gateway.networking.k8s.io/v1:Gateway gw-gateway',
      'kubernetes:gateway.networking.k8s.io/v1:GatewayClass gw-gateway-class',
    ]);
    expect(rec.dependencies('gw-gateway-class')).toEqual([]);
    expect(rec.dependencies('gw-gateway')).toEqual(['gw-gateway-class']);
    expect(rec.revealed('gw-gateway-class')).toEqual(envoyGatewayClassManifest(g));
    expect(rec.revealed('gw-gateway')).toEqual(kserveGatewayManifest(g));
    expect(rec.revealed('gw-gateway')).toMatchObject({
      metadata: { name: 'kserve-ingress-gateway', namespace: 'kserve' },
      spec: { gatewayClassName: 'envoy', listeners: [{ name: 'http', protocol: 'HTTP', port: 80, allowedRoutes: { namespaces: { from: 'All' } } }] },
    });
    expect(rec.revealed('gw-gateway-class')).toMatchObject({ spec: { controllerName: 'gateway.envoyproxy.io/gatewayclass-controller' } });
    for (const r of rec.kubernetesObjects()) expect(kubernetesProblems(rec.revealed(r.name)), r.name).toEqual([]);
  });
});
