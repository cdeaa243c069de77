/**
 * The app-serving components as a Pulumi plugin package, for Python, Go, C# and YAML programs:
 * `pulumi package add <this folder>` runs Pulumi's component analyzer on this file and generates
 * an SDK with the tokens `app-serving:index:LlmdModel`, `app-serving:index:KserveModel` and
 * `app-serving:index:AppServing`.
 *
 * The analyzer accepts flat interfaces only (no unions, literal types or intersections), so these
 * args are the multi-language face of `@app-serving/pulumi-components`: plain fields, enums for
 * the closed sets. Each component wraps the library's component of the same name as its only
 * child; names, values and checks are core's.
 */
import * as pulumi from '@pulumi/pulumi';
import { loadStackFile, planDeployment } from '@app-serving/core';
import * as lib from '@app-serving/pulumi-components';

/** The model's category. */
export enum Category {
  Generative = 'generative',
  Embedder = 'embedder',
}

/** Where the cluster runs: `on-prem` pulls images and weights from Harbor. */
export enum CloudProvider {
  Cloud = 'cloud',
  OnPrem = 'on-prem',
}

/** How the weights sit in the model volume. */
export enum ModelLayout {
  /** A Hugging Face hub cache (served as `pvc+hf://`). */
  HfCache = 'hf-cache',
  /** A plain model directory (served as `pvc://`). */
  Directory = 'directory',
}

/** How a toleration matches the GPU nodes' taint. */
export enum TolerationOperator {
  Equal = 'Equal',
  Exists = 'Exists',
}

/** The effect of the GPU nodes' taint. */
export enum TaintEffect {
  NoSchedule = 'NoSchedule',
  PreferNoSchedule = 'PreferNoSchedule',
  NoExecute = 'NoExecute',
}

/** Download the weights from Hugging Face into the model volume (kserve platform). */
export interface HuggingFaceSource {
  /** Repository id, e.g. `Qwen/Qwen3-0.6B`. */
  repo: string;
  /** Branch, tag or commit. Default: the repository's default branch. */
  revision?: string;
}

/**
 * Where the model weights come from and the volume that holds them (a stack entry's
 * `modelSource`): an OCI artifact in Harbor pulled with ORAS (llm-d), or Hugging Face (KServe).
 */
export interface ModelSource {
  /** OCI artifact holding the model, e.g. `harbor.example.com/ai-models/qwen3:0.6b`. */
  harborRef?: string;
  /** Path of the model inside the volume (`<hub-cache-dir>/<org>/<model>` for the hf-cache layout). */
  modelUri?: string;
  /** Default: hf-cache. */
  layout?: ModelLayout;
  /** Size of the model volume, e.g. `40Gi`. */
  storageSize: string;
  /** StorageClass of the PVC. Default: the cluster default (cloud) or `hostpath` (on-prem). */
  storageClass?: string;
  /** On-prem: create a static hostPath PV on this node. */
  hostpathNode?: string;
  /** On-prem: the hostPath directory. Default: `/var/lib/hostpath/models/<slug>`. */
  hostpathDir?: string;
  /** Download from Hugging Face instead (kserve platform). */
  huggingFace?: HuggingFaceSource;
}

/** The toleration of the GPU nodes' taint, applied to the model's pods and pull Job. */
export interface GpuToleration {
  key: string;
  /** Default: Equal. */
  operator?: TolerationOperator;
  value?: string;
  effect?: TaintEffect;
}

/**
 * A model planned by core: read from its folder `<modelsDir>/<category>/<name>/`, or with its chart
 * values given inline (`values`), merged and checked the same way.
 */
