import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, tempRepo } from '../../test/helpers.ts';
import { loadStackFile, parseStackFile } from '../stack.ts';
import { isStackError, type Issue } from '../errors.ts';
import { llmInferenceServiceConfigManifest, llmInferenceServiceManifest } from '../manifests/kserve.ts';
import { planDeployment } from '../plan.ts';
import { readUpstream } from '@app-serving/test-cluster';
import { mutuallyExclusiveRule } from '../../test/kserve-controller.ts';
import { getPath, type Values } from '../values/merge.ts';
import { KSERVE_REPLICAS_SCALING_RULE } from './facts.ts';
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
        image: 'kserve/storage-initializer:v0.18.1',
        modelUri: 'Qwen/Qwen2.5-0.5B-Instruct',
        layout: 'directory',
        expectPath: 'Qwen/Qwen2.5-0.5B-Instruct/config.json',
      },
    });
  });

  it('merges the overlay with the programmatic spec', () => {
    expect(model.spec).toEqual({
      model: { name: 'Qwen/Qwen2.5-0.5B-Instruct', uri: 'pvc://qwen25-05b-model/Qwen/Qwen2.5-0.5B-Instruct' },
      // The stack autoscales it (Pulumi.kserve.yaml): scaling, and no replicas beside it.
      scaling: { minReplicas: 1, maxReplicas: 3, wva: { hpa: { behavior: { scaleDown: { stabilizationWindowSeconds: 300 } } } } },
      annotations: { 'app-serving.io/model-ref': 'hf://Qwen/Qwen2.5-0.5B-Instruct' },
      router: {
        route: {},
        scheduler: {
          annotations: { 'app-serving.io/model-ref': 'hf://Qwen/Qwen2.5-0.5B-Instruct' },
          template: {
            containers: [{ name: 'main' }],
            affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: model.podLabels }, topologyKey: 'kubernetes.io/hostname' }] } },
          },
        },
        gateway: { refs: [{ name: 'kserve-ingress-gateway', namespace: 'kserve' }] },
      },
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

  it("keeps KServe's own EndpointPickerConfig, and serves offline", () => {
    // KServe v0.18's default scheduler config is what the inline one repeated; v0.20's default
    // gained scorers, so pinning a copy would hold a model on an older set.
    expect(model.configSpec).toEqual({ template: { containers: [{ name: 'main', env: [{ name: 'HF_HUB_OFFLINE', value: '1' }] }] } });
    expect(model.wellKnownConfigs).toEqual(['kserve-config-llm-scheduler', 'kserve-config-llm-router-route', 'kserve-config-llm-template']);
  });

  it('builds the custom resources', () => {
    expect(llmInferenceServiceManifest(model)).toMatchObject({ apiVersion: 'serving.kserve.io/v1alpha1', kind: 'LLMInferenceService', metadata: { name: 'qwen25-05b', namespace: 'llm-d-qwen25-05b' } });
    expect(llmInferenceServiceConfigManifest(model)).toMatchObject({ kind: 'LLMInferenceServiceConfig', metadata: { name: 'qwen25-05b-config' } });
  });

  it("lists the download image and the images of KServe's well-known configs", () => {
    expect(plan.images.map((i) => [i.image, i.uses.map((u) => u.where)])).toEqual([
      ['ghcr.io/llm-d/llm-d-cuda:v0.6.0', ['KServe v0.18.1 kserve-config-llm-template: template.containers[main]']],
      ['ghcr.io/llm-d/llm-d-inference-scheduler:v0.7.1', ['KServe v0.18.1 kserve-config-llm-scheduler: router.scheduler.template.containers[main]']],
      ['ghcr.io/llm-d/llm-d-uds-tokenizer:v0.7.1', ['KServe v0.18.1 kserve-config-llm-scheduler: router.scheduler.template.containers[tokenizer]']],
      ['kserve/storage-initializer:v0.18.1', ['model download Job qwen25-05b-model-pull']],
    ]);
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
    // The scheduler pod mounts the same ReadWriteOnce claim (its tokenizer reads the model): it
    // runs beside the model pods, tolerates the GPU taint, and pulls with the Harbor Secret.
    expect((model.spec.router as { scheduler: unknown }).scheduler).toEqual({
      annotations: { 'app-serving.io/model-ref': 'h.local/a/b:1' },
      template: {
        containers: [{ name: 'main' }],
        tolerations: [
          { key: 'a', operator: 'Exists' },
          { key: 'gpu', operator: 'Exists' },
        ],
        imagePullSecrets: [{ name: 'harbor-creds' }],
        affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: model.podLabels }, topologyKey: 'kubernetes.io/hostname' }] } },
      },
    });
    expect(model.spec.annotations).toEqual({ 'app-serving.io/model-ref': 'h.local/a/b:1' });
    expect(model.storage).toMatchObject({ source: { kind: 'oras' }, image: 'h.local/images-infra/oras-project/oras:v1.3.1', expectPath: 'models/b' });
    expect((model.spec.model as { uri: string }).uri).toBe('pvc://k-model/models/b');
    expect(model.hfTokenSecret).toBeNull();
  });
});

