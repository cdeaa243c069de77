/**
 * What `app-serving preflight` checks on a cluster before `pulumi up`, derived from the plan: only
 * what the stack's models need. Pure data (DESIGN §2): the cluster reads are k8s-verify's, the
 * output the CLI's; `plan` can print the same list.
 */
import {
  CLUSTER_REQUIREMENTS,
  ENVOY_GATEWAY_NAMESPACE,
  ISTIO_GATEWAY_CLASS,
  KSERVE_API,
  KSERVE_NAMESPACE,
} from './constants.ts';
import { ENVOY_CRD_FACTS, ENVOY_GATEWAY_API, ENVOY_GATEWAY_MIN_FOR_POOLS, ENVOY_GATEWAY_VERSION, type EnvoyCrdFact } from './envoy-gateway.ts';
import { KSERVE_RELEASES, type KserveRelease } from './kserve/releases.ts';
import { ROUTER_POOL_CRD_FIELDS } from './upstream/2026-08/facts.ts';
import type { DeploymentPlan, EndpointPlan, LlmdRouterModelPlan, ModelPlan } from './plan.ts';
import { ENDPOINT_LABEL } from './features/endpoint/names.ts';
import { AUTOSCALING_CRDS } from './features/autoscaling/facts.ts';
import { accessResources } from './features/access/manifests.ts';
import { getPath, isValuesMap, type Values } from './values/merge.ts';
import type { Toleration } from './values/scheduling.ts';

/** The label app-serving puts on every object of a model, its namespace included (manifests/common.ts). */
export const MODEL_LABEL = 'app-serving.io/model';

/** The GPU resource the model servers request. */
export const GPU_RESOURCE = 'nvidia.com/gpu';

/**
 * Envoy Gateway's own configuration (its Helm chart's ConfigMap): with Envoy AI Gateway's values it
 * lists InferencePool under `extensionManager.backendResources`, without which Envoy Gateway refuses
 * KServe's route to the pool (docs/deployment-flow.md, KServe step 2).
 */
export const ENVOY_GATEWAY_CONFIG = { namespace: ENVOY_GATEWAY_NAMESPACE, name: 'envoy-gateway-config', key: 'envoy-gateway.yaml' } as const;

/**
 * Istio as preflight reads it from a cluster: istiod's Deployments in `istio-system` (the Helm chart
 * and istioctl label them `app: istiod` and name them `istiod[-<revision>]`; the container
 * `discovery` runs `<hub>/pilot:<version>[-<variant>]` and takes the feature flags as env;
 * istio/istio 1.29.6 `manifests/charts/istio-control/istio-discovery/templates/deployment.yaml`), else
 * the label `app.kubernetes.io/version` the base chart puts on Istio's CRDs (`templates/crds.yaml`
 * with `istio.labels`). The inference extension is off unless istiod's env turns it on
 * (`pilot/pkg/features/experimental.go`: `ENABLE_GATEWAY_API_INFERENCE_EXTENSION`, default false).
 */
export const ISTIO = {
  namespace: 'istio-system',
  istiodSelector: 'app=istiod',
  container: 'discovery',
  versionLabel: 'app.kubernetes.io/version',
  crd: 'destinationrules.networking.istio.io',
  inferenceExtensionEnv: 'ENABLE_GATEWAY_API_INFERENCE_EXTENSION',
  /** The 2026-08 set's gateway mode with an Istio Gateway (docs/upgrading.md); the 2026-02 set's is CLUSTER_REQUIREMENTS.istio. */
  minimum2026_08: '1.29',
  /**
   * The end of upstream support of each Istio minor (istio.io's "Support status of Istio releases",
   * as recorded by endoflife-date/endoflife.date `products/istio.md` at a70eca337, 2026-08-22; 1.30's
   * is istio.io's estimate). A minor newer than the last has no end known here.
   */
  endOfSupport: <readonly { readonly minor: string; readonly date: string; readonly estimated?: boolean }[]>[
    { minor: '1.26', date: '2025-12-22' },
    { minor: '1.27', date: '2026-04-07' },
    { minor: '1.28', date: '2026-07-01' },
    { minor: '1.29', date: '2026-08-31' },
    { minor: '1.30', date: '2026-11-30', estimated: true },
  ],
} as const;

/** The fix for Istio below a minimum or without the inference extension. */
function istioFix(min: string): string {
  return `install or upgrade Istio to ${min} or newer (a supported release) with the inference extension on in istiod: istioctl install --set values.pilot.env.${ISTIO.inferenceExtensionEnv}=true, or helm upgrade istiod istio/istiod -n ${ISTIO.namespace} --set env.${ISTIO.inferenceExtensionEnv}=true`;
}

/** How bad a failed check is: an `error` fails the run (exit 1), a `warning` does not. */
export type PreflightSeverity = 'error' | 'warning';

/** A CRD the stack writes, at the version it writes. */
export interface CrdRequirement {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly version: string;
  /**
   * Paths (under the version's `openAPIV3Schema`) of fields that older versions lack: fields the
   * stack sets, or one that tells the supported release from an older one. `[]` steps into a list's items.
   */
  readonly fields?: readonly (readonly string[])[];
  /** Enum values a field must list (a field older versions had with fewer values). */
  readonly enums?: readonly { readonly field: readonly string[]; readonly value: string }[];
  /** The first upstream release whose CRD has every field and value asked for, for the fix. */
  readonly since?: string;
}

