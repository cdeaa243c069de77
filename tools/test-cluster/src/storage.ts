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
 * A watch of `path` (a collection, `?watch=true` added): `onChange` for every event the API server
 * streams; `closed` settles when the stream ends (the server's own watch timeout, an error, or
 * `close()`).
 */
export type WatchStream = (path: string, onChange: () => void) => { readonly closed: Promise<void>; close(): void };

/** The collections whose changes start a round: a claim handed over or placed, a volume released, a class added. */
const WATCHED = ['/api/v1/persistentvolumeclaims', '/api/v1/persistentvolumes', '/apis/storage.k8s.io/v1/storageclasses'];

/**
 * Runs the provisioner until the returned function is called: a round (a volume for each claim
 * handed to it and, for WaitForFirstConsumer, placed by the scheduler; the deletion of each volume
 * it made whose claim is gone) whenever a watched claim, volume or class changes, as a controller's
 * informer would start it, and every `resyncMs` besides. A round that fails (the API server busy) is
 * tried again a second later; a watch that ends is opened again.
 *
 * It used to list claims, volumes and classes every 300 ms: 10 requests a second per control
 * plane for as long as it ran. A 2026-08 control plane left idle for 120 s after its start (a
 * scratch script calling startCluster, /proc and process.cpuUsage, the idle machine, 2026-12-07,
 * alternating): the API server 5.7 and 4.9 s of CPU and the test's process 0.91 and 0.82 s listing,
 * 4.2 and 4.1 s and 0.19 and 0.22 s watching — about a second of CPU a minute per control plane,
 * and a CI run keeps control planes up for about 40 minutes in all.
 */
export function startProvisioner(api: Api, watch: WatchStream, resyncMs = 10_000): () => Promise<void> {
  let stopped = false;
  let pending = true;
  let wake: (() => void) | undefined;
  const kick = () => {
    pending = true;
    wake?.();
  };
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      setTimeout(resolve, ms).unref();
    });
  const open = new Set<{ close(): void }>();
  const watching = WATCHED.map(async (path) => {
    while (!stopped) {
      const stream = watch(`${path}?watch=true`, kick);
      open.add(stream);
      await stream.closed.catch(() => {});
      open.delete(stream);
      if (stopped) return;
      // Whatever changed while it was closed: a round, then the watch again.
      kick();
      await new Promise((resolve) => setTimeout(resolve, 1000).unref());
    }
  });
  const loop = (async () => {
    while (!stopped) {
      if (pending) {
        pending = false;
        try {
          await provisionOnce(api);
        } catch {
          await pause(1000);
          pending = true;
        }
        continue;
      }
      await pause(resyncMs);
      pending = true;
    }
  })();
  return async () => {
    stopped = true;
    for (const stream of open) stream.close();
    wake?.();
    await Promise.all([loop, ...watching]);
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
