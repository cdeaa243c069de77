/**
 * What KServe's LLMInferenceService controller does with our objects: it merges the spec with its
 * well-known LLMInferenceServiceConfigs and the spec's `baseRefs`, then builds the workload and
 * scheduler Deployments and mounts the model into them. Written from kserve/kserve v0.18.1 and
 * v0.20.0 (each step names its source at its tag) for tests that hold our plan against KServe's real
 * configs in ../shared/upstream/kserve/v0.18.1-llmisvcconfig/ and
 * ../shared/upstream/current/kserve/v0.20.0-llmisvcconfig/ — and, for v0.20, for the data-path
 * tier's stand-in of the controller (apps/data-path/test/kserve-controller.ts), which applies what
 * this file computes.
 *
 * Those files are Kustomize inputs: `kustomization.yaml` (not copied) only sets `namespace: kserve`,
 * which does not change a spec (the controller looks configs up by name, in the service's namespace
 * first, then in `kserve`). They also hold Go-template placeholders (`{{ .ObjectMeta.Name }}`, …) that
 * the controller renders after the merge (config_merge.go, ReplaceVariables). For v0.18.1,
 * {@link renderPlaceholders} renders the ones these files use and leaves any other in place, so a
 * test that asserts "no placeholder left" notices a new one instead of guessing; for v0.20.0 the
 * JSON of the merged spec is executed as a template, as the controller does (./go-template.ts).
 *
 * Our v0.18 objects are `serving.kserve.io/v1alpha1`; the controller works on v1alpha2 (the storage
 * version), which the conversion webhook fills field for field (only `model.criticality` moves into
 * an annotation: pkg/apis/serving/v1alpha1/llm_inference_service_conversion.go), so the specs merge
 * as written. On v0.20 we write v1alpha2 itself.
 *
 * What this does not model: the order of merged list items (Kubernetes' strategic merge interleaves
 * them; compare by name), `$patch` directives; on v0.20 multi-node and prefill/decode workloads,
 * LoRA adapters, KV-cache offloading tiers, tracing, managed DRA, scheduler config references, storage
 * other than `pvc://` and the scheduler's own objects — each throws where the controller would act on
 * it, so a test that reaches one knows.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { readUpstreamYaml, upstreamPath } from '@app-serving/test-cluster';
import { executeGoTemplate, type GoField } from './go-template.ts';
import { effectiveValues, isValuesMap, type Values } from '../src/values/merge.ts';

/** The KServe releases emulated here. */
export type KserveVersion = 'v0.18.1' | 'v0.20.0';

/** Where the well-known configs of each release are (../shared/upstream/). */
const CONFIG_DIRS: Record<KserveVersion, string> = { 'v0.18.1': 'kserve/v0.18.1-llmisvcconfig', 'v0.20.0': 'current/kserve/v0.20.0-llmisvcconfig' };

/**
 * The well-known LLMInferenceServiceConfig objects of a release, as its files hold them (every
 * `config-*.yaml`; `kustomization.yaml` puts them in the namespace `kserve`, as KServe's chart
 * `kserve-runtime-configs` installs them with `kserve.llmisvcConfigs.enabled=true`).
 */
export function wellKnownConfigObjects(version: KserveVersion = 'v0.18.1'): Values[] {
  const dir = CONFIG_DIRS[version];
  return readdirSync(upstreamPath(dir))
    .filter((f) => f.startsWith('config-') && f.endsWith('.yaml'))
    .sort()
    .map((f) => readUpstreamYaml(`${dir}/${f}`)[0] as Values);
}

/** The well-known configs of a release, by name (`metadata.name` of each upstream file). */
export function wellKnownConfigs(version: KserveVersion = 'v0.18.1'): Map<string, Values> {
  const cached = cache.get(version);
  if (cached) return cached;
  const out = new Map<string, Values>();
  for (const doc of wellKnownConfigObjects(version)) out.set((doc.metadata as { name: string }).name, doc.spec as Values);
  cache.set(version, out);
  return out;
}
const cache = new Map<KserveVersion, Map<string, Values>>();

/**
 * A CEL rule of the form `!(has(self.a) && has(self.b))` as a predicate on an object (the only
 * form the tests evaluate); any other rule text throws, so a changed upstream rule is noticed.
 */
export function mutuallyExclusiveRule(rule: string): (self: Values) => boolean {
  const match = /^!\(has\(self\.(\w+)\) && has\(self\.(\w+)\)\)$/.exec(rule);
  if (!match) throw new Error(`not a rule of the form !(has(self.a) && has(self.b)): ${rule}`);
  const [, a, b] = match as unknown as [string, string, string];
  return (self) => !(self[a] !== undefined && self[a] !== null && self[b] !== undefined && self[b] !== null);
}

/** Where an LLMInferenceServiceSpec holds a corev1.PodSpec. */
const POD_SPECS = ['template', 'worker', 'prefill.template', 'prefill.worker', 'router.scheduler.template'];
/**
 * The pod specs whose `containers` LLMInferenceServiceSpec.SetDefaults sets to `[]` when unset
 * (llm_inference_service_defaults.go): at v0.18.1 template, worker and prefill's; v0.20.0 adds the
 * scheduler's template.
 */
const DEFAULTED: Record<KserveVersion, readonly string[]> = {
  'v0.18.1': ['template', 'worker', 'prefill.template', 'prefill.worker'],
  'v0.20.0': ['template', 'worker', 'prefill.template', 'prefill.worker', 'router.scheduler.template'],
};

/** Lists of corev1.PodSpec merged by key (patchStrategy "merge" and patchMergeKey in k8s.io/api core/v1 types.go); other lists are replaced. */
const POD_SPEC_LIST_KEYS: Record<string, string> = {
  volumes: 'name',
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
  resourceClaims: 'name',
  schedulingGates: 'name',
};
/** Lists of corev1.Container merged by key (same source); `args`, `command`, `envFrom` are replaced. */
const CONTAINER_LIST_KEYS: Record<string, string> = { ports: 'containerPort', env: 'name', volumeMounts: 'mountPath', volumeDevices: 'devicePath' };

type Kind = 'spec' | 'pod' | 'container' | 'other';

/**
 * A spec as `json.Marshal` of the Go struct gives it (config_merge.go, mergeSpecs): nulls gone
 * (nil pointers are omitted), and `containers` — the one PodSpec list without `omitempty` — present
 * in every pod spec: `[]` where SetDefaults sets it (when `setDefaults`), else `null`.
 */
export function goJson(spec: Values, setDefaults: boolean, version: KserveVersion = 'v0.18.1'): Values {
  const out = effectiveValues(spec);
  for (const section of POD_SPECS) {
    const pod = section.split('.').reduce<unknown>((v, k) => (isValuesMap(v) ? v[k] : undefined), out);
    if (isValuesMap(pod) && pod.containers === undefined) pod.containers = setDefaults && DEFAULTED[version].includes(section) ? [] : null;
  }
  return out;
}

/**
 * `mergeSpecs(base, override)` of config_merge.go: a strategic merge patch made from the zero spec to
 * `override` (after SetDefaults) and applied to `base`. The two-way patch from the zero spec is
 * `override` itself as marshalled; applying it merges maps, merges keyed PodSpec/Container lists
 * by key, replaces other lists and scalars, and deletes a key whose patch value is `null`.
 */
