import { LABEL_ROLE, type AnyLlmdModelPlan, type DeploymentPlan, type KserveModelPlan } from '@app-serving/core';
import { ENVOY_GATEWAY_SYSTEM_NAMESPACE, ENVOY_OWNING_GATEWAY_NAME, ENVOY_OWNING_GATEWAY_NAMESPACE, llmInferenceServiceRef } from '../src/index.ts';
import type { FakeKube, FakePod } from './fake-kube.ts';
import { reply, startModelServer, type ModelServer, type ModelServerOptions } from './model-server.ts';

/** Istio's label on the Deployment/pods it generates for a Gateway (upstream-charts.md §3.3). */
const ISTIO_GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';
/** GAIE's EPP pod selector label (upstream-charts.md §2.3). */
const GAIE_EPP_LABEL = 'inferencepool';

export interface DeployOptions {
  /** Options of every model's server (per model name when a function). */
  readonly server?: ModelServerOptions | ((model: string) => ModelServerOptions);
  /** The pull Job finished and the marker is on the volume. @default true */
  readonly pulled?: boolean;
  /** How KServe reports the address: a ClusterIP (Envoy found by labels) or a Service DNS name. @default 'cluster-ip' */
  readonly kserveAddress?: 'cluster-ip' | 'service-dns' | 'none';
}

export interface Deployed {
  /** The server each model's traffic reaches (the Gateway's backend, the embeddings Service's pod, KServe's Gateway). */
  readonly servers: Record<string, ModelServer>;
  /** An embedder's Gateway (answers 404: no HTTPRoute). */
  readonly gateways: Record<string, ModelServer>;
}

/**
 * Populates the fake cluster as the charts really deploy a plan: modelservice pods labelled with
 * the plan's `podLabels` plus `llm-d.ai/role`, the Service Istio generates for each Gateway
 * (selecting `gateway.networking.k8s.io/gateway-name`), the EPP Service, the embeddings Service,
 * pull Jobs, LLMInferenceServices with `status.addresses`, and Envoy Gateway's proxy Service.
 * Each traffic path ends at a local model server, reached through real port-forwards.
 */
export async function deploy(kube: FakeKube, plan: DeploymentPlan, options: DeployOptions = {}): Promise<Deployed> {
  const servers: Record<string, ModelServer> = {};
  const gateways: Record<string, ModelServer> = {};
  const serverOptions = (name: string) => (typeof options.server === 'function' ? options.server(name) : (options.server ?? {}));
  const pulled = options.pulled ?? true;
  const state = kube.state;
  for (const model of plan.models) {
    if (model.platform === 'kserve') {
      servers[model.name] = await startModelServer({ models: [model.servedModelName], pathPrefix: model.pathPrefix, ...serverOptions(model.name) });
      deployKserve(kube, model, servers[model.name]!, options.kserveAddress ?? 'cluster-ip');
    } else {
      servers[model.name] = await startModelServer({ models: [model.modelServer.servedModelName], ...serverOptions(model.name) });
      if (model.category === 'embedder') {
        gateways[model.name] = await startModelServer({ routes: { 'POST /v1/embeddings': reply(404, '') } });
      }
      deployLlmd(kube, model, servers[model.name]!, gateways[model.name]);
    }
    if (model.storage) {
      state.jobs.push({
        namespace: model.namespace,
        name: model.storage.job,
        status: pulled ? { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] } : { active: 1 },
      });
      if (pulled) for (const pod of state.pods.filter((p) => p.namespace === model.namespace)) pod.files = [model.storage.marker];
    }
  }
  return { servers, gateways };
}

