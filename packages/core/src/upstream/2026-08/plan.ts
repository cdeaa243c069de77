import { GATEWAY_HTTP_PORT, type RouterGatewayClass } from '../../constants.ts';
import { describeChart } from '../../charts.ts';
import { envoyGatewayClassOf } from '../../envoy-gateway.ts';
import type { ImageSource } from '../../images.ts';
import { serviceHost } from '../../names.ts';
import type { LlmdRouterModelPlan } from '../../plan.ts';
import { sourceRef } from '../../storage.ts';
import { getPath } from '../../values/merge.ts';
import { nodeAffinityFor } from '../../values/scheduling.ts';
import type { LlmdGeneration, LlmdModelInput } from '../generation.ts';
import { LLMD_VALUES_FOLDERS, modelOnEndpoint } from '../select.ts';
import { controlNodeSelectorOf, embeddingServiceOf, readyTimeoutOf, storageOf } from '../shared.ts';
import { ROUTER_CHART_OF, ROUTER_CHARTS, ROUTER_EPP_METRICS, ROUTER_EPP_METRICS_PORT, SERVER_AUTOSCALER_KEYS, ROUTER_PROXY_IMAGE, ROUTER_PROXY_PORT, routerEppPodLabels } from './facts.ts';
import { envoyRouteManifests } from './envoy.ts';
import { gatewayManifest, gatewayParametersManifest, hasGatewayParameters, type GatewayInput } from './gateway.ts';
import { checkRouterNames, gatewayService, routerNames } from './names.ts';
import { routerEppImage, routerValues } from './router.ts';
import { modelServerDeployment, poolSelector, readServerValues, serverPodLabels, serverWeights } from './server.ts';

/**
 * The 2026-08 set for llm-d models: upstream as of August 2026 (llm-d v0.10, the llm-d Router,
 * shared/reference/upstream-2026-08.md). Per model:
 * - the llm-d Router chart v0.10.0 — `llm-d-router-gateway` (EPP, InferencePool, the EPP's
 *   DestinationRule for Istio, the HTTPRoute) in gateway mode, `llm-d-router-standalone` (EPP with an
 *   Envoy proxy beside it, InferencePool) in standalone mode — with the model's
 *   `router-<slug>/values.yaml` if it has one;
 * - the model server, a plain Deployment app-serving creates from `server-<slug>/values.yaml`
 *   (llm-d's model-server recipe: llm-d replaced llm-d-modelservice with Kustomize in v0.7);
 * - in gateway mode, the model's own Gateway (class `istio`, `agentgateway` or `envoy`), its pods
 *   placed like the EPP (llm-d-infra is no longer what llm-d's guides install); behind Envoy Gateway,
 *   which takes no InferencePool backend, its own form of the route (envoy.ts);
 * - unchanged: the namespace, pull secret, weights volume and pull Job, the embeddings Service.
 */
export const ROUTER_2026_08: LlmdGeneration = {
  upstream: '2026-08',
  valuesFolders: LLMD_VALUES_FOLDERS['2026-08'],
  charts: ROUTER_CHARTS,
  plan: planModel,
};

