import { compareText } from '../text-order.ts';
import type { Category, Platform } from '../constants.ts';
import type { ImageSource } from '../images.ts';
import type { DeploymentPlan, ModelPlan } from '../plan.ts';
import { deepEqual } from '../values/merge.ts';
import { KSERVE_RELEASES } from '../kserve/releases.ts';
import { describeAdapterSource } from '../features/adapters/plan.ts';
import { resourceIdentity } from './identity.ts';
import { groupKind, isHelmRelease, replaceVerdict } from './replace.ts';
import { diffValues, publicChange, type LocatedChange, type ValueChange } from './values.ts';

/** One resource of a rendered stack, as the diff needs it (what `renderStack` returns). */
export interface DiffResource {
  /** The Pulumi URN: a resource keeps its identity across revisions as long as its URN is the same. */
  readonly urn: string;
  /** Pulumi type token, e.g. `kubernetes:batch/v1:Job`, `kubernetes:helm.sh/v4:Chart`. */
  readonly type: string;
  /** Logical name. */
  readonly name: string;
  /** The name of the model it belongs to, or null for stack-wide resources. */
  readonly model: string | null;
  /** Inputs; secrets as `[secret]` or `[secret:<digest>]`. */
  readonly inputs: Readonly<Record<string, unknown>>;
  readonly options?: {
    readonly replaceOnChanges?: readonly string[];
    readonly deleteBeforeReplace?: boolean;
    readonly ignoreChanges?: readonly string[];
  };
}

/** One revision of a deployment: its plan (null when the stack file does not exist there) and its rendered resources. */
export interface DiffSide {
  readonly plan: DeploymentPlan | null;
  readonly resources: readonly DiffResource[];
  /** A fingerprint per secret key of the stack (`harborToken`, …), never the value: a different fingerprint means "changed". */
  readonly secrets?: Readonly<Record<string, string>>;
}

export type ResourceAction = 'create' | 'update' | 'replace' | 'delete';

/** What Pulumi would do to one resource. */
export interface ResourceChange {
  readonly action: ResourceAction;
  /** Pulumi type token. */
  readonly type: string;
  /** Logical name (the identity in the Pulumi state). */
  readonly name: string;
  /** The object as a person knows it: `Job llm-d-x/x-model-pull`, `release llm-d-x/ms-x (llm-d-modelservice)`. */
  readonly object: string;
  /** Why a replace: the fields that force it. */
  readonly reasons: readonly string[];
  /** Caveats of an update Kubernetes may refuse. */
  readonly notes: readonly string[];
  /** Set on a replace when the old object is deleted before the new one is created. */
  readonly deleteBeforeReplace?: true;
  /** Changed inputs (update, replace); a chart's values are under the model's `releases`. */
  readonly changes: readonly ValueChange[];
}

/** The merged values of one Helm release, old → new. */
export interface ReleaseValuesDiff {
  readonly release: string;
  readonly chart: string;
  readonly changes: readonly ValueChange[];
}

export interface ImagesDiff {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** The same use (a container, the pull Job) with another image. */
  readonly changed: readonly { readonly old: string; readonly new: string; readonly where: string }[];
}

export interface ModelDiff {
  readonly name: string;
  readonly category: Category;
  readonly platform: Platform;
  readonly status: 'added' | 'removed' | 'changed';
  /** The namespace after the change (before, for a removed model). */
  readonly namespace: string;
  readonly releases: readonly ReleaseValuesDiff[];
  readonly images: ImagesDiff;
  readonly resources: readonly ResourceChange[];
}

export type DiffWarningCode = 'model.removed' | 'pods.restart' | 'weights.changed' | 'adapters.changed' | 'namespace.renamed' | 'provider.changed' | 'secret.changed' | 'images.mirror-first';

export interface DiffWarning {
  readonly code: DiffWarningCode;
  /** The model concerned, or null for the whole stack. */
  readonly model: string | null;
  readonly message: string;
}

export interface DiffSummary {
  readonly create: number;
  readonly update: number;
  readonly replace: number;
  readonly delete: number;
  /** Models on both sides with nothing to change. */
  readonly unchangedModels: number;
}

