import { homedir } from 'node:os';
import { DEFAULT_CHARTS, DEFAULT_READY_TIMEOUT, GATEWAY_HTTP_PORT, EMBEDDINGS_SERVICE_PORT, HARBOR_PULL_SECRET, type Category, type ChartKey, type ChartRef, type Platform, type RouterGatewayClass, type Upstream } from './constants.ts';
import { envoyGatewayClassOf, type EnvoyGatewayClassPlan } from './envoy-gateway.ts';
import type { EnvoyRouteManifests } from './upstream/2026-08/envoy.ts';
import type { AccessPlan } from './features/access/plan.ts';
export type { AccessPlan } from './features/access/plan.ts';
export type { AutoscalingPlan, AutoscalingPlanInput } from './features/autoscaling/plan.ts';
export type { AdapterPlan, AdapterSource, LoraSizes, ModelAdapters, ModelAdaptersInput } from './features/adapters/plan.ts';
import type { AdapterPlan, LoraSizes } from './features/adapters/plan.ts';
import type { AutoscalingPlan } from './features/autoscaling/plan.ts';
import type { StackConfig } from './config/load.ts';
import { chartRefs, checkLocalCharts } from './charts.ts';
import { collectModels, type DiscoveredModel, type InlineModels } from './discovery.ts';
import { checkStackRules } from './stack.ts';
import { ENDPOINT_TOOLS, LLMD_FEATURES, checkFeatureModels } from './features/index.ts';
import { BBR_CHART } from './features/endpoint/facts.ts';
import { planEndpoint, type EndpointPlan } from './features/endpoint/plan.ts';
import { endpointWarnings } from './features/endpoint/rules.ts';
export type { EndpointPlan } from './features/endpoint/plan.ts';
import { durationSeconds } from './config/formats.ts';
import { IssueList, StackError, formatPath, isAtOrUnder, isStackError, summarizeNames, type Issue } from './errors.ts';
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
import type { ServerValues } from './upstream/2026-08/server.ts';
import { migrationCommand, upstreamSetOf, type UpstreamSet } from './upstream/sets.ts';

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
  /**
   * The stack's Envoy GatewayClass, when a model has a Gateway of Envoy Gateway (KServe's, or a
   * 2026-08 llm-d model's of class `envoy`): one for both platforms (envoy-gateway.ts).
   */
  readonly envoyGatewayClass: EnvoyGatewayClassPlan | null;
  /** The stack's one OpenAI endpoint (`endpoint`), planned after the models it serves, else null. */
  readonly endpoint: EndpointPlan | null;
  /** Every container image the stack pulls, de-duplicated. */
  readonly images: readonly ImageUse[];
  readonly warnings: readonly Issue[];
}

export type ModelPlan = LlmdModelPlan | LlmdRouterModelPlan | KserveModelPlan;
/** Any llm-d model, whatever set of upstream versions it is deployed with. */
export type AnyLlmdModelPlan = LlmdModelPlan | LlmdRouterModelPlan;

/**
 * What every llm-d model plan holds, whatever set of upstream versions it is deployed with: names
 * and endpoints, placement, storage, images. What differs between the sets (charts and their
 * values, or objects app-serving creates) is in {@link LlmdModelPlan} (2026-02) and
 * {@link LlmdRouterModelPlan} (2026-08), told apart by `upstream`.
 */
