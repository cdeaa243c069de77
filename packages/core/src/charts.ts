import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { DEFAULT_CHARTS, type ChartKey, type ChartRef } from './constants.ts';
import type { StackConfig } from './config/load.ts';
import type { ChartOverride } from './config/types.ts';
import type { Issue } from './errors.ts';
import { ChartArchiveError, chartArchiveEntries, type ChartArchiveEntry } from './chart-package.ts';
import { decodeText, describeErrno, fileKind, FileLimitError, formatLimit, readBoundedFileSync } from './text-file.ts';

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
  const local = isLocalChart(ref.chart);
  if (ref.chart.startsWith('oci://') || local) {
    return ref.repo !== undefined
      ? { key: 'repo', message: `must not be set for ${local ? 'a local chart (a package or folder on disk)' : 'an oci:// chart (the registry is part of the reference)'}` }
      : undefined;
  }
  if (ref.repo === undefined) {
    return { key: 'repo', message: `is required: "${ref.chart}" is a chart name, so Helm needs its repository URL (or give an oci:// reference)` };
  }
  return undefined;
}

/**
 * The charts of the stack: the pinned ones (2026-02's three by default, or another set's, such as
 * the Router charts of 2026-08), with the stack's overrides.
 */
export function chartRefs<K extends string = ChartKey>(
  config: Pick<StackConfig, 'charts' | 'locate'>,
  warnings: Issue[] = [],
  pinnedCharts: Readonly<Record<K, ChartRef>> = DEFAULT_CHARTS as unknown as Record<K, ChartRef>,
): Record<K, ChartRef> {
  const out = {} as Record<K, ChartRef>;
  for (const key of Object.keys(pinnedCharts) as K[]) {
    const pinned: ChartRef = pinnedCharts[key];
    const override = (config.charts as Record<string, ChartOverride | undefined> | undefined)?.[key];
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

/**
 * True for a chart on disk rather than in a repository or registry: a path (`/…`, `./…`, `../…`,
 * `~/…`) or a chart package (`….tgz`). This is the air-gap way: charts mirrored to disk on the
 * machine that runs `pulumi up` (Helm and the Kubernetes provider read the file or folder as is).
 */
export function isLocalChart(chart: string): boolean {
  return chart.startsWith('/') || chart.startsWith('./') || chart.startsWith('../') || chart.startsWith('~/') || /\.tgz$/i.test(chart);
}

/** The chart name a chart key expects: the last path segment of its pinned reference. */
export function expectedChartName(key: string, pinnedCharts: Readonly<Record<string, ChartRef>> = DEFAULT_CHARTS): string {
  return basename(pinnedCharts[key]!.chart);
}

/** A local chart, read: where it is, what kind, and its Chart.yaml's name and version. */
export interface LocalChart {
  readonly path: string;
  readonly kind: 'package' | 'folder';
  readonly name: string;
  readonly version: string;
}

/** Bounds of reading a local chart: a chart package is tens of kilobytes, never this large. */
export const LOCAL_CHART_LIMITS = { packageBytes: 64 * 1024 * 1024, unpackedBytes: 64 * 1024 * 1024, chartYamlBytes: 1024 * 1024 } as const;

/**
 * Where a local chart reference points: `~/` expanded, a relative path resolved against `base` (the
 * stack file's folder — the Pulumi project's folder, where `pulumi up` runs the provider).
 */
export function localChartPath(chart: string, base: string, home: string = homedir()): string {
  const expanded = chart === '~' ? home : chart.startsWith('~/') ? join(home, chart.slice(2)) : chart;
  return isAbsolute(expanded) ? expanded : resolve(base, expanded);
}

/**
 * Reads a local chart (a `.tgz` package or an unpacked folder) far enough to know it is a chart:
 * its `Chart.yaml`'s name and version. Returns a problem (a sentence) when the path is missing, is
 * neither, cannot be read, or holds no readable `Chart.yaml`. Bounded in size whatever the path
 * holds: files are read through core's one bounded reader (a FIFO, a device, a folder or a file of
 * /proc is refused before a byte is read; a package is at most 64 MiB, unpacked too), and a
 * package's entries are named as Helm names them (an archive Helm refuses is refused here).
 */
export function readLocalChart(path: string): LocalChart | { readonly problem: string } {
  let stat;
  try {
    stat = statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { problem: code === 'ENOENT' || code === 'ENOTDIR' ? `no such file or folder: ${path}` : `${path} cannot be read (${describeErrno(code)})` };
  }
  let bytes: Uint8Array;
  let kind: LocalChart['kind'];
  if (stat.isDirectory()) {
    kind = 'folder';
    const file = join(path, 'Chart.yaml');
    try {
      bytes = readBoundedFileSync(file, LOCAL_CHART_LIMITS.chartYamlBytes);
    } catch (error) {
      if (!(error instanceof FileLimitError)) throw error;
      if (error.code === 'ENOENT') return { problem: `${path} is a folder without a Chart.yaml: not a Helm chart (point at the chart's own folder, or at its .tgz package)` };
      return { problem: `${file} ${error.message}${error.reason === 'too-large' ? ': not a Chart.yaml' : ''}` };
    }
  } else if (stat.isFile()) {
    kind = 'package';
    let packaged: Buffer;
    try {
      packaged = readBoundedFileSync(path, LOCAL_CHART_LIMITS.packageBytes);
    } catch (error) {
      if (!(error instanceof FileLimitError)) throw error;
      return { problem: `${path} ${error.message}${error.reason === 'too-large' ? ': not a chart package' : ''}` };
    }
    let tar: Uint8Array;
    try {
      tar = zlib().gunzipSync(packaged, { maxOutputLength: LOCAL_CHART_LIMITS.unpackedBytes });
    } catch (error) {
      const reason = (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' ? `unpacks to more than ${formatLimit(LOCAL_CHART_LIMITS.unpackedBytes)}` : 'not gzip-compressed';
      return { problem: `${path} is not a chart package (.tgz from \`helm package\` or \`helm pull\`): ${reason}` };
    }
    let entries: ChartArchiveEntry[];
    try {
      entries = chartArchiveEntries(tar);
    } catch (error) {
      if (!(error instanceof ChartArchiveError)) throw error;
      return { problem: `${path} ${error.message}` };
    }
    // Helm keys the chart's own files by their path in its folder: Chart.yaml is the chart's (those of
    // vendored dependencies sit deeper, under charts/); of two, Helm keeps the last.
    const chartYaml = entries.filter((e) => e.path === 'Chart.yaml').at(-1);
    if (!chartYaml) return { problem: `${path} is not a chart package: it holds no <chart>/Chart.yaml` };
    if (chartYaml.type !== 'file') return { problem: `${path} is not a chart package: its ${chartYaml.raw} is a link, which Helm reads as an empty file` };
    if (chartYaml.data.length > LOCAL_CHART_LIMITS.chartYamlBytes) return { problem: `${path} is not a chart package: its ${chartYaml.raw} is larger than ${formatLimit(LOCAL_CHART_LIMITS.chartYamlBytes)}` };
    bytes = chartYaml.data;
  } else {
    return { problem: `${path} is neither a file nor a folder (${fileKind(stat)})` };
  }
  const decoded = decodeText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  if ('problem' in decoded) return { problem: `the Chart.yaml of ${path} ${decoded.problem}` };
  let meta: unknown;
  try {
    meta = parse(decoded.text, { maxAliasCount: 10 });
  } catch {
    return { problem: `the Chart.yaml of ${path} is not valid YAML` };
  }
  const { name, version } = (typeof meta === 'object' && meta !== null ? meta : {}) as { name?: unknown; version?: unknown };
  if (typeof name !== 'string' || name === '' || (typeof version !== 'string' && typeof version !== 'number')) {
    return { problem: `the Chart.yaml of ${path} has no name and version: not a Helm chart` };
  }
  return { path, kind, name, version: String(version) };
}

/**
 * Checks every local chart of the stack (see {@link isLocalChart}) against the disk: it exists, is a
 * chart, is the chart its key deploys, and its version is the one the stack names. Returns the
 * charts with each local chart's version read from its Chart.yaml (what Helm deploys: Helm ignores
 * a version given for a local chart), and adds the problems and warnings found.
 */
export function checkLocalCharts<K extends string = ChartKey>(
  config: Pick<StackConfig, 'charts' | 'locate' | 'file'>,
  charts: Record<K, ChartRef>,
  issues: Issue[],
  warnings: Issue[],
  options: { home?: string; pinned?: Readonly<Record<K, ChartRef>> } = {},
): Record<K, ChartRef> {
  const pinnedCharts = (options.pinned ?? DEFAULT_CHARTS) as Readonly<Record<string, ChartRef>>;
  const out = { ...charts };
  const base = dirname(resolve(config.file));
  for (const key of Object.keys(charts) as K[]) {
    const ref = charts[key];
    if (!isLocalChart(ref.chart)) continue;
    const at = (field: 'chart' | 'version') => ['charts', key, field];
    const found = readLocalChart(localChartPath(ref.chart, base, options.home));
    if ('problem' in found) {
      issues.push(config.locate('config.invalid', at('chart'), `${found.problem}${isAbsolute(ref.chart) || ref.chart.startsWith('~/') ? '' : ` (a relative path is read from the stack file's folder, ${base})`}`));
      continue;
    }
    const expected = expectedChartName(key, pinnedCharts);
    if (found.name !== expected) {
      issues.push(config.locate('config.contradiction', at('chart'), `${found.path} holds the chart ${found.name}, not ${expected}: point charts.${key}.chart at the ${expected} chart`));
      continue;
    }
    const given = (config.charts as Record<string, ChartOverride | undefined> | undefined)?.[key]?.version;
    if (given !== undefined && given !== found.version) {
      issues.push(
        config.locate(
          'config.contradiction',
          at('version'),
          `${given} is not the version of the chart at ${found.path} (${found.version}): Helm deploys a local chart as it is, whatever version is asked — remove the key or point at the ${given} package`,
        ),
      );
      continue;
    }
    const pinned = pinnedCharts[key]!.version;
    if (given === undefined && found.version !== pinned) {
      warnings.push(
        config.locate('warning.chart-version', at('chart'), `the chart at ${found.path} is ${found.version}, not the version app-serving checks values against (${pinned}); value keys and defaults may differ`),
      );
    }
    out[key] = { chart: ref.chart, version: found.version };
  }
  return out;
}

/**
 * A chart as a person reads it in `plan`, `images` and `diff`: `<label> <version>`, and where it comes
 * from when that is not the pinned reference (a mirror, a package or folder on disk).
 */
export function describeChart(label: string, ref: ChartRef, pinned?: ChartRef): string {
  const moved = pinned === undefined || ref.chart !== pinned.chart || ref.repo !== pinned.repo;
  return `${label} ${ref.version}${moved ? ` from ${ref.chart}${ref.repo ? ` (${ref.repo})` : ''}` : ''}`;
}

/**
 * node:zlib, loaded when a local chart package is read: every command loads this module, and
 * loading zlib costs each of them about a millisecond (a bundle hoists a static import to its top).
 */
function zlib(): typeof import('node:zlib') {
  return process.getBuiltinModule('node:zlib');
}
