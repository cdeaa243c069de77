import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, onTestFinished } from 'vitest';
import { CLI_ROOT, REPO_ROOT } from '../run-cli.ts';

const BIN = join(CLI_ROOT, 'bin', 'app-serving.js');

export interface HostileResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Wall-clock time of the run, ms. */
  readonly ms: number;
  /** Peak resident memory of the process (VmHWM), bytes; null where /proc is not there. */
  readonly peakBytes: number | null;
}

export interface HostileOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Run with `--expose-gc` and a full garbage collection every 25 ms (timers must survive it). */
  readonly gcStress?: boolean;
  /** Kill the run after this long (the test then fails on `ms`): a hang guard, longer than any `--deadline` the tests give. @default 180000 */
  readonly killAfterMs?: number;
  /** Close stdout after the first bytes arrive (a reader like `head -1` that goes away). */
  readonly closeStdoutEarly?: boolean;
  /** Run under `ulimit -f <blocks>` (512-byte blocks): writing a larger file fails with EFBIG, as on a full disk. */
  readonly fileSizeLimitBlocks?: number;
  /** Send this signal once stderr has printed text matching `when`, or once the file `whenFile` exists (a run interrupted part-way). */
  readonly interrupt?: { readonly signal: NodeJS.Signals; readonly when?: RegExp; readonly whenFile?: string };
}

let gcPreload: string | undefined;

function preload(): string {
  if (!gcPreload) {
    const dir = mkdtempSync(join(tmpdir(), 'app-serving-gc-'));
    gcPreload = join(dir, 'gc-stress.mjs');
    writeFileSync(gcPreload, 'setInterval(() => globalThis.gc(), 25).unref();\n');
  }
  return gcPreload;
}

/** Spawns the built CLI as a user would, measuring time and peak memory. */
export function runCli(args: readonly string[], options: HostileOptions = {}): Promise<HostileResult> {
  const node = options.gcStress ? ['--expose-gc', '--import', preload()] : [];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const argv = [...node, BIN, ...args];
    const [command, commandArgs] =
      options.fileSizeLimitBlocks === undefined ? [process.execPath, argv] : ['/bin/sh', ['-c', `ulimit -f ${options.fileSizeLimitBlocks} && exec "$0" "$@"`, process.execPath, ...argv]];
    const child = spawn(command, commandArgs, {
      cwd: options.cwd ?? REPO_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let peak: number | null = null;
    const sample = () => {
      try {
        const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (hwm) peak = Math.max(peak ?? 0, Number(hwm[1]) * 1024);
      } catch {
        // gone, or no /proc
      }
    };
    let interrupted = false;
    const sampler = setInterval(() => {
      sample();
      if (options.interrupt?.whenFile && !interrupted && existsSync(options.interrupt.whenFile)) {
        interrupted = true;
        child.kill(options.interrupt.signal);
      }
    }, 50);
    const killer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 180_000);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (options.closeStdoutEarly) child.stdout.destroy();
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (options.interrupt?.when && !interrupted && options.interrupt.when.test(stderr)) {
        interrupted = true;
        child.kill(options.interrupt.signal);
      }
    });
    child.on('error', reject);
    child.on('exit', () => sample());
    child.on('close', (code, signal) => {
      clearInterval(sampler);
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started, peakBytes: peak });
    });
  });
}

// Raw control characters a hostile server, file or folder name could bring into a terminal:
// every C0 control but \n and \t, DEL, C1 controls, and the invisible characters that change what
// a line appears to say (bidirectional controls, zero-width characters).
// eslint-disable-next-line no-control-regex
export const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

export interface Expectations {
  /** Exit codes allowed. @default [0, 1, 2] */
  readonly codes?: readonly number[];
  /** Strings that must appear nowhere in the output. */
  readonly secrets?: readonly string[];
  /** Highest peak memory allowed, bytes. @default 400 MiB */
  readonly maxPeakBytes?: number;
}

/**
 * What every run on hostile input must hold: an expected exit code (never 70), bounded memory, no
 * secret, no raw control character. Time is bounded only by the hang guard (`killAfterMs`: a killed
 * run has a signal): the run's time is in the context, never asserted (a loaded machine is slow).
 */
export function expectSafe(result: HostileResult, what: string, expectations: Expectations = {}): void {
  const context = `${what}\n--- exit ${result.code} ${result.signal ?? ''} in ${Math.round(result.ms)} ms\n--- stderr:\n${result.stderr.slice(0, 2000)}\n--- stdout:\n${result.stdout.slice(0, 2000)}`;
  expect(result.signal, context).toBeNull();
  expect(expectations.codes ?? [0, 1, 2], context).toContain(result.code);
  expect(result.stderr, context).not.toMatch(/internal error|please report|\n\s+at .+:\d+:\d+\)?\n/);
  if (result.peakBytes !== null) expect(result.peakBytes, context).toBeLessThan(expectations.maxPeakBytes ?? 400 * 1024 * 1024);
  const all = result.stdout + result.stderr;
  expect(RAW_CONTROL.test(all), `${context}\n--- raw control character at ${all.search(RAW_CONTROL)}: ${JSON.stringify(all.slice(Math.max(0, all.search(RAW_CONTROL) - 40), all.search(RAW_CONTROL) + 40))}`).toBe(false);
  for (const secret of expectations.secrets ?? []) expect(all.includes(secret), `${context}\n--- leaks ${JSON.stringify(secret)}`).toBe(false);
}

/** Registers clean-up for the test: the test's own `onTestFinished` (concurrent tests must pass theirs). */
export type OnFinished = (fn: () => void | Promise<void>) => void;

/** A temporary folder, removed after the test. */
export function tempDir(onFinished: OnFinished = onTestFinished): string {
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-hostile-'));
  onFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
