/** What the data-path tests share: running a command to its end, and reading a safetensors file's header. */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readSync } from 'node:fs';

export interface Finished {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to its end (asynchronously: the test's other work goes on), collecting its output. */
export function runToEnd(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-200_000)));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

export interface TensorInfo {
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly data_offsets: readonly [number, number];
}

/**
 * The header of a safetensors file: 8 bytes (little-endian length), then that many bytes of JSON
 * naming each tensor's dtype, shape and byte range. Refuses a header over 16 MB (the format's own
 * readers bound it at 100 MB; ours are a few kB).
 */
export function safetensorsHeader(file: string): { tensors: Record<string, TensorInfo>; metadata: Record<string, string> | undefined; dataBytes: number } {
  const fd = openSync(file, 'r');
  try {
    const size = Buffer.alloc(8);
    readSync(fd, size, 0, 8, 0);
    const length = Number(size.readBigUInt64LE());
    if (length > 16 * 1024 * 1024) throw new Error(`${file}: a safetensors header of ${length} bytes`);
    const json = Buffer.alloc(length);
    readSync(fd, json, 0, length, 8);
    const { __metadata__: metadata, ...tensors } = JSON.parse(json.toString('utf8')) as Record<string, unknown>;
    const dataBytes = Math.max(0, ...Object.values(tensors as Record<string, TensorInfo>).map((t) => t.data_offsets[1]));
    return { tensors: tensors as Record<string, TensorInfo>, metadata: metadata as Record<string, string> | undefined, dataBytes };
  } finally {
    closeSync(fd);
  }
}