/** Everything that differs between two revisions of a deployment, and what Pulumi would do about it. */
export interface DeploymentDiff {
  /** True when anything differs (a resource to change, or a secret). */
  readonly changed: boolean;
  /** Counts of Pulumi resources by action (components that only group others are not counted), and of unchanged models. */
  readonly summary: DiffSummary;
  /** Models added, removed or changed, by name; unchanged models are left out. */
  readonly models: readonly ModelDiff[];
  /** Stack-wide resources (the Kubernetes provider, the KServe gateway) and the stack's secrets. */
  readonly stack: {
    readonly resources: readonly ResourceChange[];
    readonly secrets: readonly { readonly key: string; readonly change: 'added' | 'removed' | 'changed' }[];
  };
  readonly warnings: readonly DiffWarning[];
}

/** Options of {@link diffDeployments}. */
export interface DiffOptions {
  /**
   * Whether the Kubernetes provider runs with `enableSecretMutable` (e.g. `PULUMI_K8S_ENABLE_SECRET_MUTABLE=true`
   * where `pulumi up` runs). Also true when the rendered provider sets it.
   * @default false
   */
  readonly secretMutable?: boolean;
}

/**
 * Compares two revisions of a deployment, offline: which models are added, removed or changed;
 * per Helm release the merged values by key path; the images; per resource what Pulumi would do
 * (create, update, replace — and why — or delete); and warnings for changes that restart model
 * pods, re-pull weights or remove a model. Generic over the plan and the rendered resources:
 * resources are matched by URN and their inputs compared field by field. The sides may hold the
 * resources of some models only (those whose plans differ): a model with no resource changes and
 * no image changes counts as unchanged.
 */
export function diffDeployments(base: DiffSide, head: DiffSide, options: DiffOptions = {}): DeploymentDiff {
  const secretMutable = options.secretMutable === true || [...base.resources, ...head.resources].some((r) => r.type === 'pulumi:providers:kubernetes' && r.inputs.enableSecretMutable === true);
  // Matched by identity: the URN, with the type aliases the components declare (a model moving
  // between sets keeps its alias Service; a KServe model its LLMInferenceService).
  const before = new Map(base.resources.map((r) => [resourceIdentity(r.urn), r]));
  const after = new Map(head.resources.map((r) => [resourceIdentity(r.urn), r]));
  const counts = { create: 0, update: 0, replace: 0, delete: 0 };
  const byModel = new Map<string | null, ResourceChange[]>();
  const releaseDiffs = new Map<string, ReleaseValuesDiff[]>();
  const record = (model: string | null, change: ResourceChange) => {
    counts[change.action] += 1;
    byModel.set(model, [...(byModel.get(model) ?? []), change]);
  };

  for (const r of head.resources) {
    if (isGrouping(r)) continue;
    const old = before.get(resourceIdentity(r.urn));
    if (!old) {
      record(r.model, resourceChange('create', r, [], { reasons: [], notes: [] }));
      continue;
    }
    const all = diffValues(old.inputs, r.inputs);
    const ignored = r.options?.ignoreChanges ?? [];
    const changes = all.filter((c) => !ignored.some((field) => c.path === field || c.path.startsWith(`${field}.`) || c.path.startsWith(`${field}[`)));
    if (changes.length === 0) continue;
    const verdict = replaceVerdict({ type: r.type, inputs: r.inputs, replaceOnChanges: r.options?.replaceOnChanges ?? [], secretMutable }, changes);
    const action = verdict.reasons.length > 0 ? 'replace' : 'update';
    const shown = isHelmRelease(r.type) ? changes.filter((c) => c.segments[0] !== 'values') : changes;
    record(r.model, resourceChange(action, r, shown, verdict));
    if (isHelmRelease(r.type)) {
      const values = diffValues(old.inputs.values ?? {}, r.inputs.values ?? {});
      if (values.length > 0 && r.model !== null) {
        const list = releaseDiffs.get(r.model) ?? [];
        list.push({ release: String(r.inputs.name ?? r.name), chart: String(r.inputs.chart ?? ''), changes: values.map(publicChange) });
        releaseDiffs.set(r.model, list);
      }
    }
  }
  for (const r of base.resources) {
    if (isGrouping(r) || after.has(resourceIdentity(r.urn))) continue;
    record(r.model, resourceChange('delete', r, [], { reasons: [], notes: [] }));
  }

  const warnings: DiffWarning[] = [];
  const models = modelDiffs(base, head, byModel, releaseDiffs, warnings);
  const secrets = secretChanges(base.secrets ?? {}, head.secrets ?? {});
  for (const secret of secrets) {
    warnings.push({
      code: 'secret.changed',
      model: null,
      message: `${secret.key} is ${secret.change} in the stack file (a secret: its value is never shown; a re-encrypted but equal value also counts as changed)`,
    });
  }
  const provider = (byModel.get(null) ?? []).find((c) => c.type === 'pulumi:providers:kubernetes' && c.action === 'update');
  if (provider) {
    warnings.push({
      code: 'provider.changed',
      model: null,
      message: `the Kubernetes provider changes (${provider.changes.map((c) => c.path).join(', ')}): when the kubeconfig now points at another cluster, Pulumi replaces every resource of the stack`,
    });
  }
  const both = (head.plan?.models ?? []).filter((m) => base.plan?.models.some((o) => o.name === m.name)).length;
  const summary: DiffSummary = { ...counts, unchangedModels: both - models.filter((m) => m.status === 'changed').length };
  return {
    changed: summary.create + summary.update + summary.replace + summary.delete > 0 || secrets.length > 0,
    summary,
    models,
    stack: { resources: byModel.get(null) ?? [], secrets },
    warnings,
  };
}

