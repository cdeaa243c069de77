import { CURRENT_UPSTREAM, ROUTER_EPP_IMAGE, VLLM_IMAGE, kserveSizing, mirrorReference, type Category, type KserveSizing, type Upstream } from '@app-serving/core';

/**
 * Values templates of `app-serving new-model`. Each returns the files of one model folder
 * (folder name → values.yaml text) for a set of upstream versions: on 2026-08 (the current set)
 * `server-<slug>` and `router-<slug>`, on 2026-02 `gaie-<slug>` and `ms-<slug>`; `kserve-<slug>`
 * for KServe on both. Every template renders values that validate (tested through the CLI).
 */
export type TemplateName = 'sim' | 'vllm' | 'infinity' | 'kserve-vllm';

export interface TemplateInput {
  readonly slug: string;
  readonly category: Category;
  /** The Hugging Face id of the model. */
  readonly modelId: string;
  /** Rewrites image references under this `<registry>/<project>` (air-gapped clusters). */
  readonly mirror?: string | undefined;
  /** kserve-vllm: the sizing tier. */
  readonly sizing?: KserveSizing | undefined;
  /**
   * A cluster variant whose weights come from the stack's `modelSource` (pulled into the model's
   * PVC): no `modelArtifacts.uri` (app-serving sets it to the PVC, and a different one in the file
   * is an error) and `HF_HUB_OFFLINE=1`, so that the server never reaches for the Hub.
   */
  readonly pvcWeights?: boolean | undefined;
  /** The set of upstream versions the folders are for. @default the current set (2026-08) */
  readonly upstream?: Upstream | undefined;
}

/** Pinned images of the templates. */
export const TEMPLATE_IMAGES = {
  epp: { hub: 'registry.k8s.io/gateway-api-inference-extension', name: 'epp', tag: 'v1.2.0' },
  sim: 'ghcr.io/llm-d/llm-d-inference-sim:v0.10.2',
  routingSidecar: 'ghcr.io/llm-d/llm-d-routing-sidecar:v0.4.0',
  vllm: 'ghcr.io/llm-d/llm-d-cuda:v0.4.0',
  infinity: 'michaelf34/infinity:0.0.77-cpu',
  /** 2026-08: upstream vLLM (llm-d-cuda is deprecated in its favour) and the Router's endpoint picker. */
  vllmOpenai: VLLM_IMAGE,
  routerEpp: ROUTER_EPP_IMAGE,
} as const;

/** The files of a model folder from a template. */
export function renderTemplate(template: TemplateName, input: TemplateInput): Record<string, string> {
  const image = (ref: string) => (input.mirror ? mirrorReference(ref, input.mirror) : ref);
  if (template === 'kserve-vllm') return { [`kserve-${input.slug}`]: kserveVllm(input) };
  if ((input.upstream ?? CURRENT_UPSTREAM) === '2026-08') return { [`server-${input.slug}`]: server(template, input, image), [`router-${input.slug}`]: router(template, input, image) };
  return { [`gaie-${input.slug}`]: gaie(input, image), [`ms-${input.slug}`]: modelService(template, input, image) };
}