export function mergeSpecs(base: Values, override: Values, version: KserveVersion = 'v0.18.1'): Values {
  return applyPatch(goJson(base, false, version), goJson(override, true, version), 'spec', []) as Values;
}

/** `MergeSpecs(cfgs...)`: left to right, the first is the base. */
export function mergeAllSpecs(specs: readonly Values[], version: KserveVersion = 'v0.18.1'): Values {
  return specs.slice(1).reduce((acc, spec) => mergeSpecs(acc, spec, version), specs[0] ?? {});
}

function kindOf(parent: Kind, path: readonly string[], key: string): Kind {
  if (parent === 'spec') return POD_SPECS.includes([...path, key].join('.')) ? 'pod' : 'spec';
  if (parent === 'pod' && (key === 'containers' || key === 'initContainers' || key === 'ephemeralContainers')) return 'container';
  return 'other';
}

function applyPatch(base: unknown, patch: unknown, kind: Kind, path: readonly string[]): unknown {
  if (!isValuesMap(base) || !isValuesMap(patch)) return structuredClone(patch);
  const out: Values = structuredClone(base);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete out[key];
      continue;
    }
    const child = kindOf(kind, path, key);
    const mergeKey = kind === 'pod' ? POD_SPEC_LIST_KEYS[key] : kind === 'container' ? CONTAINER_LIST_KEYS[key] : undefined;
    const current = out[key];
    if (mergeKey && Array.isArray(current) && Array.isArray(value)) {
      const merged = structuredClone(current) as unknown[];
      for (const item of value) {
        const at = merged.findIndex((m) => isValuesMap(m) && isValuesMap(item) && m[mergeKey] === item[mergeKey]);
        if (at >= 0) merged[at] = applyPatch(merged[at], item, child, []);
        else merged.push(structuredClone(item));
      }
      out[key] = merged;
    } else if (isValuesMap(current) && isValuesMap(value)) {
      out[key] = applyPatch(current, value, child, child === 'spec' ? [...path, key] : []);
    } else {
      out[key] = structuredClone(value);
    }
  }
  return out;
}

/**
 * The well-known configs combineBaseRefsConfig (config_merge.go) puts under a spec for a
 * single-node, non prefill/decode service, in its order: the scheduler config when
 * `router.scheduler` is set without a pool reference, the route config when `router.route` is set
 * without HTTPRoute references, then `config-llm-template`.
 */
export function combineBaseRefs(spec: Values, configs: ReadonlyMap<string, Values>, own: ReadonlyMap<string, Values>): Values {
  // The "resolved" spec (the service merged with its baseRefs) decides which well-known configs apply.
  const baseRefs = ((spec.baseRefs as { name: string }[] | undefined) ?? []).map((r) => own.get(r.name) ?? configs.get(r.name));
  if (baseRefs.some((c) => c === undefined)) throw new Error('a baseRef names no config: the controller fails with "failed to get LLMInferenceServiceConfig"');
  const resolved = mergeAllSpecs([spec, ...(baseRefs as Values[])]);
  const router = isValuesMap(resolved.router) ? resolved.router : {};
  const refs: string[] = [];
  const scheduler = router.scheduler;
  const poolRef = isValuesMap(scheduler) && isValuesMap(scheduler.pool) ? scheduler.pool.ref : undefined;
  if (isValuesMap(scheduler) && !(isValuesMap(poolRef) && poolRef.name)) refs.push('kserve-config-llm-scheduler');
  if (isValuesMap(router.route)) refs.push('kserve-config-llm-router-route');
  if (resolved.prefill !== undefined || resolved.worker !== undefined) throw new Error('this emulation covers single-node services only');
  refs.push('kserve-config-llm-template');
  const layers = refs.map((name) => configs.get(name)!);
  return mergeAllSpecs([...layers, ...(baseRefs as Values[]), spec]);
}

/**
 * The Go-template placeholders of the v0.18.1 configs, rendered for a service `name` in `namespace`
 * with TLS off (config_merge.go, ReplaceVariables; `ChildName` is kmeta.ChildName, here without its
 * hashing of names over 63 characters, which these tests do not reach). Others stay as they are.
 */