export interface ModelArgs {
  /** The `models/` directory holding `<category>/<name>/`. Required unless `values` is given. */
  modelsDir?: string;
  /** The model's name (its folder name, when read from `modelsDir`). */
  name: string;
  /** Default: generative. */
  category?: Category;
  /** Default: cloud. */
  cloudProvider?: CloudProvider;
  /** Node labels the model's pods must run on. */
  nodeSelector?: { [key: string]: string };
  /** Namespace override. Default: `llm-d-<slug>`. */
  namespace?: string;
  /** Create the namespace. `false` deploys into an existing one and never deletes it. Default: true. */
  createNamespace?: boolean;
  /** Harbor registry host name (with a model source or on-prem). */
  harborHostname?: string;
  /** Harbor robot account. */
  harborUser?: string;
  /** Harbor robot token; stays a secret. */
  harborToken?: pulumi.Input<string>;
  /** How long `pulumi up` waits for the model's pull Job. Default: 60m. */
  pullTimeout?: string;
  /** Where the weights come from and the volume that holds them. Default: none (the chart values say). */
  modelSource?: ModelSource;
  /** The toleration of the GPU nodes' taint. */
  gpuToleration?: GpuToleration;
  /** llm-d-infra release override. Default: `infra-<slug>`. */
  releaseName?: string;
}

/**
 * An llm-d model's chart values inline, per chart, instead of the files of a model folder
 * (`gaie-<slug>/values.yaml`, `ms-<slug>/values.yaml`). Each is a map of any values, as the chart's
 * values.yaml would hold them; core merges them with its own values and checks them as it checks
 * a folder's files. Values must be known when the component is constructed.
 */
export interface LlmdValues {
  /** The model slug (what the folders `gaie-<slug>`/`ms-<slug>` would say); every name derives from it. */
  slug: string;
  /** Values of the GAIE `inferencepool` chart. */
  gaie: { [key: string]: any };
  /** Values of the `llm-d-modelservice` chart. */
  modelService: { [key: string]: any };
  /** Values of the `llm-d-infra` chart (optional). */
  infra?: { [key: string]: any };
}

/** A KServe model's LLMInferenceService spec overlay inline, instead of `kserve-<slug>/values.yaml`. */
export interface KserveValues {
  /** The model slug (what the folder `kserve-<slug>` would say); every name derives from it. */
  slug: string;
  /** The LLMInferenceService spec overlay (a map of any values). */
  kserve: { [key: string]: any };
}

/** Arguments of {@link LlmdModel}. */
export interface LlmdModelArgs extends ModelArgs {
  /** The chart values inline; then no model folder is read and `modelsDir` is not needed. */
  values?: LlmdValues;
}

/** Arguments of {@link KserveModel}. */
export interface KserveModelArgs extends ModelArgs {
  /** The Hugging Face token; stays a secret. */
  hfToken?: pulumi.Input<string>;
  /** The LLMInferenceService overlay inline; then no model folder is read and `modelsDir` is not needed. */
  values?: KserveValues;
}

/**
 * The first value inside `value` that is not known yet (an Output, or an unknown during preview),
 * as a path below `path`. Inline values decide the plan, so they must be known at construction.
 */
function unknownAt(value: unknown, path: string): string | undefined {
  if (pulumi.Output.isInstance(value) || value === pulumi.runtime.unknownValue) return path;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = unknownAt(item, `${path}[${i}]`);
      if (found) return found;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const found = unknownAt(item, `${path}.${key}`);
      if (found) return found;
    }
  }
  return undefined;
}

/** `value` (at arg `path`), known at construction: it decides the plan (names, charts, storage). */
function known<T>(value: T, path: string): T {
  const unknown = unknownAt(value, path);
  if (unknown !== undefined) {
    throw new pulumi.InputPropertyError({ propertyPath: unknown, reason: 'must be known when the component is constructed (it decides names, charts and storage): pass plain values, not outputs of other resources' });
  }
  return value;
}

/**
 * The library's argument errors in this component's terms: its args are flat (`modelsDir`,
 * `values.gaie`, `nodeSelector`), not the library's `folder.*`.
 */
