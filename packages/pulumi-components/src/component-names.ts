/**
 * Type tokens and child logical names of the components.
 *
 * A type token is part of every URN: renaming one re-creates every deployed resource under it,
 * so never change a token without adding an `aliases` entry for the old one.
 */
export const TYPE_TOKENS = {
  AppServing: 'app-serving:index:AppServing',
  ModelNamespace: 'app-serving:model:ModelNamespace',
  ModelStorage: 'app-serving:storage:ModelStorage',
  LlmdInfra: 'app-serving:llmd:LlmdInfra',
  InferencePool: 'app-serving:llmd:InferencePool',
  ModelService: 'app-serving:llmd:ModelService',
  InferenceRoute: 'app-serving:llmd:InferenceRoute',
  EmbeddingService: 'app-serving:llmd:EmbeddingService',
  /** Both sets' llm-d models (LlmdModel, LlmdRouterModel): one token, so a model moving across keeps its URN. */
  LlmdModel: 'app-serving:llmd:LlmdModel',
  RouterGateway: 'app-serving:llmd:RouterGateway',
  Router: 'app-serving:llmd:Router',
  ModelServer: 'app-serving:llmd:ModelServer',
  EnvoyRoute: 'app-serving:llmd:EnvoyRoute',
  KserveGateway: 'app-serving:kserve:KserveGateway',
  KserveModel: 'app-serving:kserve:KserveModel',
  ModelAutoscaling: 'app-serving:autoscaling:ModelAutoscaling',
  ModelAccess: 'app-serving:access:ModelAccess',
  StackEndpoint: 'app-serving:gateway:StackEndpoint',
} as const;

/**
 * The logical (Pulumi) name of a component's child: `<component name>-<suffix>`.
 *
 * Logical names only identify resources in the Pulumi state; the names the objects get in the
 * cluster (`metadata.name`, Helm release names) always come from `@app-serving/core`.
 */
export function childName(component: string, suffix: string): string {
  return `${component}-${suffix}`;
}