/** 2026-08: the model server's values (app-serving's format: docs/upgrading.md). */
function server(template: Exclude<TemplateName, 'kserve-vllm'>, input: TemplateInput, image: (ref: string) => string): string {
  const weights = input.pvcWeights
    ? `# The weights come from the stack's modelSource: app-serving mounts the volume the pull Job filled,
# points the server at it and sets HF_HUB_OFFLINE=1.
`
    : '';
  const resources = (cpu: string, memory: string, limit: string, gpu: boolean) =>
    `resources:\n  requests:\n    cpu: "${cpu}"\n    memory: ${memory}\n  limits:\n    memory: ${limit}\n${gpu ? '    nvidia.com/gpu: "1"\n' : ''}`;
  if (template === 'sim') {
    return `# The model server of ${input.modelId} on the 2026-08 set (template sim): llm-d-inference-sim, an
# OpenAI-compatible simulator that needs no GPU (it serves /v1/embeddings too). app-serving runs it as
# the Deployment server-${input.slug} with the pod labels, placement, pull secret and probes.
${weights}image: ${image(TEMPLATE_IMAGES.sim)}
servedModelName: ${input.modelId}
# Not vLLM: the image's own entrypoint, with every argument written here.
launch: image
args: ["--model", "${input.modelId}", "--port", "8000"]
port: 8000
${resources('100m', '128Mi', '256Mi', false)}`;
  }
  if (template === 'infinity') {
    return `# The model server of ${input.modelId} on the 2026-08 set (template infinity): Infinity on CPU, serving
# the OpenAI embeddings API on port 8200 under /v1. app-serving runs it as the Deployment
# server-${input.slug}; clients call the embeddings Service.
${weights}image: ${image(TEMPLATE_IMAGES.infinity)}
servedModelName: ${input.modelId}
launch: image
command: ["infinity_emb"]
args: ["v2", "--model-id", "${input.modelId}", "--served-model-name", "${input.modelId}", "--port", "8200", "--url-prefix", "/v1", "--engine", "torch", "--device", "cpu"]
port: 8200
${resources('1', '2Gi', '4Gi', false)}`;
  }
  const embedder = input.category === 'embedder';
  return `# The model server of ${input.modelId} on the 2026-08 set (template vllm): upstream vLLM (llm-d's
# model-server recipe; the llm-d-cuda image is deprecated in its favour). launch: vllm (the default)
# runs \`vllm serve <model> --served-model-name <name> --port <port>\` followed by args.
${weights}image: ${image(TEMPLATE_IMAGES.vllmOpenai)}
servedModelName: ${input.modelId}
${input.pvcWeights ? '' : `# Downloaded from the Hugging Face Hub at start-up (a modelSource in the stack puts it on a volume instead).\nmodel: ${input.modelId}\n`}${embedder ? '# vLLM serves embedding models (pooling) when their architecture says so; otherwise add "--runner", "pooling".\n' : ''}args: ["--max-model-len", "8192", "--gpu-memory-utilization", "0.90"]
env:
  # vLLM v0.20 and later need USER set (torch 2.11); llm-d's recipes set it too.
  - name: USER
    value: llm-d
${resources('2', '16Gi', '32Gi', true)}`;
}

/** 2026-08: the llm-d Router chart's values (every value under router.*). */
function router(template: Exclude<TemplateName, 'kserve-vllm'>, input: TemplateInput, image: (ref: string) => string): string {
  const sim = template === 'sim';
  const epp = image(TEMPLATE_IMAGES.routerEpp);
  const at = epp.lastIndexOf(':');
  const path = epp.slice(0, at);
  const slash = path.lastIndexOf('/');
  const mirrored = input.mirror
    ? `    image:\n      registry: ${path.slice(0, slash)}\n      repository: ${path.slice(slash + 1)}\n      tag: ${epp.slice(at + 1)}\n      pullPolicy: IfNotPresent\n`
    : '';
  return `# The llm-d Router chart's values for ${input.modelId} on the 2026-08 set. app-serving sets the pool's
# selector and port, the provider, the HTTPRoute and the EPP's placement; set here only what is specific
# to this model. The chart's endpoint picker asks for 8 CPUs and 8Gi by default: these are sized for one
# model${sim ? ' on a small (kind, CI) cluster' : ''}.
router:
  epp:
${mirrored}    resources:
      requests:
        cpu: ${sim ? '100m' : '"2"'}
        memory: ${sim ? '256Mi' : '4Gi'}
      limits:
        memory: ${sim ? '1Gi' : '8Gi'}
`;
}

function gaie(input: TemplateInput, image: (ref: string) => string): string {
  const hub = image(`${TEMPLATE_IMAGES.epp.hub}/${TEMPLATE_IMAGES.epp.name}:${TEMPLATE_IMAGES.epp.tag}`).replace(/\/epp:[^/]+$/, '');
  return `# GAIE inferencepool v1.2.0 values for ${input.modelId}.
# app-serving adds provider.name, the DestinationRule host, the pool's labels and target port.
inferenceExtension:
  replicas: 1
  image:
    hub: ${hub}
    name: ${TEMPLATE_IMAGES.epp.name}
    tag: ${TEMPLATE_IMAGES.epp.tag}
    pullPolicy: IfNotPresent
  flags:
    v: 1
`;
}

function modelService(template: Exclude<TemplateName, 'kserve-vllm'>, input: TemplateInput, image: (ref: string) => string): string {
  const embedder = input.category === 'embedder';
  // Embedders skip the routing sidecar: the server itself listens on 8200, where the embeddings
  // Service sends traffic (the EPP of GAIE v1.2 does not route embeddings anyway).
  const routing = embedder
    ? 'routing:\n  servicePort: 8200\n  proxy:\n    enabled: false\n'
    : `routing:\n  servicePort: 8000\n  proxy:\n    enabled: true\n    image: ${image(TEMPLATE_IMAGES.routingSidecar)}\n    imagePullPolicy: IfNotPresent\n    targetPort: 8200\n`;
  const probe = (path: string, port: number) => `      extraConfig:\n        imagePullPolicy: IfNotPresent\n        readinessProbe:\n          httpGet:\n            path: ${path}\n            port: ${port}\n          periodSeconds: 10\n`;
  const header = input.pvcWeights
    ? `# llm-d-modelservice v0.4.12 values for ${input.modelId} (template ${template}), a cluster variant
# whose weights come from the stack's modelSource: app-serving sets modelArtifacts.uri to the
# model's PVC (do not set it here), and adds the pod labels, node affinity, GPU toleration and
# pull secrets. To download from the Hub instead, drop modelSource and set uri: hf://${input.modelId}.
`
    : `# llm-d-modelservice v0.4.12 values for ${input.modelId} (template ${template}).
# app-serving adds the pod labels, node affinity, GPU toleration and pull secrets; with a
# modelSource in the stack it also sets modelArtifacts.uri to the model's PVC.
`;
  // With the weights on the PVC, neither the URI nor `size` belongs here: `size` sizes only the
  // emptyDir of an hf:// model (validate warns that it has no effect with a modelSource).
  const uri = input.pvcWeights ? '' : `  uri: hf://${input.modelId}\n`;
  const size = (quantity: string) => (input.pvcWeights ? '' : `  size: ${quantity}\n`);
  const offline = input.pvcWeights
    ? '      env:\n        # the weights are on the PVC: never reach out to the Hugging Face Hub\n        - name: HF_HUB_OFFLINE\n          value: "1"\n'
    : '';
  if (template === 'sim') {
    return `${header}modelArtifacts:
  name: ${input.modelId}
${uri}${size('5Mi')}
${routing}
decode:
  replicas: 1
  containers:
    - name: vllm
      image: ${image(TEMPLATE_IMAGES.sim)}
      modelCommand: imageDefault
      ports:
        - containerPort: 8200
          name: http
          protocol: TCP
      resources:
        requests:
          cpu: 100m
          memory: 128Mi
        limits:
          memory: 256Mi
${probe('/v1/models', 8200)}
prefill:
  create: false
`;
  }
  if (template === 'infinity') {
    return `${header}modelArtifacts:
  name: ${input.modelId}
${uri}${size('4Gi')}
${routing}
accelerator:
  type: cpu

decode:
  replicas: 1
  containers:
    - name: infinity
      image: ${image(TEMPLATE_IMAGES.infinity)}
      modelCommand: custom
      command: ["infinity_emb"]
      args: ["v2", "--model-id", "${input.modelId}", "--served-model-name", "${input.modelId}", "--port", "8200", "--url-prefix", "/v1", "--engine", "torch", "--device", "cpu"]
${offline}      ports:
        - containerPort: 8200
          name: http
          protocol: TCP
      mountModelVolume: true
      resources:
        requests:
          cpu: "1"
          memory: 2Gi
        limits:
          memory: 4Gi
${probe('/v1/models', 8200)}
prefill:
  create: false
`;
  }
  // vLLM listens on 8200: behind the routing sidecar (generative) or as the servicePort (embedder).
  const port = 8200;
  return `${header}modelArtifacts:
  name: ${input.modelId}
${uri}${size('20Gi')}
${routing}
accelerator:
  type: nvidia

decode:
  replicas: 1
  parallelism:
    tensor: 1
  containers:
    - name: vllm
      image: ${image(TEMPLATE_IMAGES.vllm)}
      modelCommand: vllmServe
      # vLLM serves embedding models (pooling) when their architecture says so; otherwise add "--runner", "pooling".
      args: ["--max-model-len", "8192", "--gpu-memory-utilization", "0.90"]
${offline}      ports:
        - containerPort: ${port}
          name: http
          protocol: TCP
      mountModelVolume: true
      resources:
        requests:
          cpu: "2"
          memory: 16Gi
        limits:
          memory: 32Gi
${probe('/v1/models', port)}
prefill:
  create: false
`;
}

