/**
 * @app-serving/pulumi-components — Pulumi ComponentResources that deploy an app-serving plan:
 * per model the llm-d stack (infra, GAIE, modelservice charts + route or Service) or a KServe
 * LLMInferenceService, and a whole stack with one shared Kubernetes provider.
 *
 * `renderStack` (offline rendering under Pulumi's mocks) is in `@app-serving/pulumi-components/render`.
 */

// Whole stack and whole models
export { AppServing } from './app-serving.ts';
export type { AppServingArgs, AppServingConfigArgs } from './app-serving.ts';
export type { ModelOutputs, LlmdModelOutputs, LlmdGenerativeOutputs, LlmdEmbedderOutputs, KserveModelOutputs } from './model-outputs.ts';
export { LlmdModel } from './llmd-model.ts';
export type { LlmdModelArgs } from './llmd-model.ts';
export { LlmdRouterModel, Router, RouterGateway, ModelServer, EnvoyRoute } from './llmd-router-model.ts';
export { StackEndpoint } from './stack-endpoint.ts';
export type { StackEndpointArgs } from './stack-endpoint.ts';
export type { LlmdRouterModelArgs, RouterArgs, RouterGatewayArgs } from './llmd-router-model.ts';
export { KserveModel } from './kserve-model.ts';
export type { KserveModelArgs } from './kserve-model.ts';
export { planModelFolder } from './model-folder.ts';
export type { ModelFolderArgs, FolderCredentials } from './model-folder.ts';

// Building blocks
export { ModelNamespace } from './model-namespace.ts';
export type { ModelNamespaceArgs } from './model-namespace.ts';
export { ModelStorage, DEFAULT_PULL_TIMEOUT, REPLACE_UNREADY_ANNOTATION } from './model-storage.ts';
export type { ModelStorageArgs } from './model-storage.ts';
export { LlmdInfra } from './llmd-infra.ts';
export type { LlmdInfraArgs } from './llmd-infra.ts';
export { InferencePool } from './inference-pool.ts';
export type { InferencePoolArgs } from './inference-pool.ts';
export { ModelService } from './model-service.ts';
export type { ModelServiceArgs } from './model-service.ts';
export { InferenceRoute } from './inference-route.ts';
export type { InferenceRouteArgs } from './inference-route.ts';
export { EmbeddingService } from './embedding-service.ts';
export type { EmbeddingServiceArgs } from './embedding-service.ts';
export { ModelAccess } from './model-access.ts';
export type { ModelAccessArgs } from './model-access.ts';
export { KserveGateway } from './kserve-gateway.ts';
export type { KserveGatewayArgs } from './kserve-gateway.ts';
export { ModelAutoscaling } from './model-autoscaling.ts';
export type { ModelAutoscalingArgs } from './model-autoscaling.ts';

// Pure builders
export { chartArgs, postRenderTransform } from './chart.ts';
export type { ChartReleaseInputs } from './chart.ts';
export { TYPE_TOKENS, childName } from './component-names.ts';
