import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, tempRepo } from '../../test/helpers.ts';
import { loadStackFile, parseStackFile } from '../config/load.ts';
import { isStackError, type Issue } from '../errors.ts';
import { llmInferenceServiceConfigManifest, llmInferenceServiceManifest } from '../manifests/kserve.ts';
import { planDeployment } from '../plan.ts';
import type { KserveModelPlan } from './plan.ts';

const AFFINITY = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'nvidia.com/gpu.present', operator: 'In', values: ['true'] }] }] } } };

describe('the kserve example stack', () => {
  const plan = planDeployment(loadStackFile(join(REPO_ROOT, 'apps/app-serving/Pulumi.kserve.yaml')), join(REPO_ROOT, 'models'));
  const model = plan.models[0] as KserveModelPlan;

  it('plans the stack Gateway once', () => {
    expect(plan.kserve).toEqual({
      gateway: {
        name: 'kserve-ingress-gateway',
        namespace: 'kserve',
        className: 'envoy',
        controllerName: 'gateway.envoyproxy.io/gatewayclass-controller',
        create: true,
        port: 80,
        proxyNamespace: 'envoy-gateway-system',
        proxyLabels: { 'gateway.envoyproxy.io/owning-gateway-name': 'kserve-ingress-gateway', 'gateway.envoyproxy.io/owning-gateway-namespace': 'kserve' },
      },
    });
    expect(plan.hfToken).toBe(true);
  });

  it('names the model and its KServe children', () => {
    expect(model).toMatchObject({
      platform: 'kserve',
      name: 'Qwen2.5-0.5B-Instruct',
      slug: 'qwen25-05b',
      namespace: 'llm-d-qwen25-05b',
      service: 'qwen25-05b',
      config: 'qwen25-05b-config',
      serviceAccount: 'qwen25-05b-sa',
      hfTokenSecret: 'hf-token',
      workload: 'qwen25-05b-kserve',
      pathPrefix: '/llm-d-qwen25-05b/qwen25-05b',
      gateway: { name: 'kserve-ingress-gateway', namespace: 'kserve' },
      podLabels: { 'app.kubernetes.io/name': 'qwen25-05b', 'app.kubernetes.io/part-of': 'llminferenceservice', 'kserve.io/component': 'workload' },
      servedModelName: 'Qwen/Qwen2.5-0.5B-Instruct',
      port: 8000,
      replicas: 1,
      storage: {
        pvc: 'qwen25-05b-model',
        job: 'qwen25-05b-model-pull',
        source: { kind: 'huggingface', repo: 'Qwen/Qwen2.5-0.5B-Instruct', revision: null },
        image: 'kserve/storage-initializer:v0.18.0',
        modelUri: 'Qwen/Qwen2.5-0.5B-Instruct',
        layout: 'directory',
        expectPath: 'Qwen/Qwen2.5-0.5B-Instruct/config.json',
      },
    });
  });

  it('merges the overlay with the programmatic spec', () => {
    expect(model.spec).toEqual({
      model: { name: 'Qwen/Qwen2.5-0.5B-Instruct', uri: 'pvc://qwen25-05b-model/Qwen/Qwen2.5-0.5B-Instruct' },
      replicas: 1,
      router: { route: {}, scheduler: {}, gateway: { refs: [{ name: 'kserve-ingress-gateway', namespace: 'kserve' }] } },
      template: {
        containers: [
          {
            name: 'main',
            env: [{ name: 'VLLM_ADDITIONAL_ARGS', value: '--gpu-memory-utilization 0.90 --max-model-len 4096 --enforce-eager' }],
            resources: {
              limits: { 'nvidia.com/gpu': '1', cpu: '4', memory: '32Gi' },
              requests: { 'nvidia.com/gpu': '1', cpu: '2', memory: '16Gi' },
            },
          },
        ],
        serviceAccountName: 'qwen25-05b-sa',
        affinity: AFFINITY,
      },
      baseRefs: [{ name: 'qwen25-05b-config' }],
    });
  });

  it('configures the scheduler with queue and prefix-cache scorers, and offline serving', () => {
    expect(model.configSpec).toEqual({
      router: {
        scheduler: {
          config: {
            inline: {
              apiVersion: 'inference.networking.x-k8s.io/v1alpha1',
              kind: 'EndpointPickerConfig',
              plugins: [{ type: 'single-profile-handler' }, { type: 'queue-scorer' }, { type: 'prefix-cache-scorer' }, { type: 'max-score-picker' }],
              schedulingProfiles: [{ name: 'default', plugins: [{ pluginRef: 'queue-scorer', weight: 2 }, { pluginRef: 'prefix-cache-scorer', weight: 3 }, { pluginRef: 'max-score-picker' }] }],
            },
          },
        },
      },
      template: { containers: [{ name: 'main', env: [{ name: 'HF_HUB_OFFLINE', value: '1' }] }] },
    });
  });

  it('builds the custom resources', () => {
    expect(llmInferenceServiceManifest(model)).toMatchObject({ apiVersion: 'serving.kserve.io/v1alpha1', kind: 'LLMInferenceService', metadata: { name: 'qwen25-05b', namespace: 'llm-d-qwen25-05b' } });
    expect(llmInferenceServiceConfigManifest(model)).toMatchObject({ kind: 'LLMInferenceServiceConfig', metadata: { name: 'qwen25-05b-config' } });
  });

  it('lists the download image', () => {
    expect(plan.images.map((i) => i.image)).toEqual(['kserve/storage-initializer:v0.18.0']);
  });
});

