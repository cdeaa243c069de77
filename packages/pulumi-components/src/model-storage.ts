import * as pulumi from '@pulumi/pulumi';
import * as k8s from '@pulumi/kubernetes';
import {
  modelJobManifest,
  persistentVolumeClaimManifest,
  persistentVolumeManifest,
  type StoragePlan,
  type Toleration,
} from '@app-serving/core';
import { TYPE_TOKENS, childName } from './component-names.ts';
import { childOptions } from './options.ts';

/**
 * Annotation of the pull Job: when a previous `pulumi up` left the Job failed (every retry used),
 * the next `pulumi up` replaces it instead of waiting on it again — so fixing the registry, the
 * credentials or the reference and running `pulumi up` re-runs the pull.
 * @see https://www.pulumi.com/registry/packages/kubernetes/api-docs/batch/v1/job/
 */
export const REPLACE_UNREADY_ANNOTATION = 'pulumi.com/replaceUnready';

/** How long `pulumi up` waits for a pull Job by default (large models take a while). */
export const DEFAULT_PULL_TIMEOUT = '60m';

/** Arguments of {@link ModelStorage}. */
export interface ModelStorageArgs {
  /** Namespace of the PVC and the Job (the model plan's `namespace`). */
  readonly namespace: pulumi.Input<string>;
  /** The model slug (labels). */
  readonly slug: pulumi.Input<string>;
  /**
   * The model's storage plan: the model plan's `storage`, or core `storagePlan({...})`. It names
   * the PV, PVC and Job and decides which exist, so it is plain data, not an Input.
   */
  readonly storage: StoragePlan;
  /**
   * The `kubernetes.io/dockerconfigjson` Secret the Job uses to pull its image and, for ORAS,
   * to authenticate to the registry. Required when the source is ORAS (`storage.source.kind: oras`).
   */
  readonly pullSecret?: pulumi.Input<string>;
  /** Secret with key `HF_TOKEN`, read by a Hugging Face download (never printed by the Job). */
  readonly hfTokenSecret?: pulumi.Input<string>;
  /** ServiceAccount the Job runs as. @default the namespace's default ServiceAccount */
  readonly serviceAccount?: pulumi.Input<string>;
  /** Node labels the Job must run on (a hard node affinity), usually the model's nodeSelector. */
  readonly nodeSelector?: pulumi.Input<Readonly<Record<string, string>>>;
  /** Tolerations of the Job's pod, usually the stack's GPU toleration. */
  readonly tolerations?: pulumi.Input<readonly Toleration[]>;
  /**
   * How long `pulumi up` waits for the Job to complete before it reports a failure.
   * @default "60m"
   * @see https://www.pulumi.com/docs/iac/concepts/options/customtimeouts/
   */
  readonly pullTimeout?: string;
}

/**
 * A model's volume and the Job that fills it: on-prem with `hostpathNode` a static hostPath PV,
 * the PVC, and the pull Job (ORAS from Harbor, or a Hugging Face download).
 *
 * Children: `<name>-pv` (optional), `<name>-pvc` (after the PV), `<name>-pull-job` (after the PVC).
 * `pulumi up` waits for the Job to complete, so anything that depends on this component starts
 * on a filled volume. The Job's pod template is immutable: a change of the source (e.g. a new
 * `harborRef`) replaces the Job (delete first: its name is fixed), which pulls the new model.
 */
export class ModelStorage extends pulumi.ComponentResource {
  readonly pvcName: pulumi.Output<string>;
  readonly jobName: pulumi.Output<string>;
  readonly persistentVolume: k8s.core.v1.PersistentVolume | undefined;
  readonly persistentVolumeClaim: k8s.core.v1.PersistentVolumeClaim;
  readonly job: k8s.batch.v1.Job;

  constructor(name: string, args: ModelStorageArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPE_TOKENS.ModelStorage, name, {}, opts);
    const { storage } = args;
    if (storage.source.kind === 'oras' && args.pullSecret === undefined) {
      throw new pulumi.InputPropertyError({
        propertyPath: 'pullSecret',
        reason: `is required: the pull Job of ${storage.job} authenticates to ${storage.source.registry} with it (give the ModelNamespace's pullSecretName)`,
      });
    }
    if ((storage.pv === null) !== (storage.hostPath === null)) {
      throw new pulumi.InputPropertyError({ propertyPath: 'storage', reason: 'pv and hostPath must be set together (use core storagePlan to build the plan)' });
    }
    const inherited = opts?.dependsOn;
    const at = pulumi.output({ namespace: args.namespace, slug: args.slug });

    if (storage.pv !== null) {
      const pv = at.apply(({ namespace, slug }) => persistentVolumeManifest({ storage, namespace, slug }));
      this.persistentVolume = new k8s.core.v1.PersistentVolume(childName(name, 'pv'), { metadata: pv.metadata, spec: pv.spec }, childOptions(this, inherited));
    } else {
      this.persistentVolume = undefined;
    }

    const pvc = at.apply(({ namespace, slug }) => persistentVolumeClaimManifest({ storage, namespace, slug }));
    this.persistentVolumeClaim = new k8s.core.v1.PersistentVolumeClaim(
      childName(name, 'pvc'),
      { metadata: pvc.metadata, spec: pvc.spec },
      childOptions(this, inherited, [this.persistentVolume]),
    );

    const job = pulumi
      .output({
        namespace: args.namespace,
        slug: args.slug,
        pullSecret: args.pullSecret,
        hfTokenSecret: args.hfTokenSecret,
        serviceAccount: args.serviceAccount,
        nodeSelector: args.nodeSelector,
        tolerations: args.tolerations,
      })
      .apply((a) => {
        const manifest = modelJobManifest({ storage, ...a } as Parameters<typeof modelJobManifest>[0]);
        return { ...manifest, metadata: { ...manifest.metadata, annotations: { [REPLACE_UNREADY_ANNOTATION]: 'true' } } };
      });
    const timeout = args.pullTimeout ?? DEFAULT_PULL_TIMEOUT;
    this.job = new k8s.batch.v1.Job(
      childName(name, 'pull-job'),
      // Core types what it builds loosely (it has no Kubernetes type library); the shape is a JobSpec,
      // validated against the upstream schema in the tests.
      { metadata: job.metadata, spec: job.spec as pulumi.Output<k8s.types.input.batch.v1.JobSpec> },
      childOptions(this, inherited, [this.persistentVolumeClaim], {
        // The pod template is immutable; the provider replaces a Job whose template changed. Say so
        // explicitly, and delete first: the Job's name is fixed, so a second one cannot exist meanwhile.
        replaceOnChanges: ['spec.template'],
        deleteBeforeReplace: true,
        customTimeouts: { create: timeout, update: timeout },
      }),
    );

    this.pvcName = this.persistentVolumeClaim.metadata.name;
    this.jobName = this.job.metadata.name;
    this.registerOutputs({ pvcName: this.pvcName, jobName: this.jobName });
  }
}