function inPluginTerms<T>(args: ModelArgs & { values?: unknown }, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (!pulumi.InputPropertyError.isInstance(error)) throw error;
    const path = error.propertyPath === 'folder' ? (args.values !== undefined ? 'values' : 'modelsDir') : error.propertyPath.replace(/^folder\.(?=[a-zA-Z])/, '');
    throw new pulumi.InputPropertyError({ propertyPath: path, reason: error.reason.replace(/\bfolder\.(?=[a-zA-Z])/g, '') });
  }
}

function folderOf(args: ModelArgs & { values?: LlmdValues | KserveValues }, platform: 'llm-d' | 'kserve'): lib.ModelFolderArgs {
  const values = known(args.values, 'values');
  const modelSource = known(args.modelSource, 'modelSource');
  const gpuToleration = known(args.gpuToleration, 'gpuToleration');
  return {
    ...(args.modelsDir !== undefined && { modelsDir: args.modelsDir }),
    ...(values !== undefined && { values }),
    ...(modelSource !== undefined && { modelSource }),
    ...(gpuToleration !== undefined && { gpuToleration }),
    ...(args.releaseName !== undefined && { releaseName: args.releaseName }),
    name: args.name,
    platform,
    ...(args.category !== undefined && { category: args.category }),
    ...(args.cloudProvider !== undefined && { cloudProvider: args.cloudProvider }),
    ...(args.nodeSelector !== undefined && { nodeSelector: args.nodeSelector }),
    ...(args.namespace !== undefined && { namespace: args.namespace }),
  };
}

function credentials(args: ModelArgs) {
  return {
    ...(args.harborHostname !== undefined && { harborHostname: args.harborHostname }),
    ...(args.harborUser !== undefined && { harborUser: args.harborUser }),
    ...(args.harborToken !== undefined && { harborToken: args.harborToken }),
    ...(args.createNamespace !== undefined && { createNamespace: args.createNamespace }),
    ...(args.pullTimeout !== undefined && { pullTimeout: args.pullTimeout }),
  };
}

/** One llm-d model (the library's `LlmdModel`). Outputs resolve once the model is ready to serve. */
export class LlmdModel extends pulumi.ComponentResource {
  public readonly namespace: pulumi.Output<string>;
  public readonly servedModelName: pulumi.Output<string>;
  public readonly gatewayService: pulumi.Output<string>;
  public readonly gatewayUrl: pulumi.Output<string>;
  public readonly inferencePoolName: pulumi.Output<string>;
  /** Generative models only. */
  public readonly routeName?: pulumi.Output<string>;
  /** Embedding models only. */
  public readonly embeddingsUrl?: pulumi.Output<string>;
  /** With a model source only. */
  public readonly pvcName?: pulumi.Output<string>;

  constructor(name: string, args: LlmdModelArgs, opts?: pulumi.ComponentResourceOptions) {
    super('app-serving:index:LlmdModel', name, {}, opts);
    const model = inPluginTerms(args, () => new lib.LlmdModel(name, { folder: folderOf(args, 'llm-d'), ...credentials(args) }, { parent: this }));
    const o = model.outputs;
    this.namespace = o.namespace;
    this.servedModelName = o.servedModelName;
    this.gatewayService = o.gatewayService;
    this.gatewayUrl = o.gatewayUrl;
    this.inferencePoolName = o.inferencePoolName;
    if (o.category === 'generative') this.routeName = o.routeName;
    else this.embeddingsUrl = o.embeddingsUrl;
    if (model.storage) this.pvcName = model.storage.pvcName;
    this.registerOutputs({
      namespace: this.namespace,
      servedModelName: this.servedModelName,
      gatewayService: this.gatewayService,
      gatewayUrl: this.gatewayUrl,
      inferencePoolName: this.inferencePoolName,
      routeName: this.routeName,
      embeddingsUrl: this.embeddingsUrl,
      pvcName: this.pvcName,
    });
  }
}

