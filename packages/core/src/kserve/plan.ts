import {
  ENVOY_GATEWAY_CONTROLLER,
  ENVOY_GATEWAY_NAMESPACE,
  ENVOY_LABEL_OWNING_GATEWAY_NAME,
  ENVOY_LABEL_OWNING_GATEWAY_NAMESPACE,
  GATEWAY_HTTP_PORT,
  HF_DOWNLOADER_IMAGE_PUBLIC,
  INFRA_MIRROR_PROJECT,
  KSERVE_VLLM_PORT,
  type Category,
} from '../constants.ts';
import type { StackConfig } from '../config/load.ts';
import type { DiscoveredModel } from '../discovery.ts';
import type { IssueList } from '../errors.ts';
import { mirrorReference, type ImageSource } from '../images.ts';
import { dnsLabelProblem, kserveNames } from '../names.ts';
import { storagePlan, type StoragePlan } from '../storage.ts';
import { effectiveValues, getPath, isValuesMap, mergeAll, type Values } from '../values/merge.ts';
import { findConflicts, findTypeProblems, findUnknownKeys, requirementValues, show, unionList, type Requirement, type TypeCheck } from '../values/requirements.ts';
import { nodeAffinityFor, type Toleration } from '../values/scheduling.ts';
import type { StrictBlock } from '../values/chart-facts.ts';

/** Stack-wide KServe objects: the Envoy Gateway KServe attaches its routes to. */
export interface KserveStackPlan {
  readonly gateway: {
    readonly name: string;
    readonly namespace: string;
    readonly className: string;
    readonly controllerName: string;
    /** Whether app-serving creates the GatewayClass and Gateway (false: the cluster has them). */
    readonly create: boolean;
    readonly port: number;
    /** Where Envoy Gateway runs this Gateway's proxies, and the labels that select them. */
    readonly proxyNamespace: string;
    readonly proxyLabels: Readonly<Record<string, string>>;
  };
}

/** One model on the KServe platform. */
export interface KserveModelPlan {
  readonly platform: 'kserve';
  readonly name: string;
  readonly category: Category;
  readonly slug: string;
  readonly folder: string;
  readonly namespace: string;
  /** The LLMInferenceService and its children as KServe names them. */
  readonly service: string;
  readonly config: string;
  readonly serviceAccount: string;
  /** The Secret with the Hugging Face token, when the stack has one. */
  readonly hfTokenSecret: string | null;
  readonly workload: string;
  readonly route: string;
  readonly inferencePool: string;
  /** Clients call `<gateway address><pathPrefix>/v1/...`. */
  readonly pathPrefix: string;
  readonly gateway: { readonly name: string; readonly namespace: string };
  /** Labels KServe puts on the model's vLLM pods. */
  readonly podLabels: Readonly<Record<string, string>>;
  readonly servedModelName: string;
  readonly port: number;
  readonly replicas: number;
  readonly storage: StoragePlan | null;
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly tolerations: readonly Toleration[];
  readonly pullSecret: string | null;
  /** The LLMInferenceService spec: the model's overlay merged with the programmatic values. */
  readonly spec: Values;
  /** The LLMInferenceServiceConfig spec (scheduler and template defaults). */
  readonly configSpec: Values;
  readonly images: readonly ImageSource[];
}

/** The EndpointPickerConfig of every KServe model: queue depth and prefix-cache scoring. */
export const KSERVE_SCHEDULER_CONFIG = {
  apiVersion: 'inference.networking.x-k8s.io/v1alpha1',
  kind: 'EndpointPickerConfig',
  plugins: [{ type: 'single-profile-handler' }, { type: 'queue-scorer' }, { type: 'prefix-cache-scorer' }, { type: 'max-score-picker' }],
  schedulingProfiles: [
    {
      name: 'default',
      plugins: [{ pluginRef: 'queue-scorer', weight: 2 }, { pluginRef: 'prefix-cache-scorer', weight: 3 }, { pluginRef: 'max-score-picker' }],
    },
  ],
} as const;

/** Keys of the LLMInferenceService spec (v1alpha1, KServe v0.18) the overlay may set. */
export const KSERVE_STRICT: readonly StrictBlock[] = [
  { path: [], keys: ['annotations', 'baseRefs', 'labels', 'model', 'parallelism', 'prefill', 'replicas', 'router', 'scaling', 'storageInitializer', 'template', 'worker'] },
  { path: ['model'], keys: ['criticality', 'lora', 'name', 'uri'] },
  { path: ['router'], keys: ['gateway', 'ingress', 'route', 'scheduler'] },
  { path: ['parallelism'], keys: ['data', 'dataLocal', 'dataRPCPort', 'expert', 'pipeline', 'tensor'] },
];

