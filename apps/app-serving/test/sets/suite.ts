import { join } from 'node:path';
import { applyPatches, modelReleases, type Upstream } from '@app-serving/core';
import { renderStack } from '@app-serving/pulumi-components/render';
import {
  applyObjects,
  clusterApiVersions,
  createNodes,
  ensureNamespaces,
  list,
  renderedManifests,
  renderReleases,
  startCluster,
  waitFor,
  type KubeObject,
  type TestCluster,
} from '@app-serving/test-cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_DIR, clusterShape, deployedProblems, exampleStacks, removeStack, standInControllers, stackUnderTest } from '../deploy/support.ts';

/**
 * Every example stack on each set of upstream versions, without Pulumi: the stack is planned on the
 * set (`app-serving:upstream` set to it), the plain objects and custom resources `render` produces
 * and what the published charts render with the plan's values (real Helm v4, the plan's post-render
 * patches applied) are applied for real to a control plane holding that set's CRDs (2026-02:
 * `crds/`; 2026-08: `current/crds/` and Istio's), on kwok nodes shaped like the plan
 * (`clusterShape`). The real scheduler places every pod, the Job controller runs the pull Jobs, the
 * provisioner binds the claims; Istio's gateway and KServe's workload are stood in for from the
 * objects in the cluster. Then every object the plan names must be there, Ready and placed where the
 * plan means it (`deployedProblems`, the same check as after a real `pulumi up`).
 *
 * On 2026-08 also the Router's other shapes no example stack has: standalone mode (the EPP and its
 * Envoy proxy, no Gateway), a Gateway of class agentgateway (its controller stood in for), and one
 * of class envoy (Envoy Gateway's proxy stood in for, placed by the EnvoyProxy app-serving writes;
 * the pool's Service, the EnvoyExtensionPolicy and BackendTrafficPolicy admitted by EG v1.8.1's CRDs).
 */
const STACKS = exampleStacks();
const ROUTER_VARIANTS = [
  { file: 'Pulumi.cloud.yaml', router: { mode: 'standalone' } },
  { file: 'Pulumi.example.yaml', router: { mode: 'standalone' } },
  { file: 'Pulumi.kind.yaml', router: { mode: 'gateway', gatewayClass: 'agentgateway' } },
  // Envoy Gateway: its own form of the pool's route, the proxy pods placed by an EnvoyProxy (Harbor, GPU taints).
  { file: 'Pulumi.example.yaml', router: { mode: 'gateway', gatewayClass: 'envoy' } },
] as const;

/**
 * LoRA adapters from Harbor (features/adapters), on the air-gapped example: the pull Job's
 * `ADAPTERS`, the model server's `--lora-modules`, admitted and rolled out like the rest.
 */
const ADAPTER_VARIANTS = [
  {
    file: 'Pulumi.example.yaml',
    adapters: [
      { name: 'qwen3-sql', harborRef: 'harbor.example.com/ai-adapters/qwen3-sql:v1' },
      { name: 'qwen3-support', harborRef: 'harbor.example.com/ai-adapters/qwen3-support:v1' },
    ],
  },
] as const;

/**
 * The suite of one set, on a control plane of its own. `test/sets/<set>.test.ts` runs it: a file per
 * set, so that vitest runs the sets side by side.
 */
export function describeSet(upstream: Upstream): void {
  describe(`every example stack on the ${upstream} set: rendered with real Helm, admitted, scheduled`, () => {
    let cluster: TestCluster;
    beforeAll(async () => {
      cluster = await startCluster({ crdSet: upstream });
    }, 900_000);
    afterAll(async () => cluster?.stop());

    const run = async (file: string, router?: Record<string, string>, adapters?: readonly Record<string, string>[]) => {
      const edit = (c: Record<string, unknown>) => {
        if (router) c['app-serving:router'] = router;
        if (adapters) (c['app-serving:models'] as { generative: Record<string, unknown>[] }).generative[0]!.adapters = adapters;
      };
      const stack = stackUnderTest(join(APP_DIR, file), { kubeconfig: '/dev/null', upstream, ...((router || adapters) && { edit }) });
      const { plan } = stack;
      expect(plan.models.every((m) => m.upstream === upstream)).toBe(true);
      const prefix = nodePrefix(upstream, stack.name);
      await createNodes(cluster, clusterShape(plan, prefix));
      const objects = renderedManifests((await renderStack(plan, { homeDir: '/home/user' })).resources);
      const charts = await renderReleases(plan.models.flatMap(modelReleases), { applyPatches, apiVersions: await clusterApiVersions(cluster) });
      await ensureNamespaces(cluster, [...objects, ...charts]);
      await applyObjects(cluster, [...objects, ...charts].filter((o) => o.kind !== 'Namespace'));
      await standInControllers(cluster, plan);
      await settled(cluster, plan.models.map((m) => m.namespace));
      expect(await deployedProblems(cluster, plan)).toEqual([]);
      console.log(`${file}${router ? ` (router ${JSON.stringify(router)})` : ''}${adapters ? ` (adapters ${adapters.map((a) => a.name).join(', ')})` : ''} on ${upstream}: ${objects.length} objects and ${charts.length} chart objects (${kinds(charts)}) applied and placed`);
      await removeStack(cluster, plan, prefix);
    };

    it.each(STACKS)('%s', (file) => run(file), 600_000);
    if (upstream === '2026-08') {
      it.each(ROUTER_VARIANTS)('$file, router $router', ({ file, router }) => run(file, router), 600_000);
      it.each(ADAPTER_VARIANTS)('$file with LoRA adapters from Harbor', ({ file, adapters }) => run(file, undefined, adapters), 600_000);
    }
  });
}

const nodePrefix = (upstream: Upstream, stack: string) => `s${upstream.replace('-', '')}-${stack}`.slice(0, 40);
const kinds = (objects: readonly KubeObject[]) => [...new Set(objects.map((o) => o.kind))].sort().join(', ');

/** Every Deployment of the namespaces rolled out and Ready, every Job done (a hang guard only). */
async function settled(cluster: TestCluster, namespaces: readonly string[]): Promise<void> {
  for (const ns of namespaces) {
    for (const job of await list(cluster, `/apis/batch/v1/namespaces/${ns}/jobs`)) {
      await waitFor(cluster, `/apis/batch/v1/namespaces/${ns}/jobs/${job.metadata.name}`, (j) => j.status?.succeeded >= 1, 180_000);
    }
    for (const d of await list(cluster, `/apis/apps/v1/namespaces/${ns}/deployments`)) {
      await waitFor(cluster, `/apis/apps/v1/namespaces/${ns}/deployments/${d.metadata.name}`, (x) => (x.status?.readyReplicas ?? 0) >= (x.spec.replicas ?? 1), 180_000);
    }
  }
}