export function renderPlaceholders<T>(value: T, ctx: { name: string; namespace: string; modelName: string }): T {
  const render = (text: string): string =>
    text
      .replace(/\{\{ if \.GlobalConfig\.EnableTLS \}\}.*?\{\{else\}\}(.*?)\{\{- end \}\}/g, '$1')
      .replace(/\{\{ if \.GlobalConfig\.EnableTLS \}\}.*?\{\{- end \}\}/g, '')
      .replace(/\{\{ ChildName \.ObjectMeta\.Name `([^`]*)` \}\}/g, (_, suffix: string) => `${ctx.name}${suffix}`)
      .replace(/\{\{ \.ObjectMeta\.Name \}\}/g, ctx.name)
      .replace(/\{\{ \.ObjectMeta\.Namespace \}\}/g, ctx.namespace)
      .replace(/\{\{ \.Spec\.Model\.Name \}\}/g, ctx.modelName);
  const walk = (v: unknown): unknown => (typeof v === 'string' ? render(v) : Array.isArray(v) ? v.map(walk) : isValuesMap(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)])) : v);
  return walk(value) as T;
}

/** A pod template as the controller builds it: labels, annotations and the pod spec. */
export interface PodTemplate {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly spec: Values;
}

/**
 * The pod template of the single-node workload Deployment `<name>-kserve`
 * (workload_single_node.go, expectedSingleNodeMainDeployment): the merged `template`, labels
 * singleNodeLabels + `kserve.io/component: workload` + `llm-d.ai/role: both`, `spec.annotations` on
 * the pod (propagateDeploymentMetadata), and the model attached to container `main` at /mnt/models.
 */
export function workloadPod(name: string, merged: Values): PodTemplate {
  const spec = structuredClone(merged.template as Values);
  attachModel(merged, spec, 'main', '/mnt/models');
  return {
    labels: {
      'app.kubernetes.io/component': 'llminferenceservice-workload',
      'app.kubernetes.io/name': name,
      'app.kubernetes.io/part-of': 'llminferenceservice',
      'kserve.io/component': 'workload',
      'llm-d.ai/role': 'both',
    },
    annotations: { ...((merged.annotations as Record<string, string> | undefined) ?? {}) },
    spec,
  };
}

/**
 * The pod template of the scheduler Deployment `<name>-kserve-router-scheduler` (scheduler.go,
 * expectedSchedulerDeployment): the merged `router.scheduler.template` (ServiceAccount defaulted to
 * `<name>-epp-sa` in combineBaseRefsConfig), `router.scheduler.annotations` on the pod
 * (propagateSchedulerMetadata), and — when the template has a `tokenizer` container
 * (isUsingTokenizerSidecar) — the model attached to it at /mnt/models/base.
 */
export function schedulerPod(name: string, merged: Values): PodTemplate {
  const scheduler = (merged.router as Values).scheduler as Values;
  const spec = structuredClone(scheduler.template as Values);
  if (!spec.serviceAccountName) spec.serviceAccountName = `${name}-epp-sa`;
  const containers = (spec.containers as Values[] | undefined) ?? [];
  if (containers.some((c) => c.name === 'tokenizer')) attachModel(merged, spec, 'tokenizer', '/mnt/models/base');
  return {
    labels: { 'app.kubernetes.io/component': 'llminferenceservice-router-scheduler', 'app.kubernetes.io/name': name, 'app.kubernetes.io/part-of': 'llminferenceservice' },
    annotations: { ...((scheduler.annotations as Record<string, string> | undefined) ?? {}) },
    spec,
  };
}

/**
 * attachModelArtifacts for a `pvc://<claim>/<path>` URI (workload_storage.go,
 * attachPVCModelArtifact; utils.ParsePvcURI and utils.AddModelMount in pkg/utils/storage.go): the
 * volume `kserve-pvc-source` on the claim, mounted read-only at `mountPath` with `subPath: <path>`
 * into `container`. Other schemes are outside these tests.
 */
function attachModel(merged: Values, spec: Values, container: string, mountPath: string): void {
  const uri = String((merged.model as Values).uri);
  if (!uri.startsWith('pvc://')) throw new Error(`only pvc:// is modelled here, not ${uri}`);
  const [claim, ...rest] = uri.slice('pvc://'.length).split('/');
  const target = ((spec.containers as Values[] | undefined) ?? []).find((c) => c.name === container);
  if (!target) return;
  const mounts = (target.volumeMounts as Values[] | undefined) ?? [];
  if (mounts.some((m) => m.name === 'kserve-pvc-source')) return;
  target.volumeMounts = [...mounts, { name: 'kserve-pvc-source', mountPath, readOnly: true, subPath: rest.join('/') }];
  const volumes = (spec.volumes as Values[] | undefined) ?? [];
  if (!volumes.some((v) => v.name === 'kserve-pvc-source')) spec.volumes = [...volumes, { name: 'kserve-pvc-source', persistentVolumeClaim: { claimName: claim } }];
}

// ---------------------------------------------------------------------------------------------
// KServe v0.20.0 (sources: kserve/kserve at tag v0.20.0; knative.dev/pkg at the version its go.mod pins)
// ---------------------------------------------------------------------------------------------

/**
 * What the v0.20 controller reads from its `inferenceservice-config` ConfigMap (config_loader.go,
 * NewConfig), at the defaults of KServe's install: `ingress.kserveIngressGateway`
 * "kserve/kserve-ingress-gateway" and `urlScheme` "http" (config/configmap/inferenceservice.yaml), no
 * `enableLLMInferenceServiceTLS` (false), and the model-routing header and mode
 * pkg/apis/serving/v1beta1/configmap.go defaults when unset ("X-Gateway-Model-Name", "enabled").
 */
export interface KserveGlobalConfig {
  readonly ingressGatewayName: string;
  readonly ingressGatewayNamespace: string;
  readonly enableTLS: boolean;
  readonly modelBasedRoutingHeaderName: string;
  readonly modelBasedRoutingMode: 'enabled' | 'forced' | 'disabled';
  readonly urlScheme: 'http' | 'https';
}

export const KSERVE_V020_DEFAULTS: KserveGlobalConfig = {
  ingressGatewayName: 'kserve-ingress-gateway',
  ingressGatewayNamespace: 'kserve',
  enableTLS: false,
  modelBasedRoutingHeaderName: 'X-Gateway-Model-Name',
  modelBasedRoutingMode: 'enabled',
  urlScheme: 'http',
};

/** The namespace KServe runs in and looks well-known configs up in after the service's own (constants.KServeNamespace). */
export const KSERVE_NAMESPACE = 'kserve';

/** An LLMInferenceService as stored (v1alpha2). */
export interface KserveService {
  readonly apiVersion?: string;
  readonly metadata: { readonly name: string; readonly namespace: string; readonly uid?: string; readonly labels?: Record<string, string>; readonly annotations?: Record<string, string> };
  readonly spec: Values;
}

/** A config found by name: in the service's namespace, else in `kserve` (config_merge.go, getConfig). */
export interface FoundConfig {
  readonly namespace: string;
  readonly spec: Values;
}

/** One entry of `status.appliedConfigRefs`. */
export interface AppliedConfigRef {
  readonly name: string;
  readonly namespace: string;
  readonly source: 'Preset' | 'UserRef';
}

/**
 * kmeta.ChildName (knative.dev/pkg kmeta/names.go): `parent + suffix`, or — past 63 characters —
 * the parent cut and an md5 of it put before the suffix.
 */
export function childName(parent: string, suffix: string): string {
  const longest = 63;
  const head = longest - 32;
  const md5 = (text: string) => createHash('md5').update(text).digest('hex');
  if (parent.length <= longest - suffix.length) return parent + suffix;
  if (head - suffix.length <= 0) {
    let ret = (head < parent.length ? parent.slice(0, head) : parent) + md5(parent + suffix);
    const d = longest - ret.length;
    if (d > 0) ret += suffix.slice(0, d);
    while (ret.length > 0 && !/[a-zA-Z0-9]/.test(ret.at(-1)!)) ret = ret.slice(0, -1);
    return ret;
  }
  return parent.slice(0, head - suffix.length) + md5(parent) + suffix;
}

const isSet = (v: unknown) => v !== undefined && v !== null;
const at = (v: unknown, path: string): unknown => path.split('.').reduce<unknown>((x, k) => (isValuesMap(x) ? x[k] : undefined), v);

/** `configNotFoundError` (config_merge.go): the condition's message when a config is missing. */
export class KserveConfigNotFound extends Error {
  constructor(name: string, namespaces: readonly string[]) {
    super(`LLMInferenceServiceConfig "${name}" not found in namespaces [${namespaces.join(' ')}]`);
  }
}

/** Throws where v0.20's controller does something this emulation does not model. */
function notModelled(what: string): never {
  throw new Error(`KServe v0.20 ${what}: not modelled by packages/core/test/kserve-controller.ts`);
}

/** hasLatencyProducerInSpec (scheduler_latency_predictor.go): an inline scheduler config with a `predicted-latency-producer` plugin. */
function hasLatencyProducer(spec: Values): boolean {
  const inline = at(spec, 'router.scheduler.config.inline');
  const plugins = isValuesMap(inline) ? inline.plugins : undefined;
  return Array.isArray(plugins) && plugins.some((p) => isValuesMap(p) && p.type === 'predicted-latency-producer');
}

/** The default InferencePool name (SchedulerSpec.InferencePoolName with no pool ref: llm_inference_service_types_func.go). */
export function inferencePoolName(service: KserveService, spec: Values = service.spec): string {
  const ref = at(spec, 'router.scheduler.pool.ref.name');
  return typeof ref === 'string' && ref !== '' ? ref : childName(service.metadata.name, '-inference-pool');
}

/** workloadServiceName (workload.go). */
export function workloadServiceName(service: KserveService): string {
  return childName(service.metadata.name, '-kserve-workload-svc');
}

/** The Secret the workload's `tls-certs` volume mounts (workload_tls_self_signed.go, expectedSelfSignedCertsSecret). */
export function selfSignedCertsSecretName(service: KserveService): string {
  return childName(service.metadata.name, '-kserve-self-signed-certs');
}

/** GetWorkloadLabelSelector (workload.go): the workload Service's selector, and the pool's default. */
export function workloadSelector(service: KserveService): Record<string, string> {
  return { 'app.kubernetes.io/part-of': 'llminferenceservice', 'app.kubernetes.io/name': service.metadata.name, 'kserve.io/component': 'workload' };
}

/**
 * combineBaseRefsConfig of v0.20 (config_merge.go): the service merged with its baseRefs decides
 * which well-known configs apply — the scheduler's (a scheduler without a pool reference), the
 * latency predictor's, the route's (a route without HTTPRoute references; never versioned), the
 * tracing one, then the workload template by deployment pattern — which are merged, then the
 * baseRefs, then the service itself; then the fix-ups after the merge, in its order: the pool's
 * selector, the scheduler's ServiceAccount, ReplaceVariables, the route's parents from
 * `router.gateway.refs` (ToParentRefs), the route's default InferencePool backends to the workload
 * Service when there is no scheduler (or to the referenced pool), the EPP port 9002.
 *
 * `lookup` finds a config by name as getConfig does (the service's namespace, then `kserve`).
 */
export function combineBaseRefsV020(service: KserveService, lookup: (name: string) => FoundConfig | undefined, global: KserveGlobalConfig = KSERVE_V020_DEFAULTS): { spec: Values; applied: AppliedConfigRef[] } {
  const v = 'v0.20.0' as const;
  const find = (name: string): FoundConfig => {
    const found = lookup(name);
    if (!found) throw new KserveConfigNotFound(name, [service.metadata.namespace, KSERVE_NAMESPACE]);
    return found;
  };
  // LLMInferenceService.SetDefaults (llm_inference_service_defaults.go): the model name defaults to the service's.
  const own = structuredClone(service.spec);
  const model = (isValuesMap(own.model) ? own.model : (own.model = {})) as Values;
  if (typeof model.name !== 'string' || model.name === '') model.name = service.metadata.name;
  const baseRefs = ((own.baseRefs as { name: string }[] | undefined) ?? []).map((r) => r.name);
  const resolved = baseRefs.reduce((spec, name) => mergeSpecs(spec, find(name).spec, v), own);
  const resolvedName = at(resolved, 'model.name');
  if (typeof resolvedName === 'string') model.name = resolvedName;

  const refs: string[] = [];
  const scheduler = at(resolved, 'router.scheduler');
  if (isValuesMap(scheduler) && !isSet(at(scheduler, 'pool.ref.name'))) refs.push('kserve-config-llm-scheduler');
  if (hasLatencyProducer(resolved)) refs.push('kserve-config-llm-scheduler-latency-predictor');
  const route = at(resolved, 'router.route');
  const routeRefs = at(route, 'http.refs');
  if (isValuesMap(route) && !(Array.isArray(routeRefs) && routeRefs.length > 0)) refs.push('kserve-config-llm-router-route');
  if (isSet(resolved.tracing)) refs.push('kserve-config-llm-tracing');
  const dataParallel = (p: unknown) => Number(at(p, 'data') ?? 0) > 0 || Number(at(p, 'dataLocal') ?? 0) > 0;
  const pipelineParallel = (p: unknown) => Number(at(p, 'pipeline') ?? 0) > 0;
  const pattern = (worker: unknown, parallelism: unknown, single: string, dp: string, pp: string) => {
    if (!isSet(worker)) refs.push(single);
    else if (dataParallel(parallelism)) refs.push(dp);
    else if (pipelineParallel(parallelism)) refs.push(pp);
  };
  if (isSet(resolved.prefill)) {
    pattern(at(resolved, 'prefill.worker'), at(resolved, 'prefill.parallelism'), 'kserve-config-llm-prefill-template', 'kserve-config-llm-prefill-worker-data-parallel', 'kserve-config-llm-prefill-worker-pipeline-parallel');
    pattern(resolved.worker, resolved.parallelism, 'kserve-config-llm-decode-template', 'kserve-config-llm-decode-worker-data-parallel', 'kserve-config-llm-decode-worker-pipeline-parallel');
  } else {
    pattern(resolved.worker, resolved.parallelism, 'kserve-config-llm-template', 'kserve-config-llm-worker-data-parallel', 'kserve-config-llm-worker-pipeline-parallel');
  }
  const wellKnown = refs.length;
  const applied: AppliedConfigRef[] = [];
  const layers = [...refs, ...baseRefs].map((name, i) => {
    const found = find(name);
    applied.push({ name, namespace: found.namespace, source: i < wellKnown ? 'Preset' : 'UserRef' });
    return found.spec;
  });
  let spec = mergeAllSpecs([...layers, own], v);

  const pool = at(spec, 'router.scheduler.pool.spec');
  if (isValuesMap(pool) && Object.keys((at(pool, 'selector.matchLabels') as Values | undefined) ?? {}).length === 0) {
    pool.selector = { ...(isValuesMap(pool.selector) ? pool.selector : {}), matchLabels: workloadSelector(service) };
  }
  const schedulerTemplate = at(spec, 'router.scheduler.template');
  if (isValuesMap(schedulerTemplate) && !schedulerTemplate.serviceAccountName) schedulerTemplate.serviceAccountName = childName(service.metadata.name, '-epp-sa');

  spec = replaceVariablesV020({ ...service, spec: own }, spec, global);

  if (isSet(service.metadata.annotations?.['serving.kserve.io/exp-dra-device-class'])) notModelled('managed DRA (injectManagedDRAIntoConfig)');
  const http = at(spec, 'router.route.http.spec') as Values | undefined;
  const gatewayRefs = at(spec, 'router.gateway.refs');
  if (isValuesMap(http) && Array.isArray(gatewayRefs) && gatewayRefs.length > 0) {
    // ToParentRefs: a ref without a namespace keeps none (Gateway API defaults it to the route's).
    http.parentRefs = gatewayRefs.map((r: Values) => ({
      group: 'gateway.networking.k8s.io',
      kind: 'Gateway',
      name: r.name,
      ...(r.namespace ? { namespace: r.namespace } : {}),
      ...(r.sectionName ? { sectionName: r.sectionName } : {}),
    }));
  }
  const schedulerNow = at(spec, 'router.scheduler');
  const defaultPool = childName(service.metadata.name, '-inference-pool');
  const backendRefs = (visit: (ref: Values) => void) => {
    for (const rule of (isValuesMap(http) && Array.isArray(http.rules) ? http.rules : []) as Values[]) {
      // isDefaultBackendRef: kind InferencePool and the default pool's name (any group).
      for (const ref of (rule.backendRefs ?? []) as Values[]) if (ref.kind === 'InferencePool' && ref.name === defaultPool) visit(ref);
    }
  };
  if (isValuesMap(http) && !isSet(schedulerNow)) {
    backendRefs((ref) => Object.assign(ref, { group: '', kind: 'Service', name: workloadServiceName(service) }));
  }
  const poolRef = at(schedulerNow, 'pool.ref.name');
  if (isValuesMap(http) && isSet(schedulerNow) && typeof poolRef === 'string' && poolRef !== '') backendRefs((ref) => (ref.name = poolRef));
  if (isSet(at(schedulerNow, 'config.ref'))) notModelled('router.scheduler.config.ref (a ConfigMap resolved inline)');
  const epp = at(spec, 'router.scheduler.pool.spec.endpointPickerRef') as Values | undefined;
  if (isValuesMap(epp) && !(Number(at(epp, 'port.number') ?? 0) > 0) && (epp.kind === 'Service' || !epp.kind)) epp.port = { number: 9002 };
  return { spec, applied };
}

/** Go fields the v0.20 configs' templates name, by their JSON keys (v1alpha2 types; corev1 ObjectMeta). */
const GO_FIELDS: Record<string, GoField> = {
  ObjectMeta: { json: 'metadata', kind: 'struct' },
  Spec: { json: 'spec', kind: 'struct' },
  GlobalConfig: { json: 'GlobalConfig', kind: 'struct' },
  Model: { json: 'model', kind: 'struct' },
  Name: { json: 'name', kind: 'value' },
  Namespace: { json: 'namespace', kind: 'value' },
  Parallelism: { json: 'parallelism', kind: 'pointer' },
  Tensor: { json: 'tensor', kind: 'pointer' },
  Pipeline: { json: 'pipeline', kind: 'pointer' },
  Data: { json: 'data', kind: 'pointer' },
  DataLocal: { json: 'dataLocal', kind: 'pointer' },
  DataRPCPort: { json: 'dataRPCPort', kind: 'pointer' },
  Expert: { json: 'expert', kind: 'value' },
  Prefill: { json: 'prefill', kind: 'pointer' },
  Template: { json: 'template', kind: 'pointer' },
  Worker: { json: 'worker', kind: 'pointer' },
  KVCacheOffloading: { json: 'kvCacheOffloading', kind: 'pointer' },
};

/** A resource.Quantity's Value() (rounded up to a whole number): plain, SI and binary suffixes. */
function quantityValue(quantity: unknown): number {
  const match = /^([0-9.]+(?:[eE][-+]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?$/.exec(String(quantity));
  if (!match) notModelled(`the quantity ${String(quantity)}`);
  const scale: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, m: 1e-3 };
  return Math.ceil(Number(match[1]) * (match[2] ? scale[match[2]]! : 1));
}

/** Go's json.Marshal of a map: keys sorted, no spaces. */
function goMarshal(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goMarshal).join(',')}]`;
  if (isValuesMap(value)) return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${goMarshal(value[k])}`).join(',')}}`;
  return JSON.stringify(value);
}

/**
 * ReplaceVariables (config_merge.go): the merged spec marshalled to JSON, executed as a Go template
 * whose data is the LLMInferenceService (its own spec, the model name resolved) and the global
 * config, with the functions ChildName, kvTransferConfig and shutdownTimeout, then unmarshalled.
 */
export function replaceVariablesV020(service: KserveService, merged: Values, global: KserveGlobalConfig = KSERVE_V020_DEFAULTS): Values {
  const poolName = inferencePoolName(service, merged);
  const root = {
    metadata: { name: service.metadata.name, namespace: service.metadata.namespace },
    spec: service.spec,
    GlobalConfig: {
      SystemNamespace: KSERVE_NAMESPACE,
      IngressGatewayName: global.ingressGatewayName,
      IngressGatewayNamespace: global.ingressGatewayNamespace,
      EnableTLS: global.enableTLS,
      ModelBasedRoutingHeaderName: global.modelBasedRoutingHeaderName,
      InferencePoolNamespacedName: `${service.metadata.namespace}/${poolName}`,
    },
  };
  const text = executeGoTemplate(JSON.stringify(merged), {
    root,
    field: (name, path) => {
      if (path[0] === 'GlobalConfig' && path.length === 1) {
        if (!(name in root.GlobalConfig)) throw new Error(`GlobalConfig has no field ${name}`);
        return { json: name, kind: 'value' };
      }
      const field = GO_FIELDS[name];
      if (!field) throw new Error(`the Go field ${[...path, name].join('.')} is not mapped to JSON here (GO_FIELDS)`);
      return field;
    },
    funcs: {
      ChildName: (parent, suffix) => childName(String(parent), String(suffix)),
      kvTransferConfig: (spec) => {
        if (!isValuesMap(spec)) return '';
        const extra: Values = { spec_name: 'TieringOffloadingSpec', cpu_bytes_to_use: quantityValue(spec.cpu) };
        if (spec.evictionPolicy) extra.eviction_policy = spec.evictionPolicy;
        const tiers = ((spec.secondary as Values[] | undefined) ?? []).flatMap((s, i) => (isValuesMap(s.fileSystem) ? [{ type: 'fs', root_dir: `/mnt/kv-cache-${i}` }] : []));
        if (tiers.length > 0) extra.secondary_tiers = tiers;
        const json = goMarshal({ kv_connector: 'OffloadingConnector', kv_role: 'kv_both', kv_connector_extra_config: extra });
        return `--kv-transfer-config '${json.replaceAll('"', '\\\\\\"')}'`;
      },
      shutdownTimeout: (spec, preStop) => {
        const grace = isValuesMap(spec) && typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 60;
        return Math.max(0, grace - Number(preStop) - Math.min(5, grace));
      },
    },
  });
  return JSON.parse(text) as Values;
}

/** The labels of the v0.20 single-node workload (singleNodeLabels + component + role: workload_single_node.go). */
export function workloadLabelsV020(service: KserveService, merged: Values): Record<string, string> {
  return {
    'app.kubernetes.io/component': 'llminferenceservice-workload',
    'app.kubernetes.io/name': service.metadata.name,
    'app.kubernetes.io/part-of': 'llminferenceservice',
    'kserve.io/component': 'workload',
    'llm-d.ai/role': isSet(merged.prefill) ? 'decode' : 'both',
  };
}

/** The annotation that marks presets deployed with the model-routing served name (router.go). */
export const MODEL_BASED_ROUTING_ANNOTATION = 'serving.kserve.io/model-based-routing-enabled';

const ownerReference = (service: KserveService) =>
  service.metadata.uid ? [{ apiVersion: 'serving.kserve.io/v1alpha2', kind: 'LLMInferenceService', name: service.metadata.name, uid: service.metadata.uid, controller: true, blockOwnerDeletion: true }] : undefined;

/** utils.PropagatePrefixedMap: the entries of `source` whose key starts with one of `prefixes`. */
function prefixed(source: Record<string, string> | undefined, prefixes: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(source ?? {}).filter(([k]) => prefixes.some((p) => k.startsWith(p))));
}

/**
 * The single-node workload Deployment `<name>-kserve` of v0.20 (workload_single_node.go,
 * expectedSingleNodeMainDeployment): labels and selector, `replicas`, the merged `template` as the
 * pod spec, the model attached to container `main` at /mnt/models (attachModelArtifacts: for
 * `pvc://` the claim read-only with its subPath, and no storage-initializer), the service's approved
 * metadata (propagateDeploymentMetadata), `spec.labels` and `spec.annotations` on the pods (the
 * model-routing annotation left out).
 */