/** One KServe model (the library's `KserveModel`). */
export class KserveModel extends pulumi.ComponentResource {
  public readonly namespace: pulumi.Output<string>;
  public readonly servedModelName: pulumi.Output<string>;
  public readonly serviceName: pulumi.Output<string>;
  public readonly pathPrefix: pulumi.Output<string>;
  public readonly gatewayName: pulumi.Output<string>;
  public readonly gatewayNamespace: pulumi.Output<string>;
  /** With a model source only. */
  public readonly pvcName?: pulumi.Output<string>;

  constructor(name: string, args: KserveModelArgs, opts?: pulumi.ComponentResourceOptions) {
    super('app-serving:index:KserveModel', name, {}, opts);
    const hf = args.hfToken !== undefined ? { hfToken: args.hfToken } : {};
    const model = inPluginTerms(args, () => new lib.KserveModel(name, { folder: folderOf(args, 'kserve'), ...credentials(args), ...hf }, { parent: this }));
    const o = model.outputs;
    this.namespace = o.namespace;
    this.servedModelName = o.servedModelName;
    this.serviceName = o.serviceName;
    this.pathPrefix = o.pathPrefix;
    this.gatewayName = o.gatewayName;
    this.gatewayNamespace = o.gatewayNamespace;
    if (model.storage) this.pvcName = model.storage.pvcName;
    this.registerOutputs({
      namespace: this.namespace,
      servedModelName: this.servedModelName,
      serviceName: this.serviceName,
      pathPrefix: this.pathPrefix,
      gatewayName: this.gatewayName,
      gatewayNamespace: this.gatewayNamespace,
      pvcName: this.pvcName,
    });
  }
}

/** Arguments of {@link AppServing}: a stack file and the secrets it names. */
export interface AppServingArgs {
  /** An app-serving stack file (`Pulumi.<stack>.yaml` with `app-serving:*` keys). */
  stackFile: string;
  /** The `models/` directory holding the model folders. */
  modelsDir: string;
  /** Harbor robot token, when the stack has Harbor credentials. */
  harborToken?: pulumi.Input<string>;
  /** Hugging Face token, when the stack has one. */
  hfToken?: pulumi.Input<string>;
  /** Kubeconfig content, when the stack's kubeconfig is a secret. */
  kubeconfig?: pulumi.Input<string>;
}

/** A whole stack (the library's `AppServing`). */
export class AppServing extends pulumi.ComponentResource {
  /** Namespace per model slug. */
  public readonly namespaces: pulumi.Output<{ [slug: string]: string }>;
  /** Served model name per model slug. */
  public readonly servedModelNames: pulumi.Output<{ [slug: string]: string }>;
  /** Client URL per model slug: llm-d gateway URL, llm-d embeddings URL, or KServe path prefix. */
  public readonly urls: pulumi.Output<{ [slug: string]: string }>;

  constructor(name: string, args: AppServingArgs, opts?: pulumi.ComponentResourceOptions) {
    super('app-serving:index:AppServing', name, {}, opts);
    const plan = planDeployment(loadStackFile(args.stackFile), args.modelsDir);
    const app = new lib.AppServing(
      name,
      {
        plan,
        ...(args.harborToken !== undefined && { harborToken: args.harborToken }),
        ...(args.hfToken !== undefined && { hfToken: args.hfToken }),
        ...(args.kubeconfig !== undefined && { kubeconfig: args.kubeconfig }),
      },
      { parent: this },
    );
    const entries = Object.entries(app.models);
    const bySlug = (pick: (m: lib.ModelOutputs) => pulumi.Output<string>) =>
      pulumi.all(Object.fromEntries(entries.map(([slug, m]) => [slug, pick(m)]))) as pulumi.Output<{ [slug: string]: string }>;
    this.namespaces = bySlug((m) => m.namespace);
    this.servedModelNames = bySlug((m) => m.servedModelName);
    this.urls = bySlug((m) => (m.platform === 'kserve' ? m.pathPrefix : m.category === 'embedder' ? m.embeddingsUrl : m.gatewayUrl));
    this.registerOutputs({ namespaces: this.namespaces, servedModelNames: this.servedModelNames, urls: this.urls });
  }
}
