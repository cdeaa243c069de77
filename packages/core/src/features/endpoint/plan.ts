import { GATEWAY_HTTP_PORT, EMBEDDINGS_SERVICE_PORT, type Category, type ChartRef } from '../../constants.ts';
import type { StackConfig } from '../../config/load.ts';
import type { EndpointKeyFormat } from '../../config/types.ts';
import type { EnvoyGatewayClassPlan } from '../../envoy-gateway.ts';
import type { Issue, IssueList } from '../../errors.ts';
import type { ImageSource } from '../../images.ts';
import type { PostRenderPatch } from '../../patches.ts';
import type { DeploymentPlan, ModelPlan } from '../../plan.ts';
import { getPath, type Values } from '../../values/merge.ts';
import { nodeAffinityFor, type Toleration } from '../../values/scheduling.ts';
import { modelOnEndpoint } from '../../upstream/select.ts';
import { ROUTER_PROXY_PORT } from '../../upstream/2026-08/facts.ts';
import {
  BBR_DEFAULTS,
  BBR_GAIE_VERSION,
  BBR_IMAGE,
  BBR_MODEL_PLUGIN,
  ENDPOINT_NAME,
  ENDPOINT_REQUEST_TIMEOUT,
  ROUTE_MAX_NAMES,
} from './facts.ts';
import { endpointManifests, type EndpointManifests, type EndpointTools } from './manifests.ts';
import { endpointNames, endpointService, type EndpointNames } from './names.ts';
import { endpointAccessMode, endpointClass, endpointEntries, endpointKeyFormat, grantedModels } from './rules.ts';

/** An adapter a model plan lists (`adapters[]`, the adapters feature's): served by its parent's pool, under its own name. */
export interface EndpointAdapter {
  readonly name: string;
  /** The model's served name. */
  readonly parent: string;
}

/** The adapters of a model plan (the adapters feature's `adapters`), as the endpoint routes and lists them. */
export function adaptersOf(model: ModelPlan): readonly EndpointAdapter[] {
  return model.adapters.map(({ name, parent }) => ({ name, parent }));
}

/** Where the endpoint sends one model's requests. */
export interface EndpointBackend {
  readonly group: string;
  readonly kind: 'Service' | 'InferencePool';
  readonly name: string;
  readonly namespace: string;
  /** The Service's port; none for an InferencePool. */
  readonly port: number | null;
  /** For messages: what it is (`the InferencePool router-x (its EPP picks the pod)`). */
  readonly what: string;
}

/** One model on the endpoint. */
export interface EndpointModel {
  /** The model entry's name (`models.<category>[].name`): what `endpoint.access.apiKeys` grants. */
  readonly model: string;
  readonly category: Category;
  readonly slug: string;
  readonly namespace: string;
  /** The name clients send as `model`. */
  readonly servedName: string;
  readonly adapters: readonly EndpointAdapter[];
  /** Every name the route matches: the served name, then the adapters'. */
  readonly names: readonly string[];
  readonly route: string;
  /** Envoy Gateway: the route's SecurityPolicy (key check and grants) and BackendTrafficPolicy (rate limit). */
  readonly securityPolicy: string;
  readonly trafficPolicy: string;
  readonly backend: EndpointBackend;
  /** The route's request timeout. */
  readonly requestTimeout: string;
  /** The keys granted this model (mode apiKeys), sorted. */
  readonly keys: readonly string[];
  /** Requests per minute per caller to this model: the smaller of the endpoint's and the model's own, or null. */
  readonly requestsPerMinute: number | null;
}

/** Who may call which model through the endpoint (no key's value). */
export interface EndpointAccessPlan {
  readonly mode: 'open' | 'apiKeys' | 'jwt';
  /** True when the stack says so; false for an endpoint open by default. */
  readonly explicit: boolean;
  /** How clients send a key (mode apiKeys), else null. */
  readonly keyFormat: EndpointKeyFormat | null;
  /** Key name → the names of the models it grants (model entry names), each resolved against the models' own access. */
  readonly grants: Readonly<Record<string, readonly string[]>>;
  readonly jwt: { readonly issuer: string; readonly audiences: readonly string[]; readonly jwksUri: string | null; readonly jwks: string | null; readonly modelsClaim: string } | null;
  /** The endpoint's own limit (per caller, per model), or null. */
  readonly requestsPerMinute: number | null;
}

