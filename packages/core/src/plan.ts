import { homedir } from 'node:os';
import { GATEWAY_HTTP_PORT, EMBEDDINGS_SERVICE_PORT, HARBOR_PULL_SECRET, type Category, type ChartKey, type ChartRef, type Platform } from './constants.ts';
import type { StackConfig } from './config/load.ts';
import { chartRefs } from './charts.ts';
import { collectModels, type DiscoveredModel, type InlineModels } from './discovery.ts';
import { checkStackRules } from './config/rules.ts';
import { IssueList, type Issue } from './errors.ts';
import { gaieImages, imageWarnings, inventory, modelServiceImages, type ImageSource, type ImageUse } from './images.ts';
import { checkLlmdNames, llmdNames, serviceHost } from './names.ts';
import type { PostRenderPatch } from './patches.ts';
import { isSecret } from './secret.ts';
import { sourceRef, storagePlan, type StoragePlan } from './storage.ts';
import { llmdValues, modelArtifactsUri } from './values/llmd.ts';
import type { Values } from './values/merge.ts';
import { gpuToleration, type Toleration } from './values/scheduling.ts';
import { planKserveModel, kserveStackPlan, type KserveModelPlan, type KserveStackPlan } from './kserve/plan.ts';

/** Everything a deployment of one stack consists of, as plain data (DESIGN §2). */
export interface DeploymentPlan {
  /** Stack name. */
  readonly stack: string;
  /** The stack file (for messages). */
  readonly file: string;
  readonly cloudProvider: 'cloud' | 'on-prem';
  /** The stack's default platform. */
  readonly platform: Platform;
  /** How the Kubernetes provider finds the cluster: a kubeconfig path, a kubeconfig held as a secret, or the ambient config. */
  readonly kubeconfig: { readonly path: string } | { readonly secret: true } | null;
  /** Harbor registry and robot account (the token is never part of a plan). */
  readonly harbor: { readonly hostname: string; readonly user: string; readonly pullSecret: string } | null;
  /** Whether the stack has a Hugging Face token (its value is never part of a plan). */
  readonly hfToken: boolean;
  readonly gpuToleration: Toleration | null;
  readonly models: readonly ModelPlan[];
  /** Stack-wide KServe objects (the Envoy Gateway), when any model is served by KServe. */
  readonly kserve: KserveStackPlan | null;
  /** Every container image the stack pulls, de-duplicated. */
  readonly images: readonly ImageUse[];
  readonly warnings: readonly Issue[];
}

export type ModelPlan = LlmdModelPlan | KserveModelPlan;

/** One model on the llm-d platform. */
export interface LlmdModelPlan {
  readonly platform: 'llm-d';
  /** The model folder name (`models.<category>[].name`). */
  readonly name: string;
  readonly category: Category;
  readonly slug: string;
  /** The model folder. */
  readonly folder: string;
  readonly namespace: string;
  readonly releases: { readonly infra: string; readonly gaie: string; readonly modelService: string };
  readonly gateway: {
    readonly name: string;
    /** The Service Istio generates for the Gateway. */
    readonly service: string;
    readonly host: string;
    readonly port: number;
    readonly url: string;
    /** The Gateway's parametersRef ConfigMap (placement of the gateway pods). */
    readonly parametersConfigMap: string;
    /** ExternalName alias `llmd-gateway-<slug>` and its FQDN. */
    readonly alias: string;
    readonly aliasHost: string;
  };
  /** The HTTPRoute (generative models), else null. */
  readonly httpRoute: string | null;
  readonly inferencePool: { readonly name: string; readonly epp: string; readonly eppHost: string };
  readonly modelServer: {
    readonly decodeDeployment: string;
    readonly prefillDeployment: string;
    readonly serviceAccount: string;
    readonly decodeReplicas: number;
    readonly prefillReplicas: number;
    /** Labels of every model-server pod; `llm-d.ai/role` (decode|prefill) is added by the chart. */
    readonly podLabels: Readonly<Record<string, string>>;
    readonly servedModelName: string;
    /** The port the server listens on in decode pods. */
    readonly port: number;
    /** `routing.servicePort`: the port the InferencePool targets. */
    readonly servicePort: number;
  };
  /** The ClusterIP Service of an embedding model, else null. */
  readonly embeddingService: { readonly name: string; readonly port: number; readonly targetPort: number; readonly host: string; readonly url: string } | null;
  readonly storage: StoragePlan | null;
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly tolerations: readonly Toleration[];
  /** The image pull Secret of the namespace, when the stack has Harbor credentials. */
  readonly pullSecret: string | null;
  readonly charts: { readonly infra: ChartRef; readonly gaie: ChartRef; readonly modelService: ChartRef };
  /** Helm values per release: the model's files merged with the programmatic values. */
  readonly values: { readonly infra: Values; readonly gaie: Values; readonly modelService: Values };
  /** Post-render patches per release, applied to the rendered objects. */
  readonly patches: { readonly infra: readonly PostRenderPatch[]; readonly gaie: readonly PostRenderPatch[] };
  /** Images this model pulls. */
  readonly images: readonly ImageSource[];
}

