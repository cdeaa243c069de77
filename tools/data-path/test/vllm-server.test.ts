/**
 * startVllm's own behaviour, with stand-ins for vLLM's python (vllm.test.ts runs the real one): a
 * server that refuses its arguments fails the start with the end of its log, and one that never
 * answers is stopped, with everything it started, when the guard runs out.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { groupCpuSeconds, groupMembers, startVllm, VLLM_SERVER_MODULE } from '../src/index.ts';

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

describe('a process group, from /proc', () => {
  it('its members, and the CPU they have used: a busy loop and its busy child, as `ps` counts their times', async () => {
    const leader = spawn('sh', ['-c', 'sh -c "while :; do :; done" & while :; do :; done'], { detached: true, stdio: 'ignore' });
    try {
      const pgid = leader.pid!;
      // Until both loops run and have used a measurable time (a hang guard, not a timing).
      const until = Date.now() + 120_000;
      while (groupMembers(pgid).length < 2 || groupCpuSeconds(pgid) < 0.5) {
        if (Date.now() > until) throw new Error(`the loops did not start: ${groupMembers(pgid).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const members = groupMembers(pgid);
      const seconds = groupCpuSeconds(pgid);
      // ps's CPU time of the same processes, read after ours: at least as much, less what ps cuts
      // off each (it counts whole seconds).
      const ps = members.reduce((sum, pid) => sum + Number(execFileSync('ps', ['-o', 'cputimes=', '-p', String(pid)], { encoding: 'utf8' }).trim()), 0);
      expect(members).toContain(pgid);
      expect(seconds).toBeGreaterThanOrEqual(0.5);
      expect(ps).toBeGreaterThan(seconds - members.length);
    } finally {
      process.kill(-leader.pid!, 'SIGKILL');
    }
  });
});