/** Components of our own that only group others: Pulumi registers them, but nothing in the cluster changes with them. */
function isGrouping(resource: DiffResource): boolean {
  return !resource.type.startsWith('kubernetes:') && !resource.type.startsWith('pulumi:');
}

function resourceChange(action: ResourceAction, r: DiffResource, changes: readonly LocatedChange[], verdict: { reasons: string[]; notes: string[] }): ResourceChange {
  return {
    action,
    type: r.type,
    name: r.name,
    object: describeObject(r),
    reasons: verdict.reasons,
    notes: verdict.notes,
    ...(action === 'replace' && r.options?.deleteBeforeReplace === true && { deleteBeforeReplace: true as const }),
    changes: changes.map(publicChange),
  };
}

/** `Job llm-d-x/x-model-pull`, `release llm-d-x/ms-x (llm-d-modelservice)`, `provider app-serving-provider`. */
export function describeObject(r: Pick<DiffResource, 'type' | 'name' | 'inputs'>): string {
  if (isHelmRelease(r.type)) {
    const ns = typeof r.inputs.namespace === 'string' ? `${r.inputs.namespace}/` : '';
    return `release ${ns}${String(r.inputs.name ?? r.name)} (${String(r.inputs.chart ?? 'chart')})`;
  }
  if (r.type.startsWith('pulumi:providers:')) return `provider ${r.name}`;
  if (r.type.startsWith('kubernetes:')) {
    const { kind } = groupKind(r);
    const meta = (r.inputs.metadata ?? {}) as { name?: unknown; namespace?: unknown };
    const name = typeof meta.name === 'string' ? meta.name : r.name;
    return `${kind} ${typeof meta.namespace === 'string' ? `${meta.namespace}/` : ''}${name}`;
  }
  return `${r.type} ${r.name}`;
}

