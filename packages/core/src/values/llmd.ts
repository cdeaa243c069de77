import { LABEL_INFERENCE_SERVING, LABEL_MODEL, MODEL_MOUNT_PATH, type Category } from '../constants.ts';
import type { ValuesFile } from '../discovery.ts';
import type { Issue } from '../errors.ts';
import type { LlmdNames } from '../names.ts';
import type { PostRenderPatch } from '../patches.ts';
import { GAIE_DEFAULTS, INFRA_DEFAULTS, INFRA_STRICT, MODELSERVICE_DEFAULTS, MODELSERVICE_STRICT } from './chart-facts.ts';
import { effectiveValues, getPath, isValuesMap, mergeAll, type Values } from './merge.ts';
import { findConflicts, findTypeProblems, findUnknownKeys, requirementValues, show, unionList, type Forbidden, type Requirement, type TypeCheck } from './requirements.ts';
import { nodeAffinityFor, type Toleration } from './scheduling.ts';

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
  readonly patches: { readonly infra: readonly PostRenderPatch[]; readonly gaie: readonly PostRenderPatch[] };
  readonly issues: readonly Issue[];
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
  const labels = { [LABEL_INFERENCE_SERVING]: 'true', [LABEL_MODEL]: names.slug };
  const affinity = nodeAffinityFor(input.nodeSelector);
  const pullSecrets = input.pullSecret ? [{ name: input.pullSecret }] : [];

  issues.push(...findUnknownKeys(files.modelService, MODELSERVICE_STRICT, 'llm-d-modelservice v0.4.12'));
  issues.push(...findUnknownKeys(files.infra, INFRA_STRICT, 'llm-d-infra v1.3.10'));
  issues.push(...findTypeProblems(files.modelService, MODELSERVICE_TYPES));

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
  }
  for (const role of ['decode', 'prefill'] as const) {
    if (affinity) {
      msRequired.push({
        path: [role, 'extraConfig', 'affinity', 'nodeAffinity', 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms'],
        value: affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms,
        reason: "the stack's nodeSelector pins the model to these nodes",
      });
      if (getPath(ms, [role, 'acceleratorTypes', 'labelKey'])) {
        issues.push(
          files.modelService.source.issue(
            'values.conflict',
            [role, 'acceleratorTypes', 'labelKey'],
            "sets a node affinity, and so does the stack's nodeSelector: the chart would render two affinity keys; move this label into the model's nodeSelector in the stack",
          ),
        );
      }
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
  issues.push(...findConflicts(files.gaie, gaieRequired));
  const gaieDefaults: Values = { provider: { istio: { destinationRule: { trafficPolicy: { connectionPool: EPP_CONNECTION_POOL } } } } };
  const gaieValues = mergeAll(gaieDefaults, files.gaie.values, requirementValues(gaieRequired));
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
  const placement = affinity !== undefined || input.toleration !== undefined || pullSecrets.length > 0;
  const infraRequired: Requirement[] = [
    { path: ['gateway', 'enabled'], value: true, reason: 'each model gets its own Gateway' },
    { path: ['gateway', 'gatewayClassName'], value: 'istio', reason: 'Istio serves the InferencePool and names the gateway Service <gateway>-istio' },
  ];
  if (placement) {
    infraRequired.push({
      path: ['gateway', 'gatewayParameters', 'enabled'],
      value: true,
      reason: 'node placement and the pull secret of the gateway pods go through the Gateway parameters ConfigMap',
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
          ...(affinity && { affinity }),
          ...(input.toleration && { tolerations: [input.toleration] }),
          ...(pullSecrets.length && { imagePullSecrets: pullSecrets }),
        },
      ]
    : [];
  const gaiePatches: PostRenderPatch[] = pullSecrets.length ? [{ kind: 'service-account-pull-secret', serviceAccount: names.epp, imagePullSecrets: pullSecrets }] : [];

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
    patches: { infra: infraPatches, gaie: gaiePatches },
    issues,
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