/** One check; `id` is stable and unique within a run (the `--json` and JUnit key). */
export type PreflightCheck = {
  readonly id: string;
  /** One line: what is checked. */
  readonly title: string;
  /** What to do when it fails. */
  readonly fix: string;
  readonly severity: PreflightSeverity;
  /** The models that need it (empty: the whole stack). */
  readonly models: readonly string[];
} & (
  | { readonly type: 'kubernetes-version'; readonly min: string }
  | { readonly type: 'crd'; readonly crd: CrdRequirement }
  | {
      readonly type: 'gateway-class';
      readonly name: string;
      /** The controller it must name (a class of that name may belong to another controller). */
      readonly controllerName?: string;
      /** Whether its controller must have Accepted it (status condition `Accepted` True). */
      readonly accepted?: boolean;
    }
  | { readonly type: 'custom-object'; readonly group: string; readonly version: string; readonly plural: string; readonly namespace: string; readonly name: string }
  | { readonly type: 'envoy-inference-pool'; readonly namespace: string; readonly configMap: string; readonly key: string }
  | {
      readonly type: 'placement';
      readonly namespace: string;
      readonly nodeSelector: Readonly<Record<string, string>>;
      readonly tolerations: readonly Toleration[];
      /** GPUs one pod requests (0: none or not known from the values). */
      readonly gpusPerPod: number;
      readonly replicas: number;
    }
  | { readonly type: 'node'; readonly name: string }
  | { readonly type: 'storage-class'; readonly name: string }
  | {
      readonly type: 'namespace';
      readonly name: string;
      readonly slug: string;
      /** The label that makes it app-serving's: a model's (`app-serving.io/model`, the default) or the endpoint's (`app-serving.io/endpoint`). */
      readonly label?: string;
    }
  | { readonly type: 'permission'; readonly verb: 'create'; readonly group: string; readonly resource: string; readonly namespace: string | null }
  | { readonly type: 'registry-dns'; readonly host: string }
  /** The Prometheus autoscaling reads answers its readiness endpoint (through the API server's service proxy for an in-cluster address). */
  | { readonly type: 'prometheus'; readonly address: string }
  /** Istio (istiod) at `min` or newer, with the Gateway API inference extension on where the cluster shows istiod's env. */
  | { readonly type: 'istio'; readonly min: string; readonly inferenceExtension: boolean }
  /** Istio's minor still supported upstream (by `endOfSupport`, against today's date). */
  | { readonly type: 'istio-support'; readonly endOfSupport: readonly { readonly minor: string; readonly date: string; readonly estimated?: boolean }[] }
);

export type PreflightCheckType = PreflightCheck['type'];

type CheckInput = PreflightCheck extends infer C ? (C extends PreflightCheck ? Omit<C, 'models' | 'severity'> & { severity?: PreflightSeverity } : never) : never;

const GATEWAY_API = 'gateway.networking.k8s.io';
const ISTIO_NETWORKING = 'networking.istio.io';
const ISTIO_TELEMETRY = 'telemetry.istio.io';

/** CRDs of llm-d models: Gateway API, GAIE (the pool and the objectives its EPP watches), Istio. */
export const LLMD_CRDS: readonly CrdRequirement[] = [
  { group: GATEWAY_API, kind: 'Gateway', plural: 'gateways', version: 'v1' },
  { group: GATEWAY_API, kind: 'HTTPRoute', plural: 'httproutes', version: 'v1' },
  ...CLUSTER_REQUIREMENTS.gaieCrds.map((c) => ({ ...c, plural: `${c.kind.toLowerCase()}s` })),
  { group: ISTIO_NETWORKING, kind: 'DestinationRule', plural: 'destinationrules', version: 'v1' },
  { group: ISTIO_TELEMETRY, kind: 'Telemetry', plural: 'telemetries', version: 'v1' },
];

/**
 * CRDs of KServe models; the pool KServe creates is GAIE's v1. The LLMInferenceService schema
 * tells v0.18 (the versions of {@link KSERVE_SUPPORTED_VERSIONS}) from v0.17: the only field v0.18.0
 * added to it is `spec.router.gateway.refs[].sectionName` (kserve/kserve, `git diff v0.17.1 v0.18.0 --
 * config/crd/full/llmisvc/serving.kserve.io_llminferenceservices.yaml`). `spec.scaling`, which the
 * stack sets, is in both.
 */
export const KSERVE_CRDS: readonly CrdRequirement[] = [
  { group: GATEWAY_API, kind: 'Gateway', plural: 'gateways', version: 'v1' },
  { group: GATEWAY_API, kind: 'GatewayClass', plural: 'gatewayclasses', version: 'v1' },
  { group: GATEWAY_API, kind: 'HTTPRoute', plural: 'httproutes', version: 'v1' },
  { group: 'inference.networking.k8s.io', kind: 'InferencePool', plural: 'inferencepools', version: 'v1' },
  { group: KSERVE_API.group, kind: 'LLMInferenceService', plural: KSERVE_API.plural, version: KSERVE_API.version, fields: [['spec', 'scaling'], ['spec', 'router', 'gateway', 'refs', '[]', 'sectionName']] },
  { group: KSERVE_API.group, kind: 'LLMInferenceServiceConfig', plural: 'llminferenceserviceconfigs', version: KSERVE_API.version },
];

