import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadStackFile, planDeployment, type DeploymentPlan, type KserveModelPlan, type LlmdModelPlan } from '@app-serving/core';

/** A model of a test stack. */
export interface ModelSpec {
  readonly category: 'generative' | 'embedder';
  readonly name: string;
  readonly slug: string;
  /** Served model name (modelArtifacts.name / model.name). @default `org/<slug>` */
  readonly served?: string;
  readonly platform?: 'llm-d' | 'kserve';
  /** Give the model a modelSource (ORAS from Harbor for llm-d, Hugging Face for KServe). */
  readonly pull?: boolean;
  readonly prefill?: number;
  /** LoRA adapters by name (2026-08 llm-d: from the Hub, loaded by vLLM). */
  readonly adapters?: readonly string[];
}

/**
 * Plans a stack of `specs` with core's own `planDeployment`, from model folders and a stack file
 * written to a temporary directory: every name the checks use comes from core, as in production.
 */
export function planOf(specs: readonly ModelSpec[], options: { readonly upstream?: '2026-08'; readonly gatewayClass?: 'istio' | 'agentgateway' | 'envoy' } = {}): DeploymentPlan {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-verify-plan-'));
  try {
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    const entries: Record<'generative' | 'embedder', string[]> = { generative: [], embedder: [] };
    for (const spec of specs) {
      const served = spec.served ?? `org/${spec.slug}`;
      const folder = `models/${spec.category}/${spec.name}`;
      let source = '';
      if (spec.platform === 'kserve') {
        write(`${folder}/kserve-${spec.slug}/values.yaml`, spec.pull ? `model:\n  name: ${served}\n` : `model:\n  name: ${served}\n  uri: hf://${served}\n`);
        if (spec.pull) source = `\n        modelSource:\n          huggingFace:\n            repo: ${served}\n          storageSize: 5Gi`;
      } else if (options.upstream === '2026-08') {
        write(`${folder}/server-${spec.slug}/values.yaml`, `image: vllm/vllm-openai:v0.30.0\nservedModelName: ${served}\n`);
      } else {
        write(`${folder}/gaie-${spec.slug}/values.yaml`, 'inferenceExtension:\n  replicas: 1\n');
        const prefill = spec.prefill ? `prefill:\n  create: true\n  replicas: ${spec.prefill}\n` : '';
        write(`${folder}/ms-${spec.slug}/values.yaml`, `modelArtifacts:\n  name: ${served}\n${spec.pull ? '' : `  uri: hf://${served}\n`}${prefill}`);
        if (spec.pull) source = `\n        modelSource:\n          harborRef: harbor.example.com/models/${spec.slug}:v1\n          modelUri: hub/${served}\n          storageSize: 5Gi`;
      }
      const adapters = spec.adapters?.length ? `\n        adapters:${spec.adapters.map((a) => `\n          - name: ${a}\n            huggingFace:\n              repo: org/${a}`).join('')}` : '';
      entries[spec.category].push(`      - name: ${spec.name}\n        enabled: true${spec.platform === 'kserve' ? '\n        platform: kserve' : ''}${source}${adapters}`);
    }
    const harbor = specs.some((s) => s.pull && s.platform !== 'kserve')
      ? `  app-serving:harborHostname: harbor.example.com\n  app-serving:harborUser: robot$test\n  app-serving:harborToken:\n    secure: v1:cGxhY2Vob2xkZXI=:cGxhY2Vob2xkZXI=\n`
      : '';
    const models = (['generative', 'embedder'] as const)
      .filter((c) => entries[c].length)
      .map((c) => `    ${c}:\n${entries[c].join('\n')}`)
      .join('\n');
    const set = options.upstream ? `  app-serving:upstream: ${options.upstream}\n${options.gatewayClass ? `  app-serving:router:\n    gatewayClass: ${options.gatewayClass}\n` : ''}` : '';
    write('Pulumi.test.yaml', `config:\n  app-serving:cloudProvider: cloud\n${set}${harbor}  app-serving:models:\n${models}\n`);
    return planDeployment(loadStackFile(join(dir, 'Pulumi.test.yaml')), join(dir, 'models'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const llmd = (plan: DeploymentPlan, i = 0) => plan.models[i] as LlmdModelPlan;
export const kserve = (plan: DeploymentPlan, i = 0) => plan.models[i] as KserveModelPlan;