export interface LlmdModelPlanBase {
  readonly platform: 'llm-d';
  /** The set of upstream versions the model is deployed with. */
  readonly upstream: Upstream;
  /** The model folder name (`models.<category>[].name`). */
  readonly name: string;
  readonly category: Category;
  readonly slug: string;
  /** The model folder. */
  readonly folder: string;
  readonly namespace: string;
  /**
   * Where clients' requests enter: the model's Gateway (`kind: gateway`: its name, the Service its
   * controller makes, port 80) or, in the 2026-08 Router's standalone mode, the Router's own proxy
   * (`kind: router-proxy`: the EPP Service's HTTP port).
   */
  readonly gateway: {
    readonly kind: 'gateway' | 'router-proxy';
    readonly name: string;
    /** The Service clients call: the one the Gateway's controller generates, or the EPP Service. */
    readonly service: string;
    /** The Service's namespace: the model's, or (Envoy Gateway) the controller's, `envoy-gateway-system`. */
    readonly serviceNamespace: string;
    readonly host: string;
    readonly port: number;
    readonly url: string;
    /** The Gateway's parametersRef ConfigMap (placement of the gateway pods), or null when there is none. */
    readonly parametersConfigMap: string | null;
    /** ExternalName alias `llmd-gateway-<slug>` and its FQDN. */
    readonly alias: string;
    readonly aliasHost: string;
    /** Which namespaces may attach routes to the listener: `Same` (the model's own), `All`, or the model's own plus these. */
    readonly routeNamespaces: 'Same' | 'All' | readonly string[];
    /** Whether the gateway's access logs are on (2026-02: llm-d-infra's Telemetry). */
    readonly accessLogging: boolean;
  };
  /** The HTTPRoute (generative models behind a Gateway), else null. */
  readonly httpRoute: string | null;
  readonly inferencePool: { readonly name: string; readonly epp: string; readonly eppHost: string };
  readonly modelServer: {
    readonly decodeDeployment: string;
    readonly prefillDeployment: string;
    readonly serviceAccount: string;
    readonly decodeReplicas: number;
    readonly prefillReplicas: number;
    /** Labels of every model-server pod (2026-02: `llm-d.ai/role` is added by the chart). */
    readonly podLabels: Readonly<Record<string, string>>;
    readonly servedModelName: string;
    /** The port the server listens on in decode pods. */
    readonly port: number;
    /** The port the InferencePool targets. */
    readonly servicePort: number;
  };
  /** The ClusterIP Service of an embedding model, else null. */
  readonly embeddingService: { readonly name: string; readonly port: number; readonly targetPort: number; readonly host: string; readonly url: string } | null;
  readonly storage: StoragePlan | null;
  /** Node labels of the model pods and the pull Job: a hard node affinity. */
  readonly nodeSelector: Readonly<Record<string, string>>;
  /** Tolerations of every pod of the model (model pods, pull Job, EPP, gateway pods). */
  readonly tolerations: readonly Toleration[];
  /** Node labels of the control pods (EPP, gateway pods): the stack's controlNodeSelector, else the model's nodeSelector. */
  readonly controlNodeSelector: Readonly<Record<string, string>>;
  /** How long `pulumi up` awaits the model's Deployments (`pulumi.com/timeoutSeconds`). */
  readonly readyTimeout: { readonly text: string; readonly seconds: number };
  /** The image pull Secret of the namespace, when the stack has Harbor credentials. */
  readonly pullSecret: string | null;
  /** Images this model pulls. */
  readonly images: readonly ImageSource[];
  /**
   * What makes each part, for messages (verify's hints): e.g. `the ms-<slug> release
   * (llm-d-modelservice)` or `the Deployment server-<slug>`; `gateway` says what creates the
   * Service clients call and where to look when it is missing.
   */
  readonly origins: { readonly modelServer: string; readonly epp: string; readonly gateway: string };
  /** KEDA autoscaling of the model servers (`models[].autoscaling`), else null: fixed replicas. */
  readonly autoscaling: AutoscalingPlan | null;
  /** Who may call the model through its Gateway, and its rate limit (no key's value). */
  readonly access: AccessPlan;
  /** LoRA adapters served beside the model, each under its own name (features/adapters); empty when none. */
  readonly adapters: readonly AdapterPlan[];
  /** The LoRA sizes the server gets (vLLM's --max-lora-rank, --max-loras, --max-cpu-loras), or null without adapters. */
  readonly lora: LoraSizes | null;
}

/** One llm-d model on the 2026-02 set: the llm-d-infra, GAIE inferencepool and llm-d-modelservice charts. */
export interface LlmdModelPlan extends LlmdModelPlanBase {
  readonly upstream: '2026-02';
  readonly gateway: LlmdModelPlanBase['gateway'] & { readonly kind: 'gateway'; readonly parametersConfigMap: string };
  readonly releases: { readonly infra: string; readonly gaie: string; readonly modelService: string };
  readonly charts: { readonly infra: ChartRef; readonly gaie: ChartRef; readonly modelService: ChartRef };
  /** Helm values per release: the model's files merged with the programmatic values. */
  readonly values: { readonly infra: Values; readonly gaie: Values; readonly modelService: Values };
  /** Post-render patches per release, applied to the rendered objects. */
  readonly patches: { readonly infra: readonly PostRenderPatch[]; readonly gaie: readonly PostRenderPatch[]; readonly modelService: readonly PostRenderPatch[] };
}

/**
 * One llm-d model on the 2026-08 set: the llm-d Router chart (EPP, InferencePool, and in gateway
 * mode the HTTPRoute and Istio's DestinationRule), and what app-serving creates itself: the model
 * server's Deployment (llm-d's model-server recipe) and, in gateway mode, the model's Gateway.
 */
