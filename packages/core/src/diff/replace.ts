import { pathCovers, type LocatedChange } from './values.ts';

/**
 * Fields of a Kubernetes object that Pulumi's Kubernetes provider will not update in place: a change
 * to one makes `pulumi up` replace the object (create the new one, then delete the old, unless the
 * resource says `deleteBeforeReplace`). By API group (without version) and kind; only the kinds a
 * stack or its charts create (the provider also lists Pod fields; no stack creates a bare Pod).
 *
 * Source: pulumi/pulumi-kubernetes `provider/pkg/provider/diff.go` (`forceNew`,
 * `metadataForceNewProperties`, and since v4.18 the Secret rule that honours `enableSecretMutable`),
 * as used by `kubeProvider.Diff` in `provider/pkg/provider/provider.go`. Those lists follow the fields
 * the Kubernetes API server rejects changes to (kubernetes/kubernetes `pkg/apis/core/validation/validation.go`:
 * `ValidatePersistentVolumeUpdate` — the volume source; `ValidatePersistentVolumeClaimUpdate` — the
 * spec except `resources.requests` and `volumeAttributesClassName`; `ValidateServiceUpdate` —
 * `clusterIP`; `ValidateSecretUpdate` — `type`, and the data of an `immutable` Secret;
 * `pkg/apis/batch/validation/validation.go` `ValidateJobSpecUpdate` — `selector`, `template`,
 * `completions`).
 */
export const FORCE_NEW_FIELDS: Readonly<Record<string, readonly string[]>> = {
  // core/v1
  '/PersistentVolume': [
    'spec.awsElasticBlockStore',
    'spec.azureDisk',
    'spec.azureFile',
    'spec.cephfs',
    'spec.cinder',
    'spec.csi',
    'spec.fc',
    'spec.flexVolume',
    'spec.flocker',
    'spec.gcePersistentDisk',
    'spec.glusterfs',
    'spec.hostPath',
    'spec.iscsi',
    'spec.local',
    'spec.nfs',
    'spec.photonPersistentDisk',
    'spec.portworxVolume',
    'spec.quobyte',
    'spec.rbd',
    'spec.scaleIO',
    'spec.storageos',
    'spec.vsphereVolume',
  ],
  '/PersistentVolumeClaim': ['spec.accessModes', 'spec.selector', 'spec.storageClassName', 'spec.volumeName'],
  '/Service': ['spec.clusterIP'],
  '/ResourceQuota': ['spec.scopes'],
  // batch/v1
  'batch/Job': ['spec.completions', 'spec.parallelism', 'spec.selector', 'spec.template'],
  // apps/v1
  'apps/Deployment': ['spec.selector'],
  'apps/DaemonSet': ['spec.selector'],
  'apps/StatefulSet': ['spec.podManagementPolicy', 'spec.revisionHistoryLimit', 'spec.selector', 'spec.serviceName', 'spec.volumeClaimTemplates'],
  // rbac.authorization.k8s.io/v1
  'rbac.authorization.k8s.io/RoleBinding': ['roleRef'],
  'rbac.authorization.k8s.io/ClusterRoleBinding': ['roleRef'],
  // storage.k8s.io/v1
  'storage.k8s.io/StorageClass': ['parameters', 'provisioner'],
};

/** Every Kubernetes object: its identity (same source: `metadataForceNewProperties`). */
const IDENTITY_FIELDS = ['metadata.name', 'metadata.namespace'];

/**
 * A Secret's `type`, `stringData` and `data`: replaced unless the provider runs with
 * `enableSecretMutable` (and the Secret is not `immutable`). Same source, `forceNewProperties`.
 */
const SECRET_FIELDS = ['type', 'stringData', 'data'];

/** Why an object is replaced, and a note for a change Kubernetes may still refuse. */
export interface ReplaceVerdict {
  readonly reasons: string[];
  readonly notes: string[];
}