export function workloadDeploymentV020(service: KserveService, merged: Values): Values {
  if (isSet(merged.worker)) notModelled('multi-node workloads (LeaderWorkerSet)');
  if (isSet(merged.prefill)) notModelled('prefill/decode workloads');
  if (isSet(merged.tracing)) notModelled('tracing (injectServerTracing)');
  if (isSet(merged.kvCacheOffloading)) notModelled('KV-cache offloading tiers');
  if (Array.isArray(at(merged, 'model.lora.adapters')) && (at(merged, 'model.lora.adapters') as unknown[]).length > 0) notModelled('LoRA adapters (attachMultiStorageDownloads)');
  if (at(merged, 'storageInitializer.enabled') === false) notModelled('storageInitializer.enabled: false');
  const labels = workloadLabelsV020(service, merged);
  const pod = structuredClone((merged.template as Values | undefined) ?? {});
  const initContainers = (pod.initContainers as Values[] | undefined) ?? [];
  if (initContainers.some((c) => c.name === 'llm-d-routing-sidecar')) notModelled('the routing sidecar');
  const uri = String(at(merged, 'model.uri'));
  if (!uri.startsWith('pvc://')) notModelled(`model URIs other than pvc:// (${uri})`);
  attachPvc(pod, uri, 'main', '/mnt/models');
  // extractAndStripStorageInitializer (workload_storage.go): a pvc:// model without LoRA needs none.
  if (initContainers.some((c) => c.name === 'storage-initializer')) pod.initContainers = initContainers.filter((c) => c.name !== 'storage-initializer');
  const approvedAnnotations = ['k8s.v1.cni.cncf.io', 'kueue.x-k8s.io', 'prometheus.io', 'internal.serving.kserve.io/localmodel'];
  const approvedLabels = ['kueue.x-k8s.io', 'internal.serving.kserve.io/localmodel'];
  const passed = Object.fromEntries(['prometheus.io/scrape', 'prometheus.io/port', 'prometheus.io/path', 'prometheus.io/scheme'].filter((k) => service.metadata.annotations?.[k] !== undefined).map((k) => [k, service.metadata.annotations![k]!]));
  const specAnnotations = Object.fromEntries(Object.entries((merged.annotations as Record<string, string> | undefined) ?? {}).filter(([k]) => k !== MODEL_BASED_ROUTING_ANNOTATION));
  const owner = ownerReference(service);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: childName(service.metadata.name, '-kserve'),
      namespace: service.metadata.namespace,
      labels: { ...labels, ...prefixed(service.metadata.labels, approvedLabels) },
      ...(Object.keys(prefixed(service.metadata.annotations, approvedAnnotations)).length > 0 && { annotations: prefixed(service.metadata.annotations, approvedAnnotations) }),
      ...(owner && { ownerReferences: owner }),
    },
    spec: {
      ...(isSet(merged.replicas) && { replicas: merged.replicas }),
      selector: { matchLabels: labels },
      template: {
        metadata: {
          labels: { ...labels, ...prefixed(service.metadata.labels, approvedLabels), ...((merged.labels as Record<string, string> | undefined) ?? {}) },
          annotations: { ...passed, ...prefixed(service.metadata.annotations, approvedAnnotations), ...specAnnotations },
        },
        spec: pod,
      },
    },
  };
}