export interface LlmdRouterModelPlan extends LlmdModelPlanBase {
  readonly upstream: '2026-08';
  readonly router: {
    readonly mode: 'gateway' | 'standalone';
    /** The Gateway's class (gateway mode), else null. */
    readonly gatewayClass: RouterGatewayClass | null;
    readonly release: string;
    readonly chart: ChartRef;
    /** What Helm receives: the model's router values file merged with the programmatic values. */
    readonly values: Values;
    /** Post-render patches of the chart's objects. */
    readonly patches: readonly PostRenderPatch[];
  };
  /** The model server as its values file describes it (defaults filled in). */
  readonly server: ServerValues;
  /** The objects app-serving creates for the model, as plain manifests. */
  readonly manifests: {
    readonly modelServer: Record<string, unknown>;
    readonly gateway: Record<string, unknown> | null;
    /** What places the gateway pods: Istio's ConfigMap or Envoy Gateway's EnvoyProxy, else null. */
    readonly gatewayParameters: Record<string, unknown> | null;
    /**
     * A generative model behind an Envoy Gateway (class `envoy`): Envoy Gateway's form of the pool's
     * route — the Service of the pool's pods, the EnvoyExtensionPolicy calling the EPP, the
     * BackendTrafficPolicy honouring its pick (and the rate limit), the HTTPRoute — else null.
     */
    readonly envoyRoute: EnvoyRouteManifests | null;
  };
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
  // The charts of each set of upstream versions in use, once per stack: pinned, or the stack's
  // overrides; a chart on disk (the air-gap way) is read now — it exists, is the right chart, at the
  // version named.
  const setCharts = new Map<Upstream, Record<string, ChartRef>>();
  const chartsOf = (set: UpstreamSet): Record<string, ChartRef> => {
    let charts = setCharts.get(set.upstream);
    if (!charts) {
      const chartIssues: Issue[] = [];
      charts = checkLocalCharts(config, chartRefs(config, warnings, set.llmd.charts), chartIssues, warnings, { pinned: set.llmd.charts });
      list.addAll(chartIssues);
      setCharts.set(set.upstream, charts);
    }
    return charts;
  };
  const harbor =
    config.harborHostname && config.harborUser && config.harborToken ? { hostname: config.harborHostname, user: config.harborUser, pullSecret: HARBOR_PULL_SECRET } : null;
  const toleration = gpuToleration(config.gpuToleration);

  const models: ModelPlan[] = [];
  for (const model of planned) {
    const set = upstreamSetOf(config, model.entry);
    const modelPlan =
      model.platform === 'kserve'
        ? planKserveModel({ config, model, harbor, toleration, list, release: set.kserve })
        : set.llmd.plan({ config, model, charts: chartsOf(set), harbor, toleration, list, warnings, features: LLMD_FEATURES });
    if (modelPlan) models.push(modelPlan);
  }
  checkNamespaces(config, models, list);
  list.addAll(checkFeatureModels(config, models));
  checkOneKserve(config, planned, list);
  // The endpoint, a stack feature, once the models it serves are planned (their names, pools, adapters).
  const endpointCharts = config.endpoint?.enabled ? (() => {
    const chartIssues: Issue[] = [];
    const pinned = { bodyBasedRouting: BBR_CHART };
    const refs = checkLocalCharts(config, chartRefs(config, warnings, pinned), chartIssues, warnings, { pinned });
    list.addAll(chartIssues);
    return refs;
  })() : null;
  const endpoint = endpointCharts
    ? planEndpoint({ config, models, harbor, toleration, chart: endpointCharts.bodyBasedRouting, envoyGatewayClass: envoyGatewayClassOf(config), list, warnings, tools: ENDPOINT_TOOLS })
    : null;
  warnings.push(...endpointWarnings(config));
  if (config.charts?.bodyBasedRouting !== undefined && !endpointCharts) warnings.push(config.locate('warning.no-effect', ['charts', 'bodyBasedRouting'], 'has no effect: the stack has no endpoint'));
  list.throwIfAny();
  warnings.push(...upstreamWarnings(config, planned));

