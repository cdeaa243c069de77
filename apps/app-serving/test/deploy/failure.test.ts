/**
 * `pulumi up` when the cluster cannot do what the stack asks, with the real engine: it fails in
 * bounded time and says why, and once the stack (or the cluster) is fixed, `up` again converges.
 *
 * - A pull Job whose pods fail (ORAS exits 1: the artifact is missing from Harbor) — simulated by a
 *   stack transform the test adds to the app's program, which gives the Job's pods the test
 *   cluster's `fail` outcome — fails `up` once Kubernetes gives the Job up (its backoffLimit),
 *   naming the Job; the model servers are never created.
 * - Model pods no node can take fail `up` at the model's `readyTimeout` (short here), naming the
 *   Deployment; `app-serving verify` right after gives the scheduler's own reason (the provider
 *   does not: it reports the Deployment's events, and the scheduler's reason is on the Pods).
 */
import { join } from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import { createNodes, createTestStack, OUTCOME_ANNOTATION, startCluster, type TestCluster, type TestStack } from '@app-serving/test-cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appServingProgram } from '../../src/program.ts';
import { APP_DIR, appServing, clusterShape, deployedProblems, leftovers, stackUnderTest, type StackUnderTest } from './support.ts';

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startCluster();
}, 600_000);
afterAll(async () => cluster?.stop(), 120_000);

type Models = { generative: any[]; embedder: any[] };

/**
 * A stack transform that makes the pods of one Job fail, as a pull whose artifact is missing would,
 * with no retry: the Job's own retries (backoffLimit 3, 10-20-40 s apart) are Kubernetes' to keep, and
 * at CI's load they stretched this test from 85 s to 7 min.
 */
function failingJob(job: string): pulumi.ResourceTransform {
  return ({ type, props, opts }) => {
    if (type !== 'kubernetes:batch/v1:Job' || props.metadata?.name !== job) return undefined;
    const template = props.spec.template;
    return {
      props: { ...props, spec: { ...props.spec, backoffLimit: 0, template: { ...template, metadata: { ...template.metadata, annotations: { ...template.metadata?.annotations, [OUTCOME_ANNOTATION]: 'fail' } } } } },
      opts,
    };
  };
}

describe('a pull Job that fails', () => {
  let sut: StackUnderTest;
  let stack: TestStack;
  let fail = true;
  afterAll(async () => {
    await stack?.destroy().catch(() => undefined);
    await stack?.remove();
  }, 600_000);

  it('fails up, naming the Job, before any model server is created', async () => {
    // The example's generative model alone: weights from Harbor by the ORAS Job onto a hostPath volume.
    sut = stackUnderTest(join(APP_DIR, 'Pulumi.example.yaml'), { kubeconfig: cluster.kubeconfigPath, edit: (c) => ((c['app-serving:models'] as Models).embedder = []) });
    const model = sut.plan.models[0]!;
    const job = model.storage!.job;
    await createNodes(cluster, clusterShape(sut.plan, 'pull'));
    stack = await createTestStack({
      cluster,
      stackName: sut.name,
      config: sut.config,
      secrets: sut.secrets,
      program: () => {
        if (fail) pulumi.runtime.registerResourceTransform(failingJob(job));
        return appServingProgram(sut.modelsDir);
      },
    });
    const error = await stack.up().then(
      () => null,
      (e: Error) => e,
    );
    expect(error, 'up fails').not.toBeNull();
    expect(error!.message).toContain(job);
    expect(error!.message).toMatch(/failed|BackoffLimitExceeded/i);
    if (model.platform !== 'llm-d') throw new Error('the example model is an llm-d model');
    const decode = await cluster.request('GET', `/apis/apps/v1/namespaces/${model.namespace}/deployments/${model.modelServer.decodeDeployment}`);
    expect(decode.status, 'the model server waits for the weights: never created').toBe(404);
  }, 900_000);

  it('once the weights can be pulled, up again converges', async () => {
    fail = false;
    const up = await stack.up();
    expect(up.result.summary.result).toBe('succeeded');
    expect(await deployedProblems(cluster, sut.plan)).toEqual([]);
    await stack.destroy();
    expect(await leftovers(cluster, sut.plan)).toEqual([]);
  }, 900_000);
});

describe('model pods no node can take', () => {
  let sut: StackUnderTest;
  let stack: TestStack;
  afterAll(async () => {
    await stack?.destroy().catch(() => undefined);
    await stack?.remove();
  }, 600_000);

  it("fail up at the model's readyTimeout; verify gives the scheduler's reason", async () => {
    // The cloud example's generative model (no weights Job), asking for a GPU pool the cluster lacks.
    const good = stackUnderTest(join(APP_DIR, 'Pulumi.cloud.yaml'), { kubeconfig: cluster.kubeconfigPath, edit: (c) => ((c['app-serving:models'] as Models).embedder = []) });
    await createNodes(cluster, clusterShape(good.plan, 'cloud'));
    sut = stackUnderTest(join(APP_DIR, 'Pulumi.cloud.yaml'), {
      kubeconfig: cluster.kubeconfigPath,
      edit: (c) => {
        const models = c['app-serving:models'] as Models;
        models.embedder = [];
        models.generative[0].nodeSelector = { 'cloud.google.com/gke-accelerator': 'nvidia-h100' };
        models.generative[0].readyTimeout = '40s';
      },
    });
    stack = await createTestStack({ cluster, stackName: sut.name, config: sut.config, secrets: sut.secrets, program: () => appServingProgram(sut.modelsDir) });
    const error = await stack.up().then(
      () => null,
      (e: Error & { output?: string }) => e,
    );
    expect(error, 'up fails').not.toBeNull();
    const said = `${error!.message}\n${error!.output ?? ''}`;
    // The EPP (placed like the model) is the first Deployment awaited: its timeout is the model's.
    expect(said).toMatch(/gaie-qwen3-06b-epp[\s\S]*Minimum number of live Pods was not attained/);
    // The provider does not say why (it logs the events of the Deployment, and the scheduler posts
    // its reason on the Pods, at a level the provider leaves out): verify, run right after, does.
    expect(said).not.toMatch(/node affinity/);
    const verify = await appServing(['verify', '--stack', sut.file, '--models-dir', sut.modelsDir, '--kubeconfig', cluster.kubeconfigPath, '--json', '--timeout', '20s', '--deadline', '120s']);
    expect(verify.code).toBe(1);
    const ready = JSON.parse(verify.stdout).models[0].checks.find((c: any) => c.name === 'ready');
    expect(ready.status).toBe('fail');
    expect(`${ready.message} ${ready.failure?.cause ?? ''}`).toMatch(/didn't match Pod's node affinity\/selector/);
    sut = good;
  }, 900_000);

  it('with the model placed where the cluster has nodes, up again converges', async () => {
    await stack.setConfig(sut.config);
    const up = await stack.up();
    expect(up.result.summary.result).toBe('succeeded');
    expect(await deployedProblems(cluster, sut.plan)).toEqual([]);
  }, 900_000);
});
