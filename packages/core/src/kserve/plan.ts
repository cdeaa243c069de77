import {
  ENVOY_GATEWAY_NAMESPACE,
  ENVOY_LABEL_OWNING_GATEWAY_NAME,
  ENVOY_LABEL_OWNING_GATEWAY_NAMESPACE,
  GATEWAY_HTTP_PORT,
  INFRA_MIRROR_PROJECT,
  KSERVE_VLLM_PORT,
  type Category,
  type Upstream,
} from '../constants.ts';
import { envoyGatewayClassOf } from '../envoy-gateway.ts';
import { accessPlan, type AccessPlan } from '../features/access/plan.ts';
import type { StackConfig } from '../config/load.ts';
import type { DiscoveredModel, ValuesFile } from '../discovery.ts';
import type { Issue, IssueList } from '../errors.ts';
import { formatPath } from '../errors.ts';
import { mirrorReference, type ImageSource } from '../images.ts';
import { dnsLabelProblem, kserveNames } from '../names.ts';
import { sourceRef, storagePlan, type StoragePlan } from '../storage.ts';
import { MODEL_REF_ANNOTATION } from '../values/llmd.ts';
import { effectiveValues, getPath, isValuesMap, mergeAll, type Values } from '../values/merge.ts';
import { findConflicts, findTypeProblems, findUnknownKeys, requirementValues, show, unionList, type Requirement, type TypeCheck } from '../values/requirements.ts';
import { nodeAffinityFor, type Toleration } from '../values/scheduling.ts';
import type { StrictBlock } from '../values/chart-facts.ts';
import { HOSTNAME_TOPOLOGY_KEY, KSERVE_AUTOSCALER_KEYS, kserveWellKnownConfigs, type KserveWellKnownImage } from './facts.ts';
import { KSERVE_V0_18, type KserveRelease } from './releases.ts';
import { kserveScaling, resolveAutoscaling, valuesAutoscalerConflicts, type ResolvedAutoscaling } from '../features/autoscaling/index.ts';
import { ADAPTERS_ANNOTATION, adapterPlans, adaptersAnnotation, kserveLoraSpec, loraSizes, serverAdapterConflicts, volumeAdapters, type AdapterPlan, type LoraSizes } from '../features/adapters/index.ts';

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
  /** The set of upstream versions: which KServe release the model is written for. */
  readonly upstream: Upstream;
  /** The LLMInferenceService's apiVersion: `serving.kserve.io/v1alpha1` (KServe v0.18) or `v1alpha2` (v0.20). */
  readonly apiVersion: string;
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
  /** KServe's Service `<service>-kserve-workload-svc`, where the route's catch-all rule goes (not through the EPP). */
  readonly workloadService: string;
  /** Whether KServe runs the model's scheduler (EPP): its inference requests then go through the InferencePool. */
  readonly scheduler: boolean;
  readonly route: string;
  readonly inferencePool: string;
  /** Clients call `<gateway address><pathPrefix>/v1/...`. */
  readonly pathPrefix: string;
  readonly gateway: { readonly name: string; readonly namespace: string };
  /** Labels KServe puts on the model's vLLM pods. */
  readonly podLabels: Readonly<Record<string, string>>;
  readonly servedModelName: string;
  readonly port: number;
  /** Ready workload pods to expect: `replicas`, or `scaling.minReplicas` (1 when unset) for an autoscaled model. */
  readonly replicas: number;
  readonly storage: StoragePlan | null;
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly tolerations: readonly Toleration[];
  readonly pullSecret: string | null;
  /** The LLMInferenceService spec: the model's overlay merged with the programmatic values. */
  readonly spec: Values;
  /** The LLMInferenceServiceConfig spec: serving defaults, and KServe's images from `kserve.imageMirror` when set. */
  readonly configSpec: Values;
  /** KServe's well-known LLMInferenceServiceConfigs the controller merges under this model, in its order. */
  readonly wellKnownConfigs: readonly string[];
  readonly images: readonly ImageSource[];
  /**
   * The stack's `autoscaling`, written into the spec's `scaling` (the Workload Variant Autoscaler
   * with this actuator), else null.
   */
  readonly autoscaling: (ResolvedAutoscaling & { readonly actuator: 'hpa' | 'keda' }) | null;
  /** Who may call the model through the Envoy Gateway, and its rate limit (no key's value). */
  readonly access: AccessPlan;
  /** LoRA adapters served beside the model, each under its own name (`spec.model.lora`); empty when none. */
  readonly adapters: readonly AdapterPlan[];
  /** The LoRA sizes written into `spec.model.lora`, or null without adapters. */
  readonly lora: LoraSizes | null;
}