/** The stack-wide KServe plan. */
export function kserveStackPlan(config: StackConfig): KserveStackPlan {
  const gateway = config.kserve?.gateway ?? { name: 'kserve-ingress-gateway', namespace: 'kserve', className: 'envoy', create: true };
  return {
    gateway: {
      name: gateway.name,
      namespace: gateway.namespace,
      className: gateway.className,
      controllerName: ENVOY_GATEWAY_CONTROLLER,
      create: gateway.create,
      port: GATEWAY_HTTP_PORT,
      proxyNamespace: ENVOY_GATEWAY_NAMESPACE,
      proxyLabels: { [ENVOY_LABEL_OWNING_GATEWAY_NAME]: gateway.name, [ENVOY_LABEL_OWNING_GATEWAY_NAMESPACE]: gateway.namespace },
    },
  };
}

interface KserveModelInput {
  readonly config: StackConfig;
  readonly model: DiscoveredModel;
  readonly harbor: { readonly hostname: string; readonly pullSecret: string } | null;
  readonly toleration: Toleration | undefined;
  readonly list: IssueList;
}

/** Plans one KServe model: names, storage, the LLMInferenceService spec and its config. */
export function planKserveModel({ config, model, harbor, toleration, list }: KserveModelInput): KserveModelPlan | undefined {
  const { entry, slug, category } = model;
  const at = ['models', category, model.index] as const;
  const names = kserveNames(slug, { nameSpace: entry.nameSpace });
  const file = model.values.kserve!;
  const before = list.size;
  const stack = kserveStackPlan(config);

  const nsProblem = dnsLabelProblem('namespace', names.namespace);
  if (nsProblem) list.add(config.locate('name.too-long', [...at, entry.nameSpace !== undefined ? 'nameSpace' : 'name'], `${model.folder}: ${nsProblem}`));
  if (entry.releaseName !== undefined) {
    list.add(config.locate('config.contradiction', [...at, 'releaseName'], 'names the llm-d-infra release; a kserve model has none — remove it'));
  }
  const source = entry.modelSource;
  if (source?.harborRef && source.layout !== 'directory') {
    list.add(
      config.locate('config.invalid', [...at, 'modelSource', 'layout'], 'must be "directory" for a kserve model: KServe serves the folder holding config.json (pvc://), not a Hugging Face cache'),
    );
  }

  const storage = source
    ? storagePlan({
        slug,
        source: source.huggingFace ? { ...source, layout: 'directory', modelUri: source.huggingFace.repo } : source,
        cloudProvider: config.cloudProvider,
        harborHostname: config.harborHostname,
        downloaderImage:
          config.cloudProvider === 'on-prem' && config.harborHostname
            ? mirrorReference(HF_DOWNLOADER_IMAGE_PUBLIC, `${config.harborHostname}/${INFRA_MIRROR_PROJECT}`)
            : HF_DOWNLOADER_IMAGE_PUBLIC,
      })
    : null;
  const affinity = nodeAffinityFor(entry.nodeSelector);
  const pullSecrets = harbor ? [{ name: harbor.pullSecret }] : [];
  const spec = file.values;

  list.addAll(findUnknownKeys(file, KSERVE_STRICT, 'LLMInferenceService (serving.kserve.io/v1alpha1)'));
  list.addAll(findTypeProblems(file, KSERVE_TYPES));
  const required: Requirement[] = [
    {
      path: ['router', 'gateway', 'refs'],
      value: [{ name: stack.gateway.name, namespace: stack.gateway.namespace }],
      reason: `the stack attaches every KServe model to the Gateway ${stack.gateway.namespace}/${stack.gateway.name}`,
    },
    { path: ['template', 'serviceAccountName'], value: names.serviceAccount, reason: 'the ServiceAccount carries the Hugging Face token Secret' },
  ];
  if (storage) {
    required.push({ path: ['model', 'uri'], value: `pvc://${storage.pvc}/${storage.modelUri}`, reason: `modelSource puts the weights on the PVC ${storage.pvc}` });
  }
  if (affinity) {
    required.push({
      path: ['template', 'affinity', 'nodeAffinity', 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms'],
      value: affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms,
      reason: "the stack's nodeSelector pins the model to these nodes",
    });
  }
  list.addAll(findConflicts(file, required));

  const defaults: Values = { replicas: 1, router: { route: {}, scheduler: {} } };
  if (storage) defaults.model = { name: servedNameOf(storage) };
  const lists: Values = {
    baseRefs: unionList(getPath(spec, ['baseRefs']), [{ name: names.config }]),
  };
  const template: Values = {};
  if (toleration) template.tolerations = unionList(getPath(spec, ['template', 'tolerations']), [toleration]);
  if (pullSecrets.length) template.imagePullSecrets = unionList(getPath(spec, ['template', 'imagePullSecrets']), pullSecrets);
  if (Object.keys(template).length) lists.template = template;
  const merged = mergeAll(defaults, spec, requirementValues(required), lists);
  const effective = effectiveValues(merged);

  const uri = getPath(effective, ['model', 'uri']);
  if (typeof uri !== 'string' || !/^(hf|pvc|oci|s3|gs|https?):\/\/./.test(uri)) {
    list.add(
      uri === undefined
        ? config.locate('config.missing-key', [...at, 'modelSource'], `${model.folder}: a kserve model needs modelSource in the stack, or model.uri in ${file.file}`)
        : file.source.issue('values.invalid', ['model', 'uri'], `must be a model URI (hf://, pvc://, oci://, s3://), not ${show(uri)}`),
    );
  }
  if (list.size > before) return undefined;

  const servedModelName = String(getPath(effective, ['model', 'name']) ?? slug);
  const replicas = Number.isInteger(getPath(effective, ['replicas'])) ? (getPath(effective, ['replicas']) as number) : 1;
  const images: ImageSource[] = [];
  const containers = getPath(effective, ['template', 'containers']);
  if (Array.isArray(containers)) {
    containers.forEach((c, i) => {
      if (isValuesMap(c) && typeof c.image === 'string') images.push({ image: c.image, where: `${file.file}: template.containers[${i}].image` });
    });
  }
  if (storage) images.push({ image: storage.image, where: `model ${storage.source.kind === 'oras' ? 'pull' : 'download'} Job ${storage.job}` });
  return {
    platform: 'kserve',
    name: entry.name,
    category,
    slug,
    folder: model.folder,
    namespace: names.namespace,
    service: names.service,
    config: names.config,
    serviceAccount: names.serviceAccount,
    hfTokenSecret: config.hfToken ? names.hfTokenSecret : null,
    workload: names.workload,
    route: names.route,
    inferencePool: names.inferencePool,
    pathPrefix: names.pathPrefix,
    gateway: { name: stack.gateway.name, namespace: stack.gateway.namespace },
    podLabels: {
      'app.kubernetes.io/name': names.service,
      'app.kubernetes.io/part-of': 'llminferenceservice',
      'kserve.io/component': 'workload',
    },
    servedModelName,
    port: KSERVE_VLLM_PORT,
    replicas,
    storage,
    nodeSelector: entry.nodeSelector,
    tolerations: toleration ? [toleration] : [],
    pullSecret: harbor?.pullSecret ?? null,
    spec: merged,
    configSpec: kserveConfigSpec(),
    images,
  };
}

/** The LLMInferenceServiceConfig spec every KServe model references: the scheduler and offline-cache defaults. */
export function kserveConfigSpec(): Values {
  return {
    router: { scheduler: { config: { inline: structuredClone(KSERVE_SCHEDULER_CONFIG) as unknown as Values } } },
    template: {
      containers: [
        {
          name: 'main',
          env: [
            // Weights come from the PVC; never reach out to the Hugging Face Hub at serve time.
            { name: 'HF_HUB_OFFLINE', value: '1' },
          ],
        },
      ],
    },
  };
}

function servedNameOf(storage: StoragePlan): string {
  return storage.source.kind === 'huggingface' ? storage.source.repo : storage.modelUri.split('/').slice(-2).join('/');
}

const KSERVE_TYPES: readonly TypeCheck[] = [
  { path: ['replicas'], ok: (v) => Number.isInteger(v) && (v as number) >= 0, want: 'a whole number ≥ 0' },
  { path: ['model', 'name'], ok: (v) => typeof v === 'string' && v.length > 0, want: 'a non-empty string' },
  { path: ['template'], ok: isValuesMap, want: 'a pod spec mapping' },
  { path: ['template', 'containers'], ok: Array.isArray, want: 'a list of containers' },
  { path: ['template', 'tolerations'], ok: Array.isArray, want: 'a list of tolerations' },
  { path: ['template', 'imagePullSecrets'], ok: Array.isArray, want: 'a list of {name: <secret>}' },
  { path: ['baseRefs'], ok: (v) => Array.isArray(v) && v.every((r) => isValuesMap(r) && typeof r.name === 'string'), want: 'a list of {name: <LLMInferenceServiceConfig>}' },
];