/** What decides a resource's action besides its changed fields. */
export interface ReplaceContext {
  /** Pulumi type token, e.g. `kubernetes:batch/v1:Job`. */
  readonly type: string;
  /** The object's inputs after the change (apiVersion, kind, …). */
  readonly inputs: Readonly<Record<string, unknown>>;
  /** The resource's `replaceOnChanges` option. */
  readonly replaceOnChanges?: readonly string[];
  /** Whether the Kubernetes provider treats Secrets as mutable (`enableSecretMutable`). */
  readonly secretMutable?: boolean;
}

/**
 * Why Pulumi would replace a resource given its changed inputs: a `replaceOnChanges` field, a field
 * the Kubernetes provider never updates in place ({@link FORCE_NEW_FIELDS}, the object's name and
 * namespace), a Helm release renamed or moved. Empty reasons mean an update.
 */
export function replaceVerdict(context: ReplaceContext, changes: readonly LocatedChange[]): ReplaceVerdict {
  const reasons: string[] = [];
  const notes: string[] = [];
  const add = (reason: string) => {
    if (!reasons.includes(reason)) reasons.push(reason);
  };
  for (const field of context.replaceOnChanges ?? []) {
    const hit = changes.find((c) => pathCovers(field, c.segments));
    if (hit) add(`${field} changed, and the resource has replaceOnChanges: [${field}]`);
  }
  if (isHelmRelease(context.type)) {
    for (const field of ['name', 'namespace']) {
      const hit = changes.find((c) => c.segments[0] === field);
      if (hit) {
        const what = field === 'name' ? 'release renamed' : 'release moved to another namespace';
        add(`${what} (${show(hit.old)} → ${show(hit.new)}): every object of the chart is created under its new name and the old ones are deleted`);
      }
    }
    return { reasons, notes };
  }
  if (!context.type.startsWith('kubernetes:')) return { reasons, notes };

  const { group, kind } = groupKind(context);
  for (const field of IDENTITY_FIELDS) {
    const hit = changes.find((c) => pathCovers(field, c.segments) && c.segments.length >= 2);
    if (hit) add(`${field} changed (${show(hit.old)} → ${show(hit.new)}): Kubernetes cannot rename or move an object`);
  }
  const immutableSecret = kind === 'Secret' && group === '' && context.inputs.immutable === true;
  const forceNew = [...(FORCE_NEW_FIELDS[`${group}/${kind}`] ?? []), ...(kind === 'Secret' && group === '' && (!context.secretMutable || immutableSecret) ? SECRET_FIELDS : [])];
  for (const field of forceNew) {
    const hit = changes.find((c) => pathCovers(field, c.segments));
    if (!hit) continue;
    if (kind === 'Secret' && field !== 'type') add(`${field} changed: the Kubernetes provider replaces a Secret whose data changes (unless it runs with enableSecretMutable)`);
    else add(`${field} changed: immutable in a ${kind}`);
  }
  if (group === '' && kind === 'PersistentVolumeClaim' && reasons.length === 0 && changes.some((c) => pathCovers('spec.resources.requests.storage', c.segments))) {
    notes.push('a claim can only grow, and only when its StorageClass allows volume expansion: Kubernetes rejects any other size change');
  }
  return { reasons, notes };
}

/** True for the Helm chart and release resources of the Kubernetes provider. */
export function isHelmRelease(type: string): boolean {
  return type.startsWith('kubernetes:helm.sh/');
}

/** The API group (`''` for core) and kind of a Kubernetes object, from its inputs or its type token. */
export function groupKind(context: { readonly type: string; readonly inputs: Readonly<Record<string, unknown>> }): { group: string; kind: string } {
  // Type tokens: `kubernetes:<group>/<version>:<Kind>`, core objects as `kubernetes:core/v1:<Kind>`.
  const [, apiVersion = '', tokenKind = ''] = context.type.split(':');
  const fromInputs = typeof context.inputs.apiVersion === 'string' ? context.inputs.apiVersion : apiVersion;
  const slash = fromInputs.lastIndexOf('/');
  const group = slash < 0 ? '' : fromInputs.slice(0, slash);
  const kind = typeof context.inputs.kind === 'string' ? context.inputs.kind : tokenKind;
  return { group: group === 'core' ? '' : group, kind };
}

function show(value: unknown): string {
  return value === undefined ? 'unset' : JSON.stringify(value);
}