/** The OpenAI model list the endpoint answers `GET /v1/models` with. */
export interface EndpointModelList {
  readonly object: 'list';
  readonly data: readonly { readonly id: string; readonly object: 'model'; readonly created: number; readonly owned_by: string; readonly parent?: string }[];
}

/** The stack's one OpenAI endpoint (docs/endpoint.md), as plain data. */
export interface EndpointPlan {
  readonly name: string;
  readonly namespace: string;
  readonly class: 'istio' | 'envoy';
  /** The GatewayClass object its Gateway names: `istio`, or the stack's Envoy GatewayClass. */
  readonly gatewayClassName: string;
  readonly hostname: string | null;
  readonly port: number;
  /** The Service clients call (the Gateway controller's), its host and URL (`base_url` is `<url>/v1`). */
  readonly service: { readonly name: string; readonly namespace: string; readonly host: string; readonly url: string };
  readonly names: Omit<EndpointNames, 'route' | 'routeSecurityPolicy' | 'routeTrafficPolicy'>;
  /** GAIE's body-based router: its chart, release and values, and what the chart is patched with. */
  readonly bbr: { readonly release: string; readonly chart: ChartRef; readonly values: Values; readonly image: string; readonly patches: readonly PostRenderPatch[] };
  readonly models: readonly EndpointModel[];
  /** What `GET /v1/models` answers. */
  readonly list: EndpointModelList;
  readonly access: EndpointAccessPlan;
  readonly pullSecret: string | null;
  /** Node labels of the endpoint's pods (gateway, body-based router): the stack's controlNodeSelector. */
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly tolerations: readonly Toleration[];
  readonly images: readonly ImageSource[];
  /** The objects of the endpoint except those holding keys (the component builds those from the secrets). */
  readonly manifests: EndpointManifests;
}

/** What planning the endpoint needs. */
export interface EndpointPlanInput {
  readonly config: StackConfig;
  readonly models: readonly ModelPlan[];
  readonly harbor: DeploymentPlan['harbor'];
  readonly toleration: Toleration | undefined;
  /** The body-based-routing chart, resolved (pinned, or `charts.bodyBasedRouting`). */
  readonly chart: ChartRef;
  readonly envoyGatewayClass: EnvoyGatewayClassPlan;
  readonly list: IssueList;
  readonly warnings: Issue[];
  readonly tools: EndpointTools;
}

/** The owner in the `/v1/models` answer. */
export const ENDPOINT_OWNER = 'app-serving';

