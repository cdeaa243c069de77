/**
 * Charts the upstream data (../shared/upstream) does not carry yet, packaged from their Go module
 * the way the project's release packages them — for now GAIE's `body-based-routing` at v1.5.0 (the
 * stack endpoint's body-based router): `go mod download` of `sigs.k8s.io/gateway-api-inference-extension`
 * (the module proxy serves it, checked against the checksum database), then `helm package --version
 * <tag> --app-version <tag>` of `config/charts/body-based-routing`, as GAIE's `hack/push-chart.sh`
 * does on a release tag (its image tag is already the release's at the tag). Cached under
 * ~/.cache/app-serving/charts/. When the lead adds the package to ../shared/upstream/current/charts,
 * {@link publishedChart} finds it there first.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureHelm } from '../helm.mjs';
import { publishedChart } from './helm.ts';

/** Charts packaged from a Go module: the module, and the chart's folder in it. */
export const MODULE_CHARTS = {
  'body-based-routing': { module: 'sigs.k8s.io/gateway-api-inference-extension', folder: 'config/charts/body-based-routing' },
} as const;

/** The source folder of a Go module at a version (downloaded into the module cache when needed). */
export function goModuleDir(module: string, version: string): string {
  const run = spawnSync('go', ['mod', 'download', '-json', `${module}@${version}`], { encoding: 'utf8', cwd: homedir(), env: { ...process.env, GOFLAGS: '-mod=mod' }, timeout: 600_000 });
  if (run.status !== 0) throw new Error(`go mod download ${module}@${version}: ${run.stderr || run.stdout}`);
  const dir = (JSON.parse(run.stdout) as { Dir?: string }).Dir;
  if (!dir || !existsSync(dir)) throw new Error(`go mod download ${module}@${version} gave no source folder`);
  return dir;
}

/** Where packaged charts are kept: `~/.cache/app-serving/charts` (or under `$XDG_CACHE_HOME`). */
export function moduleChartsCache(): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'app-serving', 'charts');
}

/**
 * The package of a chart at a version: the published one in the upstream data when it is there,
 * else (for a chart of {@link MODULE_CHARTS}) one packaged from its Go module into `cacheDir`
 * (default {@link moduleChartsCache}); undefined otherwise.
 */
export function chartPackage(chart: string, version: string, options: { cacheDir?: string } = {}): string | undefined {
  const published = publishedChart(chart, version);
  if (published) return published;
  const name = chart.replace(/\/+$/, '').split('/').pop()!.replace(/\.tgz$/, '');
  const source = MODULE_CHARTS[name as keyof typeof MODULE_CHARTS];
  if (!source) return undefined;
  const cache = options.cacheDir ?? moduleChartsCache();
  const file = join(cache, `${name}-${version}.tgz`);
  if (existsSync(file)) return file;
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-module-chart-'));
  try {
    const folder = join(dir, name);
    cpSync(join(goModuleDir(source.module, version), source.folder), folder, { recursive: true, dereference: true });
    const helm = ensureHelm();
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, HELM_CACHE_HOME: join(dir, 'cache'), HELM_CONFIG_HOME: join(dir, 'config'), HELM_DATA_HOME: join(dir, 'data') };
    const run = spawnSync(helm, ['package', folder, '--version', version, '--app-version', version, '--destination', dir], { encoding: 'utf8', env, timeout: 120_000 });
    if (run.status !== 0) throw new Error(`helm package ${source.module}@${version} ${source.folder}: ${run.stderr || run.stdout}`);
    mkdirSync(cache, { recursive: true });
    // Written whole or not at all: a rename within the cache folder's file system.
    const staged = join(cache, `.${name}-${version}-${process.pid}.tgz`);
    cpSync(join(dir, `${name}-${version}.tgz`), staged);
    renameSync(staged, file);
    return file;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The chart's `values.yaml` as its module ships it (for tests that hold facts against it). */
export function moduleChartValues(chart: keyof typeof MODULE_CHARTS, version: string): string {
  const source = MODULE_CHARTS[chart];
  return readFileSync(join(goModuleDir(source.module, version), source.folder, 'values.yaml'), 'utf8');
}
