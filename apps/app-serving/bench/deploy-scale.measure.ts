/**
 * Deploy time against the number of models: `pulumi up` (the real engine and Kubernetes provider,
 * the app's own program) of one stack shape with 1 and with 10 models on the test control plane,
 * wall time of each `up` and their ratio. The models are copies of the simulator model (Sim) with no
 * edges between them, so the engine runs their resources side by side: the ratio should stay near
 * 1×. What bounds it: the engine's parallelism (unbounded by default here), the provider's requests
 * to one API server, and the 2 cores this machine has (the provider renders each chart with Helm in
 * process, and the models' Deployments are awaited concurrently).
 *
 *   cd apps/app-serving && npx vitest run --config bench/vitest.config.ts
 *
 * Measures; asserts only that each `up` succeeded.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodes, createTestStack, startCluster, type TestCluster } from '@app-serving/test-cluster';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { appServingProgram } from '../src/program.ts';
import { MODELS_DIR, clusterShape, removeStack, stackUnderTest } from '../test/deploy/support.ts';

const UPSTREAM = (process.env.BENCH_UPSTREAM as '2026-02' | '2026-08' | undefined) ?? '2026-08';
const COUNTS = (process.env.BENCH_MODELS ?? '1,10').split(',').map(Number);

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startCluster({ crdSet: UPSTREAM });
});
afterAll(async () => cluster?.stop());

/** A models folder with `count` copies of Sim (`Sim-01`… with slugs `sim01`…), and a stack of them. */
function stackOf(count: number): { file: string; modelsDir: string } {
  const dir = mkdtempSync(join(tmpdir(), `app-serving-bench-${count}-`));
  const modelsDir = join(dir, 'models');
  mkdirSync(join(modelsDir, 'embedder'), { recursive: true });
  const names: string[] = [];
  for (let i = 1; i <= count; i += 1) {
    const name = `Sim-${String(i).padStart(2, '0')}`;
    const folder = join(modelsDir, 'generative', name);
    cpSync(join(MODELS_DIR, 'generative', 'Sim'), folder, { recursive: true });
    for (const values of readdirSync(folder)) renameSync(join(folder, values), join(folder, values.replace(/-sim$/, `-sim${String(i).padStart(2, '0')}`)));
    names.push(name);
  }
  const file = join(dir, `Pulumi.bench${count}.yaml`);
  writeFileSync(file, `config:\n  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:\n${names.map((n) => `      - name: ${n}\n        access: { open: true }\n`).join('')}`);
  return { file, modelsDir };
}

const seconds: Record<number, number> = {};

it.each(COUNTS)('pulumi up of %i model(s)', async (count) => {
  const { file, modelsDir } = stackOf(count);
  const sut = stackUnderTest(file, { kubeconfig: cluster.kubeconfigPath, modelsDir, upstream: UPSTREAM });
  await createNodes(cluster, clusterShape(sut.plan, sut.name));
  const stack = await createTestStack({ cluster, stackName: sut.name, config: sut.config, secrets: sut.secrets, program: () => appServingProgram(modelsDir) });
  const started = performance.now();
  const up = await stack.up();
  seconds[count] = (performance.now() - started) / 1000;
  expect(up.result.summary.result).toBe('succeeded');
  console.log(`${count} model(s) on ${UPSTREAM}: up created ${up.result.summary.resourceChanges?.create} resources in ${seconds[count]!.toFixed(1)} s`);
  await stack.destroy();
  await stack.remove();
  await removeStack(cluster, sut.plan, sut.name);
});

afterAll(() => {
  const [one, many] = [COUNTS[0]!, COUNTS.at(-1)!];
  if (seconds[one] && seconds[many]) console.log(`up of ${many} vs ${one}: ${(seconds[many]! / seconds[one]!).toFixed(2)}× the wall time`);
});