  if (discovered.length === 0) {
    warnings.push(config.locate('warning.no-models', ['models'], 'no model is enabled: `pulumi up` would deploy nothing (and remove models deployed before)'));
  }
  for (const model of discovered) {
    if (model.platform === 'llm-d' && model.values.modelService) warnings.push(...simulatorArgWarnings(model.values.modelService));
  }
  const images = inventory([...models.map((m) => ({ model: m.name, sources: m.images })), ...(endpoint ? [{ model: `endpoint ${endpoint.namespace}/${endpoint.name}`, sources: endpoint.images }] : [])]);
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
    envoyGatewayClass:
      endpoint?.class === 'envoy' || models.some((m) => m.platform === 'kserve' || (m.platform === 'llm-d' && m.upstream === '2026-08' && m.router.gatewayClass === 'envoy')) ? envoyGatewayClassOf(config) : null,
    endpoint,
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

/** KServe runs once per cluster: every KServe model of a stack is on one set (one KServe release). */
function checkOneKserve(config: StackConfig, models: readonly DiscoveredModel[], list: IssueList): void {
  const kserve = models.filter((m) => m.platform === 'kserve');
  const first = kserve[0];
  if (!first) return;
  const release = upstreamSetOf(config, first.entry).kserve;
  for (const model of kserve.slice(1)) {
    const other = upstreamSetOf(config, model.entry).kserve;
    if (other.version !== release.version) {
      list.add(
        config.locate(
          'config.contradiction',
          ['models', model.category, model.index, 'upstream'],
          `puts this KServe model on KServe ${other.version}, but ${first.category}/${first.entry.name} is on ${release.version}; a cluster runs one KServe — put every KServe model of the stack on one upstream`,
        ),
      );
    }
  }
}

/**
 * Warnings about the sets of upstream versions: models on a superseded set (once per stack, with
 * the way across), and keys that only another set reads.
 */
function upstreamWarnings(config: StackConfig, models: readonly DiscoveredModel[]): Issue[] {
  const out: Issue[] = [];
  const sets = models.map((m) => ({ model: m, set: upstreamSetOf(config, m.entry) }));
  const old = sets.filter(({ set }) => set.superseded);
  if (old.length > 0) {
    const set = old[0]!.set;
    const names = old.map(({ model }) => model.entry.name);
    out.push(
      config.locate(
        'warning.upstream-superseded',
        config.upstream !== undefined ? ['upstream'] : ['models'],
        `${summarizeNames(names)} ${names.length === 1 ? 'is' : 'are'} deployed with the ${set.upstream} set (${set.summary}), which upstream has superseded${config.upstream === undefined ? ' (a stack without `upstream` stays on it)' : ''}: see docs/upgrading.md, and move with \`${migrationCommand(config.file)}\``,
      ),
    );
  }
  const onRouter = sets.some(({ model, set }) => model.platform === 'llm-d' && set.upstream === '2026-08');
  if (config.router !== undefined && !onRouter) {
    out.push(config.locate('warning.no-effect', ['router'], 'has no effect: no llm-d model of the stack is on the 2026-08 set (router is the llm-d Router\'s mode)'));
  }
  for (const key of ['routerGateway', 'routerStandalone'] as const) {
    if (config.charts?.[key] !== undefined && !onRouter) out.push(config.locate('warning.no-effect', ['charts', key], 'has no effect: no llm-d model of the stack is on the 2026-08 set'));
  }
  const onCharts = sets.some(({ model, set }) => model.platform === 'llm-d' && set.upstream === '2026-02');
  // modelGateway.accessLogging is llm-d-infra's Telemetry (2026-02). On 2026-08 the gateway's access
  // logs are the gateway's own: Istio's Telemetry API (mesh-wide or for the gateway's pods) or
  // meshConfig.accessLogFile — owned by whoever runs Istio, and not ours to half-set per Gateway.
  const routerModels = sets.filter(({ model, set }) => model.platform === 'llm-d' && set.upstream === '2026-08').map(({ model }) => model.entry.name);
  if (config.modelGateway?.accessLogging !== undefined && routerModels.length > 0) {
    out.push(
      config.locate(
        'warning.no-effect',
        ['modelGateway', 'accessLogging'],
        `has no effect on ${summarizeNames(routerModels)} (the 2026-08 set), whose gateway access logs app-serving does not set: they are the gateway's own — with Istio its Telemetry API (a Telemetry with the envoy access-log provider, mesh-wide in istio-system or selecting the gateway's pods) or meshConfig.accessLogFile${onCharts ? '; it still applies to the 2026-02 models' : ''}`,
      ),
    );
  }
  for (const key of ['infra', 'gaie', 'modelService'] as const) {
    if (config.charts?.[key] !== undefined && !onCharts && sets.length > 0) out.push(config.locate('warning.no-effect', ['charts', key], 'has no effect: no llm-d model of the stack is on the 2026-02 set'));
  }
  return out;
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

/** One Helm release of a model: what `helm template` / the provider's Chart is given. */
export interface ModelRelease {
  /** The chart key (`charts.<key>` in the stack file). */
  readonly key: string;
  readonly release: string;
  readonly chart: ChartRef;
  readonly namespace: string;
  readonly values: Values;
  readonly patches: readonly PostRenderPatch[];
}

/**
 * The Helm releases of a model, in the order they are installed: on 2026-02 llm-d-infra, GAIE and
 * llm-d-modelservice; on 2026-08 the Router chart of the stack's mode; none for KServe.
 */
export function modelReleases(model: ModelPlan): ModelRelease[] {
  if (model.platform !== 'llm-d') return [];
  if (model.upstream === '2026-08') {
    const { router } = model;
    return [{ key: router.mode === 'gateway' ? 'routerGateway' : 'routerStandalone', release: router.release, chart: router.chart, namespace: model.namespace, values: router.values, patches: router.patches }];
  }
  return (['infra', 'gaie', 'modelService'] as const).map((key) => ({
    key,
    release: model.releases[key],
    chart: model.charts[key],
    namespace: model.namespace,
    values: model.values[key],
    patches: model.patches[key],
  }));
}
