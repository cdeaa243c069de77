import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { upstreamPath } from '@app-serving/test-cluster';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../test/helpers.ts';
import { chartRefProblem, expectedChartName, isLocalChart, readLocalChart } from './charts.ts';
import { loadStackFile } from './stack.ts';
import type { ChartKey } from './constants.ts';
import { isStackError, type Issue } from './errors.ts';
import { planDeployment, type LlmdModelPlan } from './plan.ts';

describe('chartRefProblem', () => {
  it('accepts the pinned forms: a name with its repository, an oci:// reference, a local folder', () => {
    expect(chartRefProblem({ chart: 'llm-d-infra', version: 'v1.3.10', repo: 'https://llm-d-incubation.github.io/llm-d-infra/' })).toBeUndefined();
    expect(chartRefProblem({ chart: 'oci://registry.k8s.io/x/inferencepool', version: 'v1.2.0' })).toBeUndefined();
    expect(chartRefProblem({ chart: './charts/llm-d-infra', version: 'v1.3.10' })).toBeUndefined();
  });

  it('says which field to fix', () => {
    expect(chartRefProblem({ chart: 'llm-d-infra', version: 'v1' })).toEqual({ key: 'repo', message: expect.stringMatching(/^is required: "llm-d-infra" is a chart name/) });
    expect(chartRefProblem({ chart: 'oci://r/c', version: 'v1', repo: 'https://x' })).toEqual({ key: 'repo', message: expect.stringMatching(/^must not be set for an oci:\/\/ chart/) });
    expect(chartRefProblem({ chart: '/srv/charts/c', version: 'v1', repo: 'https://x' })?.key).toBe('repo');
    expect(chartRefProblem({ chart: '', version: 'v1' })?.key).toBe('chart');
    expect(chartRefProblem({ chart: 'oci://r/c', version: '' })?.key).toBe('version');
  });
});

/**
 * Charts on disk — the air-gap way (charts mirrored to the machine that runs `pulumi up`): a chart
 * package or folder is read far enough to know it is the chart its key deploys, at the version the
 * stack names. Held against the published packages in ../shared/upstream/charts.
 */
