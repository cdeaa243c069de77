/**
 * The real vLLM (../vllm.mjs) serving the prepared SmolLM2 folder with the prepared LoRA adapter on
 * 127.0.0.1, as the data-path tier will run it: one chat request to the base model, one to the
 * adapter. The timeouts are hang guards for a loaded 2-core machine (vLLM took 97 s to be ready at
 * load 23); nothing here asserts how long anything took.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureVllm, groupMembers, startVllm, type VllmServer } from '../src/index.ts';

const ADAPTER = 'smollm2-lora';
let server: VllmServer | undefined;

beforeAll(async () => {
  const { chatModelDir, adapterDir } = ensureVllm();
  server = await startVllm({
    model: chatModelDir,
    args: ['--served-model-name', 'smollm2', '--dtype', 'bfloat16', '--enforce-eager', '--max-model-len', '2048', '--enable-lora', '--max-lora-rank', '8', '--lora-modules', `${ADAPTER}=${adapterDir}`],
    // libgomp (torch's OpenMP) prints its settings at start: the test below reads them.
    env: { OMP_DISPLAY_ENV: 'VERBOSE' },
    readyTimeoutMs: 1_500_000,
  });
}, 1_800_000);

afterAll(async () => {
  await server?.stop();
}, 120_000);

/**
 * One chat request, given up after 10 minutes (a hang guard). Not fetch: undici gives up on an
 * answer whose headers take 5 minutes (its headersTimeout), which vLLM's first adapter request
 * passed at load 30 in a CI run (vLLM answers a non-streamed request only when it is done).
 */
function chat(model: string): Promise<{ status: number; body: any }> {
  const payload = JSON.stringify({ model, messages: [{ role: 'user', content: 'What is the capital of France?' }], max_tokens: 16, temperature: 0 });
  return new Promise((resolve, reject) => {
    const req = request(`${server!.url}/v1/chat/completions`, { method: 'POST', timeout: 600_000, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${model}: no answer in 10 minutes`)));
    req.on('error', reject);
    req.end(payload);
  });
}

describe('vLLM on the CPU, SmolLM2 with a LoRA adapter', () => {
  it('lists the base model and the adapter, the adapter as a child of the base model', async () => {
    const response = await fetch(`${server!.url}/v1/models`, { signal: AbortSignal.timeout(60_000) });
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as { data: Array<{ id: string; parent: string | null; root: string }> };
    expect(data.map((m) => ({ id: m.id, parent: m.parent })).sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: 'smollm2', parent: null },
      { id: ADAPTER, parent: 'smollm2' },
    ]);
  });

  it('runs as two processes, the server and its engine, the model worker inside the engine (VLLM_CPU_ENV)', () => {
    const names = groupMembers(server!.pid).map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      } catch {
        return 'gone';
      }
    });
    // vLLM names its processes (VLLM::EngineCore, VLLM::Worker, cut to 15 characters by the kernel).
    expect(names.filter((name) => name.startsWith('VLLM::'))).toEqual(['VLLM::EngineCor']);
  });

  it("its OpenMP threads sleep when they wait, not spin (VLLM_CPU_ENV's OMP_WAIT_POLICY, as torch's libgomp reads it)", () => {
    const log = readFileSync(server!.logFile, 'utf8');
    const shown = /OPENMP DISPLAY ENVIRONMENT BEGIN([\s\S]*?)OPENMP DISPLAY ENVIRONMENT END/.exec(log)?.[1] ?? '';
    expect(shown, 'libgomp printed no settings: is it still the OpenMP runtime vLLM loads?').toContain('OMP_WAIT_POLICY');
    expect(shown).toMatch(/GOMP_SPINCOUNT = '0'/);
  });

  it('answers a chat request to the base model', async () => {
    const { status, body } = await chat('smollm2');
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.model).toBe('smollm2');
    expect(body.object).toBe('chat.completion');
    expect(body.choices[0].message.role).toBe('assistant');
    expect(body.choices[0].message.content).toContain('Paris');
    expect(body.usage.completion_tokens).toBeGreaterThan(0);
  }, 600_000);

  it('answers a chat request to the adapter', async () => {
    const { status, body } = await chat(ADAPTER);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.model).toBe(ADAPTER);
    expect(body.choices[0].message.role).toBe('assistant');
    expect(typeof body.choices[0].message.content).toBe('string');
    expect(body.choices[0].message.content.length).toBeGreaterThan(0);
    expect(body.usage.completion_tokens).toBeGreaterThan(0);
  }, 600_000);

  it("serves the metrics an endpoint picker scores it by, the adapters' included", async () => {
    const response = await fetch(`${server!.url}/metrics`, { signal: AbortSignal.timeout(60_000) });
    expect(response.status).toBe(200);
    const names = new Set((await response.text()).split('\n').filter((l) => l.startsWith('vllm:')).map((l) => l.split(/[{ ]/)[0]));
    // What the GAIE v1.5.0 EPP reads from a vLLM pod by default (pkg/epp/server/options.go; it logs
    // an error for every scrape without the LoRA gauge, which vLLM serves only with --enable-lora).
    for (const name of ['vllm:num_requests_waiting', 'vllm:num_requests_running', 'vllm:kv_cache_usage_perc', 'vllm:lora_requests_info', 'vllm:cache_config_info']) {
      expect(names).toContain(name);
    }
  });
});