/** attachPVCModelArtifact / utils.AddModelMount (workload_storage.go, pkg/utils/storage.go): the volume `kserve-pvc-source`. */
function attachPvc(pod: Values, uri: string, container: string, mountPath: string): void {
  const [claim, ...rest] = uri.slice('pvc://'.length).split('/');
  const target = ((pod.containers as Values[] | undefined) ?? []).find((c) => c.name === container);
  if (!target) return;
  const mounts = (target.volumeMounts as Values[] | undefined) ?? [];
  if (!mounts.some((m) => m.name === 'kserve-pvc-source')) target.volumeMounts = [...mounts, { name: 'kserve-pvc-source', mountPath, subPath: rest.join('/'), readOnly: true }];
  const volumes = (pod.volumes as Values[] | undefined) ?? [];
  if (!volumes.some((v) => v.name === 'kserve-pvc-source')) pod.volumes = [...volumes, { name: 'kserve-pvc-source', persistentVolumeClaim: { claimName: claim } }];
}

/** The workload Service `<name>-kserve-workload-svc` (workload.go, reconcileWorkloadService): port 8000 to 8000, http unless TLS. */
export function workloadServiceV020(service: KserveService, merged: Values, global: KserveGlobalConfig = KSERVE_V020_DEFAULTS): Values {
  const protocol = global.enableTLS ? 'https' : 'http';
  const owner = ownerReference(service);
  const annotations = Object.fromEntries(Object.entries((merged.annotations as Record<string, string> | undefined) ?? {}).filter(([k]) => k !== MODEL_BASED_ROUTING_ANNOTATION));
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: workloadServiceName(service),
      namespace: service.metadata.namespace,
      labels: { 'app.kubernetes.io/component': 'llminferenceservice-workload', 'app.kubernetes.io/name': service.metadata.name, 'app.kubernetes.io/part-of': 'llminferenceservice', ...((merged.labels as Record<string, string> | undefined) ?? {}) },
      ...(Object.keys(annotations).length > 0 && { annotations }),
      ...(owner && { ownerReferences: owner }),
    },
    spec: { type: 'ClusterIP', selector: workloadSelector(service), ports: [{ name: protocol, protocol: 'TCP', appProtocol: protocol, port: 8000, targetPort: 8000 }] },
  };
}