/** Options of {@link planDeployment}. */
export interface PlanOptions {
  /** Models whose values are given inline instead of read from `modelsDir` (keyed `<category>/<name>`). */
  readonly inline?: InlineModels;
}

/**
 * Plans a stack: checks the rules across keys (unless the loader did), discovers every enabled
 * model under `modelsDir`, derives and checks every name,
 * merges every values file with the programmatic values, and lists the storage, charts, patches
 * and images. Collects every problem of the stack and throws one StackError listing them all.
 */
export function planDeployment(config: StackConfig, modelsDir: string, options: PlanOptions = {}): DeploymentPlan {
  const list = new IssueList();
  // Rules across keys and the model folders are checked together, so that one run reports both
  // (a config loaded with `checkRules: false` has not been through the rules yet).
  if (!config.rulesChecked) list.addAll(checkStackRules(config));
  const discovered = collectModels(config, modelsDir, list, options.inline);
  list.throwIfAny();
  const warnings: Issue[] = [];
  const charts = chartRefs(config, warnings);
  const harbor =
    config.harborHostname && config.harborUser && config.harborToken ? { hostname: config.harborHostname, user: config.harborUser, pullSecret: HARBOR_PULL_SECRET } : null;
  const toleration = gpuToleration(config.gpuToleration);

  const models: ModelPlan[] = [];
  for (const model of discovered) {
    const planned =
      model.platform === 'kserve'
        ? planKserveModel({ config, model, harbor, toleration, list })
        : planLlmdModel({ config, model, charts, harbor, toleration, list });
    if (planned) models.push(planned);
  }
  checkNamespaces(config, models, list);
  list.throwIfAny();

  if (discovered.length === 0) {
    warnings.push(config.locate('warning.no-models', ['models'], 'no model is enabled: `pulumi up` would deploy nothing (and remove models deployed before)'));
  }
  const images = inventory(models.map((m) => ({ model: m.name, sources: m.images })));
  warnings.push(...imageWarnings(images, config.harborHostname, config.cloudProvider === 'on-prem'));
  return {
    stack: config.stackName,
    file: config.file,
    cloudProvider: config.cloudProvider,
    platform: config.platform,
    kubeconfig: config.kubeconfig === undefined ? null : isSecret(config.kubeconfig) ? { secret: true } : { path: config.kubeconfig },
    harbor,
    hfToken: config.hfToken !== undefined,
    gpuToleration: toleration ?? null,
    models,
    kserve: models.some((m) => m.platform === 'kserve') ? kserveStackPlan(config) : null,
    images,
    warnings,
  };
}

/** Expands a leading `~/` of a kubeconfig path to the home directory. */
export function expandHome(path: string, home: string = homedir()): string {
  return path === '~' ? home : path.startsWith('~/') ? `${home}${path.slice(1)}` : path;
}

interface PlanModelInput {
  readonly config: StackConfig;
  readonly model: DiscoveredModel;
  readonly charts: Record<ChartKey, ChartRef>;
  readonly harbor: DeploymentPlan['harbor'];
  readonly toleration: Toleration | undefined;
  readonly list: IssueList;
}