function modelDiffs(
  base: DiffSide,
  head: DiffSide,
  byModel: ReadonlyMap<string | null, ResourceChange[]>,
  releaseDiffs: ReadonlyMap<string, ReleaseValuesDiff[]>,
  warnings: DiffWarning[],
): ModelDiff[] {
  const oldModels = new Map((base.plan?.models ?? []).map((m) => [m.name, m]));
  const newModels = new Map((head.plan?.models ?? []).map((m) => [m.name, m]));
  const names = [...new Set([...oldModels.keys(), ...newModels.keys()])].sort();
  const out: ModelDiff[] = [];
  for (const name of names) {
    const old = oldModels.get(name);
    const now = newModels.get(name);
    const model = (now ?? old)!;
    const resources = byModel.get(name) ?? [];
    const images = imagesDiff(old, now);
    const releases = releaseDiffs.get(name) ?? [];
    const status = !old ? 'added' : !now ? 'removed' : 'changed';
    if (status === 'changed' && resources.length === 0 && images.added.length + images.removed.length + images.changed.length === 0) continue;
    out.push({ name, category: model.category, platform: model.platform, status, namespace: model.namespace, releases, images, resources });
    warnings.push(...modelWarnings(old, now, resources, releases));
    const mirrorFirst = [...new Set([...images.added, ...images.changed.map((c) => c.new)])].sort();
    if (now && mirrorFirst.length > 0 && head.plan?.cloudProvider === 'on-prem' && head.plan.harbor !== null) {
      warnings.push({
        code: 'images.mirror-first',
        model: name,
        message: `images to mirror first: ${mirrorFirst.join(', ')} — copy ${mirrorFirst.length === 1 ? 'it' : 'them'} into Harbor before pulumi up (\`app-serving images\` prints the commands); an air-gapped cluster cannot pull ${mirrorFirst.length === 1 ? 'it' : 'them'} from anywhere else, and the new pods would wait in ImagePullBackOff`,
      });
    }
  }
  return out;
}

/** Images by where they are used (the model folder's path left out, so that two checkouts compare). */
function imagesDiff(old: ModelPlan | undefined, now: ModelPlan | undefined): ImagesDiff {
  const uses = (m: ModelPlan | undefined) => new Map((m?.images ?? []).map((s: ImageSource) => [s.where.split(m!.folder).join('<model>'), s.image]));
  const before = uses(old);
  const after = uses(now);
  const changed: { old: string; new: string; where: string }[] = [];
  for (const [where, image] of after) {
    const was = before.get(where);
    if (was !== undefined && was !== image) changed.push({ old: was, new: image, where: where.split('<model>').join(now!.folder) });
  }
  const oldSet = new Set(before.values());
  const newSet = new Set(after.values());
  const paired = new Set(changed.flatMap((c) => [c.old, c.new]));
  return {
    added: [...newSet].filter((i) => !oldSet.has(i) && !paired.has(i)).sort(),
    removed: [...oldSet].filter((i) => !newSet.has(i) && !paired.has(i)).sort(),
    changed: changed.sort((a, b) => compareText(a.where, b.where)),
  };
}

/** Warnings for changes an operator must know about before `pulumi up`: restarts, re-pulls, removals. */
function modelWarnings(old: ModelPlan | undefined, now: ModelPlan | undefined, resources: readonly ResourceChange[], releases: readonly ReleaseValuesDiff[]): DiffWarning[] {
  const name = (now ?? old)!.name;
  const out: DiffWarning[] = [];
  const warn = (code: DiffWarningCode, message: string) => out.push({ code, model: name, message });
  if (old && !now) {
    warn('model.removed', `removed: its endpoint, model pods and Kubernetes objects are deleted (${resources.length} resources)`);
    return out;
  }
  if (!old || !now) return out;
  const moved = setMove(old, now, resources);
  if (moved) warn('pods.restart', moved);
  if (old.namespace !== now.namespace) {
    const weights = !now.storage
      ? ''
      : now.storage.hostPath
        ? `; the hostPath volume on ${now.storage.hostPath.node} keeps the weights`
        : '; the new claim gets a new, empty volume: the weights are pulled again';
    warn('namespace.renamed', `namespace ${old.namespace} → ${now.namespace}: every object of the model is re-created there and the old namespace is deleted with everything in it${weights}`);
  }
  const oldWeights = weightsOf(old);
  const newWeights = weightsOf(now);
  if (oldWeights !== null && newWeights !== null && !deepEqual(oldWeights, newWeights)) {
    warn('weights.changed', `new weights (${describeWeights(oldWeights)} → ${describeWeights(newWeights)}): the pull Job runs again, then the model pods restart`);
  } else if (oldWeights === null && newWeights !== null) {
    warn('weights.changed', `weights now come from ${describeWeights(newWeights)}: the model pods restart once the pull Job has finished`);
  }
  const adapters = adapterChanges(old, now);
  if (adapters) warn('adapters.changed', adapters);
  const server = moved ? [] : modelServerChanges(now, resources, releases);
  if (server.length > 0) {
    const shown = server.slice(0, 3).join(', ') + (server.length > 3 ? `, … (${server.length} changes)` : '');
    warn('pods.restart', `the model server's pods change (${shown}): they restart (a rolling update; new pods may wait for a free GPU)`);
  }
  return out;
}

