import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { helmTemplate } from './helm.ts';
import { chartPackage, moduleChartValues } from './module-charts.ts';

const BBR = 'oci://registry.k8s.io/gateway-api-inference-extension/charts/body-based-routing';
// A cache of the test's own, so that the packaging runs (Helm itself stays in the shared cache).
const scratch = mkdtempSync(join(tmpdir(), 'app-serving-module-charts-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('charts packaged from their Go module', () => {
  it("packages GAIE v1.5.0's body-based-routing chart as its release does (version and appVersion the tag), once, into the cache", async () => {
    const file = chartPackage(BBR, 'v1.5.0', { cacheDir: scratch })!;
    expect(file).toBe(join(scratch, 'body-based-routing-v1.5.0.tgz'));
    const chart = parse(spawnSync('tar', ['-xzOf', file, 'body-based-routing/Chart.yaml'], { encoding: 'utf8' }).stdout);
    expect({ name: chart.name, version: chart.version, appVersion: chart.appVersion }).toEqual({ name: 'body-based-routing', version: 'v1.5.0', appVersion: 'v1.5.0' });
    // The release's image is the chart's default at the tag.
    expect(parse(moduleChartValues('body-based-routing', 'v1.5.0')).bbr.image.tag).toBe('v1.5.0');
    const objects = await helmTemplate({ chart: file, release: 'endpoint-bbr', namespace: 'app-serving', values: {} });
    const deployment = objects.find((o) => o.kind === 'Deployment') as unknown as { metadata: { name: string }; spec: { template: { spec: { containers: { image: string }[] } } } };
    expect(deployment.metadata.name).toBe('body-based-router');
    expect(deployment.spec.template.spec.containers[0]?.image).toBe('registry.k8s.io/gateway-api-inference-extension/bbr:v1.5.0');
    // Cached: the second call packages nothing.
    expect(chartPackage(`${BBR}/`, 'v1.5.0', { cacheDir: scratch })).toBe(file);
  }, 600_000);

  it('knows no other chart: undefined for a chart neither published upstream nor in a module', () => {
    expect(chartPackage('oci://example.com/charts/not-a-chart', 'v1.0.0', { cacheDir: scratch })).toBeUndefined();
  });
});