describe('planKserveModel against the controller and the CRD', () => {
  const HF = '        modelSource:\n          huggingFace:\n            repo: org/m\n            revision: v2\n          storageSize: 5Gi\n';
  function plan(values: string, extra = '', model = HF): { model?: KserveModelPlan; issues: Issue[]; images?: string[] } {
    const dir = tempRepo({ 'models/generative/K/kserve-k/values.yaml': values });
    const text = `config:\n  app-serving:cloudProvider: cloud\n  app-serving:platform: kserve\n${extra}  app-serving:models:\n    generative:\n      - name: K\n${model}`;
    try {
      const planned = planDeployment(parseStackFile(text, 'P.yaml'), join(dir, 'models'));
      return { model: planned.models[0] as KserveModelPlan, issues: [], images: planned.images.map((i) => i.image) };
    } catch (error) {
      if (isStackError(error)) return { issues: [...error.issues] };
      throw error;
    }
  }

  it('accepts only the model URI schemes the controller accepts', () => {
    for (const uri of ['hf://org/m', 'pvc://c/m', 'oci://r.io/m:1', 's3://b/m']) expect(plan(`model:\n  uri: ${uri}\n`, '', '').issues).toEqual([]);
    for (const uri of ['gs://b/m', 'https://h/m', 'http://h/m']) {
      expect(plan(`model:\n  uri: ${uri}\n`, '', '').issues.map(({ code, path, line, message }) => ({ code, path, line, message }))).toEqual([
        { code: 'values.invalid', path: 'model.uri', line: 2, message: `must be a model URI KServe accepts (hf://, pvc://, oci://, s3://), not "${uri}"` },
      ]);
    }
  });

  it('defaults replicas only without scaling', () => {
    const scaling = 'scaling:\n  minReplicas: 2\n  maxReplicas: 4\n  wva:\n    hpa: {}\n';
    const scaled = plan(scaling).model!;
    expect(scaled.spec.replicas).toBeUndefined();
    expect(scaled.spec.scaling).toEqual({ minReplicas: 2, maxReplicas: 4, wva: { hpa: {} } });
    expect(scaled.replicas).toBe(2);
    expect(plan('').model!.spec.replicas).toBe(1);
    expect(plan('replicas: 3\n').model!.replicas).toBe(3);
    // The CRD's own rule (its text from the upstream CRD) holds on what we would apply.
    const crd = readUpstream('crds/kserve-v0.18.1-serving.kserve.io_llminferenceservices.yaml');
    const rules = crd.split('\n').filter((l) => l.includes('replicas and scaling')).length;
    expect(rules).toBe(4);
    const ok = mutuallyExclusiveRule(KSERVE_REPLICAS_SCALING_RULE);
    expect(crd).toContain(`rule: '${KSERVE_REPLICAS_SCALING_RULE}'`);
    for (const spec of [scaled.spec, plan('').model!.spec, plan('prefill:\n  scaling:\n    maxReplicas: 2\n').model!.spec]) {
      expect(ok(llmInferenceServiceManifest({ ...scaled, spec }).spec)).toBe(true);
      if (spec.prefill) expect(ok(spec.prefill as Values)).toBe(true);
    }
    expect(ok({ replicas: 1, scaling: {} })).toBe(false);
  });

  it('rejects replicas with scaling, naming the file, the line and the key', () => {
    const { issues } = plan('model:\n  name: m\nreplicas: 2\nscaling:\n  maxReplicas: 4\nprefill:\n  scaling:\n    maxReplicas: 2\n  replicas: 1\n');
    expect(issues.map(({ code, path, line, file, message }) => ({ code, path, line, file: file?.endsWith('kserve-k/values.yaml'), message }))).toEqual([
      {
        code: 'values.conflict',
        path: 'replicas',
        line: 3,
        file: true,
        message: 'is set together with scaling, and KServe\'s CRD rejects the pair ("replicas and scaling are mutually exclusive"): remove replicas for an autoscaled model (scaling.minReplicas sets the floor), or scaling for a fixed count',
      },
      {
        code: 'values.conflict',
        path: 'prefill.replicas',
        line: 9,
        file: true,
        message: 'is set together with prefill.scaling, and KServe\'s CRD rejects the pair ("replicas and scaling are mutually exclusive"): remove prefill.replicas for an autoscaled model (scaling.minReplicas sets the floor), or prefill.scaling for a fixed count',
      },
    ]);
  });

  it('annotates the model pods and the scheduler with the weights reference, so new weights roll them', () => {
    const model = plan('').model!;
    expect(model.spec.annotations).toEqual({ 'app-serving.io/model-ref': 'hf://org/m@v2' });
    expect(getPath(model.spec, ['router', 'scheduler', 'annotations'])).toEqual({ 'app-serving.io/model-ref': 'hf://org/m@v2' });
    expect(plan('annotations:\n  team: a\n').model!.spec.annotations).toEqual({ team: 'a', 'app-serving.io/model-ref': 'hf://org/m@v2' });
    expect(plan("annotations:\n  app-serving.io/model-ref: old\n").issues.map((i) => [i.code, i.path])).toEqual([['values.conflict', 'annotations["app-serving.io/model-ref"]']]);
  });

  it('co-locates the scheduler only when the model is on a claim (the stack fills it, or the overlay names one)', () => {
    const affinity = ['router', 'scheduler', 'template', 'affinity', 'podAffinity', 'requiredDuringSchedulingIgnoredDuringExecution'];
    const own = plan('model:\n  uri: pvc://weights/m\n', '', '').model!;
    expect(getPath(own.spec, affinity)).toEqual([{ labelSelector: { matchLabels: own.podLabels }, topologyKey: 'kubernetes.io/hostname' }]);
    expect(getPath(own.spec, ['annotations'])).toBeUndefined();
    const hub = plan('model:\n  uri: hf://org/m\n', '', '').model!;
    expect(getPath(hub.spec, affinity)).toBeUndefined();
    expect(getPath(hub.spec, ['router', 'scheduler', 'template'])).toEqual({ containers: [{ name: 'main' }] });
  });

  it('keeps the overlay scheduler containers and leaves a removed scheduler alone', () => {
    const own = plan('router:\n  scheduler:\n    template:\n      containers:\n        - name: main\n          args: [--v=3]\n').model!;
    expect(getPath(own.spec, ['router', 'scheduler', 'template', 'containers'])).toEqual([{ name: 'main', args: ['--v=3'] }]);
    const none = plan('router:\n  scheduler: null\n').model!;
    expect(getPath(none.spec, ['router', 'scheduler'])).toBeNull();
    expect(none.wellKnownConfigs).toEqual(['kserve-config-llm-router-route', 'kserve-config-llm-template']);
    expect(none.images).not.toContainEqual(expect.objectContaining({ image: 'ghcr.io/llm-d/llm-d-inference-scheduler:v0.7.1' }));
  });

  it("lists KServe's images by the configs the controller picks, and the overlay's own instead", () => {
    expect(plan('prefill:\n  replicas: 1\n').images).toEqual([
      'ghcr.io/llm-d/llm-d-cuda:v0.6.0',
      'ghcr.io/llm-d/llm-d-inference-scheduler:v0.7.1',
      'ghcr.io/llm-d/llm-d-routing-sidecar:v0.7.1',
      'ghcr.io/llm-d/llm-d-uds-tokenizer:v0.7.1',
      'kserve/storage-initializer:v0.18.1',
    ]);
    expect(plan('template:\n  containers:\n    - name: main\n      image: my.io/vllm:1\n').images).toEqual([
      'ghcr.io/llm-d/llm-d-inference-scheduler:v0.7.1',
      'ghcr.io/llm-d/llm-d-uds-tokenizer:v0.7.1',
      'kserve/storage-initializer:v0.18.1',
      'my.io/vllm:1',
    ]);
  });

  it('pulls KServe images from kserve.imageMirror: set in the model config, listed in the inventory', () => {
    const { model, images } = plan('', '  app-serving:kserve:\n    imageMirror: harbor.local/images-llm-d\n');
    expect(images).toEqual([
      'harbor.local/images-llm-d/llm-d/llm-d-cuda:v0.6.0',
      'harbor.local/images-llm-d/llm-d/llm-d-inference-scheduler:v0.7.1',
      'harbor.local/images-llm-d/llm-d/llm-d-uds-tokenizer:v0.7.1',
      'kserve/storage-initializer:v0.18.1',
    ]);
    expect(model!.configSpec).toEqual({
      template: { containers: [{ name: 'main', env: [{ name: 'HF_HUB_OFFLINE', value: '1' }], image: 'harbor.local/images-llm-d/llm-d/llm-d-cuda:v0.6.0' }] },
      router: {
        scheduler: {
          template: {
            containers: [
              { name: 'main', image: 'harbor.local/images-llm-d/llm-d/llm-d-inference-scheduler:v0.7.1' },
              { name: 'tokenizer', image: 'harbor.local/images-llm-d/llm-d/llm-d-uds-tokenizer:v0.7.1' },
            ],
          },
        },
      },
    });
    expect(plan('', '  app-serving:kserve:\n    imageMirror: https://harbor\n').issues.map((i) => [i.code, i.path])).toEqual([['config.invalid', 'kserve.imageMirror']]);
  });
});