function planModel({ config, model, charts, harbor, toleration, list, warnings, features }: LlmdModelInput): LlmdRouterModelPlan | undefined {
  const { entry, slug, category } = model;
  const at = ['models', category, model.index] as const;
  // `gateway: false`: no Gateway of the model's own; the Router's own proxy serves it (the stack's endpoint routes there).
  const settings = { mode: entry.gateway === false ? ('standalone' as const) : (config.router?.mode ?? 'gateway'), gatewayClass: config.router?.gatewayClass ?? 'istio' };
  const overrides = { nameSpace: entry.nameSpace, releaseName: entry.releaseName };
  const names = routerNames(slug, overrides);
  const className = settings.mode === 'gateway' ? settings.gatewayClass : null;
  const before = list.size;
  for (const problem of checkRouterNames(names, className, overrides)) {
    list.add(config.locate('name.too-long', problem.key ? [...at, problem.key] : [...at, 'name'], `${model.folder}: ${problem.message}`));
  }

  const issues: ReturnType<typeof routerValues>['issues'][number][] = [];
  const server = readServerValues(model.values.server!, issues);
  list.addAll(issues);
  if (!server || list.size > before) return undefined;

  const volume = storageOf(config, entry, slug);
  // LoRA adapters: vLLM's options after the file's args, their sources on the pod template, and
  // what the pull Job fetches into the volume (features/adapters).
  const lora = features.planModelAdapters({
    adapters: entry.adapters,
    maxLoraRank: entry.maxLoraRank,
    parent: server.servedModelName,
    volumeMount: volume && server.mountModelVolume ? volume.mountPath : null,
    file: model.values.server,
    keys: { launch: ['launch'], args: [['args']], mountModelVolume: ['mountModelVolume'] },
  });
  list.addAll(lora.issues);
  warnings.push(...lora.warnings);
  const storage = volume && lora.volume ? { ...volume, adapters: lora.volume } : volume;
  const readyTimeout = readyTimeoutOf(entry);
  const controlNodeSelector = controlNodeSelectorOf(config, entry);
  const controlAffinity = nodeAffinityFor(controlNodeSelector);
  const tolerations = toleration ? [toleration] : [];
  const pullSecret = harbor?.pullSecret ?? null;
  const embedder = category === 'embedder';
  const chartKey = ROUTER_CHART_OF[settings.mode];
  const chart = charts[chartKey]!;
  const chartLabel = describeChart(chartKey === 'routerGateway' ? 'llm-d-router-gateway' : 'llm-d-router-standalone', chart, ROUTER_CHARTS[chartKey]);
  // An autoscaled model's requests pass the EPP (not an embedder's): its metrics are scraped, and at
  // zero its flow control holds the requests until a replica is up (at most the model's readyTimeout).
  const eppAutoscaling = entry.autoscaling && !embedder ? { monitor: true, flowControlTtlSeconds: (entry.autoscaling.minReplicas ?? 1) === 0 ? readyTimeout.seconds : null } : null;
  const router = routerValues({
    names,
    mode: settings.mode,
    gatewayClass: settings.gatewayClass,
    file: model.values.router,
    poolSelector: poolSelector(slug),
    serverPort: server.port,
    route: !embedder,
    controlAffinity,
    toleration,
    pullSecret,
    readyTimeoutSeconds: readyTimeout.seconds,
    chart: chartLabel,
    autoscaling: eppAutoscaling,
  });
  list.addAll(router.issues);
  warnings.push(...router.warnings);
  // Access is enforced by the model's gateway: Istio's (filters that select its pods) or Envoy
  // Gateway's (policies on the model's HTTPRoute); the Router's standalone proxy and agentgateway's
  // Gateway take other objects app-serving does not write yet.
  const access = features.accessPlan(entry.access);
  // Behind the stack's endpoint only (the Router's proxy, no Gateway of its own), the endpoint enforces it.
  const enforcedByEndpoint = className === null && modelOnEndpoint(config, entry);
  if (features.accessEnforced(access) && className !== 'istio' && className !== 'envoy' && !enforcedByEndpoint) {
    list.add(
      config.locate(
        'config.contradiction',
        [...at, 'access'],
        `cannot be enforced on the 2026-08 set ${className === null ? 'in standalone mode (the Router\'s own proxy)' : 'behind an agentgateway Gateway'} yet: app-serving enforces access on an Istio or Envoy Gateway gateway — set router: {mode: gateway, gatewayClass: istio} (or envoy), or access: {open: true}`,
      ),
    );
  }
  if (entry.autoscaling) list.addAll(features.valuesAutoscalerConflicts(model.values.server, SERVER_AUTOSCALER_KEYS));
  if (list.size > before) return undefined;

  const podLabels = serverPodLabels(slug);
  // The checks across keys made sure an autoscaled llm-d model has a Prometheus.
  const autoscaling =
    entry.autoscaling && config.prometheus
      ? features.planAutoscaling({
          slug,
          namespace: names.namespace,
          settings: entry.autoscaling,
          prometheus: config.prometheus,
          targets: [{ role: 'decode', deployment: names.modelServer }],
          modelServer: { podLabels, metricsPort: server.port, monitoredByChart: false },
          // The Router's EPP: its pool's gauges and flow control under the llm_d_epp_* names (v0.10 and v0.11).
          epp: embedder
            ? null
            : {
                pool: names.inferencePool,
                deployment: names.epp,
                podLabels: routerEppPodLabels(names.epp, router.effective),
                metricsPort: ROUTER_EPP_METRICS_PORT,
                metrics: ROUTER_EPP_METRICS,
                monitoredByChart: router.chartMonitoring,
              },
        })
      : null;
  const weights = storage ? serverWeights(storage) : null;
  const modelServer = modelServerDeployment({
    name: names.modelServer,
    namespace: names.namespace,
    slug,
    server,
    podLabels,
    nodeSelector: entry.nodeSelector,
    tolerations,
    pullSecret,
    storage: storage && weights ? { pvc: storage.pvc, ref: sourceRef(storage), weights } : null,
    readyTimeoutSeconds: readyTimeout.seconds,
    // The autoscaler owns replicas: the Deployment starts with the first count (the component leaves spec.replicas to KEDA).
    ...(autoscaling && { replicas: autoscaling.initialReplicas }),
    ...(lora.adapters.length > 0 && { adapters: { args: lora.args, podAnnotations: lora.podAnnotations } }),
  });

  const gatewayConfig = config.modelGateway ?? { routeNamespaces: 'Same' as const, accessLogging: true };
  const gatewayInput: GatewayInput | null =
    className === null
      ? null
      : {
          name: names.gateway,
          namespace: names.namespace,
          slug,
          className,
          // Envoy Gateway's class is the stack's one Envoy GatewayClass, KServe's too; the others are the controllers' own.
          gatewayClassName: className === 'envoy' ? envoyGatewayClassOf(config).name : className,
          routeNamespaces: gatewayConfig.routeNamespaces,
          affinity: controlAffinity,
          tolerations,
          pullSecret,
        };
  const gateway = gatewayInput
    ? (() => {
        const service = gatewayService(names.gateway, names.namespace, gatewayInput.className);
        const host = serviceHost(service.name, service.namespace);
        return {
          kind: 'gateway' as const,
          name: names.gateway,
          service: service.name,
          serviceNamespace: service.namespace,
          host,
          port: GATEWAY_HTTP_PORT,
          url: `http://${host}:${GATEWAY_HTTP_PORT}`,
          // Istio's parameters are a ConfigMap; Envoy Gateway's an EnvoyProxy (manifests.gatewayParameters).
          parametersConfigMap: gatewayInput.className === 'istio' && hasGatewayParameters(gatewayInput) ? names.gateway : null,
        };
      })()
    : { kind: 'router-proxy' as const, name: names.epp, service: names.epp, serviceNamespace: names.namespace, host: names.eppHost, port: ROUTER_PROXY_PORT, url: `http://${names.eppHost}:${ROUTER_PROXY_PORT}`, parametersConfigMap: null };
  const envoyRoute =
    className === 'envoy' && !embedder
      ? envoyRouteManifests({
          names,
          slug,
          poolSelector: poolSelector(slug),
          targetPort: server.port,
          extProcPort: Number(getPath(router.effective, ['router', 'epp', 'extProcPort'])),
          requestTimeout: String(getPath(router.effective, ['httpRoute', 'requestTimeout'])),
          rateLimit: features.envoyRateLimit(access),
        })
      : null;

  const images: ImageSource[] = [
    { image: server.image, where: `${model.values.server!.file}: image` },
    { image: routerEppImage(router.effective), where: model.values.router && getPath(model.values.router.values, ['router', 'epp', 'image']) !== undefined ? `${model.values.router.file}: router.epp.image` : `${chartLabel} default (router.epp.image)` },
    ...(settings.mode === 'standalone'
      ? [{ image: typeof getPath(router.effective, ['router', 'proxy', 'image']) === 'string' ? String(getPath(router.effective, ['router', 'proxy', 'image'])) : ROUTER_PROXY_IMAGE, where: `${chartLabel} default (the Envoy proxy beside the EPP)` }]
      : []),
    ...(storage ? [{ image: storage.image, where: `model pull Job ${storage.job}` }] : []),
  ];

  return {
    platform: 'llm-d',
    upstream: '2026-08',
    name: entry.name,
    category,
    slug,
    folder: model.folder,
    namespace: names.namespace,
    gateway: {
      ...gateway,
      alias: names.gatewayAlias,
      aliasHost: serviceHost(names.gatewayAlias, names.namespace),
      routeNamespaces: gatewayConfig.routeNamespaces,
      // Gateway access logs are the gateway's own configuration on this set (llm-d-infra's Telemetry is gone).
      accessLogging: false,
    },
    httpRoute: !embedder && settings.mode === 'gateway' ? (className === 'envoy' ? names.envoyHttpRoute : names.httpRoute) : null,
    inferencePool: { name: names.inferencePool, epp: names.epp, eppHost: names.eppHost },
    modelServer: {
      decodeDeployment: names.modelServer,
      prefillDeployment: '',
      serviceAccount: 'default',
      decodeReplicas: autoscaling ? autoscaling.initialReplicas : server.replicas,
      prefillReplicas: 0,
      podLabels,
      servedModelName: server.servedModelName,
      port: server.port,
      servicePort: server.port,
    },
    embeddingService: embedder ? embeddingServiceOf(names.embeddingsService, names.namespace, server.port) : null,
    storage,
    nodeSelector: entry.nodeSelector,
    tolerations,
    controlNodeSelector,
    readyTimeout,
    pullSecret,
    images,
    autoscaling,
    access,
    adapters: lora.adapters,
    lora: lora.sizes,
    origins: {
      modelServer: `the Deployment ${names.modelServer} (the model server)`,
      epp: `the ${names.release} release (${chartLabel})`,
      gateway:
        settings.mode === 'standalone'
          ? `Service ${names.epp} is the Router's EPP and its proxy: the ${names.release} release (${chartLabel}) is not installed or failed`
          : gatewayOrigin(className!, gatewayInput!, gateway.service, gateway.serviceNamespace),
    },
    router: { mode: settings.mode, gatewayClass: className, release: names.release, chart, values: router.values, patches: router.patches },
    server,
    manifests: {
      modelServer,
      gateway: gatewayInput ? gatewayManifest(gatewayInput) : null,
      gatewayParameters: gatewayInput ? gatewayParametersManifest(gatewayInput) : null,
      envoyRoute,
    },
  };
}

/** What creates the Service of a model's Gateway, and where to look when it is missing (verify's hint). */
function gatewayOrigin(className: RouterGatewayClass, gateway: GatewayInput, service: string, serviceNamespace: string): string {
  const where = `kubectl get gateway -n ${gateway.namespace}`;
  if (className === 'envoy') {
    return `Envoy Gateway creates Service ${serviceNamespace}/${service} once Gateway ${gateway.name} is Programmed: check ${where} (Envoy Gateway running? GatewayClass ${gateway.gatewayClassName} Accepted?)`;
  }
  return `${className === 'istio' ? 'Istio' : 'agentgateway'} creates Service ${service} once Gateway ${gateway.name} is Programmed: check ${where} (${className} running? GatewayClass ${className} present?)`;
}
