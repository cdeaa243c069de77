import { homedir } from 'node:os';
import { accessPlan, type AccessPlan } from './access.ts';
import { DEFAULT_CHARTS, DEFAULT_READY_TIMEOUT, GATEWAY_HTTP_PORT, EMBEDDINGS_SERVICE_PORT, HARBOR_PULL_SECRET, type Category, type ChartKey, type ChartRef, type Platform } from './constants.ts';
import type { StackConfig } from './config/load.ts';
import { chartRefs, checkLocalCharts, describeChart } from './charts.ts';
import { collectModels, type DiscoveredModel, type InlineModels } from './discovery.ts';
import { checkStackRules } from './config/rules.ts';
import { durationSeconds } from './config/formats.ts';
import { IssueList, StackError, formatPath, isAtOrUnder, isStackError, type Issue } from './errors.ts';
import { gaieImages, imageWarnings, inventory, modelServiceImages, type ImageSource, type ImageUse } from './images.ts';
import { checkLlmdNames, llmdNames, serviceHost } from './names.ts';
import type { PostRenderPatch } from './patches.ts';
import { isSecret } from './secret.ts';
import { sourceRef, storagePlan, type StoragePlan } from './storage.ts';
import { llmdValues, modelArtifactsUri } from './values/llmd.ts';
import type { Values } from './values/merge.ts';
import { gpuToleration, type Toleration } from './values/scheduling.ts';
import { simulatorArgWarnings } from './values/simulator.ts';
import { planKserveModel, kserveStackPlan, type KserveModelPlan, type KserveStackPlan } from './kserve/plan.ts';
import { GAIE_EPP_METRICS, GAIE_EPP_METRICS_PORT, MODELSERVICE_AUTOSCALER_KEYS, gaieEppPodLabels, planAutoscaling, valuesAutoscalerConflicts, type AutoscalingPlan } from './autoscaling.ts';
import { getPath, mergeAll } from './values/merge.ts';

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
    /** Which namespaces may attach routes to the listener: `Same` (the model's own), `All`, or the model's own plus these. */
    readonly routeNamespaces: 'Same' | 'All' | readonly string[];
    /** Whether llm-d-infra adds its Envoy access-log Telemetry for the Gateway. */
    readonly accessLogging: boolean;
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
  /** Node labels of the model pods (decode, prefill) and the pull Job: a hard node affinity. */
  readonly nodeSelector: Readonly<Record<string, string>>;
  /** Tolerations of every pod of the model (model pods, pull Job, EPP, Istio gateway pods). */
  readonly tolerations: readonly Toleration[];
  /** Node labels of the control pods (EPP, Istio gateway pods): the stack's controlNodeSelector, else the model's nodeSelector. */
  readonly controlNodeSelector: Readonly<Record<string, string>>;
  /** How long `pulumi up` awaits the model's Deployments (`pulumi.com/timeoutSeconds`). */
  readonly readyTimeout: { readonly text: string; readonly seconds: number };
  /** The image pull Secret of the namespace, when the stack has Harbor credentials. */
  readonly pullSecret: string | null;
  readonly charts: { readonly infra: ChartRef; readonly gaie: ChartRef; readonly modelService: ChartRef };
  /** Helm values per release: the model's files merged with the programmatic values. */
  readonly values: { readonly infra: Values; readonly gaie: Values; readonly modelService: Values };
  /** Post-render patches per release, applied to the rendered objects. */
  readonly patches: { readonly infra: readonly PostRenderPatch[]; readonly gaie: readonly PostRenderPatch[]; readonly modelService: readonly PostRenderPatch[] };
  /** Images this model pulls. */
  readonly images: readonly ImageSource[];
  /** KEDA autoscaling of the model servers (`models[].autoscaling`), else null: fixed replicas. */
  readonly autoscaling: AutoscalingPlan | null;
  /** Who may call the model through its Gateway, and its rate limit (no key's value). */
  readonly access: AccessPlan;
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
  list.addAll(config.deferredIssues ?? []);
  const discovered = collectModels(config, modelsDir, list, options.inline);
  // The values files of every model found are checked even when other keys have problems (a
  // missing credential, another model's folder), unless the problem is one the values depend on:
  // the model's own entry, the chart overrides, the GPU toleration or the KServe settings.
  const blocked = list.items.filter((issue) => issue.file === undefined || issue.file === config.file).map((issue) => issue.path);
  if (blocked.some((path) => ['charts', 'gpuToleration', 'kserve', 'models'].some((key) => isAtOrUnder(path, key) && !/^models\.[a-z]+\[\d+\]/.test(path)))) list.throwIfAny();
  const planned = discovered.filter((model) => !blocked.some((path) => isAtOrUnder(path, formatPath(['models', model.category, model.index]))));
  const warnings: Issue[] = [];
  // A chart on disk (the air-gap way) is read now: it exists, is the right chart, at the version named.
  const chartIssues: Issue[] = [];
  const charts = checkLocalCharts(config, chartRefs(config, warnings), chartIssues, warnings);
  list.addAll(chartIssues);
  const harbor =
    config.harborHostname && config.harborUser && config.harborToken ? { hostname: config.harborHostname, user: config.harborUser, pullSecret: HARBOR_PULL_SECRET } : null;
  const toleration = gpuToleration(config.gpuToleration);

  const models: ModelPlan[] = [];
  for (const model of planned) {
    const modelPlan =
      model.platform === 'kserve'
        ? planKserveModel({ config, model, harbor, toleration, list })
        : planLlmdModel({ config, model, charts, harbor, toleration, list, warnings });
    if (modelPlan) models.push(modelPlan);
  }
  checkNamespaces(config, models, list);
  list.throwIfAny();

  if (discovered.length === 0) {
    warnings.push(config.locate('warning.no-models', ['models'], 'no model is enabled: `pulumi up` would deploy nothing (and remove models deployed before)'));
  }
  for (const model of discovered) {
    if (model.platform === 'llm-d' && model.values.modelService) warnings.push(...simulatorArgWarnings(model.values.modelService));
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

/**
 * For a {@link StackError} of a stack file that carries a partial config: the same error with the
 * problems of the model folders of every entry that parsed added (discovery, values files, names),
 * so that one run reports both kinds. A problem already reported at a key is not repeated.
 */
export function withModelFolderIssues(error: StackError, modelsDir: string): StackError {
  if (!error.partial) return error;
  let more: readonly Issue[] = [];
  try {
    planDeployment(error.partial, modelsDir);
  } catch (planError) {
    if (!isStackError(planError)) throw planError;
    more = planError.issues;
  }
  const reported = error.issues.map((issue) => [issue.file, issue.path] as const);
  const fresh = more.filter((issue) => !reported.some(([file, path]) => file === issue.file && path !== '' && isAtOrUnder(issue.path, path)));
  return new StackError([...error.issues, ...fresh]);
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
  readonly warnings: Issue[];
}

function planLlmdModel({ config, model, charts, harbor, toleration, list, warnings }: PlanModelInput): LlmdModelPlan | undefined {
  const { entry, slug, category } = model;
  const at = ['models', category, model.index] as const;
  const overrides = { nameSpace: entry.nameSpace, releaseName: entry.releaseName };
  const names = llmdNames(slug, overrides);
  const storage = entry.modelSource
    ? storagePlan({ slug, source: entry.modelSource, cloudProvider: config.cloudProvider, harborHostname: config.harborHostname })
    : null;
  const files = { gaie: model.values.gaie!, modelService: model.values.modelService!, infra: model.values.infra };
  const readyTimeoutText = entry.readyTimeout ?? DEFAULT_READY_TIMEOUT;
  const readyTimeout = { text: readyTimeoutText, seconds: durationSeconds(readyTimeoutText)! };
  const gatewayConfig = config.modelGateway ?? { routeNamespaces: 'Same' as const, accessLogging: true };
  const result = llmdValues({
    controlNodeSelector: config.controlNodeSelector,
    routeNamespaces: gatewayConfig.routeNamespaces,
    accessLogging: gatewayConfig.accessLogging,
    readyTimeoutSeconds: readyTimeout.seconds,
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
  warnings.push(...result.warnings);
  if (entry.autoscaling) list.addAll(valuesAutoscalerConflicts(files.modelService, MODELSERVICE_AUTOSCALER_KEYS));
  for (const problem of checkLlmdNames(names, overrides, result.prometheusMonitoring)) {
    list.add(config.locate('name.too-long', problem.key ? [...at, problem.key] : [...at, 'name'], `${model.folder}: ${problem.message}`));
  }
  if (list.size > before) return undefined;

  const embedder = category === 'embedder';
  const embeddingsHost = serviceHost(names.embeddingsService, names.namespace);
  // The checks across keys made sure an autoscaled llm-d model has a Prometheus.
  const autoscaling =
    entry.autoscaling && config.prometheus
      ? planAutoscaling({
          slug,
          namespace: names.namespace,
          settings: entry.autoscaling,
          prometheus: config.prometheus,
          targets: [{ role: 'decode', deployment: names.decodeDeployment }, ...(result.prefillReplicas > 0 ? [{ role: 'prefill' as const, deployment: names.prefillDeployment }] : [])],
          modelServer: {
            podLabels: result.podLabels,
            metricsPort: result.decodePort,
            monitoredByChart: getPath(result.effective.modelService, ['decode', 'monitoring', 'podmonitor', 'enabled']) === true,
          },
          epp: embedder
            ? null
            : { pool: names.inferencePool, podLabels: gaieEppPodLabels(names.epp), metricsPort: GAIE_EPP_METRICS_PORT, metrics: GAIE_EPP_METRICS, monitoredByChart: result.prometheusMonitoring },
        })
      : null;
  // The autoscaler owns replicas: the chart renders only the first count, and the patch keeps `pulumi up` off it.
  const modelServiceValues = autoscaling ? mergeAll(result.values.modelService, { decode: { replicas: autoscaling.initialReplicas } }) : result.values.modelService;
  const images: ImageSource[] = [
    ...gaieImages(result.effective.gaie, files.gaie.file, files.gaie.values, describeChart('GAIE', charts.gaie, DEFAULT_CHARTS.gaie)),
    ...modelServiceImages(result.effective.modelService, files.modelService.file, files.modelService.values, describeChart('llm-d-modelservice', charts.modelService, DEFAULT_CHARTS.modelService)),
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
      routeNamespaces: result.routeNamespaces,
      accessLogging: result.accessLogging,
    },
    httpRoute: embedder ? null : names.httpRoute,
    inferencePool: { name: names.inferencePool, epp: names.epp, eppHost: names.eppHost },
    modelServer: {
      decodeDeployment: names.decodeDeployment,
      prefillDeployment: names.prefillDeployment,
      serviceAccount: names.modelServiceFullname,
      decodeReplicas: autoscaling ? autoscaling.initialReplicas : result.decodeReplicas,
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
    controlNodeSelector: config.controlNodeSelector && Object.keys(config.controlNodeSelector).length > 0 ? config.controlNodeSelector : entry.nodeSelector,
    readyTimeout,
    pullSecret: harbor?.pullSecret ?? null,
    charts,
    values: { ...result.values, modelService: modelServiceValues },
    patches: autoscaling ? { ...result.patches, modelService: [...result.patches.modelService, ...autoscaling.patches] } : result.patches,
    images,
    autoscaling,
    access: accessPlan(entry.access),
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