/** Plans the stack's endpoint: null without one. Problems go to `input.list`. */
export function planEndpoint(input: EndpointPlanInput): EndpointPlan | null {
  const { config, list } = input;
  const settings = config.endpoint;
  if (!settings || !settings.enabled) return null;
  const className = endpointClass(config);
  const names = endpointNames(settings.name, settings.namespace);
  const service = endpointService(className, settings.name, settings.namespace);
  const before = list.size;

  if (className === 'istio' && service.name.length > 63) {
    list.add(config.locate('name.too-long', ['endpoint', 'name'], `the Service Istio makes for the endpoint's Gateway, "${service.name}", is ${service.name.length} characters; a Service name may have at most 63: the Gateway would never be Programmed — shorten endpoint.name`));
  }
  for (const model of input.models) {
    if (model.namespace === settings.namespace) {
      list.add(config.locate('name.duplicate', ['endpoint', 'namespace'], `"${settings.namespace}" is the namespace of ${model.category}/${model.name}; the endpoint needs a namespace of its own (app-serving creates and deletes it)`));
    }
  }

  const entries = endpointEntries(config);
  const onEndpoint = input.models.filter((m) => entries.some((e) => e.category === m.category && e.entry.name === m.name));
  const access = accessPlanOf(config, entries);
  const owners = new Map<string, string>();
  const models: EndpointModel[] = [];
  for (const model of onEndpoint) {
    const entry = entries.find((e) => e.category === model.category && e.entry.name === model.name)!;
    const at = ['models', model.category, entry.index] as const;
    const servedName = model.platform === 'llm-d' ? model.modelServer.servedModelName : model.servedModelName;
    const adapters = adaptersOf(model);
    const modelNames = [servedName, ...adapters.map((a) => a.name)];
    for (const name of modelNames) {
      if (!ENDPOINT_NAME.test(name)) {
        list.add(
          config.locate(
            'config.invalid',
            [...at, 'name'],
            `${model.folder}: the name "${name}" cannot be routed by the endpoint: names it serves are letters, digits and . _ : / @ + - (at most 253, starting with a letter or digit) — they are matched as a header value and written into its answers; rename it, or set endpoint: false for the model`,
          ),
        );
      }
      const owner = owners.get(name);
      if (owner !== undefined) {
        list.add(config.locate('name.duplicate', [...at, 'name'], `${model.folder}: the name "${name}" is also served by ${owner}; the endpoint routes by name, so every model and adapter on it needs its own`));
      } else owners.set(name, `${model.category}/${model.name}`);
    }
    if (modelNames.length > ROUTE_MAX_NAMES) {
      list.add(config.locate('values.unsupported', [...at, 'name'], `${model.folder}: ${modelNames.length} names (the model and its adapters) on one route; Gateway API allows ${ROUTE_MAX_NAMES} matches per HTTPRoute — serve fewer adapters per model`));
    }
    const backend = backendOf(config, model, className, list, at);
    if (!backend) continue;
    const own = model.access.requestsPerMinute;
    const limits = [access.requestsPerMinute, own].filter((n): n is number => n !== null);
    models.push({
      model: model.name,
      category: model.category,
      slug: model.slug,
      namespace: model.namespace,
      servedName,
      adapters,
      names: modelNames,
      route: names.route(model.slug),
      securityPolicy: names.routeSecurityPolicy(model.slug),
      trafficPolicy: names.routeTrafficPolicy(model.slug),
      backend,
      requestTimeout: requestTimeoutOf(model),
      keys: Object.entries(access.grants).filter(([, granted]) => granted.includes(model.name)).map(([key]) => key).sort(),
      requestsPerMinute: limits.length > 0 ? Math.min(...limits) : null,
    });
  }

  const image = settings.bbr?.image ?? BBR_IMAGE;
  if (settings.bbr?.image?.includes('@')) {
    list.add(config.locate('config.invalid', ['endpoint', 'bbr', 'image'], 'must name a tag, not a digest: the body-based-routing chart writes the image as <registry>/<repository>:<tag>'));
  }
  if (list.size > before) return null;

  const pullSecret = input.harbor?.pullSecret ?? null;
  const nodeSelector = config.controlNodeSelector ?? {};
  const tolerations = input.toleration ? [input.toleration] : [];
  const bbr = bbrRelease({ names, className, gateway: settings.name, image, replicas: settings.bbr?.replicas, chart: input.chart, pullSecret, nodeSelector, tolerations });
  const modelList: EndpointModelList = {
    object: 'list',
    data: models.flatMap((m) => [
      { id: m.servedName, object: 'model' as const, created: 0, owned_by: ENDPOINT_OWNER },
      ...m.adapters.map((a) => ({ id: a.name, object: 'model' as const, created: 0, owned_by: ENDPOINT_OWNER, parent: a.parent })),
    ]),
  };
  const plan = {
    name: settings.name,
    namespace: settings.namespace,
    class: className,
    gatewayClassName: className === 'istio' ? 'istio' : input.envoyGatewayClass.name,
    hostname: settings.hostname ?? null,
    port: GATEWAY_HTTP_PORT,
    service: { ...service, url: `http://${service.host}:${GATEWAY_HTTP_PORT}` },
    names: (({ route: _r, routeSecurityPolicy: _s, routeTrafficPolicy: _t, ...plain }) => plain)(names),
    bbr,
    models,
    list: modelList,
    access,
    pullSecret,
    nodeSelector,
    tolerations,
    images: [{ image, where: settings.bbr?.image ? 'endpoint.bbr.image' : `the body-based router of the endpoint (GAIE ${BBR_GAIE_VERSION} body-based-routing chart default)` }],
  };
  return { ...plan, manifests: endpointManifests(plan, input.tools) };
}

