import { GATEWAY_HTTP_PORT, LABEL_INFERENCE_SERVING, LABEL_MODEL, LABEL_NAMESPACE_NAME, MODEL_MOUNT_PATH, type Category } from '../constants.ts';
import type { ValuesFile } from '../discovery.ts';
import type { Issue } from '../errors.ts';
import type { LlmdNames } from '../names.ts';
import type { PostRenderPatch } from '../patches.ts';
import {
  GAIE_DEFAULTS,
  GAIE_KEYS,
  INFRA_DEFAULTS,
  INFRA_STRICT,
  MODELSERVICE_DEFAULTS,
  MODELSERVICE_POD_FIELDS,
  MODELSERVICE_STRICT,
  type KeyTree,
} from './chart-facts.ts';
import { effectiveValues, getPath, isValuesMap, mergeAll, type Values } from './merge.ts';
import { findConflicts, findTypeProblems, findUnknownKeys, requirementValues, show, unionList, type Forbidden, type Requirement, type TypeCheck } from './requirements.ts';
import { nodeAffinityFor, type NodeAffinity, type Toleration } from './scheduling.ts';
import { didYouMean } from '../suggest.ts';

/** The model volume as the modelservice chart sees it. */
export interface ModelArtifactsSource {
  /** `pvc+hf://<pvc>/<modelUri>` (hf-cache layout) or `pvc://<pvc>/<modelUri>` (directory layout). */
  readonly uri: string;
  readonly layout: 'hf-cache' | 'directory';
  readonly modelUri: string;
  /** What the volume holds (`sourceRef`): a new reference re-pulls, and rolls the model pods. */
  readonly ref: string;
}

/**
 * Pod annotation holding the model's weights reference. When the stack points at new weights,
 * the pull Job is replaced and this annotation changes, so the model pods restart on the new
 * weights once the pull is done (the chart is updated after the Job).
 */
export const MODEL_REF_ANNOTATION = 'app-serving.io/model-ref';

/** Everything the llm-d values of one model are built from. */
export interface LlmdValuesInput {
  readonly names: LlmdNames;
  readonly category: Category;
  readonly files: { readonly gaie: ValuesFile; readonly modelService: ValuesFile; readonly infra?: ValuesFile | undefined };
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly toleration?: Toleration | undefined;
  /** Name of the image pull Secret in the model namespace, when the stack has Harbor credentials. */
  readonly pullSecret?: string | undefined;
  readonly artifacts?: ModelArtifactsSource | undefined;
  /** Node labels for the control pods (EPP, Istio gateway pods); default: the model's `nodeSelector`. */
  readonly controlNodeSelector?: Readonly<Record<string, string>> | undefined;
  /** Which namespaces may attach routes to the model's Gateway. @default 'Same' */
  readonly routeNamespaces?: RouteNamespaces | undefined;
  /** The Istio access-log Telemetry of the Gateway. @default true */
  readonly accessLogging?: boolean | undefined;
  /** How long `pulumi up` awaits the model's Deployments, in seconds; none means Pulumi's default (10 minutes). */
  readonly readyTimeoutSeconds?: number | undefined;
}

/** Namespaces allowed to attach routes to a model's Gateway: its own, any, or its own plus these. */
export type RouteNamespaces = 'Same' | 'All' | readonly string[];

/** The Gateway listener of a model (llm-d-infra `gateway.listeners`): one HTTP listener on port 80. */
export interface GatewayListener {
  readonly name: string;
  readonly port: number;
  readonly protocol: 'HTTP';
  readonly allowedRoutes: { readonly namespaces: { readonly from: 'Same' | 'All' | 'Selector'; readonly selector?: unknown } };
}

