import type { Issue } from '../errors.ts';
import type { ValuesFile } from '../discovery.ts';
import { parseImage } from '../images.ts';
import { isValuesMap } from './merge.ts';

/** The repository (without registry) of llm-d-inference-sim; a mirror keeps it at the end of the path. */
export const SIMULATOR_REPOSITORY = 'llm-d/llm-d-inference-sim';

/**
 * The flags of llm-d-inference-sim that take a Go duration (`pflag` `DurationVar`, parsed by
 * `time.ParseDuration`): a number needs a unit (`20ms`, `1s`); a bare number other than `0` makes
 * the simulator log "failed to read configuration" and exit (plain numbers were accepted as
 * milliseconds before v0.9.0). Source: llm-d/llm-d-inference-sim v0.10.2, pkg/common/parser.go.
 */
export const SIMULATOR_DURATION_FLAGS: readonly string[] = [
  'time-to-first-token',
  'time-to-first-token-std-dev',
  'inter-token-latency',
  'inter-token-latency-std-dev',
  'prefill-overhead',
  'prefill-time-per-token',
  'prefill-time-std-dev',
  'kv-cache-transfer-latency',
  'kv-cache-transfer-latency-std-dev',
  'kv-cache-transfer-time-per-token',
  'kv-cache-transfer-time-std-dev',
  'render-timeout',
  'mm-render-timeout',
  'startup-duration',
  'fake-metrics-refresh-interval',
  'time-to-generate-image',
  'time-to-generate-image-std-dev',
];

const DURATION_FLAGS = new Set(SIMULATOR_DURATION_FLAGS);
const BARE_NUMBER = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$/;

/** True when the image is llm-d-inference-sim (from any registry or mirror). */
export function isSimulatorImage(image: string): boolean {
  const { repository } = parseImage(image);
  return repository === SIMULATOR_REPOSITORY || repository.endsWith(`/${SIMULATOR_REPOSITORY}`);
}

/**
 * Warnings about the simulator's duration flags in a modelservice values file: a bare number
 * (`--time-to-first-token "20"`) where the simulator wants a unit (`"20ms"`), which stops it at
 * start-up, so the decode pod never becomes Ready. Only containers whose image is the simulator
 * are checked; each warning names the file, the line and the key.
 */
export function simulatorArgWarnings(file: ValuesFile): Issue[] {
  const warnings: Issue[] = [];
  for (const role of ['decode', 'prefill'] as const) {
    const block = file.values[role];
    const containers = isValuesMap(block) ? block.containers : undefined;
    if (!Array.isArray(containers)) continue;
    containers.forEach((container, index) => {
      if (!isValuesMap(container) || typeof container.image !== 'string' || !isSimulatorImage(container.image)) return;
      const args = container.args;
      if (!Array.isArray(args)) return;
      args.forEach((arg, i) => {
        if (typeof arg !== 'string' || !arg.startsWith('--')) return;
        const eq = arg.indexOf('=');
        const flag = arg.slice(2, eq >= 0 ? eq : undefined);
        if (!DURATION_FLAGS.has(flag)) return;
        const valueAt = eq >= 0 ? i : i + 1;
        const raw = eq >= 0 ? arg.slice(eq + 1) : args[i + 1];
        const value = typeof raw === 'number' ? String(raw) : raw;
        if (typeof value !== 'string' || !BARE_NUMBER.test(value.trim()) || Number(value) === 0) return;
        warnings.push(
          file.source.issue(
            'warning.simulator-duration',
            [role, 'containers', index, 'args', valueAt],
            `--${flag} ${JSON.stringify(value)} has no unit: llm-d-inference-sim (≥ v0.9.0) reads it as a Go duration and exits at start-up ("failed to read configuration"), so the pod never becomes Ready; write ${JSON.stringify(`${value.trim()}ms`)}`,
          ),
        );
      });
    });
  }
  return warnings;
}