/** The endpoint's access, resolved against the models it serves (the rules made sure the grants are sound). */
function accessPlanOf(config: StackConfig, entries: ReturnType<typeof endpointEntries>): EndpointAccessPlan {
  const access = config.endpoint?.access;
  const mode = endpointAccessMode(access);
  const requestsPerMinute = access?.rateLimit?.requestsPerMinute ?? null;
  const grants: Record<string, string[]> = {};
  if (mode === 'apiKeys') {
    for (const key of Object.keys(access!.apiKeys!).sort()) grants[key] = grantedModels(key, access!.apiKeys![key]!, entries);
  }
  const jwt = mode === 'jwt' ? access!.jwt! : null;
  return {
    mode,
    explicit: access !== undefined,
    keyFormat: mode === 'apiKeys' ? endpointKeyFormat(config) : null,
    grants,
    jwt: jwt ? { issuer: jwt.issuer, audiences: jwt.audiences ?? [], jwksUri: jwt.jwksUri ?? null, jwks: jwt.jwks ?? null, modelsClaim: jwt.modelsClaim } : null,
    requestsPerMinute,
  };
}

/**
 * Where the endpoint sends a model's requests, or undefined with an issue:
 * - llm-d, generative, behind its own Gateway (Istio endpoint only, rules.ts): its InferencePool,
 *   whose EPP Istio calls (per route, with the route chosen again after the body-based router);
 * - llm-d, generative, the Router's standalone proxy (`gateway: false`, or `router.mode: standalone`):
 *   the EPP Service's proxy port, where the Router's own Envoy asks the EPP;
 * - llm-d, embedding: its embeddings Service (the EPP takes no embeddings);
 * - KServe v0.20 without the scheduler: KServe's workload Service (`<name>-kserve-workload-svc:8000`),
 *   where KServe's own route sends what its scheduler does not take; with the scheduler it is
 *   refused: KServe routes inference through the InferencePool, which the shared Gateway could only
 *   reach past the scheduler (Envoy Gateway takes an InferencePool only through Envoy AI Gateway).
 */
function backendOf(config: StackConfig, model: ModelPlan, className: 'istio' | 'envoy', list: IssueList, at: readonly (string | number)[]): EndpointBackend | undefined {
  if (model.platform === 'kserve') {
    if (model.scheduler) {
      list.add(
        config.locate(
          'config.contradiction',
          [...at, 'endpoint'],
          `${model.folder}: a KServe model with its scheduler cannot be on the endpoint: KServe sends its inference requests through the InferencePool and its scheduler (its own HTTPRoute on the KServe Gateway), which the endpoint's Gateway could only reach past the scheduler (Envoy Gateway takes an InferencePool as a backend only with Envoy AI Gateway) — set router.scheduler: null in its overlay (KServe then serves it through its workload Service), or endpoint: false`,
        ),
      );
      return undefined;
    }
    return { group: '', kind: 'Service', name: model.workloadService, namespace: model.namespace, port: model.port, what: `KServe's workload Service ${model.workloadService}` };
  }
  if (model.embeddingService) {
    return { group: '', kind: 'Service', name: model.embeddingService.name, namespace: model.namespace, port: EMBEDDINGS_SERVICE_PORT, what: `the embeddings Service ${model.embeddingService.name} (the EPP takes no embeddings)` };
  }
  if (model.gateway.kind === 'router-proxy') {
    return { group: '', kind: 'Service', name: model.gateway.service, namespace: model.namespace, port: ROUTER_PROXY_PORT, what: `the llm-d Router's proxy ${model.gateway.service}:${ROUTER_PROXY_PORT} (its EPP picks the pod)` };
  }
  if (className !== 'istio') {
    // rules.ts refuses it with the fix; a plan without the rules (checkRules: false, planDeployment reports both) lands here.
    list.add(config.locate('config.contradiction', [...at, 'gateway'], `${model.folder}: on an Envoy Gateway endpoint the model needs gateway: false (the llm-d Router's own proxy)`));
    return undefined;
  }
  return { group: 'inference.networking.k8s.io', kind: 'InferencePool', name: model.inferencePool.name, namespace: model.namespace, port: null, what: `the InferencePool ${model.inferencePool.name} (its EPP ${model.inferencePool.epp} picks the pod)` };
}