describe('local charts', () => {
  const PACKAGES = { infra: 'llm-d-infra-v1.3.10', gaie: 'inferencepool-v1.2.0', modelService: 'llm-d-modelservice-v0.4.12' } as const;

  it('recognises a path or a package as local, and a name or an oci:// reference as not', () => {
    for (const chart of ['/srv/charts/llm-d-infra', './charts/x', '../mirror/x', '~/charts/x', 'charts/llm-d-infra-v1.3.10.tgz']) expect(isLocalChart(chart), chart).toBe(true);
    for (const chart of ['llm-d-infra', 'oci://registry.k8s.io/x/inferencepool', 'mirror/llm-d-infra']) expect(isLocalChart(chart), chart).toBe(false);
    expect(chartRefProblem({ chart: 'charts/llm-d-infra-v1.3.10.tgz', version: 'v1.3.10' })).toBeUndefined();
  });

  it.each(Object.entries(PACKAGES))('reads the published %s package and its unpacked folder', (key, base) => {
    const pkg = readLocalChart(upstreamPath(`charts/${base}.tgz`));
    const version = base.slice(base.lastIndexOf('-') + 1);
    expect(pkg).toEqual({ path: upstreamPath(`charts/${base}.tgz`), kind: 'package', name: expectedChartName(key as ChartKey), version });
    // The unpacked folders are the sources at the tag: GAIE's Chart.yaml there says 0.0.0 (its release
    // packages it with --version v1.2.0), which is the version Helm would deploy the folder as.
    expect(readLocalChart(upstreamPath(`charts/${base}`))).toMatchObject({ kind: 'folder', name: expectedChartName(key as ChartKey), version: key === 'gaie' ? '0.0.0' : version });
  });

  it('says why a path is not a chart', () => {
    const dir = mkdtempSync(join(tmpdir(), 'app-serving-charts-'));
    writeFileSync(join(dir, 'plain.tgz'), 'not gzip');
    writeFileSync(join(dir, 'gzip-not-tar.tgz'), gzipSync(Buffer.from('hello, world')));
    mkdirSync(join(dir, 'empty'));
    expect(readLocalChart(join(dir, 'missing.tgz'))).toEqual({ problem: `no such file or folder: ${join(dir, 'missing.tgz')}` });
    expect(readLocalChart(join(dir, 'plain.tgz'))).toEqual({ problem: expect.stringMatching(/is not a chart package .*not gzip-compressed$/) });
    expect(readLocalChart(join(dir, 'gzip-not-tar.tgz'))).toEqual({ problem: expect.stringMatching(/not a chart package: (not a tar archive|it holds no <chart>\/Chart\.yaml)$/) });
    expect(readLocalChart(join(dir, 'empty'))).toEqual({ problem: expect.stringMatching(/is a folder without a Chart\.yaml: not a Helm chart/) });
  });

  it('stays bounded on a gzip bomb: refused, not unpacked', () => {
    const dir = mkdtempSync(join(tmpdir(), 'app-serving-charts-'));
    // 80 gzip members of 1 MiB of zeros each (gunzip reads concatenated members as one stream):
    // 80 MiB unpacked from about 80 KiB, more than a chart package ever unpacks to.
    const member = gzipSync(Buffer.alloc(1024 * 1024));
    writeFileSync(join(dir, 'bomb.tgz'), Buffer.concat(Array.from({ length: 80 }, () => member)));
    expect(readLocalChart(join(dir, 'bomb.tgz'))).toEqual({ problem: expect.stringMatching(/unpacks to more than 64 MiB$/) });
  });

  function stackWithCharts(charts: string): { file: string; dir: string } {
    const dir = mkdtempSync(join(tmpdir(), 'app-serving-charts-stack-'));
    const text = readFileSync(join(REPO_ROOT, 'apps/app-serving/Pulumi.cloud.yaml'), 'utf8').replace('config:\n', `config:\n  app-serving:charts:\n${charts}`);
    writeFileSync(join(dir, 'Pulumi.cloud.yaml'), text);
    return { file: join(dir, 'Pulumi.cloud.yaml'), dir };
  }
  const issuesOf = (file: string): Issue[] => {
    try {
      planDeployment(loadStackFile(file), join(REPO_ROOT, 'models'));
    } catch (error) {
      if (isStackError(error)) return [...error.issues];
      throw error;
    }
    return [];
  };

  it('a stack pointing at the published packages plans, with each version read from the package', () => {
    const lines = Object.entries(PACKAGES).map(([key, base]) => `    ${key}:\n      chart: ${upstreamPath(`charts/${base}.tgz`)}\n`).join('');
    const { file } = stackWithCharts(lines);
    const plan = planDeployment(loadStackFile(file), join(REPO_ROOT, 'models'));
    const model = plan.models[0] as LlmdModelPlan;
    expect(model.charts).toEqual({
      infra: { chart: upstreamPath('charts/llm-d-infra-v1.3.10.tgz'), version: 'v1.3.10' },
      gaie: { chart: upstreamPath('charts/inferencepool-v1.2.0.tgz'), version: 'v1.2.0' },
      modelService: { chart: upstreamPath('charts/llm-d-modelservice-v0.4.12.tgz'), version: 'v0.4.12' },
    });
    expect(plan.warnings.filter((w) => w.code !== 'warning.upstream-superseded')).toEqual([]);
  });

  it('a relative path is read from the stack file\'s folder', () => {
    const { file, dir } = stackWithCharts('    infra:\n      chart: ./charts/llm-d-infra-v1.3.10.tgz\n');
    mkdirSync(join(dir, 'charts'));
    copyFileSync(upstreamPath('charts/llm-d-infra-v1.3.10.tgz'), join(dir, 'charts', 'llm-d-infra-v1.3.10.tgz'));
    expect(issuesOf(file)).toEqual([]);
  });

  it('a missing package, another chart, or another version: refused at the key, with the file and line', () => {
    const { file, dir } = stackWithCharts(
      [
        '    infra:\n      chart: ./mirror/llm-d-infra-v1.3.10.tgz\n',
        `    gaie:\n      chart: ${upstreamPath('charts/llm-d-infra-v1.3.10.tgz')}\n`,
        `    modelService:\n      chart: ${upstreamPath('charts/llm-d-modelservice-v0.4.12')}\n      version: v0.4.13\n`,
      ].join(''),
    );
    const issues = issuesOf(file).map((i) => ({ path: i.path, line: i.line, file: i.file, message: i.message }));
    expect(issues).toEqual([
      { path: 'charts.infra.chart', line: 8, file, message: `no such file or folder: ${join(dir, 'mirror/llm-d-infra-v1.3.10.tgz')} (a relative path is read from the stack file's folder, ${dir})` },
      { path: 'charts.gaie.chart', line: 10, file, message: `${upstreamPath('charts/llm-d-infra-v1.3.10.tgz')} holds the chart llm-d-infra, not inferencepool: point charts.gaie.chart at the inferencepool chart` },
      { path: 'charts.modelService.version', line: 13, file, message: expect.stringMatching(/^v0\.4\.13 is not the version of the chart at .* \(v0\.4\.12\): Helm deploys a local chart as it is/) },
    ]);
  });
});

/** A ustar archive of `entries` (type '0' a file, '2' a link, '5' a folder), gzip-compressed. */
function tgz(entries: readonly { name: string; data?: string; type?: '0' | '1' | '2' | '5'; prefix?: string }[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const data = Buffer.from(entry.data ?? '');
    const header = Buffer.alloc(512);
    header.write(entry.name, 0, 100, 'utf8');
    header.write('0000644\0', 100);
    header.write('0000000\0', 108);
    header.write('0000000\0', 116);
    header.write(`${(entry.type === '2' || entry.type === '1' ? 0 : data.length).toString(8).padStart(11, '0')}\0`, 124);
    header.write('00000000000\0', 136);
    header.write(entry.type ?? '0', 156);
    if (entry.type === '2' || entry.type === '1') header.write(entry.data ?? '', 157, 100);
    header.write('ustar\0', 257);
    header.write('00', 263);
    if (entry.prefix) header.write(entry.prefix, 345, 155);
    header.fill(0x20, 148, 156);
    let sum = 0;
    for (const b of header) sum += b;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(header);
    if (entry.type !== '2' && entry.type !== '1' && data.length > 0) blocks.push(Buffer.concat([data, Buffer.alloc((512 - (data.length % 512)) % 512)]));
  }
  return gzipSync(Buffer.concat([...blocks, Buffer.alloc(1024)]));
}

