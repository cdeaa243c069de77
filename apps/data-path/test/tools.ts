/**
 * The data-path tier's tools (tools/data-path builds and caches each): Envoy, the Envoy Gateway
 * controller and its release's chart, the GAIE EPP and body-based router, vLLM on CPU with the prepared models.
 */
import { spawnSync } from 'node:child_process';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ENVOY_GATEWAY_VERSION, VLLM_CPU_ENV, ensureEnvoy, ensureEnvoyGateway, ensureEpp, ensureVllm } from '@app-serving/data-path';
import type { DataPathTools } from './images.ts';

export { ENVOY_GATEWAY_VERSION };

/** The folder of Envoy Gateway's Helm chart in its Go module (the module proxy serves it; the controller's build downloads it). */
export function envoyGatewayChartDir(version = ENVOY_GATEWAY_VERSION): string {
  const run = spawnSync('go', ['mod', 'download', '-json', `github.com/envoyproxy/gateway@${version}`], { encoding: 'utf8', cwd: homedir(), env: { ...process.env, GOFLAGS: '-mod=mod' } });
  if (run.status !== 0) throw new Error(`go mod download github.com/envoyproxy/gateway@${version}: ${run.stderr || run.stdout}`);
  return join((JSON.parse(run.stdout) as { Dir: string }).Dir, 'charts', 'gateway-helm');
}

/** The tools, built first where needed. */
export function dataPathTools(): DataPathTools {
  const vllm = ensureVllm();
  const gaie = ensureEpp();
  return {
    envoy: ensureEnvoy(),
    envoyGateway: ensureEnvoyGateway(),
    epp: gaie.epp,
    bbr: gaie.bbr,
    vllm: { python: vllm.python, chatModelDir: vllm.chatModelDir, embeddingModelDir: vllm.embeddingModelDir, adapterDir: vllm.adapterDir },
    vllmEnv: VLLM_CPU_ENV,
  };
}