/**
 * A model that moves to another set of upstream versions: what serves it afterwards, when the old
 * pods go, and whether the Services clients call keep working. Null when the set is the same.
 */
function setMove(old: ModelPlan, now: ModelPlan, resources: readonly ResourceChange[]): string | null {
  if (old.upstream === now.upstream || old.platform !== now.platform) return null;
  const sets = `moves from the ${old.upstream} set to ${now.upstream}`;
  if (now.platform === 'kserve' && old.platform === 'kserve') {
    const service = resources.find((r) => r.type.endsWith(':LLMInferenceService'));
    const inPlace = service === undefined || service.action === 'update';
    return `${sets}: its LLMInferenceService ${now.service} is ${inPlace ? `updated in place (${old.apiVersion} → ${now.apiVersion}, the same object)` : `${service.action}d`}; its pods are KServe's — expect them to roll when KServe ${KSERVE_RELEASES[now.upstream].version} reconciles it with its own images, so upgrade KServe (and mirror its images) first`;
  }
  if (old.platform !== 'llm-d' || now.platform !== 'llm-d') return null;
  const oldServer = old.modelServer.decodeDeployment;
  const newServer = now.modelServer.decodeDeployment;
  const pods = `${now.modelServer.decodeReplicas} ${now.modelServer.decodeReplicas === 1 ? 'pod' : 'pods'}`;
  const parts = [
    `${sets}: it is served by new pods — Deployment ${newServer} (${pods}) is created and awaited (readyTimeout ${now.readyTimeout.text}) before the old ${old.upstream === '2026-02' ? `release ${old.releases.modelService} and its Deployment ${oldServer} are` : `Deployment ${oldServer} is`} deleted (Pulumi deletes last), so the old pods serve until the new ones are ready; the new pods need room beside the old ones (their GPUs, CPU and memory), or they wait until the readyTimeout and pulumi up fails with the old pods still serving`,
  ];
  const alias = resources.find((r) => r.object === `Service ${now.namespace}/${now.gateway.alias}`);
  if (alias === undefined || alias.action === 'update') {
    parts.push(`the alias Service ${now.gateway.alias} is ${alias ? 'updated in place to point at' : 'kept, pointing at'} ${now.gateway.service} after the new model server and Router are up: clients that call it keep working${old.gateway.service !== now.gateway.service ? `; clients that call ${old.gateway.service} directly must move to it (or to ${now.gateway.service})` : ''}`);
  } else {
    parts.push(`the alias Service ${now.gateway.alias} is ${alias.action}d: its clients see it missing for a moment`);
  }
  if (old.embeddingService && now.embeddingService && old.embeddingService.name === now.embeddingService.name) {
    const service = resources.find((r) => r.object === `Service ${now.namespace}/${now.embeddingService!.name}`);
    parts.push(
      service === undefined || service.action === 'update'
        ? `the embeddings Service ${now.embeddingService.name} keeps its name and selects the old and the new pods alike (the same model labels) until the old ones are deleted: its clients keep working`
        : `the embeddings Service ${now.embeddingService.name} is ${service.action}d: its clients see it missing for a moment`,
    );
  }
  return parts.map((part, i) => (i === 0 ? part : part[0]!.toUpperCase() + part.slice(1))).join('. ');
}

/**
 * The model's LoRA adapters added, removed or given another source, and what follows: the model
 * server's arguments (or, for a new source behind the same name, its pods' adapters annotation)
 * change, so its pods restart — after the pull Job has fetched what is new. Null when none change.
 */