/**
 * CRDs of a 2026-08 llm-d model: the InferencePool (v1) the Router chart renders, the objectives its
 * EPP watches (now `llm-d.ai/v1alpha2`: llm-d-router `config/crd/bases/`), and in gateway mode the
 * Gateway API and, for Istio, the DestinationRule the chart renders (`networking.istio.io/v1beta1`).
 */
export function routerCrds(model: Pick<LlmdRouterModelPlan, 'router'>): CrdRequirement[] {
  const gateway = model.router.mode === 'gateway';
  return [
    ...(gateway
      ? [
          { group: GATEWAY_API, kind: 'Gateway', plural: 'gateways', version: 'v1' },
          { group: GATEWAY_API, kind: 'HTTPRoute', plural: 'httproutes', version: 'v1' },
          // Class envoy: the stack's Envoy GatewayClass, which app-serving creates unless the cluster has it.
          ...(model.router.gatewayClass === 'envoy' ? [{ group: GATEWAY_API, kind: 'GatewayClass', plural: 'gatewayclasses', version: 'v1' }] : []),
        ]
      : []),
    // The Router chart renders spec.appProtocol, a field GAIE v1.6 added: a cluster still on GAIE
    // v1.2's CRD refuses the pool ("field not declared in schema", found by the deploy tests).
    { group: 'inference.networking.k8s.io', kind: 'InferencePool', plural: 'inferencepools', version: 'v1', fields: ROUTER_POOL_CRD_FIELDS },
    { group: 'llm-d.ai', kind: 'InferenceObjective', plural: 'inferenceobjectives', version: 'v1alpha2' },
    ...(gateway && model.router.gatewayClass === 'istio' ? [{ group: ISTIO_NETWORKING, kind: 'DestinationRule', plural: 'destinationrules', version: 'v1beta1' }] : []),
  ];
}

const ENVOY_POLICY = (kind: string, plural: string, facts: readonly EnvoyCrdFact[]): CrdRequirement => ({
  group: ENVOY_GATEWAY_API.group,
  kind,
  plural,
  version: ENVOY_GATEWAY_API.version,
  ...(facts.some((f) => f.value === undefined) && { fields: facts.filter((f) => f.value === undefined).map((f) => f.field) }),
  ...(facts.some((f) => f.value !== undefined) && { enums: facts.filter((f) => f.value !== undefined).map((f) => ({ field: f.field, value: f.value! })) }),
  since: facts.map((f) => f.since).reduce((a, b) => (compareVersions(a, b) >= 0 ? a : b), 'v1.0.0'),
});

/**
 * Envoy Gateway's CRDs a model's objects need, each with the fields (and enum values) app-serving
 * writes that older releases lack (envoy-gateway.ts): a KServe model's access policies; for a
 * 2026-08 llm-d model of class `envoy`, also the EnvoyExtensionPolicy (`FullDuplexStreamed`, v1.4.0)
 * and BackendTrafficPolicy (`endpointOverride`, v1.5.0) of its route and the EnvoyProxy placing its
 * proxy pods (`mergeType`, v1.8.0).
 */
export function envoyGatewayCrds(model: ModelPlan): CrdRequirement[] {
  const envoyClass = model.platform === 'llm-d' && model.upstream === '2026-08' && model.router.gatewayClass === 'envoy';
  if (model.platform !== 'kserve' && !envoyClass) return [];
  const crds: CrdRequirement[] = [];
  const route = envoyClass && model.platform === 'llm-d' && model.upstream === '2026-08' ? model.manifests.envoyRoute : null;
  if (route) crds.push(ENVOY_POLICY('EnvoyExtensionPolicy', 'envoyextensionpolicies', [ENVOY_CRD_FACTS.fullDuplexStreamed]));
  if (route || (model.platform === 'kserve' && model.access.requestsPerMinute !== null)) {
    crds.push(ENVOY_POLICY('BackendTrafficPolicy', 'backendtrafficpolicies', route ? [ENVOY_CRD_FACTS.endpointOverride] : []));
  }
  const { access } = model;
  if (access.mode !== 'open') {
    const facts = access.mode === 'apiKeys' ? [ENVOY_CRD_FACTS.forwardUsernameHeader] : access.jwt?.jwks !== null ? [ENVOY_CRD_FACTS.localJWKS] : [];
    crds.push(ENVOY_POLICY('SecurityPolicy', 'securitypolicies', facts));
  }
  if (model.platform === 'llm-d' && model.upstream === '2026-08' && model.manifests.gatewayParameters?.kind === 'EnvoyProxy') {
    crds.push(ENVOY_POLICY('EnvoyProxy', 'envoyproxies', [ENVOY_CRD_FACTS.mergeType]));
  }
  return crds;
}

