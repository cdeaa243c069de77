/**
 * `pulumi up` for real: the Pulumi engine and the Kubernetes provider (built from Go modules) run
 * the app's own program (src/program.ts, `AppServing.fromConfig`) through the Automation API
 * against the test control plane, with the published chart packages (../shared/upstream/charts)
 * rendered by the provider's Helm. Every example stack, on kwok nodes shaped from its plan:
 *
 * - up: every object the plan names is in the cluster with the plan's names, labels and
 *   placement, the model pods are Ready, the pull Jobs Succeeded; `app-serving verify --kubeconfig`
 *   passes right after (through the API server's port-forward to a local model server);
 * - no-op: a second `up` changes nothing (no perpetual diff from a chart, a transform or a secret);
 * - destroy: nothing of the stack is left (namespaces, PVs, cluster-scoped objects).
 *
 * Each stack deploys into a control plane of its own holding the CRDs of its set of upstream
 * versions (2026-02: `crds/`; 2026-08: `current/crds/`).
 */
import { join } from 'node:path';
import { KUBERNETES_PROVIDER } from '../../../../tools/pulumi/build.mjs';
import {
  applyObjects,
  createNodes,
  createTestStack,
  ENVOY_GATEWAY_SYSTEM,
  startCluster,
  startModelServer,
  type TestCluster,
  type TestStack,
} from '@app-serving/test-cluster';
import { DEFAULT_UPSTREAM, loadStackFile, type Upstream } from '@app-serving/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appServingProgram } from '../../src/program.ts';
import { APP_DIR, appServing, clusterShape, deployedProblems, exampleStacks, leftovers, stackUnderTest, wireForVerify, type StackUnderTest } from './support.ts';

/** The set of upstream versions of a stack file (absent `upstream`: 2026-02). */
export const setOf = (file: string): Upstream => loadStackFile(join(APP_DIR, file), file, { checkRules: false }).upstream ?? DEFAULT_UPSTREAM;

/** The namespaces a stack expects to exist already (the KServe Gateway's, when it is not a model's). */
async function prerequisites(cluster: TestCluster, sut: StackUnderTest): Promise<void> {
  const own = new Set(sut.plan.models.map((m) => m.namespace));
  const needed = [sut.plan.kserve?.gateway.namespace].filter((n): n is string => n !== undefined && !own.has(n));
  await applyObjects(cluster, needed.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })));
}

function servedNames(sut: StackUnderTest): string[] {
  return sut.plan.models.map((m) => (m.platform === 'llm-d' ? m.modelServer.servedModelName : m.servedModelName));
}

/**
 * The deploys of the example stacks on one set, into a control plane holding the set's CRDs.
 * `test/deploy/<set>.test.ts` runs it: a file per set, so the sets deploy side by side (vitest runs
 * files in parallel, one inline Pulumi program per process; a file per stack would cost a control
 * plane each, and on 2 cores the CPU is what bounds the run).
 */
export function describeDeploys(upstream: Upstream): void {
  describe(`on a cluster with the CRDs of the ${upstream} set`, () => {
    let cluster: TestCluster;
    beforeAll(async () => {
      cluster = await startCluster({ crdSet: upstream });
    }, 900_000);
    afterAll(async () => cluster?.stop(), 120_000);

    describe.each(exampleStacks().filter((file) => setOf(file) === upstream))('%s, deployed by the real engine', (file: string) => {
      let sut: StackUnderTest;
      let stack: TestStack;
      let created = 0;

      afterAll(async () => {
        await stack?.remove();
      }, 120_000);

      it('up: every object the plan names is in the cluster, placed as planned, Ready; verify passes', async () => {
        sut = stackUnderTest(join(APP_DIR, file), { kubeconfig: cluster.kubeconfigPath });
        await createNodes(cluster, clusterShape(sut.plan, sut.name));
        await prerequisites(cluster, sut);
        stack = await createTestStack({ cluster, stackName: sut.name, config: sut.config, secrets: sut.secrets, program: () => appServingProgram(sut.modelsDir) });
        const up = await stack.up();
        created = up.result.summary.resourceChanges?.create ?? 0;
        expect(up.result.summary.result).toBe('succeeded');
        // The provider built here is older than the one @pulumi/kubernetes asks for: the engine warns and
        // goes on. If that warning ever turns into an error, this up fails.
        expect(up.output).toContain(`expected to have version >=`);
        expect(up.output).toContain(KUBERNETES_PROVIDER.pluginVersion);
        expect(await deployedProblems(cluster, sut.plan)).toEqual([]);

        const server = await startModelServer(servedNames(sut));
        try {
          await wireForVerify(cluster, sut.plan, server.port);
          const verify = await appServing(['verify', '--stack', sut.file, '--models-dir', sut.modelsDir, '--kubeconfig', cluster.kubeconfigPath, '--json', '--timeout', '20s', '--deadline', '180s']);
          const report = JSON.parse(verify.stdout || 'null');
          const failing = (report?.models ?? []).flatMap((m: any) => m.checks.filter((c: any) => c.status === 'fail').map((c: any) => `${m.name}/${c.name}: ${c.message}`));
          expect({ failing, stderr: verify.stderr }).toEqual({ failing: [], stderr: '' });
          expect(verify.code).toBe(0);
        } finally {
          await server.close();
        }
      }, 900_000);

      it('no-op: a second up changes nothing', async () => {
        const again = await stack.up();
        expect(again.result.summary.resourceChanges).toEqual({ same: expect.any(Number) });
        expect(again.result.summary.resourceChanges?.same).toBeGreaterThanOrEqual(created);
      }, 600_000);

      it('destroy: nothing of the stack is left in the cluster', async () => {
        await stack.destroy();
        await cluster.request('DELETE', `/api/v1/namespaces/${ENVOY_GATEWAY_SYSTEM}`);
        expect(await leftovers(cluster, sut.plan)).toEqual([]);
      }, 600_000);
    });
  });
}
