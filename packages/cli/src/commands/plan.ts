import {
  DEFAULT_CHARTS,
  DEFAULT_UPSTREAM,
  ROUTER_CHARTS,
  describeAccess,
  describeAdapters,
  describeAutoscaling,
  describeChart,
  type AnyLlmdModelPlan,
  type DeploymentPlan,
  type EndpointPlan,
  type KserveModelPlan,
  type LlmdModelPlan,
  type LlmdRouterModelPlan,
  type Toleration,
} from '@app-serving/core';
import { loadAndPlan, type StackOptions } from '../context.ts';
import { EXIT } from '../errors.ts';
import type { Output } from '../output.ts';
import { printWarnings } from './validate.ts';

/** `app-serving plan`: what would be deployed; `--json` prints the plan itself. */
export default async function plan({ options, output }: { options: StackOptions & { json?: boolean }; output: Output }): Promise<number> {
  const { plan } = loadAndPlan(options);
  if (options.json) {
    output.json(plan);
    return EXIT.ok;
  }
  printWarnings(plan.warnings, output);
  for (const line of describePlan(plan, output)) output.out(line);
  return EXIT.ok;
}

/** The readable summary of a plan. */
export function describePlan(plan: DeploymentPlan, output: Pick<Output, 'color'>): string[] {
  const { color: c } = output;
  const lines: string[] = [];
  const count = `${plan.models.length} ${plan.models.length === 1 ? 'model' : 'models'}`;
  lines.push(`${c.bold(`Stack ${plan.stack}`)} (${plan.cloudProvider}, ${plan.file}): ${count}`);
  lines.push(`  cluster     ${plan.kubeconfig === null ? 'the ambient kubeconfig' : 'path' in plan.kubeconfig ? `kubeconfig ${plan.kubeconfig.path}` : 'kubeconfig from a secret'}`);
  if (plan.harbor) lines.push(`  harbor      ${plan.harbor.hostname} as ${plan.harbor.user} (pull secret ${plan.harbor.pullSecret} in each namespace)`);
  if (plan.kserve) {
    const gw = plan.kserve.gateway;
    lines.push(`  kserve      Gateway ${gw.namespace}/${gw.name} (class ${gw.className}${gw.create ? ', created by this stack' : ', already on the cluster'})`);
  }
  if (plan.envoyGatewayClass && plan.models.some((m) => m.platform === 'llm-d' && m.upstream === '2026-08' && m.router.gatewayClass === 'envoy')) {
    const ec = plan.envoyGatewayClass;
    lines.push(`  envoy       GatewayClass ${ec.name} (${ec.controllerName}; ${ec.create ? 'created by this stack' : 'already on the cluster'}): the llm-d Gateways of class envoy${plan.kserve ? " and KServe's" : ''}`);
  }
  if (plan.endpoint) lines.push(...describeEndpoint(plan.endpoint));
  for (const model of plan.models) {
    lines.push('');
    lines.push(`${c.bold(`${model.category}/${model.name}`)}  ${c.cyan(`[${model.platform}${model.upstream === DEFAULT_UPSTREAM ? '' : ` ${model.upstream}`}]`)}  slug ${model.slug}`);
    lines.push(...(model.platform === 'llm-d' ? describeLlmd(model) : describeKserve(model)).map((l) => `  ${l}`));
  }
  return lines;
}

const row = (label: string, value: string) => `${label.padEnd(13)}${value}`;