/** KServe's own template sets the vLLM image; on an air-gapped cluster mirror it with KServe's images. */
function kserveVllm(input: TemplateInput): string {
  const sizing = input.sizing ?? kserveSizing(7);
  const tp = sizing.gpus > 1 ? ` --tensor-parallel-size ${sizing.gpus}` : '';
  const api = (input.upstream ?? CURRENT_UPSTREAM) === '2026-08' ? 'serving.kserve.io/v1alpha2, KServe v0.20' : 'serving.kserve.io/v1alpha1, KServe v0.18.0 or v0.18.1';
  return `# LLMInferenceService spec overlay (${api}) for ${input.modelId}.
# Sizing: ${sizing.gpus} GPU${sizing.gpus > 1 ? 's' : ''}, ${sizing.memoryRequest}–${sizing.memoryLimit} memory (app-serving's table by model size; adjust to your model).
# app-serving adds model.uri, the Gateway, the ServiceAccount, placement, pull secrets and baseRefs.
model:
  name: ${input.modelId}
replicas: 1
template:
  containers:
    - name: main
      env:
        - name: VLLM_ADDITIONAL_ARGS
          value: "--gpu-memory-utilization 0.90 --max-model-len 8192${tp}"
      resources:
        limits:
          nvidia.com/gpu: "${sizing.gpus}"
          memory: ${sizing.memoryLimit}
        requests:
          nvidia.com/gpu: "${sizing.gpus}"
          cpu: "${2 * sizing.gpus}"
          memory: ${sizing.memoryRequest}
`;
}