function deployLlmd(kube: FakeKube, model: AnyLlmdModelPlan, server: ModelServer, gateway: ModelServer | undefined): void {
  const { state } = kube;
  const ns = model.namespace;
  const decodeLabels = { ...model.modelServer.podLabels, [LABEL_ROLE]: 'decode' };
  const embedder = model.category === 'embedder';
  for (let i = 0; i < model.modelServer.decodeReplicas; i += 1) {
    state.pods.push({
      namespace: ns,
      name: `${model.modelServer.decodeDeployment}-7c9f${i}`,
      labels: decodeLabels,
      containers: [{ name: 'vllm', ports: [{ name: 'http', containerPort: model.modelServer.port }] }],
      forward: embedder ? { [model.modelServer.port]: server.port } : {},
    });
  }
  for (let i = 0; i < model.modelServer.prefillReplicas; i += 1) {
    state.pods.push({ namespace: ns, name: `${model.modelServer.prefillDeployment}-5b2a${i}`, labels: { ...model.modelServer.podLabels, [LABEL_ROLE]: 'prefill' } });
  }
  if (model.upstream === '2026-08' && model.router.gatewayClass === 'envoy') {
    // Envoy Gateway's proxy Deployment and Service for the Gateway, in its own namespace, under its hashed name.
    const owning = { [ENVOY_OWNING_GATEWAY_NAME]: model.gateway.name, [ENVOY_OWNING_GATEWAY_NAMESPACE]: ns };
    state.pods.push({ namespace: ENVOY_GATEWAY_SYSTEM_NAMESPACE, name: `${model.gateway.service}-5c6d7-xk2p9`, labels: { 'app.kubernetes.io/name': 'envoy', ...owning }, containers: [{ name: 'envoy', ports: [{ name: 'http-10080', containerPort: 10080 }] }], forward: { 10080: (gateway ?? server).port } });
    state.services.push({ namespace: ENVOY_GATEWAY_SYSTEM_NAMESPACE, name: model.gateway.service, labels: owning, selector: { 'app.kubernetes.io/name': 'envoy', ...owning }, ports: [{ name: 'http-80', port: model.gateway.port, targetPort: 10080 }] });
  } else {
    // Istio's Deployment and Service for the Gateway.
    const gatewayLabels = { [ISTIO_GATEWAY_NAME_LABEL]: model.gateway.name };
    state.pods.push({ namespace: ns, name: `${model.gateway.service}-6d8b9`, labels: gatewayLabels, containers: [{ name: 'istio-proxy' }], forward: { 80: (gateway ?? server).port } });
    state.services.push({
      namespace: ns,
      name: model.gateway.service,
      labels: gatewayLabels,
      selector: gatewayLabels,
      ports: [
        { name: 'status-port', port: 15021, targetPort: 15021 },
        { name: 'default', port: model.gateway.port, targetPort: 80 },
      ],
    });
  }
  // The EPP (GAIE) and its Service.
  const eppLabels = { [GAIE_EPP_LABEL]: model.inferencePool.epp };
  state.pods.push({ namespace: ns, name: `${model.inferencePool.epp}-84c6d`, labels: eppLabels, containers: [{ name: 'epp' }] });
  state.services.push({ namespace: ns, name: model.inferencePool.epp, selector: eppLabels, ports: [{ name: 'grpc-ext-proc', port: 9002, targetPort: 9002 }] });
  if (model.embeddingService) {
    state.services.push({
      namespace: ns,
      name: model.embeddingService.name,
      selector: decodeLabels,
      ports: [{ name: 'http', port: model.embeddingService.port, targetPort: model.embeddingService.targetPort }],
    });
  }
}

function deployKserve(kube: FakeKube, model: KserveModelPlan, server: ModelServer, address: 'cluster-ip' | 'service-dns' | 'none'): void {
  const { state } = kube;
  for (let i = 0; i < model.replicas; i += 1) {
    state.pods.push({ namespace: model.namespace, name: `${model.workload}-6f7d8${i}`, labels: model.podLabels, containers: [{ name: 'main', ports: [{ containerPort: model.port }] }] });
  }
  // Envoy Gateway's proxy for the KServe Gateway, in its controller namespace.
  const owning = { [ENVOY_OWNING_GATEWAY_NAME]: model.gateway.name, [ENVOY_OWNING_GATEWAY_NAMESPACE]: model.gateway.namespace };
  const envoyService = `envoy-${model.gateway.namespace}-${model.gateway.name}-3a9c1e2f`;
  if (!state.services.some((s) => s.name === envoyService)) {
    state.pods.push({ namespace: ENVOY_GATEWAY_SYSTEM_NAMESPACE, name: `${envoyService}-5c6d7-xk2p9`, labels: { 'app.kubernetes.io/name': 'envoy', ...owning }, containers: [{ name: 'envoy', ports: [{ name: 'http-10080', containerPort: 10080 }] }], forward: { 10080: server.port } });
    state.services.push({ namespace: ENVOY_GATEWAY_SYSTEM_NAMESPACE, name: envoyService, labels: owning, selector: { 'app.kubernetes.io/name': 'envoy', ...owning }, ports: [{ name: 'http-80', port: 80, targetPort: 10080 }] });
  }
  const host = address === 'service-dns' ? `${envoyService}.${ENVOY_GATEWAY_SYSTEM_NAMESPACE}.svc.cluster.local` : '10.96.14.7';
  const ref = llmInferenceServiceRef(model);
  state.customObjects.push({
    ...ref,
    object: {
      apiVersion: `${ref.group}/${ref.version}`,
      kind: 'LLMInferenceService',
      metadata: { name: model.service, namespace: model.namespace },
      status: {
        url: '',
        addresses: address === 'none' ? [] : [{ name: 'gateway-internal', url: `http://${host}${model.pathPrefix}` }],
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'WorkloadsReady', status: 'True' },
          { type: 'RouterReady', status: 'True' },
        ],
      },
    },
  });
}

/** A pod of the fake cluster by name prefix. */
export function podOf(kube: FakeKube, prefix: string): FakePod {
  const pod = kube.state.pods.find((p) => p.name.startsWith(prefix));
  if (!pod) throw new Error(`no fake pod ${prefix}*`);
  return pod;
}