/** `v1.5.0` against `v1.8.1`: negative, zero or positive. */
function compareVersions(a: string, b: string): number {
  const parts = (v: string) => v.replace(/^v/, '').split('.').map(Number);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

/** CRDs of a KServe model on a release ({@link KSERVE_CRDS} is v0.18's). */
export function kserveCrds(release: KserveRelease): CrdRequirement[] {
  return KSERVE_CRDS.map((crd) =>
    crd.group !== release.api.group ? crd : { ...crd, version: release.api.version, ...(crd.kind === 'LLMInferenceService' && { fields: release.crdFields }) },
  );
}

const crdName = (c: CrdRequirement) => `${c.plural}.${c.group}`;

/** A CRD field path as people write it: `spec.router.gateway.refs[].sectionName`. */
export function formatCrdField(field: readonly string[]): string {
  return field.join('.').replaceAll('.[]', '[]');
}

/**
 * Every check preflight runs for a plan, in a stable order: cluster, CRDs and classes, per-model
 * placement and storage, namespaces, permissions, the registry. Checks shared by several models
 * are listed once with every model that needs them.
 */
export function preflightChecks(plan: DeploymentPlan): PreflightCheck[] {
  const checks = new Map<string, PreflightCheck>();
  const add = (model: ModelPlan | null, check: CheckInput) => {
    const existing = checks.get(check.id);
    const models = model ? [model.name] : [];
    if (existing) {
      if (model && !existing.models.includes(model.name)) checks.set(check.id, { ...existing, models: [...existing.models, model.name] });
      return;
    }
    checks.set(check.id, { severity: 'error', ...check, models } as PreflightCheck);
  };
  const models = plan.models;
  if (models.length === 0) return [];

  add(null, {
    id: 'kubernetes-version',
    type: 'kubernetes-version',
    min: CLUSTER_REQUIREMENTS.kubernetes,
    title: `Kubernetes ≥ ${CLUSTER_REQUIREMENTS.kubernetes}`,
    fix: `upgrade the cluster to Kubernetes ${CLUSTER_REQUIREMENTS.kubernetes} or newer (Istio ${CLUSTER_REQUIREMENTS.istio} supports 1.30 to 1.34; the routing proxy runs as a sidecar init container)`,
  });

  for (const model of models) {
    const crds = model.platform === 'kserve' ? kserveCrds(KSERVE_RELEASES[model.upstream ?? '2026-02']) : model.upstream === '2026-08' ? routerCrds(model) : LLMD_CRDS;
    for (const crd of [...crds, ...envoyGatewayCrds(model)]) {
      const fields = [...(crd.fields?.map(formatCrdField) ?? []), ...(crd.enums?.map((e) => `${formatCrdField(e.field)}: ${e.value}`) ?? [])];
      // Models that need more of one CRD (an EnvoyProxy, a SecurityPolicy with a newer field) get their own check.
      const wanted = [...(crd.fields?.map(formatCrdField) ?? []), ...(crd.enums?.map((e) => `${formatCrdField(e.field)}=${e.value}`) ?? [])];
      const id = `crd:${crdName(crd)}${crd.group === ENVOY_GATEWAY_API.group && wanted.length ? `:${wanted.join(',')}` : ''}`;
      add(model, {
        id,
        type: 'crd',
        crd,
        title: `CRD ${crdName(crd)} serves ${crd.version}${fields.length ? ` with ${fields.join(', ')}` : ''}`,
        fix: crdFix(crd, model),
      });
    }
  }

  // Autoscaled llm-d models: KEDA's and the Prometheus Operator's CRDs, and the Prometheus they read.
  for (const model of models) {
    if (model.platform !== 'llm-d' || !model.autoscaling) continue;
    const a = model.autoscaling;
    const needed = [AUTOSCALING_CRDS.scaledObjects, ...(a.prometheus.auth ? [AUTOSCALING_CRDS.triggerAuthentications] : []), ...(a.monitors.length ? [AUTOSCALING_CRDS.podMonitors] : [])];
    for (const crd of needed) {
      add(model, {
        id: `crd:${crd.plural}.${crd.group}`,
        type: 'crd',
        crd: { group: crd.group, kind: crd.kind, plural: crd.plural, version: crd.version },
        title: `CRD ${crd.plural}.${crd.group} serves ${crd.version}`,
        fix:
          crd.group === 'keda.sh'
            ? 'install KEDA ≥ 2.17 (helm install keda kedacore/keda -n keda --create-namespace): the model is autoscaled (models[].autoscaling)'
            : 'install the Prometheus Operator (e.g. kube-prometheus-stack): the PodMonitors make the autoscaling signal exist',
      });
    }
    add(model, {
      id: `prometheus:${a.prometheus.address}`,
      type: 'prometheus',
      address: a.prometheus.address,
      // A warning: KEDA reaches the address from inside the cluster; from here it may not be reachable
      // (an API server that forbids its service proxy, a Prometheus behind a network policy).
      severity: 'warning',
      title: `Prometheus ${a.prometheus.address} answers`,
      fix: 'check prometheus.address: KEDA queries it for the autoscaling signal (an in-cluster Service is reached through the API server\'s service proxy)',
    });
  }

  for (const model of models) {
    if (model.platform === 'llm-d' && model.upstream === '2026-08') {
      const className = model.router.gatewayClass;
      if (className === 'envoy') {
        const envoyClass = plan.envoyGatewayClass;
        if (envoyClass && !envoyClass.create) add(model, envoyGatewayClassCheck(envoyClass));
      } else if (className !== null) {
        add(model, {
          id: `gateway-class:${className}`,
          type: 'gateway-class',
          name: className,
          title: `GatewayClass ${className} exists`,
          fix:
            className === 'istio'
              ? 'install Istio ≥ 1.29 with the Gateway API and the inference extension (ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true); it creates the GatewayClass istio'
              : 'install agentgateway (≥ v1.1) with its inference extension; it creates the GatewayClass agentgateway',
        });
      }
    } else if (model.platform === 'llm-d') {
      add(model, {
        id: `gateway-class:${ISTIO_GATEWAY_CLASS}`,
        type: 'gateway-class',
        name: ISTIO_GATEWAY_CLASS,
        title: `GatewayClass ${ISTIO_GATEWAY_CLASS} exists`,
        fix: `install Istio ≥ ${CLUSTER_REQUIREMENTS.istio} with the Gateway API and the inference extension (ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true); it creates the GatewayClass ${ISTIO_GATEWAY_CLASS}`,
      });
    } else {
      const gateway = plan.kserve?.gateway;
      if (gateway && !gateway.create) add(model, envoyGatewayClassCheck({ name: gateway.className, controllerName: gateway.controllerName }));
      add(model, {
        id: 'envoy-inference-pool',
        type: 'envoy-inference-pool',
        namespace: ENVOY_GATEWAY_CONFIG.namespace,
        configMap: ENVOY_GATEWAY_CONFIG.name,
        key: ENVOY_GATEWAY_CONFIG.key,
        title: `Envoy Gateway routes to InferencePools (extensionManager.backendResources in ${ENVOY_GATEWAY_CONFIG.namespace}/${ENVOY_GATEWAY_CONFIG.name})`,
        fix: "install Envoy Gateway with Envoy AI Gateway's values and its inference-pool addon (docs/deployment-flow.md, KServe step 2), then Envoy AI Gateway",
      });
      const release = KSERVE_RELEASES[model.upstream];
      for (const config of model.wellKnownConfigs) {
        add(model, {
          id: `kserve-config:${config}`,
          type: 'custom-object',
          group: release.api.group,
          version: release.api.version,
          plural: 'llminferenceserviceconfigs',
          namespace: KSERVE_NAMESPACE,
          name: config,
          title: `LLMInferenceServiceConfig ${KSERVE_NAMESPACE}/${config} exists`,
          fix: `install KServe's well-known configs: helm upgrade -i kserve-runtime-configs oci://ghcr.io/kserve/charts/kserve-runtime-configs --version ${release.supportedVersions.at(-1)} -n ${KSERVE_NAMESPACE} --set kserve.llmisvcConfigs.enabled=true`,
        });
      }
    }
  }

  // Models behind an Istio Gateway: istiod's version, its inference extension, its support.
  for (const model of models) {
    const min = model.platform !== 'llm-d' ? null : model.upstream === '2026-08' ? (model.router.gatewayClass === 'istio' ? ISTIO.minimum2026_08 : null) : CLUSTER_REQUIREMENTS.istio;
    if (min === null) continue;
    add(model, {
      id: `istio:${min}`,
      type: 'istio',
      min,
      inferenceExtension: true,
      title: `Istio ≥ ${min} (istiod in ${ISTIO.namespace}) with ${ISTIO.inferenceExtensionEnv}=true`,
      fix: istioFix(min),
    });
    add(model, {
      id: 'istio-support',
      type: 'istio-support',
      endOfSupport: ISTIO.endOfSupport,
      severity: 'warning',
      title: "Istio's release is still supported upstream",
      fix: `upgrade Istio to a supported release (istio.io/latest/docs/releases/supported-releases; ${ISTIO.endOfSupport.map((e) => `${e.minor} ${e.estimated ? 'about ' : ''}until ${e.date}`).join(', ')})`,
    });
  }

  for (const model of models) {
    const selector = Object.entries(model.nodeSelector).map(([k, v]) => `${k}=${v}`).join(',') || '(any node)';
    const gpusPerPod = gpuRequest(model);
    const replicas = model.platform === 'llm-d' ? Math.max(model.modelServer.decodeReplicas, 1) : Math.max(model.replicas, 1);
    add(model, {
      id: `placement:${model.slug}`,
      type: 'placement',
      namespace: model.namespace,
      nodeSelector: model.nodeSelector,
      tolerations: model.tolerations,
      gpusPerPod,
      replicas,
      title: `model ${model.name}: a node matches ${selector}, its taints are tolerated${gpusPerPod ? `, ${replicas} × ${gpusPerPod} ${GPU_RESOURCE} allocatable` : ''}`,
      fix: `label a node ${selector}${gpusPerPod ? ` with ${GPU_RESOURCE} allocatable` : ''}, or change the model's nodeSelector; tolerate the nodes' taints with gpuToleration`,
    });
    const storage = model.storage;
    if (storage?.hostPath) {
      add(model, {
        id: `node:${storage.hostPath.node}`,
        type: 'node',
        name: storage.hostPath.node,
        title: `hostPath node ${storage.hostPath.node} exists (PV ${storage.pv})`,
        fix: `set modelSource.hostpathNode to the name of an existing node (kubectl get nodes)`,
      });
    } else if (storage?.storageClass) {
      add(model, {
        id: `storage-class:${storage.storageClass}`,
        type: 'storage-class',
        name: storage.storageClass,
        title: `StorageClass ${storage.storageClass} exists (PVC ${storage.pvc})`,
        fix: `set modelSource.storageClass to an existing StorageClass (kubectl get storageclass), or create ${storage.storageClass}`,
      });
    }
  }

  for (const model of models) {
    add(model, {
      id: `namespace:${model.namespace}`,
      type: 'namespace',
      name: model.namespace,
      slug: model.slug,
      title: `namespace ${model.namespace} is free or app-serving's (label ${MODEL_LABEL})`,
      fix: `the namespace exists without the label ${MODEL_LABEL}: another owner manages it; set the model's nameSpace to another one, or label it ${MODEL_LABEL}=${model.slug} if app-serving may own it`,
    });
  }

  for (const model of models) {
    for (const kind of createdKinds(plan, model)) add(model, createPermissionCheck(kind));
  }

  if (plan.endpoint) for (const check of endpointChecks(plan, plan.endpoint)) add(null, check);

  if (plan.harbor) {
    add(null, {
      id: `registry-dns:${plan.harbor.hostname}`,
      type: 'registry-dns',
      host: plan.harbor.hostname,
      severity: 'warning',
      title: `Harbor ${plan.harbor.hostname} resolves from here`,
      fix: `check harborHostname; this is a warning only: the cluster's nodes may resolve it with another DNS`,
    });
  }
  return [...checks.values()];
}

/**
 * What the stack's endpoint needs of the cluster: the CRDs of what it writes (Gateway API's Gateway,
 * HTTPRoute and ReferenceGrant; on Envoy Gateway its HTTPRouteFilter, ClientTrafficPolicy,
 * EnvoyExtensionPolicy and, with access, SecurityPolicy with the fields written; on Istio its
 * EnvoyFilter, DestinationRule and, with access, RequestAuthentication and AuthorizationPolicy), its
 * Gateway's class, its namespace free or its own, and the right to create each kind.
 */
function endpointChecks(plan: DeploymentPlan, endpoint: EndpointPlan): CheckInput[] {
  const checks: CheckInput[] = [];
  const ns = endpoint.namespace;
  const crd = (c: CrdRequirement, fix: string) => {
    const wanted = [...(c.fields?.map(formatCrdField) ?? []), ...(c.enums?.map((e) => `${formatCrdField(e.field)}=${e.value}`) ?? [])];
    const fields = [...(c.fields?.map(formatCrdField) ?? []), ...(c.enums?.map((e) => `${formatCrdField(e.field)}: ${e.value}`) ?? [])];
    checks.push({ id: `crd:${crdName(c)}${c.group === ENVOY_GATEWAY_API.group && wanted.length ? `:${wanted.join(',')}` : ''}`, type: 'crd', crd: c, title: `CRD ${crdName(c)} serves ${c.version}${fields.length ? ` with ${fields.join(', ')}` : ''}`, fix });
  };
  const gatewayApi = 'install the Gateway API CRDs v1.5.1 (standard channel or later)';
  crd({ group: GATEWAY_API, kind: 'Gateway', plural: 'gateways', version: 'v1' }, gatewayApi);
  crd({ group: GATEWAY_API, kind: 'HTTPRoute', plural: 'httproutes', version: 'v1' }, gatewayApi);
  crd({ group: GATEWAY_API, kind: 'ReferenceGrant', plural: 'referencegrants', version: 'v1beta1' }, gatewayApi);
  const kinds: Array<[string, string, string]> = [['', 'namespaces', 'cluster'], ['', 'services', ns], ['', 'serviceaccounts', ns], ['apps', 'deployments', ns], ['rbac.authorization.k8s.io', 'roles', ns], ['rbac.authorization.k8s.io', 'rolebindings', ns], [GATEWAY_API, 'gateways', ns], [GATEWAY_API, 'httproutes', ns]];
  if (endpoint.pullSecret || (endpoint.access.mode === 'apiKeys' && endpoint.class === 'envoy')) kinds.push(['', 'secrets', ns]);
  for (const model of endpoint.models) kinds.push([GATEWAY_API, 'referencegrants', model.namespace]);
  if (endpoint.class === 'envoy') {
    const policy = (kind: string, plural: string, facts: readonly EnvoyCrdFact[]) => {
      const c = ENVOY_POLICY(kind, plural, facts);
      crd(c, crdFix(c, plan.models[0]!));
      kinds.push([c.group, c.plural, ns]);
    };
    policy('HTTPRouteFilter', 'httproutefilters', []);
    policy('ClientTrafficPolicy', 'clienttrafficpolicies', []);
    policy('EnvoyExtensionPolicy', 'envoyextensionpolicies', []);
    const access = endpoint.access;
    if (access.mode !== 'open') {
      const facts = access.mode === 'jwt' ? (access.jwt?.jwks !== null ? [ENVOY_CRD_FACTS.localJWKS] : []) : access.keyFormat === 'bearer' ? [ENVOY_CRD_FACTS.apiKeyForwardClientId, ENVOY_CRD_FACTS.apiKeySanitize] : [ENVOY_CRD_FACTS.forwardUsernameHeader];
      policy('SecurityPolicy', 'securitypolicies', access.mode === 'apiKeys' ? [...facts, ENVOY_CRD_FACTS.authorizationHeaders] : facts);
    }
    if (endpoint.models.some((m) => m.requestsPerMinute !== null)) policy('BackendTrafficPolicy', 'backendtrafficpolicies', []);
    if (endpoint.manifests.gatewayParameters) policy('EnvoyProxy', 'envoyproxies', [ENVOY_CRD_FACTS.mergeType]);
    const envoyClass = plan.envoyGatewayClass;
    if (envoyClass && !envoyClass.create) checks.push(envoyGatewayClassCheck(envoyClass));
    if (envoyClass?.create) kinds.push([GATEWAY_API, 'gatewayclasses', 'cluster']);
  } else {
    const istio = (kind: string, plural: string, group: string, version: string, fields?: readonly (readonly string[])[]) => {
      crd({ group, kind, plural, version, ...(fields && { fields }) }, `install Istio ≥ 1.29 (its base chart installs ${kind})`);
      kinds.push([group, plural, ns]);
    };
    istio('EnvoyFilter', 'envoyfilters', ISTIO_NETWORKING, 'v1alpha3', [['spec', 'targetRefs']]);
    istio('DestinationRule', 'destinationrules', ISTIO_NETWORKING, 'v1');
    if (endpoint.access.mode === 'jwt') istio('RequestAuthentication', 'requestauthentications', 'security.istio.io', 'v1', [['spec', 'targetRefs']]);
    if (endpoint.access.mode !== 'open') istio('AuthorizationPolicy', 'authorizationpolicies', 'security.istio.io', 'v1', [['spec', 'targetRefs']]);
    if (endpoint.manifests.gatewayParameters) kinds.push(['', 'configmaps', ns]);
    checks.push({
      id: `gateway-class:${ISTIO_GATEWAY_CLASS}`,
      type: 'gateway-class',
      name: ISTIO_GATEWAY_CLASS,
      title: `GatewayClass ${ISTIO_GATEWAY_CLASS} exists`,
      fix: 'install Istio ≥ 1.29 with the Gateway API and the inference extension (ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true); it creates the GatewayClass istio',
    });
  }
  checks.push({
    id: `namespace:${ns}`,
    type: 'namespace',
    name: ns,
    slug: endpoint.name,
    label: ENDPOINT_LABEL,
    title: `namespace ${ns} (the endpoint's) is free or app-serving's (label ${ENDPOINT_LABEL})`,
    fix: `the namespace exists without the label ${ENDPOINT_LABEL}: another owner manages it; set endpoint.namespace to another one, or label it ${ENDPOINT_LABEL}=${endpoint.name} if app-serving may own it`,
  });
  for (const kind of kinds) checks.push(createPermissionCheck(kind));
  return checks;
}

/**
 * The stack's Envoy GatewayClass, when the cluster is to have it (`kserve.gateway.create: false`):
 * it exists, names Envoy Gateway's controller, and the controller Accepted it (one check for the
 * KServe Gateway and every llm-d Gateway of class `envoy`).
 */
/** The right to create one kind (`[group, resource, namespace or 'cluster']`), for a model's objects and the endpoint's alike. */
function createPermissionCheck([group, resource, scope]: readonly [string, string, string]): CheckInput {
  const namespace = scope === 'cluster' ? null : scope;
  const where = namespace ? ` in namespace ${namespace}` : ' (cluster-wide)';
  const gr = group ? `${resource}.${group}` : resource;
  return {
    id: `permission:create:${gr}:${namespace ?? ''}`,
    type: 'permission',
    verb: 'create',
    group,
    resource,
    namespace,
    title: `may create ${gr}${where}`,
    fix: `grant the deploying identity "create" (and get, list, update, patch, delete) on ${gr}${where}`,
  };
}

function envoyGatewayClassCheck(envoyClass: { readonly name: string; readonly controllerName: string }): CheckInput {
  return {
    id: `gateway-class:${envoyClass.name}`,
    type: 'gateway-class',
    name: envoyClass.name,
    controllerName: envoyClass.controllerName,
    accepted: true,
    title: `GatewayClass ${envoyClass.name} exists, of controller ${envoyClass.controllerName}, Accepted`,
    fix: `install Envoy Gateway (≥ ${ENVOY_GATEWAY_MIN_FOR_POOLS}; the 2026-08 set is written for ${ENVOY_GATEWAY_VERSION}) and create the GatewayClass ${envoyClass.name} with controllerName ${envoyClass.controllerName}, or set kserve.gateway.create: true to let app-serving create it`,
  };
}

function crdFix(crd: CrdRequirement, model: ModelPlan): string {
  const current = model.upstream === '2026-08';
  if (crd.group === ENVOY_GATEWAY_API.group) {
    const what = [...(crd.fields ?? []).map(formatCrdField), ...(crd.enums ?? []).map((e) => `${formatCrdField(e.field)}: ${e.value}`)];
    return `install Envoy Gateway ≥ ${crd.since ?? ENVOY_GATEWAY_MIN_FOR_POOLS} (the 2026-08 set is written for ${ENVOY_GATEWAY_VERSION}; its gateway-crds-helm chart installs ${crd.kind})${what.length ? `: older releases lack ${what.join(', ')}` : ''}`;
  }
  switch (crd.group) {
    case GATEWAY_API:
      return current ? 'install the Gateway API CRDs v1.5.1 (standard channel or later)' : 'install the Gateway API CRDs v1.4 (standard channel or later)';
    case ISTIO_NETWORKING:
    case ISTIO_TELEMETRY:
      return `install Istio ≥ ${current ? '1.29' : CLUSTER_REQUIREMENTS.istio} (its base chart installs ${crd.kind})`;
    case 'llm-d.ai':
      return 'install the llm-d Router v0.10 CRDs (llm-d-router config/crd: InferenceObjective, InferenceModelRewrite in llm-d.ai/v1alpha2)';
    case KSERVE_API.group: {
      const release = KSERVE_RELEASES[model.upstream];
      return `install KServe ${release.supportedVersions.join(' or ')} (kserve-llmisvc-crd chart)${crd.fields ? `: older versions lack ${crd.fields.map(formatCrdField).join(', ')}` : ''}`;
    }
    default:
      if (current) return `install the Gateway API Inference Extension v1.6 CRDs (${crd.kind} ${crd.group}/${crd.version})`;
      return model.platform === 'kserve'
        ? 'install the GAIE v1.2 CRDs (the KServe chart installs the InferencePool CRDs)'
        : `install the Gateway API Inference Extension v1.2 CRDs (${crd.kind} ${crd.group}/${crd.version})`;
  }
}

/** GPUs one model-server pod asks for, from the values' container resources (0 when none is set there). */
export function gpuRequest(model: ModelPlan): number {
  const containers: unknown[] =
    model.platform === 'kserve'
      ? [getPath(model.spec, ['template', 'containers'])].flat()
      : model.upstream === '2026-08'
        ? [{ resources: model.server.resources }]
        : [getPath(model.values.modelService, ['decode', 'containers'])].flat();
  let total = 0;
  for (const container of containers) {
    if (!isValuesMap(container)) continue;
    const resources = container.resources as Values | undefined;
    const value = getPath(resources, ['limits', GPU_RESOURCE]) ?? getPath(resources, ['requests', GPU_RESOURCE]);
    const count = Number(value);
    if (Number.isFinite(count) && count > 0) total += count;
  }
  return total;
}

/** `[group, resource, namespace | 'cluster']` of every kind app-serving (and its charts) create for a model. */
function createdKinds(plan: DeploymentPlan, model: ModelPlan): Array<[string, string, string]> {
  const ns = model.namespace;
  const kinds: Array<[string, string, string]> = [['', 'namespaces', 'cluster']];
  if (model.pullSecret || (model.platform === 'kserve' && model.hfTokenSecret)) kinds.push(['', 'secrets', ns]);
  if (model.storage) {
    kinds.push(['', 'persistentvolumeclaims', ns], ['batch', 'jobs', ns]);
    if (model.storage.pv) kinds.push(['', 'persistentvolumes', 'cluster']);
  }
  if (model.platform === 'llm-d') {
    kinds.push(
      ['', 'services', ns],
      ['', 'serviceaccounts', ns],
      ['', 'configmaps', ns],
      ['apps', 'deployments', ns],
      ['rbac.authorization.k8s.io', 'roles', ns],
      ['rbac.authorization.k8s.io', 'rolebindings', ns],
      ['inference.networking.k8s.io', 'inferencepools', ns],
    );
    // 2026-02: llm-d-infra's Gateway and GAIE's DestinationRule; 2026-08: the Gateway of gateway
    // mode, and the Router's DestinationRule when it is an Istio Gateway.
    const current = model.upstream === '2026-08';
    if (!current || model.router.mode === 'gateway') kinds.push([GATEWAY_API, 'gateways', ns]);
    if (!current || model.router.gatewayClass === 'istio') kinds.push([ISTIO_NETWORKING, 'destinationrules', ns]);
    if (current) kinds.push(...envoyKinds(plan, model, ns));
    if (model.httpRoute) kinds.push([GATEWAY_API, 'httproutes', ns]);
    if (model.gateway.accessLogging) kinds.push([ISTIO_TELEMETRY, 'telemetries', ns]);
    if (model.autoscaling) {
      kinds.push(['keda.sh', 'scaledobjects', ns]);
      if (model.autoscaling.prometheus.auth) kinds.push(['', 'secrets', ns], ['keda.sh', 'triggerauthentications', ns]);
      if (model.autoscaling.monitors.length) kinds.push(['monitoring.coreos.com', 'podmonitors', ns]);
    }
  } else {
    kinds.push(['', 'serviceaccounts', ns], [KSERVE_API.group, KSERVE_API.plural, ns], [KSERVE_API.group, 'llminferenceserviceconfigs', ns]);
    const gateway = plan.kserve?.gateway;
    if (gateway?.create) kinds.push([GATEWAY_API, 'gatewayclasses', 'cluster'], [GATEWAY_API, 'gateways', gateway.namespace]);
    kinds.push(...envoyKinds(plan, model, ns));
  }
  // Who may call the model: the objects its gateway enforces it with (an llm-d model's Istio
  // gateway; a KServe model's route on the Envoy Gateway), in the model's namespace.
  // On the 2026-08 set an llm-d model of class envoy is behind Envoy Gateway too; in standalone mode there is no gateway of its own.
  const gateway = model.platform === 'kserve' || (model.upstream === '2026-08' && model.router.gatewayClass === 'envoy') ? 'envoy-gateway' : model.upstream === '2026-08' && model.router.gatewayClass === null ? null : 'istio';
  if (gateway) for (const { group, resource } of accessResources(gateway, model.access)) kinds.push([group, resource, ns]);
  return kinds;
}

/** What a model creates of Envoy Gateway's kinds (its policies, the EnvoyProxy) and the key Secret, and the stack's GatewayClass. */
function envoyKinds(plan: DeploymentPlan, model: ModelPlan, ns: string): Array<[string, string, string]> {
  const kinds = envoyGatewayCrds(model).map((crd): [string, string, string] => [crd.group, crd.plural, ns]);
  if (kinds.length === 0) return kinds;
  if (model.access.mode === 'apiKeys') kinds.push(['', 'secrets', ns]);
  if (model.platform === 'llm-d' && plan.envoyGatewayClass?.create) kinds.push([GATEWAY_API, 'gatewayclasses', 'cluster']);
  return kinds;
}