/** Whether a match is a model-routing one (router_discovery.go, isModelBasedRoutingMatch). */
function isModelRoutingMatch(match: Values, header: string): boolean {
  return header !== '' && ((match.headers as Values[] | undefined) ?? []).some((h) => h.name === header);
}

/**
 * The managed HTTPRoute `<name>-kserve-route` of v0.20 (router.go, expectedHTTPRoute): the merged
 * `router.route.http.spec`, labelled RouterLabels; its model-routing rules kept only when model-based
 * routing is on (isModelBasedRoutingEnabled: the header configured, the merged spec annotated
 * `serving.kserve.io/model-based-routing-enabled: "true"`, the mode not disabled, and — in mode
 * enabled — no referenced Gateway annotated "false"), else stripped (stripModelBasedRoutingRules).
 * Null when the service has no route spec. With a managed scheduler the backends' group is chosen by
 * the InferencePool migration, which is not modelled.
 */
export function httpRouteV020(service: KserveService, merged: Values, gateways: readonly Values[], global: KserveGlobalConfig = KSERVE_V020_DEFAULTS): Values | null {
  const http = at(merged, 'router.route.http.spec');
  if (!isValuesMap(http)) return null;
  if (isSet(at(merged, 'router.route.group'))) notModelled('routing groups');
  const header = global.modelBasedRoutingHeaderName;
  const annotated = at(merged, 'annotations') as Record<string, string> | undefined;
  const enabled =
    header !== '' &&
    annotated?.[MODEL_BASED_ROUTING_ANNOTATION] === 'true' &&
    global.modelBasedRoutingMode !== 'disabled' &&
    (global.modelBasedRoutingMode === 'forced' || !gateways.some((g) => (at(g, 'metadata.annotations') as Record<string, string> | undefined)?.[MODEL_BASED_ROUTING_ANNOTATION] === 'false'));
  const spec = structuredClone(http);
  if (!enabled) {
    spec.rules = ((spec.rules as Values[] | undefined) ?? []).flatMap((rule) => {
      const kept = ((rule.matches as Values[] | undefined) ?? []).filter((m) => !isModelRoutingMatch(m, header));
      return kept.length > 0 ? [{ ...rule, matches: kept }] : [];
    });
  } else if (Array.isArray(at(merged, 'model.lora.adapters'))) notModelled('LoRA adapters in model-routing matches (expandLoRAAdapterMatches)');
  if (isSet(at(merged, 'router.scheduler')) && !isSet(at(merged, 'router.scheduler.pool.ref.name'))) notModelled('the InferencePool API group migration of a managed scheduler');
  const owner = ownerReference(service);
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: {
      name: childName(service.metadata.name, '-kserve-route'),
      namespace: service.metadata.namespace,
      labels: { 'app.kubernetes.io/component': 'llminferenceservice-router', 'app.kubernetes.io/name': service.metadata.name, 'app.kubernetes.io/part-of': 'llminferenceservice' },
      ...(owner && { ownerReferences: owner }),
    },
    spec,
  };
}

