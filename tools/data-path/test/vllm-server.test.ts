/**
 * startVllm's own behaviour, with stand-ins for vLLM's python (vllm.test.ts runs the real one): a
 * server that refuses its arguments fails the start with the end of its log, and one that never
 * answers is stopped, with everything it started, when the guard runs out.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startVllm, VLLM_SERVER_MODULE } from '../src/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'data-path-vllm-server-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function standIn(name: string, script: string): string {
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${script}\n`);
  chmodSync(file, 0o755);
  return file;
}

/** Whether a process has ended (a zombie has: nothing here may reap an orphan). */
const gone = (pid: number) => {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
};

describe('startVllm', () => {
  it('rejects with the end of the log when the server exits before it is ready (an argument vLLM refuses)', async () => {
    // What vLLM's argument parser prints for an unknown flag, and its exit code.
    const python = standIn('refuses', 'echo "$@" > "$(dirname "$0")/argv"; echo "api_server.py: error: unrecognized arguments: --no-such-flag" >&2; exit 2');
    const error = await startVllm({ python, model: '/models/m', port: 18_999, args: ['--no-such-flag'] }).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).toBe(
      `vLLM exited with 2 before it was ready (${python} -m ${VLLM_SERVER_MODULE} --model /models/m --host 127.0.0.1 --port 18999 --no-such-flag):\napi_server.py: error: unrecognized arguments: --no-such-flag`,
    );
    expect(readFileSync(join(dir, 'argv'), 'utf8').trim()).toBe(`-m ${VLLM_SERVER_MODULE} --model /models/m --host 127.0.0.1 --port 18999 --no-such-flag`);
  });

  it('gives it the CPU environment, the caller’s on top', async () => {
    const python = standIn('env', 'echo "$VLLM_CPU_KVCACHE_SPACE $VLLM_CPU_OMP_THREADS_BIND $HF_HUB_OFFLINE $EXTRA"; exit 3');
    const error = await startVllm({ python, model: '/m', env: { EXTRA: 'x', HF_HUB_OFFLINE: '1' } }).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message.split('\n').at(-1)).toBe('1 nobind 1 x');
  });

  it('stops a server that never answers, and what it started, when the guard runs out (all of it ended when the start rejects)', async () => {
    const python = standIn('silent', `sleep 600 & echo $! > "$(dirname "$0")/grandchild"; echo started; wait`);
    const error = await startVllm({ python, model: '/m', readyTimeoutMs: 1000 }).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(/^vLLM was not ready after 1 s \(.* -m vllm\.entrypoints\.openai\.api_server --model \/m --host 127\.0\.0\.1 --port \d+\):\nstarted$/);
    expect(existsSync(join(dir, 'grandchild'))).toBe(true);
    expect(gone(Number(readFileSync(join(dir, 'grandchild'), 'utf8')))).toBe(true);
  });
});
