/**
 * What a cluster's storage gives, simulated: StorageClasses and a small external provisioner that
 * makes a PersistentVolume for each claim of those classes, the way local-path-provisioner (RKE2's
 * usual choice on-prem) or a cloud CSI driver does — only without any disk behind it.
 *
 * The real parts stay real: the PV controller (kube-controller-manager) hands a claim to the
 * provisioner by annotating it (`volume.kubernetes.io/storage-provisioner`), the scheduler picks
 * the node of a `WaitForFirstConsumer` claim (`volume.kubernetes.io/selected-node`) and waits for
 * its volume before binding the pod, and the PV controller binds the volume to the claim. The
 * provisioner deletes the volumes it made once their claim is gone (reclaim policy `Delete`), as
 * the real ones do, so a destroyed stack leaves no PV behind.
 */
import type { ApiResponse } from './cluster.ts';

/** The provisioner name of the simulated StorageClasses. */
export const PROVISIONER = 'test-cluster.app-serving.io/local-path';
/** Annotation a provisioner puts on the volumes it made. */
const PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
const STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
const SELECTED_NODE = 'volume.kubernetes.io/selected-node';

/** A StorageClass of the test cluster. */
export interface StorageClassSpec {
  readonly name: string;
  /** The cluster's default class (claims without a class get it). */
  readonly default?: boolean;
  /** @default "WaitForFirstConsumer" */
  readonly bindingMode?: 'WaitForFirstConsumer' | 'Immediate';
}

/**
 * The classes a test cluster has unless told otherwise: `hostpath` (what app-serving's on-prem
 * stacks name, WaitForFirstConsumer like local-path-provisioner) and `standard`, the default class
 * cloud clusters have (WaitForFirstConsumer, like GKE's, EKS's and AKS's defaults).
 */
export const DEFAULT_STORAGE_CLASSES: readonly StorageClassSpec[] = [
  { name: 'hostpath' },
  { name: 'standard', default: true },
];

/** The StorageClass objects for `classes`. */
export function storageClassObjects(classes: readonly StorageClassSpec[]): object[] {
  return classes.map((c) => ({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: c.name, ...(c.default && { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }) },
    provisioner: PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: c.bindingMode ?? 'WaitForFirstConsumer',
  }));
}

type Api = (method: string, path: string, body?: unknown) => Promise<ApiResponse>;

/** The volume the provisioner makes for a claim (pure: what it would create). */
export function provisionedVolume(claim: any, storageClass: any): object {
  const node: string | undefined = claim.metadata.annotations?.[SELECTED_NODE];
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: `pvc-${claim.metadata.uid}`, annotations: { [PROVISIONED_BY]: PROVISIONER } },
    spec: {
      capacity: { storage: claim.spec.resources?.requests?.storage ?? '1Gi' },
      accessModes: claim.spec.accessModes ?? ['ReadWriteOnce'],
      ...(claim.spec.volumeMode && { volumeMode: claim.spec.volumeMode }),
      storageClassName: storageClass.metadata.name,
      persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
      hostPath: { path: `/var/lib/test-cluster/volumes/${claim.metadata.namespace}_${claim.metadata.name}`, type: 'DirectoryOrCreate' },
      claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid },
      ...(node && {
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] } },
      }),
    },
  };
}

/**
 * Runs the provisioner until the returned function is called: every `intervalMs`, a volume for each
 * claim handed to it (and, for WaitForFirstConsumer, placed by the scheduler), and the deletion of
 * each volume it made whose claim is gone. Errors of one round (the API server busy) are retried
 * in the next.
 */
export function startProvisioner(api: Api, intervalMs = 300): () => Promise<void> {
  let stopped = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopped) {
      try {
        await provisionOnce(api);
      } catch {
        // The next round tries again.
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, intervalMs).unref();
      });
    }
  })();
  return async () => {
    stopped = true;
    wake?.();
    await loop;
  };
}

/** One round of the provisioner (exported for tests). */
export async function provisionOnce(api: Api): Promise<void> {
  const [claims, volumes, classes] = await Promise.all([
    api('GET', '/api/v1/persistentvolumeclaims'),
    api('GET', '/api/v1/persistentvolumes'),
    api('GET', '/apis/storage.k8s.io/v1/storageclasses'),
  ]);
  if (claims.status !== 200 || volumes.status !== 200 || classes.status !== 200) return;
  const ours = new Map<string, any>(
    (classes.body.items as any[]).filter((c) => c.provisioner === PROVISIONER).map((c) => [c.metadata.name, c]),
  );
  const existing = new Set((volumes.body.items as any[]).map((v) => v.metadata.name));
  for (const claim of claims.body.items as any[]) {
    if (claim.status?.phase !== 'Pending' || claim.spec.volumeName) continue;
    if (claim.metadata.annotations?.[STORAGE_PROVISIONER] !== PROVISIONER) continue;
    const storageClass = ours.get(claim.spec.storageClassName);
    if (!storageClass) continue;
    if (storageClass.volumeBindingMode === 'WaitForFirstConsumer' && !claim.metadata.annotations?.[SELECTED_NODE]) continue;
    if (existing.has(`pvc-${claim.metadata.uid}`)) continue;
    await api('POST', '/api/v1/persistentvolumes', provisionedVolume(claim, storageClass));
  }
  for (const volume of volumes.body.items as any[]) {
    if (volume.metadata.annotations?.[PROVISIONED_BY] !== PROVISIONER || volume.metadata.deletionTimestamp) continue;
    if (volume.spec.persistentVolumeReclaimPolicy !== 'Delete') continue;
    if (volume.status?.phase === 'Released' || volume.status?.phase === 'Failed') {
      await api('DELETE', `/api/v1/persistentvolumes/${volume.metadata.name}`);
    }
  }
}
