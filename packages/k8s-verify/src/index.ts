/**
 * @app-serving/k8s-verify — smoke tests of a deployed app-serving stack: readiness, the model pull
 * marker, and OpenAI-compatible chat, completions and embeddings through the real traffic path
 * (llm-d Gateway or embeddings Service, KServe Gateway), over port-forwards or a base URL.
 * No module does anything at import time; `@kubernetes/client-node` is loaded only when a cluster is used.
 */

// Orchestrator
export { verifyPlan, selectModels } from './verify.ts';
export type { VerifyOptions } from './verify.ts';

// Checks, each usable alone
export { checkModels, checkChat, checkAdapters, checkChatStream, checkCompletions, checkEmbeddings, checkGatewayRejectsEmbeddings, streamChat, DEFAULT_CHECK_TIMEOUT_MS, DEFAULT_MAX_TOKENS } from './openai.ts';
export { accessHeaders, checkRefusesAnonymous, withoutCredentials } from './access.ts';
export {
  checkEndpointModels,
  checkEndpointUnknownModel,
  checkEndpointRefusesAnonymous,
  checkEndpointRefusesUngranted,
  checkEndpointAnswers,
  endpointAccessHeaders,
  grantedNames,
  jwtClaim,
} from './endpoint-checks.ts';
export type { HttpCheckOptions, RouteHint, StreamOutcome } from './openai.ts';
export { checkReady, checkPulled, checkKserveAddress, probeReady, probeKserveAddress, llmInferenceServiceRef } from './cluster-checks.ts';
export type { ClusterCheckOptions, Probe, KserveAddress } from './cluster-checks.ts';
export { runLoadProbe, loadCheck, percentiles, MAX_LOAD_REQUESTS, MAX_LOAD_CONCURRENCY } from './load.ts';
export type { LoadProbeOptions } from './load.ts';

// Result contract
export { CHECK_NAMES, CHECK_STATUSES, RESULT_SCHEMA_VERSION, LOAD_PROBE_LABEL } from './types.ts';
export type {
  CheckName,
  CheckStatus,
  CheckResult,
  Failure,
  JsonValue,
  ModelResult,
  EndpointInfo,
  EndpointResult,
  LoadProbeResult,
  Percentiles,
  VerifyResult,
  VerifyTarget,
  VerifyEvent,
} from './types.ts';

// Formatters (pure)
export { formatSummary, formatJson, formatJunit, formatErrorJunit, summaryRows, describeEvent, describeTarget, endpointLabel } from './format.ts';
export type { SummaryRow, SummaryOptions } from './format.ts';

// Preflight: is the cluster ready for a stack? (read-only)
export { runPreflight, createPreflightReader, tolerates, PREFLIGHT_SCHEMA_VERSION, DEFAULT_PREFLIGHT_TIMEOUT_MS, DEFAULT_PREFLIGHT_DEADLINE_MS } from './preflight.ts';
export type { PreflightOptions, PreflightReader, PreflightResult, PreflightCheckResult, PreflightStatus, NodeInfo, DeploymentInfo } from './preflight.ts';
export { formatPreflight, formatPreflightJson, formatPreflightJunit, describePreflightCheck } from './preflight-format.ts';

// Kubernetes access
export { loadKubeconfig, connectCluster } from './kubeconfig.ts';
export type { KubeconfigOptions, ResolvedKubeconfig } from './kubeconfig.ts';
export { createCluster, KubeError, labelSelector } from './cluster.ts';
export type { Cluster, PodSummary, ServiceSummary, JobSummary, ExecOutcome, Tunnel, CustomObjectRef } from './cluster.ts';
export { openServiceEndpoint, openKserveEndpoint, openEnvoyGatewayEndpoint, findEnvoyGatewayService, EndpointError, ENVOY_OWNING_GATEWAY_NAME, ENVOY_OWNING_GATEWAY_NAMESPACE, ENVOY_GATEWAY_SYSTEM_NAMESPACE } from './endpoints.ts';
export type { OpenEndpoint } from './endpoints.ts';

// HTTP, diagnosis and utilities
export { RequestError, SseParser, MAX_BODY_BYTES, MAX_SSE_LINE_BYTES, MAX_SSE_EVENTS } from './http.ts';
// The bounds of every reader (docs/cli.md, Limits; a test holds the table to these).
export { readBody, getJson, BodyReadError, AnswerError, MAX_JSON_DEPTH, MAX_TEXT_LENGTH } from './bounded.ts';
export { MAX_API_BODY_BYTES } from './api.ts';
export { MAX_KUBECONFIG_BYTES, MAX_KUBECONFIG_FILES } from './kubeconfig.ts';
export { MAX_CREDENTIAL_FILE_BYTES, MAX_PLUGIN_OUTPUT_BYTES } from './credentials.ts';
export { MAX_OUTSIDE_ANSWER_BYTES } from './preflight.ts';
export type { Endpoint, RequestErrorKind } from './http.ts';
export { EPP_EMBEDDINGS_REJECTION } from './diagnose.ts';
export type { RouteContext } from './diagnose.ts';
export { VerifyError, isVerifyError } from './errors.ts';
export type { VerifyErrorCode } from './errors.ts';
export { parseDuration, MAX_DURATION_MS } from './duration.ts';
export { systemClock, DEFAULT_BACKOFF, DeadlineError, formatMs } from './clock.ts';
export type { Clock, Backoff } from './clock.ts';
export { Redactor, displayUrl } from './redact.ts';
