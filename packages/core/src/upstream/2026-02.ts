import { DEFAULT_CHARTS, GATEWAY_HTTP_PORT, type ChartKey, type ChartRef } from '../constants.ts';
import { describeChart } from '../charts.ts';
import { gaieImages, modelServiceImages, type ImageSource } from '../images.ts';
import { checkLlmdNames, llmdNames, serviceHost } from '../names.ts';
import type { LlmdModelPlan } from '../plan.ts';
import { sourceRef } from '../storage.ts';
import { llmdValues, modelArtifactsUri } from '../values/llmd.ts';
import { getPath, mergeAll } from '../values/merge.ts';
import type { AutoscalerKeys, EppMetricFacts, LlmdGeneration, LlmdModelInput, RequestBuffering } from './generation.ts';
import { LLMD_VALUES_FOLDERS } from './select.ts';
import { controlNodeSelectorOf, embeddingServiceOf, readyTimeoutOf, storageOf } from './shared.ts';

/**
 * The 2026-02 set for llm-d models, the seed's pins: per model the llm-d-infra chart (the Istio
 * Gateway), GAIE's `inferencepool` chart (EPP, InferencePool) and llm-d-modelservice (the vLLM
 * Deployments), wired together by the values core computes (values/llmd.ts), then the HTTPRoute or
 * the embeddings Service. Its facts are held against shared/upstream/charts by drift tests.
 */
export const CHARTS_2026_02: LlmdGeneration = {
  upstream: '2026-02',
  valuesFolders: LLMD_VALUES_FOLDERS['2026-02'],
  charts: DEFAULT_CHARTS,
  plan: planModel,
};

/**
 * The EPP of GAIE v1.2 (`pkg/epp/metrics/metrics.go`, subsystem `inference_pool`): the pool's average
 * queue size and KV-cache utilisation, labelled `name=<InferencePool>`. Its metrics are served on
 * the container port named `metrics` (9090, `epp-deployment.yaml`), without authentication unless
 * the chart's own Prometheus monitoring is on (`--metrics-endpoint-auth=false` otherwise).
 */
export const GAIE_EPP_METRICS: EppMetricFacts = { queue: 'inference_pool_average_queue_size', kvCache: 'inference_pool_average_kv_cache_utilization', poolLabel: 'name' };
export const GAIE_EPP_METRICS_PORT = 'metrics';

/** GAIE v1.2's EPP has no flow-control queue: with no pod in its pool it answers 503 at once. */
export const GAIE_NO_REQUEST_BUFFERING: RequestBuffering = {
  holds: false,
  why: "nothing holds a request while the model has no replica: GAIE v1.2's EPP answers 503 at once when its pool is empty (it has no flow-control queue)",
  fix: "or move the model to the 2026-08 set (app-serving migrate), whose llm-d Router holds requests in its flow-control queue",
};

/** The labels of the EPP's pods in GAIE v1.2 (`_helpers.tpl`, selectorLabels: `inferencepool: <release>-epp`). */
export function gaieEppPodLabels(epp: string): Record<string, string> {
  return { inferencepool: epp };
}

/** llm-d-modelservice v0.4.12's keys (values.yaml: `decode.replicas`, `decode.autoscaling.enabled`, `extraObjects`). */
export const MODELSERVICE_AUTOSCALER_KEYS: AutoscalerKeys = {
  replicas: [['decode', 'replicas']],
  autoscalers: [['decode', 'autoscaling', 'enabled'], ['prefill', 'autoscaling', 'enabled']],
  extraObjects: ['extraObjects'],
};

function planModel({ config, model, charts: anyCharts, harbor, toleration, list, warnings, features }: LlmdModelInput): LlmdModelPlan | undefined {
  const charts = anyCharts as Record<ChartKey, ChartRef>;
  const { entry, slug, category } = model;
  const at = ['models', category, model.index] as const;
  const overrides = { nameSpace: entry.nameSpace, releaseName: entry.releaseName };
  const names = llmdNames(slug, overrides);
  const storage = storageOf(config, entry, slug);
  const files = { gaie: model.values.gaie!, modelService: model.values.modelService!, infra: model.values.infra };
  const readyTimeout = readyTimeoutOf(entry);
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
  if (entry.autoscaling) list.addAll(features.valuesAutoscalerConflicts(files.modelService, MODELSERVICE_AUTOSCALER_KEYS));
  for (const problem of checkLlmdNames(names, overrides, result.prometheusMonitoring)) {
    list.add(config.locate('name.too-long', problem.key ? [...at, problem.key] : [...at, 'name'], `${model.folder}: ${problem.message}`));
  }
  if (list.size > before) return undefined;

  const embedder = category === 'embedder';
  // The checks across keys made sure an autoscaled llm-d model has a Prometheus.
  const autoscaling =
    entry.autoscaling && config.prometheus
      ? features.planAutoscaling({
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
    upstream: '2026-02',
    name: entry.name,
    category,
    slug,
    folder: model.folder,
    namespace: names.namespace,
    releases: names.releases,
    gateway: {
      kind: 'gateway',
      name: names.gateway,
      service: names.gatewayService,
      serviceNamespace: names.namespace,
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
      ? embeddingServiceOf(names.embeddingsService, names.namespace, result.decodePort)
      : null,
    storage,
    nodeSelector: entry.nodeSelector,
    tolerations: toleration ? [toleration] : [],
    controlNodeSelector: controlNodeSelectorOf(config, entry),
    readyTimeout,
    pullSecret: harbor?.pullSecret ?? null,
    charts,
    values: { ...result.values, modelService: modelServiceValues },
    patches: autoscaling ? { ...result.patches, modelService: [...result.patches.modelService, ...autoscaling.patches] } : result.patches,
    images,
    autoscaling,
    access: features.accessPlan(entry.access),
    // The 2026-02 set serves no adapters (features/adapters/rules.ts refuses them, with the reason).
    adapters: [],
    lora: null,
    origins: {
      modelServer: `the ${names.releases.modelService} release`,
      epp: `the ${names.releases.gaie} release (GAIE inferencepool)`,
      gateway: `Istio creates Service ${names.gatewayService} once Gateway ${names.gateway} is Programmed: check kubectl get gateway -n ${names.namespace} (Istio running? GatewayClass istio present?)`,
    },
  };
}

