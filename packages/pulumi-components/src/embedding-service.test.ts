import { embeddingsServiceManifest } from '@app-serving/core';
import { describe, expect, it } from 'vitest';
import { llmdModel, record, valueOf } from '../test/harness.ts';
import { kubernetesProblems } from '../test/k8s-schemas.ts';
import { EmbeddingService } from './embedding-service.ts';

describe('EmbeddingService', () => {
  it('is a ClusterIP Service on 8200 to the decode pods, targeting the port the server listens on', async () => {
    const bge = llmdModel('cloud', 'bge-small-en-v1.5');
    const svc = bge.embeddingService!;
    let e!: EmbeddingService;
    const rec = await record(() => {
      e = new EmbeddingService('e', { namespace: bge.namespace, slug: bge.slug, serviceName: svc.name, podLabels: bge.modelServer.podLabels, targetPort: svc.targetPort });
    });
    expect(rec.children('e')).toEqual(['kubernetes:core/v1:Service e-service']);
    const service = rec.revealed('e-service');
    expect(service).toEqual(embeddingsServiceManifest({ name: svc.name, namespace: bge.namespace, slug: bge.slug, podLabels: bge.modelServer.podLabels, targetPort: svc.targetPort }));
    expect(service).toMatchObject({
      metadata: { name: 'ms-bge-small-embeddings', namespace: 'llm-d-bge-small' },
      spec: {
        type: 'ClusterIP',
        selector: { 'llm-d.ai/inference-serving': 'true', 'llm-d.ai/model': 'bge-small', 'llm-d.ai/role': 'decode' },
        ports: [{ name: 'http', port: 8200, targetPort: svc.targetPort, protocol: 'TCP' }],
      },
    });
    expect(kubernetesProblems(service)).toEqual([]);
    // The component's URL is the one the plan announces.
    expect(await valueOf(e.url)).toBe(svc.url);
  });
});
