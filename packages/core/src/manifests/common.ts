import { Buffer } from 'node:buffer';
import {
  LABEL_MANAGED_BY,
  LABEL_PART_OF,
  MANAGED_BY,
  PULL_JOB_BACKOFF_LIMIT,
  PULL_JOB_TTL_SECONDS,
  PULL_JOB_UID,
  PULUMI_SKIP_AWAIT_ANNOTATION,
} from '../constants.ts';
import type { StoragePlan } from '../storage.ts';
import { huggingFaceDownloadScript, orasPullScript, sourceRef } from '../storage.ts';
import { nodeAffinityFor, type Toleration } from '../values/scheduling.ts';

/**
 * Pure builders of the plain Kubernetes objects app-serving creates itself (everything that is
 * not rendered by a chart). The Pulumi components wrap them; `render` prints them; tests validate
 * them against the upstream OpenAPI schemas.
 */

/** Labels on every object app-serving creates itself. */
export function commonLabels(slug: string): Record<string, string> {
  return { [LABEL_MANAGED_BY]: MANAGED_BY, [LABEL_PART_OF]: 'app-serving', 'app-serving.io/model': slug };
}

/** A model's namespace. */
export function namespaceManifest(name: string, slug: string) {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: commonLabels(slug) } } as const;
}

/**
 * The `.dockerconfigjson` content for a registry robot account — what
 * `kubectl create secret docker-registry` writes. Handle the result as a secret.
 */
export function dockerConfigJson(registry: string, username: string, password: string): string {
  const auth = Buffer.from(`${username}:${password}`, 'utf8').toString('base64');
  return JSON.stringify({ auths: { [registry]: { username, password, auth } } });
}

/** The image pull Secret (`kubernetes.io/dockerconfigjson`) of a model namespace. */
export function pullSecretManifest(args: { name: string; namespace: string; slug: string; dockerConfigJson: string }) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: args.name, namespace: args.namespace, labels: commonLabels(args.slug) },
    type: 'kubernetes.io/dockerconfigjson',
    stringData: { '.dockerconfigjson': args.dockerConfigJson },
  } as const;
}

/** The static hostPath PersistentVolume of an on-prem model, pinned to its node and pre-bound to the PVC. */
export function persistentVolumeManifest(args: { storage: StoragePlan; namespace: string; slug: string }) {
  const { storage } = args;
  if (!storage.pv || !storage.hostPath) throw new Error('persistentVolumeManifest needs a storage plan with a hostPath PV');
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: storage.pv, labels: commonLabels(args.slug) },
    spec: {
      capacity: { storage: storage.size },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      ...(storage.storageClass && { storageClassName: storage.storageClass }),
      volumeMode: 'Filesystem',
      hostPath: { path: storage.hostPath.dir, type: 'Directory' },
      claimRef: { namespace: args.namespace, name: storage.pvc },
      nodeAffinity: {
        required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [storage.hostPath.node] }] }] },
      },
    },
  };
}

/** The model PVC (ReadWriteOnce). */
export function persistentVolumeClaimManifest(args: { storage: StoragePlan; namespace: string; slug: string }) {
  const { storage } = args;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: storage.pvc,
      namespace: args.namespace,
      labels: commonLabels(args.slug),
      // Bound ahead to its own volume: nothing to await (PULUMI_SKIP_AWAIT_ANNOTATION says why).
      ...(storage.pv && { annotations: { [PULUMI_SKIP_AWAIT_ANNOTATION]: 'true' } }),
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: storage.size } },
      ...(storage.storageClass && { storageClassName: storage.storageClass }),
      ...(storage.pv && { volumeName: storage.pv }),
    },
  };
}

/** What the model Job needs beyond the storage plan. */
export interface ModelJobArgs {
  readonly storage: StoragePlan;
  readonly namespace: string;
  readonly slug: string;
  /** Secret holding registry credentials (`.dockerconfigjson`), for ORAS and for pulling the Job image. */
  readonly pullSecret?: string | undefined;
  /** Secret with key `HF_TOKEN` (Hugging Face downloads). */
  readonly hfTokenSecret?: string | undefined;
  /** ServiceAccount to run as (KServe: the one carrying the HF token). */
  readonly serviceAccount?: string | undefined;
  readonly nodeSelector?: Readonly<Record<string, string>> | undefined;
  readonly tolerations?: readonly Toleration[] | undefined;
}