/** The three charts' values of one model, and what follows from them. */
export interface LlmdValues {
  /** What Helm receives per release (file + programmatic; `null`s kept so they delete chart defaults). */
  readonly values: { readonly infra: Values; readonly gaie: Values; readonly modelService: Values };
  /** What each chart ends up with: its known defaults + `values`, nulls removed. */
  readonly effective: { readonly infra: Values; readonly gaie: Values; readonly modelService: Values };
  /** Labels on every model-server pod (`modelArtifacts.labels`). */
  readonly podLabels: Readonly<Record<string, string>>;
  /** The model name clients send (`modelArtifacts.name`). */
  readonly servedModelName: string;
  /** The port vLLM (or the custom server) listens on in decode pods. */
  readonly decodePort: number;
  /** `routing.servicePort`: the port the InferencePool targets (the routing sidecar, or vLLM without it). */
  readonly servicePort: number;
  readonly decodeReplicas: number;
  readonly prefillReplicas: number;
  /** Whether GAIE's Prometheus monitoring is on (it adds a cluster-scoped RBAC name with its own limit). */
  readonly prometheusMonitoring: boolean;
  readonly patches: { readonly infra: readonly PostRenderPatch[]; readonly gaie: readonly PostRenderPatch[]; readonly modelService: readonly PostRenderPatch[] };
  /** Namespaces whose routes the Gateway listener admits, besides the model's own (`All` for any). */
  readonly routeNamespaces: 'Same' | 'All' | readonly string[];
  /** Whether the Gateway gets llm-d-infra's access-log Telemetry. */
  readonly accessLogging: boolean;
  /** Where the EPP runs: node affinity and tolerations it is given. */
  readonly eppPlacement: { readonly affinity: NodeAffinity | undefined; readonly tolerations: readonly Toleration[] };
  /** Where the Istio gateway pods run. */
  readonly gatewayPlacement: { readonly affinity: NodeAffinity | undefined; readonly tolerations: readonly Toleration[] };
  readonly issues: readonly Issue[];
  /** Things that deploy, but do not do what the file suggests. */
  readonly warnings: readonly Issue[];
}

/** Istio DestinationRule connection pool for the EPP (llm-d's Istio defaults); a GAIE values file may change it. */
export const EPP_CONNECTION_POOL = {
  http: { http1MaxPendingRequests: 256000, maxRequestsPerConnection: 256000, http2MaxRequests: 256000, idleTimeout: '900s' },
  tcp: { maxConnections: 256000, maxConnectionDuration: '1800s', connectTimeout: '900s' },
} as const;

const INFERENCE_POOL_API_VERSION = 'inference.networking.k8s.io/v1';

/**
 * Builds the values of the three llm-d charts for one model: the model's files plus the
 * programmatic values that wire the releases together (DESIGN §6), with every contradiction
 * between a file and what the stack depends on reported as an issue.
 */