function adapterChanges(old: ModelPlan, now: ModelPlan): string | null {
  const before = new Map((old.adapters ?? []).map((a) => [a.name, a]));
  const after = new Map((now.adapters ?? []).map((a) => [a.name, a]));
  const parts: string[] = [];
  const added = [...after.values()].filter((a) => !before.has(a.name));
  const removed = [...before.values()].filter((a) => !after.has(a.name));
  const changed = [...after.values()].filter((a) => before.has(a.name) && !deepEqual(before.get(a.name)!.source, a.source));
  if (added.length) parts.push(`added ${added.map((a) => `${a.name} (${describeAdapterSource(a.source)})`).join(', ')}`);
  if (removed.length) parts.push(`removed ${removed.map((a) => a.name).join(', ')}`);
  if (changed.length) parts.push(`new source for ${changed.map((a) => `${a.name} (${describeAdapterSource(before.get(a.name)!.source)} → ${describeAdapterSource(a.source)})`).join(', ')}`);
  const sizes = !deepEqual(old.lora ?? null, now.lora ?? null) && old.lora && now.lora ? `max rank ${old.lora.maxRank} → ${now.lora.maxRank}` : null;
  if (parts.length === 0 && sizes === null) return null;
  const pulled = [...added, ...changed].some((a) => a.source.kind === 'oras');
  const what = now.platform === 'kserve' ? "the LLMInferenceService's spec.model.lora changes and KServe rolls the model pods" : "the model server's arguments (--lora-modules) change and its pods restart (a rolling update)";
  return `adapters ${[...parts, ...(sizes ? [sizes] : [])].join('; ')}: ${what}${pulled ? ', once the pull Job has fetched the new adapters' : ''}${removed.length ? `; clients of ${removed.map((a) => a.name).join(', ')} get "model not found" from then on` : ''}`;
}

/** Where the weights come from and where they sit: what, when changed, makes the pull Job run again. */
function weightsOf(m: ModelPlan): Record<string, unknown> | null {
  if (!m.storage) return null;
  return { source: m.storage.source, modelUri: m.storage.modelUri };
}

function describeWeights(w: Record<string, unknown>): string {
  const source = w.source as { kind: string; ref?: string; repo?: string; revision?: string | null };
  const where = source.kind === 'oras' ? source.ref : `hf://${source.repo}${source.revision ? `@${source.revision}` : ''}`;
  return `${where} (${String(w.modelUri)})`;
}

/**
 * Changed paths of the model server's pod spec: the llm-d modelservice release's values (2026-02),
 * the model-server Deployment's pod template (2026-08), or the KServe LLMInferenceService's spec; a
 * change of `replicas` alone scales and restarts nothing.
 */
function modelServerChanges(m: ModelPlan, resources: readonly ResourceChange[], releases: readonly ReleaseValuesDiff[]): string[] {
  const scalesOnly = (path: string) => /(^|\.)replicas$/.test(path);
  if (m.platform === 'llm-d' && m.upstream !== '2026-08') {
    const release = releases.find((r) => r.release === m.releases.modelService);
    return (release?.changes ?? []).map((c) => c.path).filter((p) => !scalesOnly(p));
  }
  if (m.platform === 'llm-d') {
    // 2026-08: the model server is a Deployment app-serving creates; its pods change with its template.
    const server = resources.find((r) => r.type === 'kubernetes:apps/v1:Deployment' && r.object === `Deployment ${m.namespace}/${m.modelServer.decodeDeployment}`);
    return (server?.changes ?? []).map((c) => c.path).filter((p) => p.startsWith('spec.template'));
  }
  const service = resources.find((r) => r.type.endsWith(':LLMInferenceService') && r.object.endsWith(`/${m.service}`));
  return (service?.changes ?? []).map((c) => c.path).filter((p) => p.startsWith('spec') && !scalesOnly(p));
}

function secretChanges(before: Readonly<Record<string, string>>, after: Readonly<Record<string, string>>): { key: string; change: 'added' | 'removed' | 'changed' }[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const out: { key: string; change: 'added' | 'removed' | 'changed' }[] = [];
  for (const key of keys) {
    if (before[key] === after[key]) continue;
    out.push({ key, change: before[key] === undefined ? 'added' : after[key] === undefined ? 'removed' : 'changed' });
  }
  return out;
}
