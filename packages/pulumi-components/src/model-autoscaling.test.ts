import * as pulumi from '@pulumi/pulumi';
import { planAutoscaling, type PostRenderPatch } from '@app-serving/core';
import { describe, expect, it } from 'vitest';
import { allStrings, llmdModel, record } from '../test/harness.ts';
import { postRenderTransform } from './chart.ts';
import { LlmdModel } from './llmd-model.ts';
import { redactSecrets } from './mock-runtime.ts';
import { ModelAutoscaling } from './model-autoscaling.ts';

const TOKEN = 'prometheus-t0ken';
const autoscaling = planAutoscaling({
  slug: 'q',
  namespace: 'llm-d-q',
  settings: { maxReplicas: 3 },
  prometheus: { address: 'https://prom.example.com', auth: 'bearer', monitorLabels: {} },
  targets: [{ role: 'decode', deployment: 'ms-q-llm-d-modelservice-decode' }],
  modelServer: { podLabels: { 'llm-d.ai/model': 'q' }, metricsPort: 8200, monitoredByChart: false },
  epp: null,
});

describe('ModelAutoscaling', () => {
  it('creates the credentials Secret, its TriggerAuthentication, the monitor, the ScaledObject after the Secret, and the dashboard; the token stays secret', async () => {
    const rec = await record(() => new ModelAutoscaling('a', { namespace: 'llm-d-q', autoscaling, prometheusCredentials: pulumi.secret(TOKEN) }));
    expect(rec.children('a')).toEqual([
      'kubernetes:core/v1:ConfigMap a-dashboard',
      'kubernetes:core/v1:Secret a-credentials',
      'kubernetes:keda.sh/v1alpha1:ScaledObject a-scaledobject-ms-q-llm-d-modelservice-decode',
      'kubernetes:keda.sh/v1alpha1:TriggerAuthentication a-triggerauthentication-q-prometheus',
      'kubernetes:monitoring.coreos.com/v1:PodMonitor a-podmonitor-q-model-server',
    ]);
    expect(rec.dependencies('a-scaledobject-ms-q-llm-d-modelservice-decode')).toEqual(['a-credentials']);
    expect(rec.revealed('a-credentials')).toMatchObject({ metadata: { name: 'q-prometheus', namespace: 'llm-d-q' }, stringData: { bearerToken: TOKEN } });
    expect(allStrings(rec.resources.map((r) => redactSecrets(r.inputs))).filter((s) => s.includes(TOKEN))).toEqual([]);
    expect(rec.revealed('a-scaledobject-ms-q-llm-d-modelservice-decode')).toMatchObject({ spec: { scaleTargetRef: { name: 'ms-q-llm-d-modelservice-decode' }, maxReplicaCount: 3 } });
  });

  it('refuses a plan that needs credentials without them', async () => {
    await expect(record(() => new ModelAutoscaling('a', { namespace: 'llm-d-q', autoscaling }))).rejects.toMatchObject({ propertyPath: 'prometheusCredentials' });
  });

  it('an autoscaled LlmdModel: the autoscaling after the model service', async () => {
    const plan = llmdModel('cloud', 'Qwen3-0.6B');
    const rec = await record(() => new LlmdModel('m', { plan }));
    expect(rec.children('m')).toContain('app-serving:autoscaling:ModelAutoscaling m-autoscaling');
    expect(rec.dependencies('m-autoscaling-scaledobject-ms-qwen3-06b-llm-d-modelservice-decode')).toEqual(['m-model-service-chart', 'm-namespace-namespace']);
  });
});

describe("the model-server chart's transform", () => {
  it('leaves replicas of an autoscaled Deployment to KEDA: ignoreChanges spec.replicas, nothing else touched', async () => {
    const patches: PostRenderPatch[] = [{ kind: 'autoscaled-replicas', deployment: 'd' }];
    const transform = postRenderTransform(patches);
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 1 } };
    expect(await transform({ custom: true, type: 'kubernetes:apps/v1:Deployment', name: 'x', props: deployment, opts: { ignoreChanges: ['metadata.annotations'] } })).toEqual({
      props: deployment,
      opts: { ignoreChanges: ['metadata.annotations', 'spec.replicas'], deleteBeforeReplace: true },
    });
    const other = { ...deployment, metadata: { name: 'epp' } };
    expect(await transform({ custom: true, type: 'kubernetes:apps/v1:Deployment', name: 'y', props: other, opts: {} })).toEqual({ props: other, opts: { deleteBeforeReplace: true } });
  });
});