describe('readLocalChart on hostile paths (M4, m17): a plain problem, never a hang, unbounded memory or an internal error', () => {
  const CHART = 'apiVersion: v2\nname: llm-d-router-gateway\nversion: v0.10.0\n';
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-hostile-charts-'));
  const folder = (name: string, make: (chartYaml: string) => void): string => {
    mkdirSync(join(dir, name));
    make(join(dir, name, 'Chart.yaml'));
    return join(dir, name);
  };

  it('a folder whose Chart.yaml is a FIFO, a link to /dev/zero, a folder, or a link into /proc', () => {
    expect(readLocalChart(folder('fifo', (f) => execFileSync('mkfifo', [f])))).toEqual({ problem: `${join(dir, 'fifo', 'Chart.yaml')} is not a regular file (a FIFO): give the path of a file` });
    expect(readLocalChart(folder('devzero', (f) => symlinkSync('/dev/zero', f)))).toEqual({ problem: `${join(dir, 'devzero', 'Chart.yaml')} is not a regular file (a device): give the path of a file` });
    expect(readLocalChart(folder('dirchart', (f) => mkdirSync(f)))).toEqual({ problem: `${join(dir, 'dirchart', 'Chart.yaml')} is not a regular file (a folder): give the path of a file` });
    expect(readLocalChart(folder('proc', (f) => symlinkSync('/proc/self/mem', f)))).toEqual({ problem: expect.stringMatching(/Chart\.yaml is a file of \/proc, not a file on disk/) });
    expect(readLocalChart(folder('kcore', (f) => symlinkSync('/proc/self/environ', f)))).toEqual({ problem: expect.stringMatching(/Chart\.yaml is a file of \/proc/) });
  });

  it('a link loop says so (not "no such file or folder")', () => {
    symlinkSync(join(dir, 'loop-b'), join(dir, 'loop-a'));
    symlinkSync(join(dir, 'loop-a'), join(dir, 'loop-b'));
    expect(readLocalChart(join(dir, 'loop-a'))).toEqual({ problem: `${join(dir, 'loop-a')} cannot be read (ELOOP: a loop of symbolic links)` });
  });

  it('packages named as Helm names their entries', () => {
    const write = (name: string, entries: Parameters<typeof tgz>[0]) => (writeFileSync(join(dir, name), tgz(entries)), join(dir, name));
    expect(readLocalChart(write('ok.tgz', [{ name: 'c/', type: '5' }, { name: 'c/Chart.yaml', data: CHART }]))).toMatchObject({ kind: 'package', name: 'llm-d-router-gateway', version: 'v0.10.0' });
    // Helm: "unable to detect chart version, no Chart.yaml found" (its first segment, "", is dropped: etc/Chart.yaml).
    expect(readLocalChart(write('abs.tgz', [{ name: '/etc/Chart.yaml', data: CHART }]))).toEqual({ problem: `${join(dir, 'abs.tgz')} is not a chart package: it holds no <chart>/Chart.yaml` });
    expect(readLocalChart(write('abs-inside.tgz', [{ name: 'c//etc/Chart.yaml', data: CHART }]))).toEqual({ problem: expect.stringMatching(/holds an absolute path \("c\/\/etc\/Chart\.yaml"\): Helm refuses/) });
    expect(readLocalChart(write('climb.tgz', [{ name: 'c/Chart.yaml', data: CHART }, { name: 'c/../../x', data: 'x' }]))).toEqual({ problem: expect.stringMatching(/climbs out of the chart's folder/) });
    expect(readLocalChart(write('top.tgz', [{ name: 'Chart.yaml', data: CHART }]))).toEqual({ problem: expect.stringMatching(/outside a chart folder: Helm refuses/) });
    expect(readLocalChart(write('link.tgz', [{ name: 'c/Chart.yaml', data: '/etc/passwd', type: '2' }]))).toEqual({ problem: expect.stringMatching(/its c\/Chart\.yaml is a link, which Helm reads as an empty file/) });
    // What Helm reads and we must too: a long name in the ustar prefix, "." and ".." inside, a backslash.
    expect(readLocalChart(write('prefix.tgz', [{ prefix: 'p'.repeat(120), name: 'Chart.yaml', data: CHART }]))).toMatchObject({ name: 'llm-d-router-gateway' });
    expect(readLocalChart(write('dots.tgz', [{ name: 'c/sub/.././Chart.yaml', data: CHART }]))).toMatchObject({ name: 'llm-d-router-gateway' });
    expect(readLocalChart(write('backslash.tgz', [{ name: 'c\\Chart.yaml', data: CHART }]))).toMatchObject({ name: 'llm-d-router-gateway' });
  });
});