export function llmdValues(input: LlmdValuesInput): LlmdValues {
  const { names, files } = input;
  const issues: Issue[] = [];
  const warnings: Issue[] = [];
  const labels = { [LABEL_INFERENCE_SERVING]: 'true', [LABEL_MODEL]: names.slug };
  const affinity = nodeAffinityFor(input.nodeSelector);
  // The control pods (EPP, Istio gateway) follow the model unless the stack places them apart.
  const controlAffinity = input.controlNodeSelector && Object.keys(input.controlNodeSelector).length > 0 ? nodeAffinityFor(input.controlNodeSelector) : affinity;
  const pullSecrets = input.pullSecret ? [{ name: input.pullSecret }] : [];

  issues.push(...findUnknownKeys(files.modelService, MODELSERVICE_STRICT, 'llm-d-modelservice v0.4.12'));
  issues.push(...findUnknownKeys(files.infra, INFRA_STRICT, 'llm-d-infra v1.3.10'));
  issues.push(...findTypeProblems(files.modelService, MODELSERVICE_TYPES));
  warnings.push(...findUnreadKeys(files.gaie, GAIE_KEYS, 'GAIE inferencepool v1.2.0'));

  // modelservice ----------------------------------------------------------------------------
  const ms = files.modelService.values;
  const msRequired: Requirement[] = [
    ...Object.entries(labels).map(([key, value]) => ({
      path: ['modelArtifacts', 'labels', key],
      value,
      reason: 'the InferencePool and the embeddings Service select the model pods by this label',
    })),
  ];
  if (input.artifacts) {
    msRequired.push({ path: ['modelArtifacts', 'uri'], value: input.artifacts.uri, reason: `modelSource puts the weights on the PVC ${names.storage.pvc}` });
    msRequired.push({
      path: ['modelArtifacts', 'mountPath'],
      value: MODEL_MOUNT_PATH,
      reason: `the pull Job fills the volume as ${MODEL_MOUNT_PATH}, and the chart hard-codes HF_HUB_CACHE=${MODEL_MOUNT_PATH}/… for pvc+hf:// whatever the mount path`,
    });
    if (getPath(ms, ['modelArtifacts', 'size']) !== undefined) {
      warnings.push(
        files.modelService.source.issue(
          'warning.no-effect',
          ['modelArtifacts', 'size'],
          `has no effect with modelSource: the chart uses it only to size the emptyDir of an hf:// model; the PVC's size is modelSource.storageSize — remove it`,
        ),
      );
    }
  }
  for (const role of ['decode', 'prefill'] as const) {
    if (affinity) {
      msRequired.push({
        path: [role, 'extraConfig', 'affinity', 'nodeAffinity', 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms'],
        value: affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms,
        reason: "the stack's nodeSelector pins the model to these nodes",
      });
    }
  }
  const msForbidden: Forbidden[] = [
    { path: ['fullnameOverride'], reason: `the decode Deployment must be named ${names.decodeDeployment}` },
    { path: ['nameOverride'], reason: `the decode Deployment must be named ${names.decodeDeployment}` },
  ];
  issues.push(...findConflicts(files.modelService, msRequired, msForbidden));

  const msDefaults: Values = {};
  if (input.artifacts?.layout === 'hf-cache') {
    // vLLM and huggingface_hub write lock and ref files into the hub cache; a read-only
    // PVC fails with "Read-only file system" (llm-d-modelservice issue #243).
    msDefaults.modelArtifacts = { readOnly: false, name: input.artifacts.modelUri.split('/').slice(-2).join('/') };
  }
  const msLists: Values = {};
  for (const role of ['decode', 'prefill'] as const) {
    const extra: Values = {};
    if (pullSecrets.length) extra.imagePullSecrets = unionList(getPath(ms, [role, 'extraConfig', 'imagePullSecrets']), pullSecrets);
    const roleValues: Values = {};
    if (Object.keys(extra).length) roleValues.extraConfig = extra;
    if (input.toleration) roleValues.tolerations = unionList(getPath(ms, [role, 'tolerations']), [input.toleration]);
    if (input.artifacts) roleValues.podAnnotations = { [MODEL_REF_ANNOTATION]: input.artifacts.ref };
    if (Object.keys(roleValues).length) msLists[role] = roleValues;
  }
  const msValues = mergeAll(msDefaults, ms, requirementValues(msRequired), msLists);
  const msEffective = effectiveValues(MODELSERVICE_DEFAULTS, msValues);
  issues.push(...findPodFieldsTwice(files.modelService, msEffective, { toleration: input.toleration !== undefined, pullSecret: pullSecrets.length > 0, affinity: affinity !== undefined }));
  issues.push(...findOtherDecodeKinds(files.modelService, msEffective, names.decodeDeployment));

  const servicePort = asPort(getPath(msEffective, ['routing', 'servicePort']), 8000);
  const proxyEnabled = getPath(msEffective, ['routing', 'proxy', 'enabled']) !== false;
  const decodePort = proxyEnabled ? asPort(getPath(msEffective, ['routing', 'proxy', 'targetPort']), 8200) : servicePort;
  const podLabels = stringMap(getPath(msEffective, ['modelArtifacts', 'labels']));
  const servedModelName = String(getPath(msEffective, ['modelArtifacts', 'name']) ?? 'random/model');

  // GAIE ------------------------------------------------------------------------------------
  const gaieRequired: Requirement[] = [
    { path: ['provider', 'name'], value: 'istio', reason: 'the model Gateway is an Istio Gateway (llm-d-infra, class istio)' },
    {
      path: ['provider', 'istio', 'destinationRule', 'host'],
      value: names.eppHost,
      reason: 'GAIE renders the one DestinationRule for the EPP Service; its host must be that Service',
    },
    ...Object.entries(labels).map(([key, value]) => ({
      path: ['inferencePool', 'modelServers', 'matchLabels', key],
      value,
      reason: 'the InferencePool selects the model pods by the labels modelservice puts on them',
    })),
    {
      path: ['inferencePool', 'targetPorts'],
      value: [{ number: servicePort }],
      reason: `the pool must target routing.servicePort of the modelservice values (${servicePort})`,
    },
    { path: ['inferencePool', 'apiVersion'], value: INFERENCE_POOL_API_VERSION, reason: 'the HTTPRoute points at a v1 InferencePool' },
  ];
  if (controlAffinity) {
    gaieRequired.push({
      path: ['inferenceExtension', 'affinity', 'nodeAffinity', 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms'],
      value: controlAffinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms,
      reason: input.controlNodeSelector ? "the stack's controlNodeSelector places the EPP" : "the EPP runs where the model's nodeSelector puts it",
    });
  }
  issues.push(...findConflicts(files.gaie, gaieRequired));
  issues.push(...findTypeProblems(files.gaie, GAIE_TYPES));
  const gaieDefaults: Values = { provider: { istio: { destinationRule: { trafficPolicy: { connectionPool: EPP_CONNECTION_POOL } } } } };
  // The EPP tolerates the GPU taint: on a cluster whose every node carries it, it would stay Pending.
  const gaieLists: Values = input.toleration
    ? { inferenceExtension: { tolerations: unionList(getPath(files.gaie.values, ['inferenceExtension', 'tolerations']), [input.toleration]) } }
    : {};
  const gaieValues = mergeAll(gaieDefaults, files.gaie.values, requirementValues(gaieRequired), gaieLists);
  const gaieEffective = effectiveValues(GAIE_DEFAULTS, gaieValues);
  const matchLabels = stringMap(getPath(gaieEffective, ['inferencePool', 'modelServers', 'matchLabels']));
  for (const [key, value] of Object.entries(matchLabels)) {
    if (podLabels[key] !== value) {
      issues.push(
        files.gaie.source.issue(
          'values.conflict',
          ['inferencePool', 'modelServers', 'matchLabels', key],
          `the model pods do not carry ${key}=${show(value)} (modelArtifacts.labels in ${files.modelService.file}); the InferencePool would select no pods — add the label there or remove it here`,
        ),
      );
    }
  }
  const prometheusMonitoring = getPath(gaieEffective, ['inferenceExtension', 'monitoring', 'prometheus', 'enabled']) === true;

  // llm-d-infra -----------------------------------------------------------------------------
  const placement = controlAffinity !== undefined || input.toleration !== undefined || pullSecrets.length > 0;
  const routeNamespaces = input.routeNamespaces ?? 'Same';
  const accessLogging = input.accessLogging ?? true;
  const infraRequired: Requirement[] = [
    { path: ['gateway', 'enabled'], value: true, reason: 'each model gets its own Gateway' },
    { path: ['gateway', 'gatewayClassName'], value: 'istio', reason: 'Istio serves the InferencePool and names the gateway Service <gateway>-istio' },
    {
      path: ['gateway', 'listeners'],
      value: [gatewayListener(names.namespace, routeNamespaces)],
      reason: 'the stack owns the listener: HTTP on port 80, routes from the namespaces modelGateway.routeNamespaces allows',
    },
    {
      path: ['gateway', 'gatewayParameters', 'accessLogging'],
      value: accessLogging,
      reason: 'the stack key modelGateway.accessLogging decides',
    },
  ];
  if (placement || accessLogging) {
    infraRequired.push({
      path: ['gateway', 'gatewayParameters', 'enabled'],
      value: true,
      reason: placement
        ? 'node placement and the pull secret of the gateway pods go through the Gateway parameters ConfigMap'
        : 'llm-d-infra renders the access-log Telemetry only with the Gateway parameters',
    });
  }
  const infraForbidden: Forbidden[] = [
    { path: ['gateway', 'fullnameOverride'], reason: `the Gateway must be named ${names.gateway}` },
    { path: ['gateway', 'nameOverride'], reason: `the Gateway must be named ${names.gateway}` },
  ];
  issues.push(...findConflicts(files.infra, infraRequired, infraForbidden));
  const infraValues = mergeAll({ gateway: { service: { type: 'ClusterIP' }, destinationRule: { enabled: false } } }, files.infra?.values ?? {}, requirementValues(infraRequired));
  const infraEffective = effectiveValues(INFRA_DEFAULTS, infraValues);
  if (getPath(infraEffective, ['gateway', 'destinationRule', 'enabled']) === true && isEppHost(String(getPath(infraEffective, ['gateway', 'destinationRule', 'host'])), names)) {
    issues.push(
      files.infra!.source.issue(
        'values.conflict',
        ['gateway', 'destinationRule', 'enabled'],
        `GAIE already renders the DestinationRule for ${names.eppHost}; two rules for one host are ambiguous in Istio — disable this one`,
      ),
    );
  }

  // Post-render patches ------------------------------------------------------------------------
  const infraPatches: PostRenderPatch[] = placement
    ? [
        {
          kind: 'gateway-pod-placement',
          configMap: names.gatewayParameters,
          ...(controlAffinity && { affinity: controlAffinity }),
          ...(input.toleration && { tolerations: [input.toleration] }),
          ...(pullSecrets.length && { imagePullSecrets: pullSecrets }),
        },
      ]
    : [];
  // Every Deployment `pulumi up` waits for gets the model's readyTimeout, the EPP's included: without
  // the annotation the provider waits 10 minutes, and a model whose pods cannot be placed would fail
  // at the EPP long before (or after) the readyTimeout the stack asked for.
  const awaitTimeout = (deployments: readonly string[]): PostRenderPatch[] =>
    input.readyTimeoutSeconds !== undefined ? deployments.map((deployment) => ({ kind: 'await-timeout', deployment, seconds: input.readyTimeoutSeconds! })) : [];
  const gaiePatches: PostRenderPatch[] = [
    ...(pullSecrets.length ? [{ kind: 'service-account-pull-secret' as const, serviceAccount: names.epp, imagePullSecrets: pullSecrets }] : []),
    ...awaitTimeout([names.epp]),
  ];
  const msPatches: PostRenderPatch[] = awaitTimeout([names.decodeDeployment, names.prefillDeployment]);
  const tolerations = input.toleration ? [input.toleration] : [];

  return {
    values: { infra: infraValues, gaie: gaieValues, modelService: msValues },
    effective: { infra: infraEffective, gaie: gaieEffective, modelService: msEffective },
    podLabels,
    servedModelName,
    decodePort,
    servicePort,
    decodeReplicas: replicas(msEffective, 'decode'),
    prefillReplicas: replicas(msEffective, 'prefill'),
    prometheusMonitoring,
    patches: { infra: infraPatches, gaie: gaiePatches, modelService: msPatches },
    routeNamespaces,
    accessLogging,
    eppPlacement: { affinity: controlAffinity, tolerations },
    gatewayPlacement: { affinity: controlAffinity, tolerations },
    issues,
    warnings,
  };
}

/** The programmatic `modelArtifacts.uri` for a model volume. */
export function modelArtifactsUri(pvc: string, modelUri: string, layout: 'hf-cache' | 'directory'): string {
  return `${layout === 'hf-cache' ? 'pvc+hf' : 'pvc'}://${pvc}/${modelUri}`;
}

/** Where the model server finds the weights inside its pod (for docs and verify). */
export function modelPathInPod(modelUri: string): string {
  return `${MODEL_MOUNT_PATH}/${modelUri}`;
}

/** The Gateway listener: HTTP on port 80, routes from the model's namespace (and those `routes` adds), or from all. */
export function gatewayListener(namespace: string, routes: RouteNamespaces): GatewayListener {
  const namespaces =
    routes === 'Same' || routes === 'All'
      ? { from: routes }
      : { from: 'Selector' as const, selector: { matchExpressions: [{ key: LABEL_NAMESPACE_NAME, operator: 'In', values: [...new Set([namespace, ...routes])] }] } };
  return { name: 'default', port: GATEWAY_HTTP_PORT, protocol: 'HTTP', allowedRoutes: { namespaces } };
}

/**
 * Pod-spec fields the file sets under `<role>.extraConfig` that the chart also renders from
 * another value (or always): the pod spec would get the key twice and lose one value.
 */
function findPodFieldsTwice(file: ValuesFile, effective: Values, ours: { toleration: boolean; pullSecret: boolean; affinity: boolean }): Issue[] {
  const issues: Issue[] = [];
  for (const role of ['decode', 'prefill'] as const) {
    const extra = getPath(effective, [role, 'extraConfig']);
    if (!isValuesMap(extra)) continue;
    for (const rule of MODELSERVICE_POD_FIELDS) {
      if (!Object.hasOwn(extra, rule.field)) continue;
      const sources = rule.from.map((from) => (from.startsWith('/') ? from.slice(1).split('.') : [role, ...from.split('.')]));
      if (rule.field === 'initContainers' && role === 'decode' && getPath(effective, ['routing', 'proxy', 'enabled']) === true) sources.push(['routing', 'proxy', 'enabled']);
      // The chart skips priorityClassName "none" (any case).
      const renders = (path: readonly string[]) => {
        const value = getPath(effective, path);
        return isSet(value) && !(rule.field === 'priorityClassName' && typeof value === 'string' && value.toLowerCase() === 'none');
      };
      const other = sources.find(renders);
      if (!rule.always && !other) continue;
      const inFile = getPath(file.values, [role, 'extraConfig', rule.field]) !== undefined;
      const by = rule.always ? 'always' : `from ${formatPathOf(other!)}${byStack(other!, role, ours)}`;
      if (inFile) {
        issues.push(
          file.source.issue(
            'values.conflict',
            [role, 'extraConfig', rule.field],
            `llm-d-modelservice also renders ${rule.field} into the ${role} pod spec (${by}): the pod spec would hold the key twice and one value would be lost; ${podFieldFix(rule.field, role, other)}`,
          ),
        );
      } else if (other && getPath(file.values, other) !== undefined) {
        issues.push(
          file.source.issue(
            'values.conflict',
            other,
            `app-serving sets ${role}.extraConfig.${rule.field}${ours.affinity && rule.field === 'affinity' ? " from the stack's nodeSelector" : ours.pullSecret && rule.field === 'imagePullSecrets' ? ' (the Harbor pull secret)' : ''}, and the chart also renders ${rule.field} from this key: the pod spec would hold the key twice and one value would be lost; ${podFieldFix(rule.field, role, other)}`,
          ),
        );
      }
    }
  }
  return issues;
}

function isSet(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isValuesMap(value)) return Object.keys(value).length > 0;
  return true;
}

function formatPathOf(path: readonly string[]): string {
  return path.join('.');
}

function byStack(path: readonly string[], role: string, ours: { toleration: boolean }): string {
  if (ours.toleration && path.join('.') === `${role}.tolerations`) return ", where app-serving puts the stack's gpuToleration";
  return '';
}

function podFieldFix(field: string, role: string, other: readonly string[] | undefined): string {
  switch (field) {
    case 'tolerations':
      return `list them under ${role}.tolerations instead (app-serving adds the stack's GPU toleration there)`;
    case 'nodeSelector':
      return `keep one: ${role}.nodeSelector, or better the model's nodeSelector in the stack`;
    case 'imagePullSecrets':
      return `list them under ${role}.extraConfig.imagePullSecrets only (${role}.imagePullSecrets is deprecated; app-serving adds the Harbor pull secret to extraConfig)`;
    case 'affinity':
      return `move this label into the model's nodeSelector in the stack (or drop ${role}.acceleratorTypes and write the affinity in ${role}.extraConfig.affinity)`;
    case 'serviceAccountName':
      return 'remove it (the chart always sets its own ServiceAccount; use serviceAccountOverride)';
    case 'volumes':
      return `move them to ${role}.volumes (the chart always renders the volumes there, with the model volume)`;
    case 'initContainers':
      return `move them to ${role}.initContainers${other?.[0] === 'routing' ? ' (the chart adds the routing-proxy sidecar there)' : ''}`;
    case 'containers':
      return `move them to ${role}.containers`;
    default:
      return `keep only ${other ? formatPathOf(other) : `${role}.${field}`}`;
  }
}

/**
 * modelservice renders a LeaderWorkerSet (`multinode: true`) or a requester ReplicaSet
 * (`requester.enable: true`) under the decode name instead of the decode Deployment; app-serving
 * plans, awaits and verifies a Deployment, so it rejects both.
 */
function findOtherDecodeKinds(file: ValuesFile, effective: Values, decode: string): Issue[] {
  const issues: Issue[] = [];
  if (getPath(effective, ['multinode']) === true) {
    issues.push(
      file.source.issue(
        'values.unsupported',
        ['multinode'],
        `makes llm-d-modelservice render a LeaderWorkerSet instead of the Deployment ${decode}; app-serving deploys, awaits and verifies a decode Deployment — remove it (multi-node serving is not supported)`,
      ),
    );
  }
  if (getPath(effective, ['requester', 'enable']) === true) {
    issues.push(
      file.source.issue(
        'values.unsupported',
        ['requester', 'enable'],
        `makes llm-d-modelservice render a requester ReplicaSet instead of the Deployment ${decode}; app-serving deploys, awaits and verifies a decode Deployment — remove it (fast model actuation is not supported)`,
      ),
    );
  }
  return issues;
}

/**
 * Keys of a file the chart does not read (for a chart without a values schema, where Helm
 * accepts them silently): one warning per key, with the closest known key.
 */
export function findUnreadKeys(file: ValuesFile | undefined, tree: KeyTree, chart: string): Issue[] {
  if (!file) return [];
  const warnings: Issue[] = [];
  const walk = (values: unknown, known: KeyTree, at: string[]) => {
    if (!isValuesMap(values)) return;
    for (const [key, value] of Object.entries(values)) {
      const sub = known[key];
      if (sub === undefined) {
        warnings.push(file.source.issue('warning.unknown-key', [...at, key], `${chart} does not read this key, so it has no effect${didYouMean(key, Object.keys(known))}; known here: ${Object.keys(known).join(', ')}`));
      } else if (sub !== true) walk(value, sub, [...at, key]);
    }
  };
  walk(file.values, tree, []);
  return warnings;
}

const GAIE_TYPES: readonly TypeCheck[] = [
  { path: ['inferenceExtension', 'tolerations'], ok: Array.isArray, want: 'a list of tolerations' },
  { path: ['inferenceExtension', 'affinity'], ok: isValuesMap, want: 'a Kubernetes affinity mapping' },
];

const MODELSERVICE_TYPES: readonly TypeCheck[] = [
  { path: ['routing', 'servicePort'], ok: isPort, want: 'a port number (1–65535)' },
  { path: ['routing', 'proxy', 'targetPort'], ok: isPort, want: 'a port number (1–65535)' },
  { path: ['routing', 'proxy', 'enabled'], ok: (v) => typeof v === 'boolean', want: 'true or false' },
  { path: ['modelArtifacts', 'labels'], ok: (v) => isValuesMap(v) && Object.values(v).every((x) => typeof x === 'string'), want: 'a mapping of label names to string values' },
  { path: ['modelArtifacts', 'name'], ok: (v) => typeof v === 'string' && v.length > 0, want: 'a non-empty string' },
  ...(['decode', 'prefill'] as const).flatMap((role) => [
    { path: [role, 'replicas'], ok: (v: unknown) => Number.isInteger(v) && (v as number) >= 0, want: 'a whole number ≥ 0' },
    { path: [role, 'tolerations'], ok: Array.isArray, want: 'a list of tolerations' },
    { path: [role, 'containers'], ok: Array.isArray, want: 'a list of containers' },
    { path: [role, 'extraConfig'], ok: isValuesMap, want: 'a mapping of pod spec fields' },
    { path: [role, 'extraConfig', 'imagePullSecrets'], ok: Array.isArray, want: 'a list of {name: <secret>}' },
  ]),
];

function isEppHost(host: string, names: LlmdNames): boolean {
  const short = [names.epp, `${names.epp}.${names.namespace}`, `${names.epp}.${names.namespace}.svc`, names.eppHost];
  return short.includes(host);
}

function isPort(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 65535;
}

function asPort(value: unknown, fallback: number): number {
  return isPort(value) ? (value as number) : fallback;
}

function replicas(values: Values, role: 'decode' | 'prefill'): number {
  if (getPath(values, [role, 'create']) === false) return 0;
  const count = getPath(values, [role, 'replicas']);
  return Number.isInteger(count) ? (count as number) : role === 'decode' ? 1 : 0;
}

function stringMap(value: unknown): Record<string, string> {
  if (!isValuesMap(value)) return {};
  return Object.fromEntries(Object.entries(value).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
}
