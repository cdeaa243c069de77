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
import { basename, join, relative } from 'node:path';
import { KUBERNETES_PROVIDER } from '../../../../tools/pulumi/build.mjs';
import {
  applyObjects,
  createNodes,
  createTestStack,
  ENVOY_GATEWAY_SYSTEM,
  installCrdFiles,
  startCluster,
  type TestCluster,
  type TestStack,
} from '@app-serving/test-cluster';
import { DEFAULT_UPSTREAM, loadStackFile, type Upstream } from '@app-serving/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appServingProgram } from '../../src/program.ts';
import { APP_DIR, STACKS_DIR, clusterShape, deployedProblems, exampleStacks, leftovers, stackUnderTest, verifyDeployed, type StackUnderTest } from './support.ts';

/** The set of upstream versions of a stack file (absent `upstream`: 2026-02). */
export const setOf = (path: string): Upstream => loadStackFile(path, basename(path), { checkRules: false }).upstream ?? DEFAULT_UPSTREAM;

/**
 * The stacks the deploy tier deploys: every example stack, and the tier's own (`stacks/`: access
 * and autoscaling on both sets, llm-d and KServe side by side), by path.
 */
export function deployedStacks(): string[] {
  return [...exampleStacks().map((file) => join(APP_DIR, file)), ...exampleStacks(STACKS_DIR).map((file) => join(STACKS_DIR, file))];
}

/** Envoy Gateway's CRDs: a 2026-02 cluster (`crds/`) lacks them; KServe models' access needs its SecurityPolicy. */
const ENVOY_GATEWAY_CRDS = 'current/crds/envoy-gateway-v1.8.1.yaml';

/**
 * What a stack expects of the cluster before `up`: the namespaces it does not create (the KServe
 * Gateway's, when it is not a model's), and Envoy Gateway's CRDs where a KServe model's access
 * needs them and the cluster's set does not have them.
 */
export async function prerequisites(cluster: TestCluster, sut: StackUnderTest): Promise<void> {
  const own = new Set(sut.plan.models.map((m) => m.namespace));
  const needed = [sut.plan.kserve?.gateway.namespace].filter((n): n is string => n !== undefined && !own.has(n));
  await applyObjects(cluster, needed.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })));
  if (!sut.plan.models.some((m) => m.platform === 'kserve' && m.access.mode !== 'open')) return;
  if ((await cluster.request('GET', '/apis/gateway.envoyproxy.io/v1alpha1')).status === 404) await installCrdFiles(cluster, [ENVOY_GATEWAY_CRDS]);
}

/**
 * A stack under test made ready to deploy on `cluster`: kwok nodes shaped from its plan, what it
 * expects of the cluster ({@link prerequisites}), and its Pulumi stack running the app's own program.
 * Returned before any `up`, so that the caller holds it (and removes it) whatever the up does.
 */
export async function stackOnCluster(cluster: TestCluster, sut: StackUnderTest): Promise<TestStack> {
  await createNodes(cluster, clusterShape(sut.plan, sut.name));
  await prerequisites(cluster, sut);
  return createTestStack({ cluster, stackName: sut.name, config: sut.config, secrets: sut.secrets, program: () => appServingProgram(sut.modelsDir) });
}

/** The first `up` of a stack: it succeeds and every object of the plan is in the cluster as planned. Returns the up and how many resources it created. */
export async function upAsPlanned(cluster: TestCluster, stack: TestStack, sut: StackUnderTest): Promise<{ up: Awaited<ReturnType<TestStack['up']>>; created: number }> {
  const up = await stack.up();
  expect(up.result.summary.result).toBe('succeeded');
  expect(await deployedProblems(cluster, sut.plan)).toEqual([]);
  return { up, created: up.result.summary.resourceChanges?.create ?? 0 };
}

/** A second `up` changes nothing (no perpetual diff from a chart, a transform or a secret). */
export async function expectNoChange(stack: TestStack, created: number): Promise<void> {
  const again = await stack.up();
  expect(again.result.summary.resourceChanges).toEqual({ same: expect.any(Number) });
  expect(again.result.summary.resourceChanges?.same).toBeGreaterThanOrEqual(created);
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

    describe.each(deployedStacks().filter((path) => setOf(path) === upstream).map((path) => [relative(APP_DIR, path), path]))('%s, deployed by the real engine', (_name: string, path: string) => {
      let sut: StackUnderTest;
      let stack: TestStack;
      let created = 0;

      afterAll(async () => {
        await stack?.remove();
      }, 120_000);

      it('up: every object the plan names is in the cluster, placed as planned, Ready; verify passes', async () => {
        sut = stackUnderTest(path, { kubeconfig: cluster.kubeconfigPath });
        stack = await stackOnCluster(cluster, sut);
        const first = await upAsPlanned(cluster, stack, sut);
        created = first.created;
        // The provider built here is older than the one @pulumi/kubernetes asks for: the engine warns and
        // goes on. If that warning ever turns into an error, this up fails.
        expect(first.up.output).toContain(`expected to have version >=`);
        expect(first.up.output).toContain(KUBERNETES_PROVIDER.pluginVersion);

        const verify = await verifyDeployed(cluster, sut);
        expect({ failing: verify.failing, stderr: verify.stderr }).toEqual({ failing: [], stderr: '' });
        expect(verify.codes.every((code) => code === 0)).toBe(true);
        // Every LoRA adapter answered by its name (verify's adapters check ran and passed).
        const withAdapters = sut.plan.models.filter((m) => m.adapters.length > 0).map((m) => `${m.name}/adapters`);
        expect(verify.passed.filter((check) => check.endsWith('/adapters')).sort()).toEqual(withAdapters.sort());
      }, 900_000);

      it('no-op: a second up changes nothing', () => expectNoChange(stack, created), 600_000);

      it('destroy: nothing of the stack is left in the cluster', async () => {
        await stack.destroy();
        await cluster.request('DELETE', `/api/v1/namespaces/${ENVOY_GATEWAY_SYSTEM}`);
        expect(await leftovers(cluster, sut.plan)).toEqual([]);
      }, 600_000);
    });
  });
}