/** A knative condition as the v0.20 status holds it. */
export interface KserveCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason?: string;
  readonly message?: string;
}

/** What the status of a v0.20 service is computed from: the objects as the cluster has them now. */
export interface ObservedV020 {
  /** The workload Deployment (its status), or null. */
  readonly deployment: Values | null;
  /** The managed HTTPRoute as the cluster has it (its status), or null. */
  readonly route: Values | null;
  /** The Gateways the route's parents name, with their GatewayClass (as DiscoverGateways finds them). */
  readonly gateways: readonly Values[];
  /** A Gateway's backing Service (DiscoverGatewayService: labelled `gateway.networking.k8s.io/gateway-name` in its namespace, else the one named like it), or null. */
  readonly backingService: (gateway: Values) => Values | null;
}

/** Where a route's clients go (router_discovery.go, extractRoutePaths): the shallowest path of each kind, path-based, publisher and model-routing. */
function routePaths(route: Values, header: string): string[] {
  const buckets = { pathBased: { svc: [] as string[], other: [] as string[] }, publisher: { svc: [] as string[], other: [] as string[] }, modelRouting: { svc: [] as string[], other: [] as string[] } };
  for (const rule of (at(route, 'spec.rules') as Values[] | undefined) ?? []) {
    const svc = ((rule.backendRefs as Values[] | undefined) ?? []).some((r) => (r.kind ?? 'Service') === 'Service');
    for (const match of (rule.matches as Values[] | undefined) ?? []) {
      const path = String(at(match, 'path.value') ?? '/');
      const headers = (match.headers as Values[] | undefined) ?? [];
      const bucket = headers.length === 0 ? (path.startsWith('/publishers/') ? buckets.publisher : buckets.pathBased) : isModelRoutingMatch(match, header) ? buckets.modelRouting : null;
      if (bucket) (svc ? bucket.svc : bucket.other).push(path);
    }
  }
  const depth = (a: string, b: string) => a.split('/').length - b.split('/').length || a.length - b.length;
  const shallowest = (b: { svc: string[]; other: string[] }) => [...(b.svc.length ? b.svc : b.other)].sort(depth)[0];
  const found = [shallowest(buckets.pathBased), shallowest(buckets.publisher), shallowest(buckets.modelRouting)].filter((p): p is string => p !== undefined);
  if (found.length === 0) return ['/'];
  return [...new Set(found.sort(depth))];
}

const schemeOf = (protocol: unknown) => (protocol === 'HTTP' ? 'http' : protocol === 'HTTPS' ? 'https' : '');
const isPrivateIp = (host: string) => /^(10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.)/.test(host) || /^f[cd][0-9a-f]{2}:/i.test(host);
const isInternalHost = (host: string) => isPrivateIp(host) || ['cluster.local', '.local', '.localhost', '.internal'].some((s) => host.toLowerCase().endsWith(s)) || host === 'localhost';

/**
 * The addresses v0.20 reports for a route (router_discovery.go, DiscoverURLs; router.go,
 * updateRoutingStatus): for each path and each HTTP(S) listener of each parent Gateway, a URL per
 * address of the Gateway's status (the standard port left out), and one on the Gateway's backing
 * Service's cluster name when a Service port matches the listener; sorted; `status.url` the first
 * external one under `/<namespace>/<name>`, or — none external — the first under it of the
 * configured scheme.
 */
export function discoverUrlsV020(service: KserveService, merged: Values, route: Values, observed: Pick<ObservedV020, 'gateways' | 'backingService'>, global: KserveGlobalConfig = KSERVE_V020_DEFAULTS): { url: string | null; addresses: Values[] } {
  const header = global.modelBasedRoutingHeaderName;
  const found: { url: string; origin: Values }[] = [];
  for (const gateway of observed.gateways) {
    const listeners = ((at(gateway, 'spec.listeners') as Values[] | undefined) ?? []).filter((l) => schemeOf(l.protocol) !== '');
    const rank = (l: Values) => (schemeOf(l.protocol) === global.urlScheme ? 0 : schemeOf(l.protocol) === 'https' ? 1 : 2);
    listeners.sort((a, b) => rank(a) - rank(b));
    const origin = { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: at(gateway, 'metadata.name'), namespace: at(gateway, 'metadata.namespace') };
    const addresses = ((at(gateway, 'status.addresses') as Values[] | undefined) ?? []).map((a) => String(a.value ?? '')).filter(Boolean);
    const backing = observed.backingService(gateway);
    const seen = new Set<string>();
    const url = (scheme: string, host: string, port: number, path: string) => `${scheme}://${host.includes(':') ? `[${host}]` : host}${(scheme === 'http' && port !== 80) || (scheme === 'https' && port !== 443) ? `:${port}` : ''}${path}`;
    for (const path of routePaths(route, header)) {
      if (addresses.length > 0) {
        for (const listener of listeners) {
          const routeHosts = ((at(route, 'spec.hostnames') as string[] | undefined) ?? []).filter((h) => h !== '' && h !== '*');
          const listenerHost = typeof listener.hostname === 'string' && listener.hostname ? (listener.hostname.startsWith('*.') ? `inference.${listener.hostname.slice(2)}` : listener.hostname) : undefined;
          const hosts = routeHosts.length > 0 ? routeHosts : listenerHost ? [listenerHost] : addresses;
          for (const host of [...hosts].sort()) {
            const u = url(schemeOf(listener.protocol), host, Number(listener.port), path);
            seen.add(u);
            found.push({ url: u, origin });
          }
        }
      }
      if (backing) {
        const host = `${at(backing, 'metadata.name')}.${at(backing, 'metadata.namespace')}.svc.cluster.local`;
        const ports = ((at(backing, 'spec.ports') as Values[] | undefined) ?? []).map((p) => Number(p.port));
        for (const listener of listeners) {
          if (ports.length > 0 && !ports.includes(Number(listener.port))) continue;
          const u = url(schemeOf(listener.protocol), host, Number(listener.port), path);
          if (seen.has(u)) continue;
          seen.add(u);
          found.push({ url: u, origin });
        }
      }
    }
  }
  found.sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  const prefix = `/${service.metadata.namespace}/${service.metadata.name}`;
  const pathOf = (u: string) => new URL(u).pathname;
  const prefer = (list: typeof found, scheme: string) => {
    if (list.length === 0) return null;
    const under = list.filter((d) => pathOf(d.url).startsWith(prefix));
    return (under.find((d) => scheme !== '' && d.url.startsWith(`${scheme}://`)) ?? under[0] ?? list[0]!).url;
  };
  const external = found.filter((d) => !isInternalHost(new URL(d.url).hostname.replace(/^\[|\]$/g, '')));
  const statusUrl = external.length > 0 ? prefer(external, '') : prefer(found, global.urlScheme);
  const model = String(at(merged, 'model.name') ?? service.metadata.name);
  const qualified = `publishers/${service.metadata.namespace}/models/${model}`;
  const addresses = found.map((d) => {
    const host = new URL(d.url).hostname;
    let name = host.toLowerCase().endsWith('cluster.local') ? 'gateway-internal' : isInternalHost(host.replace(/^\[|\]$/g, '')) ? 'internal' : 'gateway-external';
    const routing = pathOf(d.url) === '/' || pathOf(d.url) === '';
    if (routing) name += '-model-routing';
    return { name, url: d.url, origin: d.origin, models: routing ? [{ name: qualified }] : [{ name: qualified }, { name: model }] };
  });
  return { url: statusUrl, addresses };
}