/**
 * The WVA actuator app-serving writes for KServe v0.18 (`scaling.wva.hpa`: the HPA path v0.18's
 * controller takes; v0.20 adds direct KEDA, `kserveScaling(settings, 'keda')`).
 */
export const KSERVE_SCALING_ACTUATOR = 'hpa' as const;

/** Keys of the LLMInferenceService spec (v1alpha1, KServe v0.18) the overlay may set. */
export const KSERVE_STRICT: readonly StrictBlock[] = [
  { path: [], keys: ['annotations', 'baseRefs', 'labels', 'model', 'parallelism', 'prefill', 'replicas', 'router', 'scaling', 'storageInitializer', 'template', 'worker'] },
  { path: ['model'], keys: ['criticality', 'lora', 'name', 'uri'] },
  { path: ['router'], keys: ['gateway', 'ingress', 'route', 'scheduler'] },
  { path: ['parallelism'], keys: ['data', 'dataLocal', 'dataRPCPort', 'expert', 'pipeline', 'tensor'] },
];

/**
 * The same for v1alpha2 (KServe v0.20): `kvCacheOffloading`, `tracing` and `model.confidential` are
 * new, `model.criticality` is gone (kserve/kserve v0.20.0 config/crd/full/llmisvc, held by a drift test).
 */
export const KSERVE_STRICT_V1ALPHA2: readonly StrictBlock[] = [
  { path: [], keys: ['annotations', 'baseRefs', 'kvCacheOffloading', 'labels', 'model', 'parallelism', 'prefill', 'replicas', 'router', 'scaling', 'storageInitializer', 'template', 'tracing', 'worker'] },
  { path: ['model'], keys: ['confidential', 'lora', 'name', 'uri'] },
  { path: ['router'], keys: ['gateway', 'ingress', 'route', 'scheduler'] },
  { path: ['parallelism'], keys: ['data', 'dataLocal', 'dataRPCPort', 'expert', 'pipeline', 'tensor'] },
];