describe('planKserveModel problems', () => {
  function problems(model: string, values: string, extra = ''): Pick<Issue, 'code' | 'path' | 'message'>[] {
    const dir = tempRepo({ 'models/generative/K/kserve-k/values.yaml': values });
    const text = `config:\n  app-serving:cloudProvider: cloud\n  app-serving:platform: kserve\n${extra}  app-serving:models:\n    generative:\n      - name: K\n${model}`;
    try {
      planDeployment(parseStackFile(text, 'P.yaml'), join(dir, 'models'));
    } catch (error) {
      if (isStackError(error)) return error.issues.map(({ code, path, message }) => ({ code, path, message }));
      throw error;
    }
    return [];
  }
  const HF = '        modelSource:\n          huggingFace:\n            repo: org/m\n          storageSize: 5Gi\n';

  it('needs a model URI from the stack or the overlay', () => {
    expect(problems('', 'replicas: 1\n')).toEqual([
      { code: 'config.missing-key', path: 'models.generative[0].modelSource', message: expect.stringMatching(/a kserve model needs modelSource in the stack, or model.uri in .*kserve-k\/values.yaml$/) },
    ]);
    expect(problems('', 'model:\n  uri: hf://org/m\n')).toEqual([]);
    expect(problems('', 'model:\n  uri: not-a-uri\n')[0]).toMatchObject({ code: 'values.invalid', path: 'model.uri' });
  });

  it('rejects an overlay that contradicts the stack', () => {
    expect(problems(HF, 'model:\n  uri: hf://org/m\nrouter:\n  gateway:\n    refs:\n      - name: other\n').map((p) => [p.code, p.path])).toEqual([
      ['values.conflict', 'model.uri'],
      ['values.conflict', 'router.gateway.refs'],
    ]);
  });

  it('rejects unknown spec keys and wrong types', () => {
    expect(problems(HF, 'replica: 2\nmodel:\n  nam: x\ntemplate:\n  containers: {}\n').map((p) => [p.code, p.path])).toEqual([
      ['values.unknown-key', 'replica'],
      ['values.unknown-key', 'model.nam'],
      ['values.invalid', 'template.containers'],
    ]);
  });

  it('rejects a Harbor artifact in hub-cache layout and an infra release name', () => {
    const harbor = '  app-serving:harborHostname: h.local\n  app-serving:harborUser: u\n  app-serving:harborToken:\n    secure: x\n';
    expect(
      problems('        releaseName: r\n        modelSource:\n          harborRef: h.local/a/b:1\n          modelUri: hub/o/m\n          storageSize: 1Gi\n', 'replicas: 1\n', harbor).map((p) => [p.code, p.path]),
    ).toEqual([
      ['config.contradiction', 'models.generative[0].releaseName'],
      ['config.invalid', 'models.generative[0].modelSource.layout'],
    ]);
  });

  it('adds tolerations and pull secrets to the template, keeping the overlay lists', () => {
    const dir = tempRepo({ 'models/generative/K/kserve-k/values.yaml': 'template:\n  tolerations:\n    - key: a\n      operator: Exists\n' });
    const text =
      'config:\n  app-serving:cloudProvider: on-prem\n  app-serving:platform: kserve\n  app-serving:kubeconfig: k\n  app-serving:harborHostname: h.local\n  app-serving:harborUser: u\n  app-serving:harborToken:\n    secure: x\n  app-serving:gpuToleration:\n    key: gpu\n    operator: Exists\n  app-serving:models:\n    generative:\n      - name: K\n        modelSource:\n          harborRef: h.local/a/b:1\n          modelUri: models/b\n          layout: directory\n          storageSize: 1Gi\n';
    const model = planDeployment(parseStackFile(text, 'P.yaml'), join(dir, 'models')).models[0] as KserveModelPlan;
    expect(model.spec.template).toEqual({
      tolerations: [
        { key: 'a', operator: 'Exists' },
        { key: 'gpu', operator: 'Exists' },
      ],
      imagePullSecrets: [{ name: 'harbor-creds' }],
      serviceAccountName: 'k-sa',
    });
    expect(model.storage).toMatchObject({ source: { kind: 'oras' }, image: 'h.local/images-infra/oras-project/oras:v1.3.1', expectPath: 'models/b' });
    expect((model.spec.model as { uri: string }).uri).toBe('pvc://k-model/models/b');
    expect(model.hfTokenSecret).toBeNull();
  });
});