/** The route timeout: the Router values' `httpRoute.requestTimeout` for a 2026-08 llm-d model, else the Router chart's default. */
function requestTimeoutOf(model: ModelPlan): string {
  if (model.platform === 'llm-d' && model.upstream === '2026-08') {
    const own = getPath(model.router.values, ['httpRoute', 'requestTimeout']);
    if (typeof own === 'string') return own;
  }
  return ENDPOINT_REQUEST_TIMEOUT;
}

interface BbrInput {
  readonly names: EndpointNames;
  readonly className: 'istio' | 'envoy';
  readonly gateway: string;
  readonly image: string;
  readonly replicas: number | undefined;
  readonly chart: ChartRef;
  readonly pullSecret: string | null;
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly tolerations: readonly Toleration[];
}

/**
 * The body-based-routing chart's values: the image, one plugin (the body's `model` into
 * {@link MODEL_HEADER}; not `base-model-to-header`, which maps adapters to base models from
 * ConfigMaps: app-serving's routes match every adapter's name themselves), the provider (Istio: the
 * chart's EnvoyFilter and DestinationRule on the endpoint's Gateway; Envoy Gateway: none, an
 * EnvoyExtensionPolicy calls it), and on Envoy Gateway plain gRPC (`--secure-serving=false`: Envoy
 * Gateway verifies a TLS backend only against a CA, and the router's certificate is self-signed at
 * start). The chart has no value for placement or pull secrets: post-render patches add them.
 */
function bbrRelease(input: BbrInput): EndpointPlan['bbr'] {
  const at = input.image.lastIndexOf(':');
  const slash = input.image.indexOf('/');
  const image = { registry: input.image.slice(0, slash), repository: input.image.slice(slash + 1, at), tag: input.image.slice(at + 1), pullPolicy: 'IfNotPresent' };
  const values: Values = {
    bbr: {
      image,
      ...(input.replicas !== undefined && { replicas: input.replicas }),
      plugins: [structuredClone(BBR_MODEL_PLUGIN) as unknown as Values],
      ...(input.className === 'envoy' && { flags: { 'secure-serving=false': '' } }),
    },
    provider: { name: input.className === 'istio' ? 'istio' : BBR_DEFAULTS.provider.name },
    inferenceGateway: { name: input.gateway },
  };
  const affinity = nodeAffinityFor(input.nodeSelector);
  const patches: PostRenderPatch[] = [
    ...(input.pullSecret ? [{ kind: 'service-account-pull-secret' as const, serviceAccount: input.names.bbrServiceAccount, imagePullSecrets: [{ name: input.pullSecret }] }] : []),
    ...(affinity || input.tolerations.length > 0
      ? [{ kind: 'deployment-pod-placement' as const, deployment: input.names.bbrService, ...(affinity && { affinity }), ...(input.tolerations.length > 0 && { tolerations: input.tolerations }) }]
      : []),
  ];
  return { release: input.names.bbrRelease, chart: input.chart, values, image: input.image, patches };
}

/** The models of a stack the endpoint serves, for callers that have only the config and the plans. */
export function endpointServes(config: Pick<StackConfig, 'endpoint' | 'models'>, model: Pick<ModelPlan, 'category' | 'name'>): boolean {
  const entry = config.models[model.category].find((e) => e.enabled && e.name === model.name);
  return entry !== undefined && modelOnEndpoint(config, entry);
}
