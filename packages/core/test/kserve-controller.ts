/**
 * What KServe's LLMInferenceService controller does with our objects, as far as the pod specs go:
 * it merges the spec with its well-known LLMInferenceServiceConfigs and the spec's `baseRefs`, then
 * builds the workload and scheduler Deployments and mounts the model into them. Written from
 * kserve/kserve v0.18.1 (each step names its source) for tests that hold our plan against KServe's
 * real configs in ../shared/upstream/kserve/v0.18.1-llmisvcconfig/.
 *
 * Those files are Kustomize inputs: `kustomization.yaml` (not copied) only sets `namespace: kserve`,
 * which does not change a spec (the controller looks configs up by name, in the service's namespace
 * first, then in `kserve`). They also hold Go-template placeholders (`{{ .ObjectMeta.Name }}`, …) that
 * the controller renders after the merge (config_merge.go, ReplaceVariables); {@link renderPlaceholders}
 * renders the ones these files use and leaves any other in place, so a test that asserts "no
 * placeholder left" notices a new one instead of guessing.
 *
 * Our objects are `serving.kserve.io/v1alpha1`; the controller works on v1alpha2 (the storage
 * version), which the conversion webhook fills field for field (only `model.criticality` moves into
 * an annotation: pkg/apis/serving/v1alpha1/llm_inference_service_conversion.go), so the specs merge
 * as written.
 *
 * What this does not model: the order of merged list items (Kubernetes' strategic merge interleaves
 * them; compare by name), `$patch` directives, and everything outside the pod specs (route, pool).
 */
import { readUpstreamYaml } from '@app-serving/test-cluster';
import { effectiveValues, isValuesMap, type Values } from '../src/values/merge.ts';

/** The well-known configs at v0.18.1, by name (`metadata.name` of each upstream file). */
export function wellKnownConfigs(): Map<string, Values> {
  if (cache) return cache;
  const names = [
    'config-llm-decode-template',
    'config-llm-decode-worker-data-parallel',
    'config-llm-prefill-template',
    'config-llm-prefill-worker-data-parallel',
    'config-llm-router-route',
    'config-llm-scheduler',
    'config-llm-template',
    'config-llm-worker-data-parallel',
  ];
  const out = new Map<string, Values>();
  for (const name of names) {
    const [doc] = readUpstreamYaml(`kserve/v0.18.1-llmisvcconfig/${name}.yaml`) as Values[];
    const meta = doc!.metadata as { name: string };
    out.set(meta.name, doc!.spec as Values);
  }
  cache = out;
  return out;
}
let cache: Map<string, Values> | undefined;

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
/** The pod specs whose `containers` LLMInferenceServiceSpec.SetDefaults sets to `[]` when unset (llm_inference_service_defaults.go). */
const DEFAULTED = ['template', 'worker', 'prefill.template', 'prefill.worker'];

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
export function goJson(spec: Values, setDefaults: boolean): Values {
  const out = effectiveValues(spec);
  for (const section of POD_SPECS) {
    const pod = section.split('.').reduce<unknown>((v, k) => (isValuesMap(v) ? v[k] : undefined), out);
    if (isValuesMap(pod) && pod.containers === undefined) pod.containers = setDefaults && DEFAULTED.includes(section) ? [] : null;
  }
  return out;
}

/**
 * `mergeSpecs(base, override)` of config_merge.go: a strategic merge patch made from the zero spec to
 * `override` (after SetDefaults) and applied to `base`. The two-way patch from the zero spec is
 * `override` itself as marshalled; applying it merges maps, merges keyed PodSpec/Container lists
 * by key, replaces other lists and scalars, and deletes a key whose patch value is `null`.
 */
export function mergeSpecs(base: Values, override: Values): Values {
  return applyPatch(goJson(base, false), goJson(override, true), 'spec', []) as Values;
}

/** `MergeSpecs(cfgs...)`: left to right, the first is the base. */
export function mergeAllSpecs(specs: readonly Values[]): Values {
  return specs.slice(1).reduce((acc, spec) => mergeSpecs(acc, spec), specs[0] ?? {});
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