/**
 * The Job that fills the model volume: ORAS from Harbor, or a Hugging Face download. It runs as
 * a non-root user with every capability dropped and a read-only root file system, so it passes
 * Pod Security "restricted"; retries 3 times; is deleted by Kubernetes a day after it finishes.
 */
export function modelJobManifest(args: ModelJobArgs) {
  const { storage } = args;
  const oras = storage.source.kind === 'oras';
  const labels = { ...commonLabels(args.slug), 'app-serving.io/component': 'model-pull' };
  const affinity = args.nodeSelector ? nodeAffinityFor(args.nodeSelector) : undefined;
  const env: { name: string; value?: string; valueFrom?: unknown }[] = [
    { name: 'MODEL_DIR', value: storage.mountPath },
    { name: 'MODEL_REF', value: sourceRef(storage) },
    { name: 'EXPECT_PATH', value: storage.expectPath },
    { name: 'HOME', value: '/tmp' },
  ];
  // LoRA adapters on the volume (features/adapters): pulled by ORAS (a reference) or checked there ("-").
  if (storage.adapters) {
    env.push(
      { name: 'ADAPTERS', value: storage.adapters.items.map((a) => `${a.name} ${a.dir} ${a.ref ?? '-'}`).join('\n') },
      { name: 'MAX_LORA_RANK', value: String(storage.adapters.maxRank) },
    );
  }
  if (oras) env.push({ name: 'REGISTRY_CONFIG', value: '/etc/registry-auth/config.json' });
  else {
    if (storage.source.kind === 'huggingface') {
      env.push({ name: 'HF_REPO', value: storage.source.repo }, { name: 'MODEL_PATH', value: storage.modelUri });
      if (storage.source.revision) env.push({ name: 'HF_REVISION', value: storage.source.revision });
    }
    env.push({ name: 'HF_HUB_DISABLE_PROGRESS_BARS', value: '1' });
    if (args.hfTokenSecret) env.push({ name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: args.hfTokenSecret, key: 'HF_TOKEN' } } });
  }
  const volumes: unknown[] = [
    { name: 'model', persistentVolumeClaim: { claimName: storage.pvc } },
    { name: 'tmp', emptyDir: {} },
  ];
  const mounts: unknown[] = [
    { name: 'model', mountPath: storage.mountPath },
    { name: 'tmp', mountPath: '/tmp' },
  ];
  if (oras) {
    if (!args.pullSecret) throw new Error('an ORAS pull Job needs the registry pull secret');
    volumes.push({ name: 'registry-auth', secret: { secretName: args.pullSecret, items: [{ key: '.dockerconfigjson', path: 'config.json' }] } });
    mounts.push({ name: 'registry-auth', mountPath: '/etc/registry-auth', readOnly: true });
  }
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: storage.job, namespace: args.namespace, labels },
    spec: {
      backoffLimit: PULL_JOB_BACKOFF_LIMIT,
      ttlSecondsAfterFinished: PULL_JOB_TTL_SECONDS,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          ...(args.serviceAccount && { serviceAccountName: args.serviceAccount }),
          automountServiceAccountToken: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: PULL_JOB_UID,
            runAsGroup: PULL_JOB_UID,
            fsGroup: PULL_JOB_UID,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          ...(args.pullSecret && { imagePullSecrets: [{ name: args.pullSecret }] }),
          ...(affinity && { affinity }),
          ...(args.tolerations?.length && { tolerations: [...args.tolerations] }),
          containers: [
            {
              name: oras ? 'oras-pull' : 'hf-download',
              image: storage.image,
              command: ['/bin/sh', '-c', oras ? orasPullScript() : huggingFaceDownloadScript()],
              env,
              volumeMounts: mounts,
              resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '2Gi' } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ['ALL'] },
              },
            },
          ],
          volumes,
        },
      },
    },
  };
}