/**
 * The status of a v0.20 single-node service without a scheduler (llm_inference_service_lifecycle.go
 * and the reconcilers that mark each condition): PresetsCombined; MainWorkloadReady from the
 * Deployment's Available condition (propagateDeploymentStatus), rolled into WorkloadsReady;
 * GatewaysReady (every referenced Gateway Programmed) and HTTPRoutesReady (every parent accepted the
 * route, its refs resolved, at its generation), rolled into RouterReady; Ready when both are
 * (Knative's living condition set); `url` and `addresses` ({@link discoverUrlsV020}); the applied configs.
 */
export function statusV020(service: KserveService, merged: Values, applied: readonly AppliedConfigRef[], expectedRoute: Values | null, observed: ObservedV020, global: KserveGlobalConfig = KSERVE_V020_DEFAULTS): Values {
  if (isSet(at(merged, 'router.scheduler'))) notModelled('the status of a service with a scheduler (InferencePoolReady, SchedulerWorkloadReady)');
  const conditions: KserveCondition[] = [{ type: 'PresetsCombined', status: 'True' }];
  const deploymentConditions = (at(observed.deployment, 'status.conditions') as Values[] | undefined) ?? [];
  const available = deploymentConditions.find((c) => c.type === 'Available');
  const progressing = deploymentConditions.find((c) => c.type === 'Progressing' && c.status === 'False');
  const main: KserveCondition = available?.status === 'True'
    ? { type: 'MainWorkloadReady', status: 'True' }
    : available
      ? { type: 'MainWorkloadReady', status: 'False', reason: String(available.reason ?? ''), message: String(available.message ?? '') }
      : progressing
        ? { type: 'MainWorkloadReady', status: 'False', reason: String(progressing.reason ?? ''), message: String(progressing.message ?? '') }
        : { type: 'MainWorkloadReady', status: 'False', reason: 'Progressing' };
  conditions.push(main, rollUp('WorkloadsReady', [main]));
  const router: KserveCondition[] = [];
  if (Array.isArray(at(merged, 'router.gateway.refs')) && (at(merged, 'router.gateway.refs') as unknown[]).length > 0) {
    const notReady = observed.gateways.filter((g) => ((at(g, 'status.conditions') as Values[] | undefined) ?? []).find((c) => c.type === 'Programmed')?.status !== 'True');
    router.push(notReady.length === 0 ? { type: 'GatewaysReady', status: 'True' } : { type: 'GatewaysReady', status: 'False', reason: 'GatewaysNotReady', message: `The following Gateways are not ready: [${notReady.map((g) => `${at(g, 'metadata.namespace')}/${at(g, 'metadata.name')}`).join(' ')}]` });
  }
  if (isValuesMap(at(merged, 'router.route.http'))) {
    const route = observed.route;
    router.push(route && routeReady(route) ? { type: 'HTTPRoutesReady', status: 'True' } : { type: 'HTTPRoutesReady', status: 'False', reason: 'HTTPRoutesNotReady', message: `The following HTTPRoutes are not ready: [${at(route, 'metadata.namespace') ?? service.metadata.namespace}/${at(route, 'metadata.name') ?? childName(service.metadata.name, '-kserve-route')}: ${JSON.stringify(at(route, 'status') ?? null)}]` });
  }
  conditions.push(...router, rollUp('RouterReady', router));
  const workloads = conditions.find((c) => c.type === 'WorkloadsReady')!;
  const routerReady = conditions.find((c) => c.type === 'RouterReady')!;
  conditions.push(workloads.status === 'True' && routerReady.status === 'True' ? { type: 'Ready', status: 'True' } : { type: 'Ready', status: 'False', ...(workloads.status !== 'True' ? { reason: workloads.reason, message: workloads.message } : { reason: routerReady.reason, message: routerReady.message }) });
  const urls = expectedRoute ? discoverUrlsV020(service, merged, expectedRoute, observed, global) : { url: null, addresses: [] };
  return {
    ...(urls.url !== null && { url: urls.url }),
    addresses: urls.addresses,
    conditions,
    appliedConfigRefs: applied,
  };
}

function rollUp(type: string, subconditions: readonly KserveCondition[]): KserveCondition {
  const failed = subconditions.find((c) => c.status === 'False');
  return failed ? { type, status: 'False', ...(failed.reason && { reason: failed.reason }), ...(failed.message && { message: failed.message }) } : { type, status: 'True' };
}

/** IsHTTPRouteReady (router_discovery.go): every spec parent has a status entry with Accepted, and every gateway entry is Accepted and ResolvedRefs at the route's generation. */
function routeReady(route: Values): boolean {
  const parents = (at(route, 'spec.parentRefs') as Values[] | undefined) ?? [];
  const statuses = (at(route, 'status.parents') as Values[] | undefined) ?? [];
  const generation = Number(at(route, 'metadata.generation') ?? 0);
  const ns = String(at(route, 'metadata.namespace'));
  const same = (a: Values, b: Values) =>
    a.name === b.name && (a.group ?? 'gateway.networking.k8s.io') === (b.group ?? 'gateway.networking.k8s.io') && (a.kind ?? 'Gateway') === (b.kind ?? 'Gateway') && (a.namespace ?? ns) === (b.namespace ?? ns) && (a.sectionName ?? '') === (b.sectionName ?? '') && (a.port ?? 0) === (b.port ?? 0);
  const condition = (s: Values, type: string) => ((s.conditions as Values[] | undefined) ?? []).find((c) => c.type === type);
  if (parents.length === 0 || statuses.length === 0) return false;
  if (!parents.every((p) => statuses.some((s) => same(p, s.parentRef as Values) && condition(s, 'Accepted')))) return false;
  return statuses.every((s) => {
    const accepted = condition(s, 'Accepted');
    if (!accepted) return true;
    const fresh = (c: Values | undefined) => c !== undefined && c.status === 'True' && !(Number(c.observedGeneration ?? 0) > 0 && Number(c.observedGeneration) < generation);
    return fresh(accepted) && fresh(condition(s, 'ResolvedRefs'));
  });
}