/** The stack's endpoint: its Gateway and base URL, the body-based router, who may call what, and each model's route by name. */
export function describeEndpoint(endpoint: EndpointPlan): string[] {
  const access = endpoint.access;
  const who =
    access.mode === 'apiKeys'
      ? `API keys (${access.keyFormat === 'bearer' ? 'Authorization: Bearer <key>; Envoy Gateway holds the keys in clear' : 'HTTP Basic <name>:<key>; the gateway holds SHA-1 hashes'}): ${Object.entries(access.grants).map(([key, models]) => `${key} → ${models.join(', ') || 'nothing'}`).join('; ')}`
      : access.mode === 'jwt'
        ? `JWT from ${access.jwt!.issuer}, the models in its claim ${access.jwt!.modelsClaim}`
        : access.explicit
          ? 'open'
          : 'open (default)';
  const limit = access.requestsPerMinute !== null ? `; ${access.requestsPerMinute} requests/min per ${access.mode === 'open' ? 'model' : 'caller and model'}, per gateway pod` : '';
  const adapters = endpoint.models.reduce((n, m) => n + m.adapters.length, 0);
  return [
    `  endpoint    Gateway ${endpoint.namespace}/${endpoint.name} (class ${endpoint.class}${endpoint.hostname ? `, host ${endpoint.hostname}` : ''}) → base_url ${endpoint.service.url}/v1`,
    `              body-based router: release ${endpoint.bbr.release} (${endpoint.bbr.chart.chart} ${endpoint.bbr.chart.version}), image ${endpoint.bbr.image}`,
    `              access: ${who}${limit}`,
    `              GET /v1/models: ${endpoint.list.data.length - adapters} models, ${adapters} adapters; an unknown model: 404 model_not_found`,
    ...endpoint.models.map((m) => `              route ${m.route}: ${m.names.map((n) => `"${n}"`).join(', ')} → ${m.backend.what}${m.requestsPerMinute !== null && m.requestsPerMinute !== access.requestsPerMinute ? ` (${m.requestsPerMinute} requests/min: the model's own limit)` : ''}`),
  ];
}

function describeLlmd(model: AnyLlmdModelPlan): string[] {
  const server = model.modelServer;
  const lines = [
    row('namespace', model.namespace),
    ...(model.upstream === '2026-02' ? describeCharts2026_02(model) : describeRouter(model)),
    model.gateway.kind === 'gateway'
      ? row('gateway', `${model.gateway.name} → ${model.gateway.url} (alias ${model.gateway.alias})`)
      : row('entry', `the Router's proxy → ${model.gateway.url} (alias ${model.gateway.alias}; no Gateway: standalone mode)`),
    ...(model.gateway.kind === 'gateway'
      ? [row('listener', `HTTP :${model.gateway.port}, routes from ${describeRouteNamespaces(model)}; ${model.upstream === '2026-08' ? `access logs not set by app-serving${model.router.gatewayClass === 'istio' ? " (Istio's own: its Telemetry API)" : ''}` : `access logs ${model.gateway.accessLogging ? 'on' : 'off'}`}`)]
      : []),
    model.embeddingService
      ? row('embeddings', `Service ${model.embeddingService.name}:${model.embeddingService.port} → decode pods :${model.embeddingService.targetPort} (${model.embeddingService.url})`)
      : model.upstream === '2026-08' && model.manifests.envoyRoute
        ? envoyRouteRow(model, model.manifests.envoyRoute)
        : model.httpRoute
          ? row('route', `HTTPRoute ${model.httpRoute} → InferencePool ${model.inferencePool.name} (EPP ${model.inferencePool.epp})`)
          : row('route', `the Router's proxy → InferencePool ${model.inferencePool.name} (EPP ${model.inferencePool.epp})`),
    row('model server', `${model.upstream === '2026-08' ? 'Deployment ' : ''}${server.decodeDeployment} ×${server.decodeReplicas}${server.prefillReplicas ? `, prefill ×${server.prefillReplicas}` : ''}, serves "${server.servedModelName}" on :${server.port}`),
    row('ready', `pulumi up waits up to ${model.readyTimeout.text} for the model Deployments (readyTimeout)`),
    row('access', model.embeddingService ? `${describeAccess(model.access)}: the embeddings Service has no gateway in its path` : describeAccess(model.access)),
    ...adapterLines(model),
  ];
  if (model.autoscaling) {
    const a = model.autoscaling;
    lines.push(row('autoscaling', `${describeAutoscaling(a)}: KEDA ScaledObject ${a.targets.map((t) => t.scaledObject).join(', ')} (starts at ${a.initialReplicas}; replicas left to KEDA)`));
    // At zero: the Router's flow control holds requests; KEDA wakes the model on its queue.
    if (a.targets.some((t) => t.wake.length > 0)) lines.push(row('', `at zero: the Router's flow control holds requests up to ${model.readyTimeout.text}; KEDA wakes the model when one waits (${a.targets[0]!.wake.map((w) => w.name).join(', ')})`));
    lines.push(row('', `Prometheus ${a.prometheus.address}${a.prometheus.auth ? ` (${a.prometheus.auth} auth, TriggerAuthentication ${a.prometheus.triggerAuthentication})` : ''}, every ${a.pollingInterval.text}${a.monitors.length ? `; PodMonitors ${a.monitors.join(', ')}` : ''}`));
    for (const target of a.targets) lines.push(row('', `${target.role}: ${target.query.query}`));
  }
  lines.push(...storageLines(model.storage), ...placementLines(model.nodeSelector, model.tolerations, model.pullSecret));
  const control = placementParts(model.controlNodeSelector, model.tolerations, null);
  const controlPods = model.gateway.kind === 'gateway' ? `EPP ${model.inferencePool.epp} and the gateway pods` : `EPP ${model.inferencePool.epp} and its proxy`;
  lines.push(row('control pods', `${controlPods}: ${control.length ? control.join(', ') : 'anywhere'}`));
  lines.push(row('images', model.images.map((i) => i.image).filter((v, i, a) => a.indexOf(v) === i).join(', ')));
  return lines;
}

/** Class envoy: Envoy Gateway's form of the route (the pool's Service, the EPP over ext_proc, its pick honoured). */
function envoyRouteRow(model: LlmdRouterModelPlan, route: NonNullable<LlmdRouterModelPlan['manifests']['envoyRoute']>): string {
  const name = (o: Record<string, unknown>) => String((o.metadata as { name: string }).name);
  const port = (route.service.spec as { ports: { port: number }[] }).ports[0]!.port;
  const extProc = (route.extensionPolicy.spec as { extProc: { backendRefs: { name: string; port: number }[] }[] }).extProc[0]!.backendRefs[0]!;
  return row(
    'route',
    `HTTPRoute ${model.httpRoute} → Service ${name(route.service)}:${port} (the pods of InferencePool ${model.inferencePool.name}); EPP ${extProc.name}:${extProc.port} picks the pod over ext_proc (EnvoyExtensionPolicy ${name(route.extensionPolicy)}), BackendTrafficPolicy ${name(route.backendTrafficPolicy)} sends the request there`,
  );
}

/** 2026-02: the three releases, each chart as deployed (the pinned name, or the mirror, package or folder the stack points at). */
function describeCharts2026_02(model: LlmdModelPlan): string[] {
  const { charts, releases } = model;
  return [
    row('releases', `${releases.infra} (${describeChart('llm-d-infra', charts.infra, DEFAULT_CHARTS.infra)}), ${releases.gaie} (${describeChart('inferencepool', charts.gaie, DEFAULT_CHARTS.gaie)}), ${releases.modelService} (${describeChart('llm-d-modelservice', charts.modelService, DEFAULT_CHARTS.modelService)})`),
  ];
}

/** 2026-08: the Router release and its mode. */
function describeRouter(model: LlmdRouterModelPlan): string[] {
  const { router } = model;
  const pinned = router.mode === 'gateway' ? ROUTER_CHARTS.routerGateway : ROUTER_CHARTS.routerStandalone;
  const chart = describeChart(router.mode === 'gateway' ? 'llm-d-router-gateway' : 'llm-d-router-standalone', router.chart, pinned);
  const mode = router.mode === 'gateway' ? `gateway mode, a Gateway of class ${router.gatewayClass}` : 'standalone mode';
  return [row('router', `${router.release} (${chart}; ${mode})`)];
}

function describeKserve(model: KserveModelPlan): string[] {
  const lines = [
    row('namespace', model.namespace),
    row('service', `LLMInferenceService ${model.service} (config ${model.config}, ServiceAccount ${model.serviceAccount}${model.hfTokenSecret ? `, HF token ${model.hfTokenSecret}` : ''})`),
    row('route', `Gateway ${model.gateway.namespace}/${model.gateway.name} → ${model.pathPrefix}/v1/… (KServe's HTTPRoute ${model.route})`),
    row('model server', `${model.workload} ×${model.replicas}, serves "${model.servedModelName}" on :${model.port}`),
    row('access', describeAccess(model.access)),
    ...adapterLines(model),
  ];
  if (model.autoscaling) {
    const a = model.autoscaling;
    lines.push(row('autoscaling', `${a.minReplicas}–${a.maxReplicas} replicas, cool-down ${a.cooldown.text}: the LLMInferenceService's scaling (Workload Variant Autoscaler, ${a.actuator} actuator; it chooses the signal)`));
  }
  lines.push(...storageLines(model.storage), ...placementLines(model.nodeSelector, model.tolerations, model.pullSecret));
  if (model.images.length) lines.push(row('images', model.images.map((i) => i.image).join(', ')));
  return lines;
}

/** The model's LoRA adapters: each by name, source and where the server loads it (none: no line). */
function adapterLines(model: { readonly adapters: DeploymentPlan['models'][number]['adapters']; readonly lora: DeploymentPlan['models'][number]['lora'] }): string[] {
  return describeAdapters(model.adapters, model.lora).map((line, i) => row(i === 0 ? 'adapters' : '', line));
}

function storageLines(storage: AnyLlmdModelPlan['storage']): string[] {
  if (!storage) return [];
  const volume = `PVC ${storage.pvc} ${storage.size}${storage.storageClass ? ` (class ${storage.storageClass})` : ' (cluster default class)'}${storage.hostPath ? `, PV ${storage.pv} on ${storage.hostPath.node}:${storage.hostPath.dir}` : ''}`;
  const from = storage.source.kind === 'oras' ? storage.source.ref : `huggingface.co/${storage.source.repo}${storage.source.revision ? `@${storage.source.revision}` : ''}`;
  const adapters = storage.adapters?.items ?? [];
  const pulled = adapters.filter((a) => a.ref !== null).map((a) => `${a.name} → ${a.dir}`);
  const checked = adapters.filter((a) => a.ref === null).map((a) => `${a.name} in ${a.dir}`);
  const extra = [
    ...(pulled.length ? [`pulls the adapters ${pulled.join(', ')}`] : []),
    ...(checked.length ? [`checks the adapters ${checked.join(', ')}`] : []),
  ];
  return [row('storage', volume), row('weights', `Job ${storage.job} ← ${from}${extra.length ? `; ${extra.join('; ')} (rank ≤ ${storage.adapters!.maxRank})` : ''}, marker ${storage.marker}`)];
}

function placementLines(nodeSelector: Readonly<Record<string, string>>, tolerations: readonly Toleration[], pullSecret: string | null): string[] {
  const parts = placementParts(nodeSelector, tolerations, pullSecret);
  return parts.length ? [row('placement', parts.join(', '))] : [];
}

function placementParts(nodeSelector: Readonly<Record<string, string>>, tolerations: readonly Toleration[], pullSecret: string | null): string[] {
  return [
    ...Object.entries(nodeSelector).map(([k, v]) => `node ${k}=${v}`),
    ...tolerations.map((t) => `tolerates ${t.key}${t.operator === 'Exists' ? '' : `=${t.value ?? ''}`}${t.effect ? `:${t.effect}` : ''}`),
    ...(pullSecret ? [`pull secret ${pullSecret}`] : []),
  ];
}

function describeRouteNamespaces(model: AnyLlmdModelPlan): string {
  const routes = model.gateway.routeNamespaces;
  if (routes === 'Same') return `its own namespace only (${model.namespace})`;
  if (routes === 'All') return 'any namespace';
  return `namespaces ${[...new Set([model.namespace, ...routes])].join(', ')}`;
}
