/**
 * @app-serving/test-cluster — test support, not published: the upstream data (`../shared/upstream/`,
 * or the cache `npm run fetch-upstream` fills from the pins in upstream.json), and a real Kubernetes
 * control plane on 127.0.0.1 (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok),
 * built from Go modules once and cached.
 */
export { PROJECT_ROOT, locateUpstream, upstreamDir, upstreamPath, readUpstream, readUpstreamYaml, readUpstreamJson } from './upstream.ts';
export type { UpstreamLocation } from './upstream.ts';
export { startCluster, crdFiles, installCrds, installCrdFiles, applyCrd, CURRENT_CRDS_BESIDE } from './cluster.ts';
export type { TestCluster, TestUser, StartOptions, ApiResponse, AuditEvent, CrdSet } from './cluster.ts';
export { startKeda, startPrometheus, KEDA_NAMESPACE, EXTERNAL_METRICS_API } from './keda.ts';
export type { RunningKeda, StandInPrometheus } from './keda.ts';
export { OUTCOME_ANNOTATION, KWOK_NODE_ANNOTATION } from './kwok.ts';
export {
  applyObject,
  applyObjects,
  tryApply,
  describeObject,
  objectPath,
  createNodes,
  waitFor,
  list,
  forwardPodPorts,
  podFileSystem,
  renderedManifests,
  ensureNamespaces,
} from './objects.ts';
export type { KubeObject, NodeSpec, ApplyOptions, Rejection } from './objects.ts';
export { istioGatewayStandIn, agentgatewayStandIn, envoyGatewayStandIn, kserveStandIns, STAND_IN_LABEL, ENVOY_GATEWAY_SYSTEM } from './controllers.ts';
export type { KserveStandInArgs } from './controllers.ts';
export { DEFAULT_STORAGE_CLASSES, PROVISIONER, provisionOnce, provisionedVolume, storageClassObjects } from './storage.ts';
export type { StorageClassSpec } from './storage.ts';
export { helmTemplate, clusterApiVersions, publishedChart, renderReleases } from './helm.ts';
export { chartPackage, goModuleDir, moduleChartValues, moduleChartsCache, MODULE_CHARTS } from './module-charts.ts';
export type { HelmTemplateArgs, PlannedRelease } from './helm.ts';
export { startModelServer } from './model-server.ts';
export type { ModelServer, ModelServerOptions, Refusal } from './model-server.ts';
export { createTestStack, pulumiEngine, resourceSteps } from './pulumi.ts';
export type { PulumiEngine, InlineProgram, TestStackOptions, TestStack, OperationResult, OperationError, ResourceStep } from './pulumi.ts';
export { NODE_IP, insideTestNetns, podNetwork } from './pods/network.ts';
export type { PodNetwork } from './pods/network.ts';
export { startClusterDns, parseQuery as parseDnsQuery, answer as dnsAnswer } from './pods/dns.ts';
export type { ClusterDns } from './pods/dns.ts';
export { startPodRuntime, containerEnv, logTail } from './pods/runtime.ts';
export type { PodRuntime, PodRuntimeOptions, ContainerRun, RunningContainer } from './pods/runtime.ts';
export { podRoot, resolveInRoot, fieldValue } from './pods/filesystem.ts';
export type { PodRoot, VolumeSources } from './pods/filesystem.ts';
export { runProbe, grpcHealth, probePort } from './pods/probes.ts';
export { installEnvoyGateway, renderEnvoyGateway, envoyGatewayImage } from './pods/envoy-gateway.ts';
export type { EnvoyGatewayInstall } from './pods/envoy-gateway.ts';