/** The stack-wide KServe plan. */
export function kserveStackPlan(config: StackConfig): KserveStackPlan {
  const gateway = config.kserve?.gateway ?? { name: 'kserve-ingress-gateway', namespace: 'kserve' };
  // The class is the stack's Envoy GatewayClass, one for KServe and llm-d alike.
  const envoyClass = envoyGatewayClassOf(config);
  return {
    gateway: {
      name: gateway.name,
      namespace: gateway.namespace,
      className: envoyClass.name,
      controllerName: envoyClass.controllerName,
      create: envoyClass.create,
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
  /** The KServe release to write for. @default KServe v0.18 (the 2026-02 set) */
  readonly release?: KserveRelease;
}

/** Plans one KServe model: names, storage, the LLMInferenceService spec and its config. */
export function planKserveModel({ config, model, harbor, toleration, list, release = KSERVE_V0_18 }: KserveModelInput): KserveModelPlan | undefined {
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

  const volume = source
    ? storagePlan({
        slug,
        source: source.huggingFace ? { ...source, layout: 'directory', modelUri: source.huggingFace.repo } : source,
        cloudProvider: config.cloudProvider,
        harborHostname: config.harborHostname,
        downloaderImage:
          config.cloudProvider === 'on-prem' && config.harborHostname
            ? mirrorReference(release.downloaderImage, `${config.harborHostname}/${INFRA_MIRROR_PROJECT}`)
            : release.downloaderImage,
      })
    : null;
  // LoRA adapters (features/adapters): KServe v0.20 mounts or downloads them and writes vLLM's
  // options from spec.model.lora (workload_lora.go); those from Harbor are pulled into the volume
  // by the model's pull Job first, like the weights, and reach KServe as pvc://.
  const adapterDrafts = adapterPlans(entry.adapters, '', { volumeMount: null, server: 'kserve' });
  const sizes = adapterDrafts.length > 0 ? loraSizes(adapterDrafts, entry.maxLoraRank) : null;
  const onVolume = sizes ? volumeAdapters(adapterDrafts, sizes) : null;
  const storage = volume && onVolume ? { ...volume, adapters: onVolume } : volume;
  const affinity = nodeAffinityFor(entry.nodeSelector);
  const pullSecrets = harbor ? [{ name: harbor.pullSecret }] : [];
  const spec = file.values;
  const podLabels = {
    'app.kubernetes.io/name': names.service,
    'app.kubernetes.io/part-of': 'llminferenceservice',
    'kserve.io/component': 'workload',
  };

  const apiVersion = `${release.api.group}/${release.api.version}`;
  list.addAll(findUnknownKeys(file, release.api.version === 'v1alpha2' ? KSERVE_STRICT_V1ALPHA2 : KSERVE_STRICT, `LLMInferenceService (${apiVersion}, KServe ${release.version})`));
  list.addAll(findTypeProblems(file, KSERVE_TYPES));
  list.addAll(replicasWithScaling(file));
  const autoscaled = entry.autoscaling;
  if (autoscaled) list.addAll(valuesAutoscalerConflicts(file, KSERVE_AUTOSCALER_KEYS));

  const defaults: Values = { router: { route: {}, scheduler: {} } };
  // The CRD rejects replicas together with scaling (KSERVE_REPLICAS_SCALING_RULE in facts.ts): default it only without scaling.
  if (!isSet(getPath(spec, ['scaling'])) && !autoscaled) defaults.replicas = 1;
  if (storage) defaults.model = { name: servedNameOf(storage) };
  // The scheduler (EPP) runs unless the overlay removes it (`router.scheduler: null`) or points at its own pool.
  const schedulerOn = hasScheduler(effectiveValues(mergeAll(defaults, spec)));

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
    // spec.annotations are copied onto the workload pod template (kserve v0.18.1
    // pkg/controller/v1alpha2/llmisvc/workload_single_node.go, propagateDeploymentMetadata):
    // new weights change the annotation, so the pods roll onto them.
    required.push({ path: ['annotations', MODEL_REF_ANNOTATION], value: sourceRef(storage), reason: 'new weights roll the model pods' });
  }
  if (affinity) {
    required.push({
      path: ['template', 'affinity', 'nodeAffinity', 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms'],
      value: affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms,
      reason: "the stack's nodeSelector pins the model to these nodes",
    });
  }
  // The model is on a claim when the stack fills one, or when the overlay points at one itself.
  const fileUri = getPath(spec, ['model', 'uri']);
  const claim = storage?.pvc ?? (typeof fileUri === 'string' && fileUri.startsWith('pvc://') ? fileUri.slice('pvc://'.length).split('/')[0] : undefined);
  if (claim && schedulerOn) {
    // KServe's scheduler config carries a `tokenizer` container, and with it the controller mounts
    // the model into the scheduler pod too: for pvc:// the same claim, read-only, with a subPath
    // (kserve v0.18.1 pkg/controller/v1alpha2/llmisvc/scheduler.go, expectedSchedulerDeployment →
    // attachModelArtifacts). The claim is ReadWriteOnce, so the scheduler must run on the
    // workload's node, or it never starts ("Multi-Attach").
    required.push({
      path: ['router', 'scheduler', 'template', 'affinity', 'podAffinity', 'requiredDuringSchedulingIgnoredDuringExecution'],
      value: [{ labelSelector: { matchLabels: { ...podLabels } }, topologyKey: HOSTNAME_TOPOLOGY_KEY }],
      reason: `KServe mounts the model's volume ${claim} into the scheduler pod as well, so it must run on the node of the model pods`,
    });
    // Scheduler pod annotations (router.scheduler.annotations) reach its pod template (scheduler.go,
    // propagateSchedulerMetadata): its tokenizer reads the new weights' tokenizer too.
    if (storage) required.push({ path: ['router', 'scheduler', 'annotations', MODEL_REF_ANNOTATION], value: sourceRef(storage), reason: 'new weights restart the scheduler, whose tokenizer reads them' });
  }
  // An overlay that sets --lora-modules itself makes KServe skip writing the adapters' options
  // (workload_lora.go, userSuppliedLoRAConfig), so it is refused with the rest.
  if (sizes) {
    required.push({ path: ['model', 'lora'], value: kserveLoraSpec(adapterDrafts, sizes, storage?.pvc ?? null), reason: "the stack's adapters and maxLoraRank" });
    // A new source behind the same name (a new tag) changes no URI KServe mounts: the annotation rolls the pods.
    required.push({ path: ['annotations', ADAPTERS_ANNOTATION], value: adaptersAnnotation(adapterDrafts)[ADAPTERS_ANNOTATION], reason: 'a new adapter source rolls the model pods' });
  }
  const containers = getPath(spec, ['template', 'containers']);
  const mainIndex = Array.isArray(containers) ? containers.findIndex((c) => isValuesMap(c) && c.name === 'main') : -1;
  const mainEnv = mainIndex >= 0 ? getPath((containers as unknown[])[mainIndex], ['env']) : undefined;
  const extraArgs = Array.isArray(mainEnv) ? mainEnv.findIndex((e) => isValuesMap(e) && e.name === 'VLLM_ADDITIONAL_ARGS') : -1;
  const adapterConflicts = serverAdapterConflicts(
    file,
    {
      args: mainIndex >= 0 ? [['template', 'containers', mainIndex, 'args']] : [],
      argStrings: extraArgs >= 0 ? [['template', 'containers', mainIndex, 'env', extraArgs, 'value']] : [],
    },
    adapterDrafts,
  );
  list.addAll(adapterConflicts.issues);
  list.addAll(findConflicts(file, required));

  const lists: Values = {
    baseRefs: unionList(getPath(spec, ['baseRefs']), [{ name: names.config }]),
  };
  const template: Values = {};
  if (toleration) template.tolerations = unionList(getPath(spec, ['template', 'tolerations']), [toleration]);
  if (pullSecrets.length) template.imagePullSecrets = unionList(getPath(spec, ['template', 'imagePullSecrets']), pullSecrets);
  if (Object.keys(template).length) lists.template = template;
  if (schedulerOn) {
    const st = ['router', 'scheduler', 'template'];
    // KServe merges an LLMInferenceService over its configs with a strategic merge patch of the Go
    // structs (config_merge.go, mergeSpecs). A scheduler template without `containers` marshals as
    // `containers: null`, which deletes the scheduler's containers from the well-known config
    // (SetDefaults guards only template, worker and prefill): name `main` so they are merged instead.
    const scheduler: Values = { containers: withContainer(getPath(spec, [...st, 'containers']), 'main') };
    // Beside the model pods it must tolerate what they tolerate (the stack's GPU toleration, the overlay's own).
    const workloadTolerations = (template.tolerations as unknown[] | undefined) ?? getPath(spec, ['template', 'tolerations']);
    if (claim && Array.isArray(workloadTolerations) && workloadTolerations.length) scheduler.tolerations = unionList(getPath(spec, [...st, 'tolerations']), workloadTolerations);
    // KServe copies the model ServiceAccount's pull secrets to the scheduler's ServiceAccount only
    // when it finds that account while reconciling (scheduler.go, expectedSchedulerServiceAccount;
    // else those of the namespace's `default`): the pod's own imagePullSecrets do not depend on it.
    if (pullSecrets.length) scheduler.imagePullSecrets = unionList(getPath(spec, [...st, 'imagePullSecrets']), pullSecrets);
    lists.router = { scheduler: { template: scheduler } };
  }
  // The stack's autoscaling is the spec's scaling (the overlay may not set its own: checked above).
  const stackScaling: Values = autoscaled ? { scaling: kserveScaling(autoscaled, KSERVE_SCALING_ACTUATOR) } : {};
  const merged = mergeAll(defaults, spec, requirementValues(required), lists, stackScaling);
  const effective = effectiveValues(merged);

  const uri = getPath(effective, ['model', 'uri']);
  // The controller accepts pvc://, oci://, hf:// and s3:// only ("unsupported schema in model URI":
  // kserve v0.18.1 pkg/controller/v1alpha2/llmisvc/workload_storage.go, attachModelArtifacts).
  if (typeof uri !== 'string' || !/^(hf|pvc|oci|s3):\/\/./.test(uri)) {
    list.add(
      uri === undefined
        ? config.locate('config.missing-key', [...at, 'modelSource'], `${model.folder}: a kserve model needs modelSource in the stack, or model.uri in ${file.file}`)
        : file.source.issue('values.invalid', ['model', 'uri'], `must be a model URI KServe accepts (hf://, pvc://, oci://, s3://), not ${show(uri)}`),
    );
  }
  if (list.size > before) return undefined;

  const servedModelName = String(getPath(effective, ['model', 'name']) ?? slug);
  const scaling = getPath(effective, ['scaling']);
  const count = isValuesMap(scaling) ? getPath(scaling, ['minReplicas']) : getPath(effective, ['replicas']);
  const replicas = Number.isInteger(count) ? (count as number) : 1;

  const wellKnownConfigs = kserveWellKnownConfigs(effective);
  const mirror = config.kserve?.imageMirror;
  const images: ImageSource[] = [];
  const mirrored: KserveWellKnownImage[] = [];
  for (const section of POD_SECTIONS) {
    for (const kind of ['containers', 'initContainers'] as const) {
      const items = getPath(effective, [...section.split('.'), kind]);
      if (!Array.isArray(items)) continue;
      items.forEach((c, i) => {
        if (isValuesMap(c) && typeof c.image === 'string') images.push({ image: c.image, where: `${file.file}: ${section}.${kind}[${i}].image` });
      });
    }
  }
  for (const fact of release.wellKnownImages) {
    if (!wellKnownConfigs.includes(fact.config)) continue;
    // The overlay's own image for this container wins over the config's (it merges last).
    if (typeof containerOf(effective, fact)?.image === 'string') continue;
    const image = mirror ? mirrorReference(fact.image, mirror) : fact.image;
    // On-prem without a mirror the nodes cannot pull it: the warning about it says where the fix is.
    const note = mirror ? ' (kserve.imageMirror)' : config.cloudProvider === 'on-prem' ? '; set kserve.imageMirror to pull it from Harbor' : '';
    images.push({ image, where: `KServe ${release.version} ${fact.config}: ${fact.section}.${fact.list}[${fact.container}]${note}` });
    if (mirror) mirrored.push({ ...fact, image });
  }
  if (storage) images.push({ image: storage.image, where: `model ${storage.source.kind === 'oras' ? 'pull' : 'download'} Job ${storage.job}` });
  // KServe downloads hf:// adapters with its storage initializer, an init container of the model's pods.
  const fromHub = adapterDrafts.filter((a) => a.source.kind === 'huggingface').map((a) => a.name);
  if (fromHub.length > 0) images.push({ image: release.downloaderImage, where: `KServe ${release.version} storage initializer (its storageInitializer image), downloading the adapters ${fromHub.join(', ')}` });
  const adapters: AdapterPlan[] = adapterDrafts.map((a) => ({ ...a, parent: servedModelName }));
  return {
    platform: 'kserve',
    upstream: release.upstream,
    apiVersion,
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
    workloadService: names.workloadService,
    scheduler: hasScheduler(effective),
    route: names.route,
    inferencePool: names.inferencePool,
    pathPrefix: names.pathPrefix,
    gateway: { name: stack.gateway.name, namespace: stack.gateway.namespace },
    podLabels,
    servedModelName,
    port: KSERVE_VLLM_PORT,
    replicas,
    storage,
    nodeSelector: entry.nodeSelector,
    tolerations: toleration ? [toleration] : [],
    pullSecret: harbor?.pullSecret ?? null,
    spec: merged,
    configSpec: kserveConfigSpec(mirrored),
    wellKnownConfigs,
    images,
    autoscaling: autoscaled ? { ...resolveAutoscaling(autoscaled), actuator: KSERVE_SCALING_ACTUATOR } : null,
    access: accessPlan(entry.access),
    adapters,
    lora: sizes,
  };
}

/** The pod specs of an LLMInferenceService spec (each a Kubernetes PodSpec). */
const POD_SECTIONS = ['template', 'worker', 'prefill.template', 'prefill.worker', 'router.scheduler.template'] as const;

/**
 * The LLMInferenceServiceConfig spec every KServe model references: offline serving, and the
 * images of KServe's well-known configs where the stack mirrors them (`kserve.imageMirror`). The
 * scheduler keeps KServe's own EndpointPickerConfig (a model may set `router.scheduler.config` in
 * its overlay).
 */
export function kserveConfigSpec(images: readonly Pick<KserveWellKnownImage, 'section' | 'list' | 'container' | 'image'>[] = []): Values {
  const spec: Values = {
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
  for (const { section, list, container, image } of images) {
    let pod: Values = spec;
    for (const key of section.split('.')) {
      if (!isValuesMap(pod[key])) pod[key] = {};
      pod = pod[key] as Values;
    }
    const items = Array.isArray(pod[list]) ? (pod[list] as Values[]) : (pod[list] = []);
    const found = items.find((c) => c.name === container);
    if (found) found.image = image;
    else items.push({ name: container, image });
  }
  return spec;
}

/** The container of `fact` in a spec (by pod section, list and name), if the spec has one. */
function containerOf(spec: Values, fact: Pick<KserveWellKnownImage, 'section' | 'list' | 'container'>): Values | undefined {
  const items = getPath(spec, [...fact.section.split('.'), fact.list]);
  return Array.isArray(items) ? (items.find((c) => isValuesMap(c) && c.name === fact.container) as Values | undefined) : undefined;
}

/** `existing` (when a list) with a container named `name` (appended as `{name}` when missing). */
function withContainer(existing: unknown, name: string): unknown[] {
  const items = Array.isArray(existing) ? [...existing] : [];
  if (!items.some((c) => isValuesMap(c) && c.name === name)) items.push({ name });
  return items;
}

function hasScheduler(spec: Values): boolean {
  const scheduler = getPath(spec, ['router', 'scheduler']);
  const ref = getPath(scheduler, ['pool', 'ref', 'name']);
  return isValuesMap(scheduler) && !(typeof ref === 'string' && ref !== '');
}

function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/**
 * `replicas` with `scaling` in the overlay (at the top and under `prefill`): the CRD rejects the
 * pair (`KSERVE_REPLICAS_SCALING_RULE` in facts.ts), so say so with the file, line and key before deploying.
 */
function replicasWithScaling(file: ValuesFile): Issue[] {
  const issues: Issue[] = [];
  for (const at of [[], ['prefill']]) {
    const block = at.length ? getPath(file.values, at) : file.values;
    if (isValuesMap(block) && isSet(block.replicas) && isSet(block.scaling)) {
      issues.push(
        file.source.issue(
          'values.conflict',
          [...at, 'replicas'],
          `is set together with ${formatPath([...at, 'scaling'])}, and KServe's CRD rejects the pair ("replicas and scaling are mutually exclusive"): remove ${formatPath([...at, 'replicas'])} for an autoscaled model (scaling.minReplicas sets the floor), or ${formatPath([...at, 'scaling'])} for a fixed count`,
        ),
      );
    }
  }
  return issues;
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
  { path: ['scaling'], ok: isValuesMap, want: 'a mapping (minReplicas, maxReplicas, wva)' },
  { path: ['annotations'], ok: isValuesMap, want: 'a mapping of pod annotations' },
  { path: ['router', 'scheduler', 'template'], ok: isValuesMap, want: 'a pod spec mapping' },
  { path: ['router', 'scheduler', 'template', 'containers'], ok: Array.isArray, want: 'a list of containers' },
  { path: ['router', 'scheduler', 'template', 'tolerations'], ok: Array.isArray, want: 'a list of tolerations' },
  { path: ['router', 'scheduler', 'template', 'imagePullSecrets'], ok: Array.isArray, want: 'a list of {name: <secret>}' },
  { path: ['baseRefs'], ok: (v) => Array.isArray(v) && v.every((r) => isValuesMap(r) && typeof r.name === 'string'), want: 'a list of {name: <LLMInferenceServiceConfig>}' },
];
