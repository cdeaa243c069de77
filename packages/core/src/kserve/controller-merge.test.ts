/**
 * Our LLMInferenceService and LLMInferenceServiceConfig, merged with KServe v0.18.1's well-known
 * configs (../shared/upstream/kserve/v0.18.1-llmisvcconfig/) the way its controller merges them,
 * then turned into the workload and scheduler pods the way its controller builds them
 * (test/kserve-controller.ts names each source).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readUpstream } from '@app-serving/test-cluster';
import { REPO_ROOT } from '../../test/helpers.ts';
import { combineBaseRefs, mergeAllSpecs, renderPlaceholders, schedulerPod, wellKnownConfigs, workloadPod, type PodTemplate } from '../../test/kserve-controller.ts';
import { parseStackFile } from '../stack.ts';
import { llmInferenceServiceConfigManifest, llmInferenceServiceManifest } from '../manifests/kserve.ts';
import { planDeployment } from '../plan.ts';
import type { Values } from '../values/merge.ts';
import { KSERVE_REPLICAS_SCALING_RULE } from './facts.ts';
import type { KserveModelPlan } from './plan.ts';

const ON_PREM = `config:
  app-serving:cloudProvider: on-prem
  app-serving:platform: kserve
  app-serving:kubeconfig: ~/.kube/config
  app-serving:harborHostname: harbor.local
  app-serving:harborUser: robot
  app-serving:harborToken:
    secure: v1:x
  app-serving:gpuToleration:
    key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
  app-serving:models:
    generative:
      - name: Qwen2.5-0.5B-Instruct
        nodeSelector:
          workload: gpu
        modelSource:
          harborRef: harbor.local/ai-models/qwen25-05b:1
          modelUri: models/qwen25-05b
          layout: directory
          storageSize: 5Gi
`;

function deploy(stack: string, extra = '') {
  const plan = planDeployment(parseStackFile(stack.replace('  app-serving:models:', `${extra}  app-serving:models:`), 'Pulumi.test.yaml'), join(REPO_ROOT, 'models'));
  const model = plan.models[0] as KserveModelPlan;
  const service = llmInferenceServiceManifest(model);
  const config = llmInferenceServiceConfigManifest(model);
  const merged = renderPlaceholders(combineBaseRefs(service.spec, wellKnownConfigs(), new Map([[config.metadata.name, config.spec]])), {
    name: model.service,
    namespace: model.namespace,
    modelName: model.servedModelName,
  });
  return { plan, model, merged, workload: workloadPod(model.service, merged), scheduler: schedulerPod(model.service, merged) };
}

const byName = (items: unknown) => [...((items as Values[] | undefined) ?? [])].sort((a, b) => String(a.name).localeCompare(String(b.name)));
const claimOf = (pod: PodTemplate) => byName(pod.spec.volumes).find((v) => v.name === 'kserve-pvc-source')?.persistentVolumeClaim;
const matches = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);

describe('KServe v0.18.1 merging our objects with its well-known configs', () => {
  const { model, merged, workload, scheduler } = deploy(ON_PREM);

  it('renders every placeholder of the pod specs it builds', () => {
    expect(JSON.stringify([workload.spec, scheduler.spec])).not.toContain('{{');
  });

  it('mounts the model volume into the scheduler pod as well (its tokenizer reads the model)', () => {
    expect(claimOf(workload)).toEqual({ claimName: 'qwen25-05b-model' });
    expect(claimOf(scheduler)).toEqual({ claimName: 'qwen25-05b-model' });
    const tokenizer = byName(scheduler.spec.containers).find((c) => c.name === 'tokenizer')!;
    expect(tokenizer.volumeMounts).toContainEqual({ name: 'kserve-pvc-source', mountPath: '/mnt/models/base', readOnly: true, subPath: 'models/qwen25-05b' });
  });

  it('so the scheduler pod runs on the node of the model pods: required pod affinity on the hostname, the GPU toleration', () => {
    const terms = (scheduler.spec.affinity as { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { labelSelector: { matchLabels: Record<string, string> }; topologyKey: string }[] } })
      .podAffinity.requiredDuringSchedulingIgnoredDuringExecution;
    expect(terms).toHaveLength(1);
    expect(terms[0]!.topologyKey).toBe('kubernetes.io/hostname');
    expect(matches(terms[0]!.labelSelector.matchLabels, workload.labels)).toBe(true);
    expect(matches(terms[0]!.labelSelector.matchLabels, scheduler.labels)).toBe(false);
    expect(scheduler.spec.tolerations).toEqual([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
    // The workload keeps its own placement.
    expect(workload.spec.tolerations).toEqual([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
    expect(workload.spec.affinity).toEqual({
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'workload', operator: 'In', values: ['gpu'] }] }] } },
    });
  });

  it("keeps the scheduler's containers from the well-known config, and gives the pod the pull secret", () => {
    expect(byName(scheduler.spec.containers).map((c) => [c.name, c.image])).toEqual([
      ['main', 'ghcr.io/llm-d/llm-d-inference-scheduler:v0.7.1'],
      ['tokenizer', 'ghcr.io/llm-d/llm-d-uds-tokenizer:v0.7.1'],
    ]);
    expect(scheduler.spec.imagePullSecrets).toEqual([{ name: 'harbor-creds' }]);
    expect(workload.spec.imagePullSecrets).toEqual([{ name: 'harbor-creds' }]);
  });

  it('without naming the main container, a scheduler template would lose every container in the merge', () => {
    // Go marshals a PodSpec's `containers` even when unset (no omitempty): null deletes the config's list.
    const bare = mergeAllSpecs([wellKnownConfigs().get('kserve-config-llm-scheduler')!, { router: { scheduler: { template: { tolerations: [{ operator: 'Exists' }] } } } }]);
    expect(((bare.router as Values).scheduler as Values).template).toEqual({ tolerations: [{ operator: 'Exists' }], volumes: expect.any(Array), dnsPolicy: 'ClusterFirst', restartPolicy: 'Always', terminationGracePeriodSeconds: 30 });
  });

  it('annotates the model pods and the scheduler pod with the weights reference', () => {
    expect(workload.annotations).toEqual({ 'app-serving.io/model-ref': 'harbor.local/ai-models/qwen25-05b:1' });
    expect(scheduler.annotations).toEqual({ 'app-serving.io/model-ref': 'harbor.local/ai-models/qwen25-05b:1' });
  });

  it('runs vLLM from the well-known template with our env and the model at /mnt/models', () => {
    const main = byName(workload.spec.containers).find((c) => c.name === 'main')!;
    expect(main.image).toBe('ghcr.io/llm-d/llm-d-cuda:v0.6.0');
    expect(byName(main.env).map((e) => e.name)).toEqual(['HF_HUB_CACHE', 'HF_HUB_OFFLINE', 'HOME', 'VLLM_ADDITIONAL_ARGS', 'VLLM_LOGGING_LEVEL']);
    expect(main.volumeMounts).toContainEqual({ name: 'kserve-pvc-source', mountPath: '/mnt/models', readOnly: true, subPath: 'models/qwen25-05b' });
    expect(workload.spec.serviceAccountName).toBe('qwen25-05b-sa');
    expect(matches(model.podLabels, workload.labels)).toBe(true);
  });

  it('pulls exactly the KServe images the plan lists', () => {
    const pulled = [workload, scheduler].flatMap((pod) => ['containers', 'initContainers'].flatMap((list) => byName(pod.spec[list]).map((c) => String(c.image))));
    expect([...new Set(pulled)].sort()).toEqual(model.images.filter((i) => !i.where.startsWith('model ')).map((i) => i.image).sort());
  });

  it('warns, on-prem, that they are not in Harbor, and how to fix it', () => {
    const { plan } = deploy(ON_PREM);
    expect(plan.warnings.filter((w) => w.message.startsWith('ghcr.io/llm-d/llm-d-cuda:v0.6.0')).map((w) => w.message)).toEqual([
      'ghcr.io/llm-d/llm-d-cuda:v0.6.0 is pulled from ghcr.io, not from Harbor (harbor.local); an air-gapped cluster cannot reach it (Qwen2.5-0.5B-Instruct: KServe v0.18.1 kserve-config-llm-template: template.containers[main]; set kserve.imageMirror to pull it from Harbor) — mirror it with `app-serving images` and use the Harbor reference',
    ]);
    expect(deploy(ON_PREM, '  app-serving:kserve:\n    imageMirror: harbor.local/images-llm-d\n').plan.warnings.filter((w) => w.code !== 'warning.upstream-superseded')).toEqual([]);
  });

  it('pulls them from kserve.imageMirror when the stack sets it', () => {
    const { model: mirrored, workload: w, scheduler: s } = deploy(ON_PREM, '  app-serving:kserve:\n    imageMirror: harbor.local/images-llm-d\n');
    const pulled = [w, s].flatMap((pod) => byName(pod.spec.containers).map((c) => String(c.image))).sort();
    expect(pulled).toEqual([
      'harbor.local/images-llm-d/llm-d/llm-d-cuda:v0.6.0',
      'harbor.local/images-llm-d/llm-d/llm-d-inference-scheduler:v0.7.1',
      'harbor.local/images-llm-d/llm-d/llm-d-uds-tokenizer:v0.7.1',
    ]);
    expect(pulled).toEqual(mirrored.images.filter((i) => !i.where.startsWith('model ')).map((i) => i.image).sort());
  });

  it("satisfies the CRD's replicas/scaling rule on the merged spec", () => {
    // The rule sits on spec and on spec.prefill, in both served versions (v1alpha1, v1alpha2).
    const crd = readUpstream('crds/kserve-v0.18.1-serving.kserve.io_llminferenceservices.yaml');
    expect(crd.split('\n').filter((line) => line.trim() === `rule: '${KSERVE_REPLICAS_SCALING_RULE}'`)).toHaveLength(4);
    expect(crd).toContain('message: replicas and scaling are mutually exclusive');
    expect(merged.replicas).toBe(1);
    expect(merged.scaling).toBeUndefined();
  });
});
