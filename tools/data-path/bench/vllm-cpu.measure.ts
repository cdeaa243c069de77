/**
 * What VLLM_CPU_ENV's `OMP_WAIT_POLICY=PASSIVE` saves: the CPU a real vLLM (SmolLM2, the data-path
 * tier's arguments) spends on BENCH_CHATS 16-token chats after it is ready, with libgomp's default
 * (its threads spin 300,000 times before they sleep) and passive, alternating, BENCH_ROUNDS rounds
 * each, beside BENCH_BUSY busy loops (the other work of a CI run: every core taken).
 *
 *   cd tools/data-path && BENCH_BUSY=3 npx vitest run --config bench/vitest.config.ts
 *
 * CPU is the process group's user + system time from /proc/<pid>/stat before and after the chats.
 * Prints a table and writes `.reports/bench/vllm-cpu-omp.json` at the repository's root. Measures;
 * asserts only that every chat answered.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ensureVllm, groupCpuSeconds, startVllm } from '../src/index.ts';

const CHATS = Number(process.env.BENCH_CHATS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const BUSY = Number(process.env.BENCH_BUSY ?? 0);

const busy: ChildProcess[] = [];
afterAll(() => {
  for (const child of busy) child.kill('SIGKILL');
});

it(`CPU of ${CHATS} chats, libgomp spinning vs passive, beside ${BUSY} busy loops`, async () => {
  for (let i = 0; i < BUSY; i++) busy.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  const { chatModelDir } = ensureVllm();
  // '' is not a value libgomp knows: it says so and keeps its default (spinning first).
  const variants = [
    { name: 'default (spin)', env: { OMP_WAIT_POLICY: '' } },
    { name: 'PASSIVE', env: { OMP_WAIT_POLICY: 'PASSIVE' } },
  ];
  const rows: { variant: string; round: number; chatCpuSeconds: number; readyCpuSeconds: number; load1: number }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const variant of variants) {
      const server = await startVllm({
        model: chatModelDir,
        args: ['--served-model-name', 'smollm2', '--enforce-eager', '--max-model-len', '2048'],
        env: variant.env,
        readyTimeoutMs: 1_500_000,
      });
      try {
        const ready = groupCpuSeconds(server.pid);
        for (let i = 0; i < CHATS; i++) {
          const response = await fetch(`${server.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'smollm2', messages: [{ role: 'user', content: 'Say hi' }], max_tokens: 16 }),
            signal: AbortSignal.timeout(600_000),
          });
          expect(response.status).toBe(200);
          await response.json();
        }
        rows.push({ variant: variant.name, round, readyCpuSeconds: ready, chatCpuSeconds: Number((groupCpuSeconds(server.pid) - ready).toFixed(2)), load1: Number(loadavg()[0]!.toFixed(1)) });
      } finally {
        await server.stop();
      }
    }
  }
  console.table(rows);
  const out = join(import.meta.dirname, '..', '..', '..', '.reports', 'bench');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'vllm-cpu-omp.json'), `${JSON.stringify({ chats: CHATS, tokensPerChat: 16, busyLoops: BUSY, rows }, null, 2)}\n`);
});
