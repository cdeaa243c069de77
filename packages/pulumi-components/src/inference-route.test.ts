import { httpRouteManifest } from '@app-serving/core';
import { describe, expect, it } from 'vitest';
import { llmdModel, record } from '../test/harness.ts';
import { kubernetesProblems } from '../test/k8s-schemas.ts';
import { InferenceRoute } from './inference-route.ts';

describe('InferenceRoute', () => {
  it('routes PathPrefix / of the Gateway to the InferencePool', async () => {
    const qwen = llmdModel('cloud', 'Qwen3-0.6B');
    const rec = await record(
      () => new InferenceRoute('r', { namespace: qwen.namespace, slug: qwen.slug, routeName: qwen.httpRoute!, gatewayName: qwen.gateway.name, inferencePoolName: qwen.inferencePool.name }),
    );
    expect(rec.children('r')).toEqual(['kubernetes:gateway.networking.k8s.io/v1:HTTPRoute r-httproute']);
    const route = rec.revealed('r-httproute');
    expect(route).toEqual(httpRouteManifest({ name: 'llm-d-qwen3-06b', namespace: 'llm-d-qwen3-06b', slug: 'qwen3-06b', gateway: 'infra-qwen3-06b-inference-gateway', inferencePool: 'gaie-qwen3-06b' }));
    expect(route).toMatchObject({
      spec: {
        parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'infra-qwen3-06b-inference-gateway' }],
        rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'gaie-qwen3-06b' }] }],
      },
    });
    expect(kubernetesProblems(route)).toEqual([]);
  });
});