function planLlmdModel({ config, model, charts, harbor, toleration, list }: PlanModelInput): LlmdModelPlan | undefined {
  const { entry, slug, category } = model;
  const at = ['models', category, model.index] as const;
  const overrides = { nameSpace: entry.nameSpace, releaseName: entry.releaseName };
  const names = llmdNames(slug, overrides);
  const storage = entry.modelSource
    ? storagePlan({ slug, source: entry.modelSource, cloudProvider: config.cloudProvider, harborHostname: config.harborHostname })
    : null;
  const files = { gaie: model.values.gaie!, modelService: model.values.modelService!, infra: model.values.infra };
  const result = llmdValues({
    names,
    category,
    files,
    nodeSelector: entry.nodeSelector,
    toleration,
    pullSecret: harbor?.pullSecret,
    artifacts: storage
      ? { uri: modelArtifactsUri(storage.pvc, storage.modelUri, storage.layout), layout: storage.layout, modelUri: storage.modelUri, ref: sourceRef(storage) }
      : undefined,
  });
  const before = list.size;
  list.addAll(result.issues);
  for (const problem of checkLlmdNames(names, overrides, result.prometheusMonitoring)) {
    list.add(config.locate('name.too-long', problem.key ? [...at, problem.key] : [...at, 'name'], `${model.folder}: ${problem.message}`));
  }
  if (list.size > before) return undefined;

  const embedder = category === 'embedder';
  const embeddingsHost = serviceHost(names.embeddingsService, names.namespace);
  const images: ImageSource[] = [
    ...gaieImages(result.effective.gaie, files.gaie.file, files.gaie.values, `GAIE ${charts.gaie.version}`),
    ...modelServiceImages(result.effective.modelService, files.modelService.file, files.modelService.values, `llm-d-modelservice ${charts.modelService.version}`),
    ...(storage ? [{ image: storage.image, where: `model pull Job ${storage.job}` }] : []),
  ];
  return {
    platform: 'llm-d',
    name: entry.name,
    category,
    slug,
    folder: model.folder,
    namespace: names.namespace,
    releases: names.releases,
    gateway: {
      name: names.gateway,
      service: names.gatewayService,
      host: names.gatewayHost,
      port: GATEWAY_HTTP_PORT,
      url: `http://${names.gatewayHost}:${GATEWAY_HTTP_PORT}`,
      parametersConfigMap: names.gatewayParameters,
      alias: names.gatewayAlias,
      aliasHost: serviceHost(names.gatewayAlias, names.namespace),
    },
    httpRoute: embedder ? null : names.httpRoute,
    inferencePool: { name: names.inferencePool, epp: names.epp, eppHost: names.eppHost },
    modelServer: {
      decodeDeployment: names.decodeDeployment,
      prefillDeployment: names.prefillDeployment,
      serviceAccount: names.modelServiceFullname,
      decodeReplicas: result.decodeReplicas,
      prefillReplicas: result.prefillReplicas,
      podLabels: result.podLabels,
      servedModelName: result.servedModelName,
      port: result.decodePort,
      servicePort: result.servicePort,
    },
    embeddingService: embedder
      ? { name: names.embeddingsService, port: EMBEDDINGS_SERVICE_PORT, targetPort: result.decodePort, host: embeddingsHost, url: `http://${embeddingsHost}:${EMBEDDINGS_SERVICE_PORT}` }
      : null,
    storage,
    nodeSelector: entry.nodeSelector,
    tolerations: toleration ? [toleration] : [],
    pullSecret: harbor?.pullSecret ?? null,
    charts,
    values: result.values,
    patches: result.patches,
    images,
  };
}

/** Two models may not share a namespace: each owns its pull secret, storage and releases. */
function checkNamespaces(config: StackConfig, models: readonly ModelPlan[], list: IssueList): void {
  const owner = new Map<string, ModelPlan>();
  for (const model of models) {
    const other = owner.get(model.namespace);
    if (other) {
      list.add(
        config.locate(
          'name.duplicate',
          ['models', model.category, indexOf(config, model), 'nameSpace'],
          `namespace "${model.namespace}" is already used by ${other.category}/${other.name}; every model needs its own namespace`,
        ),
      );
    } else owner.set(model.namespace, model);
  }
}

function indexOf(config: StackConfig, model: ModelPlan): number {
  return config.models[model.category].findIndex((e) => e.enabled && e.name === model.name);
}
