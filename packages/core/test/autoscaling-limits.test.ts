import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureNamespaces, startCluster, tryApply, type KubeObject, type TestCluster } from '@app-serving/test-cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INT32_MAX } from '../src/config/formats.ts';
import { AUTOSCALING_LIMITS } from '../src/features/autoscaling/facts.ts';
import { isStackError } from '../src/errors.ts';
import { planDeployment, type LlmdModelPlan } from '../src/plan.ts';
import { loadStackFile } from '../src/stack.ts';
import { REPO_ROOT } from './helpers.ts';

/**
 * The autoscaling limits validate holds (M7 of the third hostile round), held against the real API
 * server of the test control plane, with KEDA v2.20.2's CRDs installed: what validate accepts at
 * the limit is admitted (the ScaledObject core plans, and the HPA KEDA makes of its cool-down), and
 * one past the limit is what the API server refuses — so a stack validate passes is never refused
 * later, and validate refuses nothing the API server would take.
 */

let cluster: TestCluster;
const dir = mkdtempSync(join(tmpdir(), 'app-serving-autoscaling-limits-'));

beforeAll(async () => {
  cluster = await startCluster();
}, 600_000);
afterAll(async () => {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The cloud example (Qwen3-0.6B autoscaled by KEDA) with its autoscaling's cooldown and pollingInterval set. */
function planWith(cooldown: string, pollingInterval: string): LlmdModelPlan {
  const file = join(dir, 'Pulumi.limits.yaml');
  writeFileSync(file, readFileSync(join(REPO_ROOT, 'apps/app-serving/Pulumi.cloud.yaml'), 'utf8').replace('          cooldown: 5m\n', `          cooldown: ${cooldown}\n          pollingInterval: ${pollingInterval}\n`));
  const model = planDeployment(loadStackFile(file), join(REPO_ROOT, 'models')).models.find((m) => m.name === 'Qwen3-0.6B') as LlmdModelPlan;
  return model;
}

/** The HPA KEDA makes of a ScaledObject: its `advanced.horizontalPodAutoscalerConfig.behavior` on an autoscaling/v2 HPA. */
function hpaOf(scaledObject: KubeObject, name: string): KubeObject {
  const spec = scaledObject.spec as { minReplicaCount: number; maxReplicaCount: number; scaleTargetRef: { name: string }; advanced: { horizontalPodAutoscalerConfig: { behavior: unknown } } };
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name, namespace: scaledObject.metadata.namespace },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: spec.scaleTargetRef.name },
      minReplicas: Math.max(spec.minReplicaCount, 1),
      maxReplicas: spec.maxReplicaCount,
      metrics: [{ type: 'External', external: { metric: { name: 's0-prometheus' }, target: { type: 'AverageValue', averageValue: '5' } } }],
      behavior: spec.advanced.horizontalPodAutoscalerConfig.behavior,
    },
  } as KubeObject;
}

describe('autoscaling limits, against the real API server (KEDA v2.20.2 CRDs)', { timeout: 600_000 }, () => {
  it('at the limits validate holds, the ScaledObject core plans and the HPA KEDA makes of it are admitted', async () => {
    const model = planWith('1h', '596523h14m7s');
    const scaledObject = model.autoscaling!.objects.find((o) => o.kind === 'ScaledObject') as KubeObject;
    expect(scaledObject.spec).toMatchObject({ cooldownPeriod: AUTOSCALING_LIMITS.cooldownSeconds.seconds, pollingInterval: INT32_MAX });
    await ensureNamespaces(cluster, [scaledObject]);
    expect(await tryApply(cluster, [scaledObject, hpaOf(scaledObject, 'at-the-limit')], { dryRun: true })).toEqual([]);
  });

  it('one past each limit: validate refuses it, and so does the API server', async () => {
    for (const [cooldown, polling, key] of [
      ['3601s', '15s', 'cooldown'],
      ['5m', '596523h14m8s', 'pollingInterval'],
    ] as const) {
      expect(() => planWith(cooldown, polling), key).toThrow(expect.objectContaining({ issues: expect.arrayContaining([expect.objectContaining({ path: `models.generative[0].autoscaling.${key}` })]) }));
    }
    // What the API server says of the same values, written into the objects by hand.
    const model = planWith('1h', '15s');
    const at = model.autoscaling!.objects.find((o) => o.kind === 'ScaledObject') as KubeObject;
    await ensureNamespaces(cluster, [at]);
    const past = structuredClone(at) as KubeObject & { spec: Record<string, any> };
    past.spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleDown.stabilizationWindowSeconds = AUTOSCALING_LIMITS.cooldownSeconds.seconds + 1;
    const hpa = await tryApply(cluster, [hpaOf(past, 'past-the-window')], { dryRun: true });
    expect(hpa).toHaveLength(1);
    expect(hpa[0]!.message).toMatch(/stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600/);
  });

  it("past int32, the API server stores the ScaledObject all the same: validate is what keeps it from KEDA, whose operator cannot decode it", async () => {
    // The CRD says `format: int32`, which the API server does not enforce for custom resources; KEDA's
    // Go type is `PollingInterval *int32` (v2.20 apis/keda/v1alpha1/scaledobject_types.go), so its
    // operator fails to read the object and the model never scales. Hence the limit in validate.
    const at = planWith('1h', '15s').autoscaling!.objects.find((o) => o.kind === 'ScaledObject') as KubeObject;
    await ensureNamespaces(cluster, [at]);
    const polling = structuredClone(at) as KubeObject & { spec: Record<string, any> };
    polling.spec.pollingInterval = INT32_MAX + 1;
    expect(await tryApply(cluster, [polling], { dryRun: true })).toEqual([]);
  });

  it('isStackError is what validate throws for these (a plain problem, not a crash)', () => {
    try {
      planWith('2h', '15s');
    } catch (error) {
      expect(isStackError(error)).toBe(true);
      return;
    }
    throw new Error('a cooldown of 2h was accepted');
  });
});
