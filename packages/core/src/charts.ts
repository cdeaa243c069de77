import { DEFAULT_CHARTS, type ChartKey, type ChartRef } from './constants.ts';
import type { StackConfig } from './config/load.ts';
import type { Issue } from './errors.ts';

/** A chart reference that cannot be used, and which of its fields to fix. */
export interface ChartRefProblem {
  readonly key: 'chart' | 'version' | 'repo';
  readonly message: string;
}

/**
 * Why a chart reference cannot be deployed as given, or `undefined`: an `oci://` chart carries its
 * registry and takes no repository; a chart name needs its Helm repository; a local chart folder
 * (`./…` or `/…`) needs neither; the version is always pinned.
 */
export function chartRefProblem(ref: ChartRef): ChartRefProblem | undefined {
  if (ref.chart.length === 0) return { key: 'chart', message: 'must not be empty' };
  if (ref.version.length === 0) return { key: 'version', message: 'must not be empty: app-serving deploys pinned chart versions only' };
  const local = ref.chart.startsWith('./') || ref.chart.startsWith('/');
  if (ref.chart.startsWith('oci://') || local) {
    return ref.repo !== undefined
      ? { key: 'repo', message: `must not be set for ${local ? 'a local chart folder' : 'an oci:// chart (the registry is part of the reference)'}` }
      : undefined;
  }
  if (ref.repo === undefined) {
    return { key: 'repo', message: `is required: "${ref.chart}" is a chart name, so Helm needs its repository URL (or give an oci:// reference)` };
  }
  return undefined;
}

/** The charts of the stack: pinned defaults, with the stack's overrides. */
export function chartRefs(config: Pick<StackConfig, 'charts' | 'locate'>, warnings: Issue[] = []): Record<ChartKey, ChartRef> {
  const out = {} as Record<ChartKey, ChartRef>;
  for (const key of Object.keys(DEFAULT_CHARTS) as ChartKey[]) {
    const pinned: ChartRef = DEFAULT_CHARTS[key];
    const override = config.charts?.[key];
    if (!override) {
      out[key] = pinned;
      continue;
    }
    const chart = override.chart ?? pinned.chart;
    const repo = override.chart ? override.repo : (override.repo ?? pinned.repo);
    out[key] = { chart, version: override.version ?? pinned.version, ...(repo !== undefined && { repo }) };
    if (override.version && override.version !== pinned.version) {
      warnings.push(
        config.locate(
          'warning.chart-version',
          ['charts', key, 'version'],
          `${override.version} is not the version app-serving checks values against (${pinned.version}); value keys and defaults may differ`,
        ),
      );
    }
  }
  return out;
}
