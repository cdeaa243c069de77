import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadStackFile, planDeployment, type DeploymentPlan } from '@app-serving/core';
import { runPreflight, type PreflightResult } from '@app-serving/k8s-verify';
import { applyObjects, createNodes, installCrdFiles, startCluster, upstreamDir, type KubeObject, type TestCluster } from '@app-serving/test-cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './run-cli.ts';

/**
 * docs/air-gap.md followed word by word, on a test control plane: the cluster gets exactly what the
 * page's prerequisites of a set list — each download mapped to the pinned upstream file it is (the
 * shared upstream data; a version the page names that the data does not hold fails here) — and
 * preflight must pass for the set's example stack. First the 2026-02 list: the example on 2026-02
 * passes, Pulumi.current.yaml (2026-08) fails on exactly the CRDs the 2026-02 list lacks (what the
 * page led a new user into before). Then the 2026-08 list applied over it, as upgrading.md says:
 * Pulumi.current.yaml passes, and the 2026-02 example still does.
 */
const DOC = readFileSync(join(REPO_ROOT, 'docs', 'air-gap.md'), 'utf8');
const APP = join(REPO_ROOT, 'apps', 'app-serving');
const planOf = (file: string): DeploymentPlan => planDeployment(loadStackFile(join(APP, file), file, { checkRules: false }), join(REPO_ROOT, 'models'));

/** The text of one `### <title>` subsection of the prerequisites. */
function section(title: string): string {
  const start = DOC.indexOf(`\n### ${title}\n`);
  expect(start, `air-gap.md has a section "${title}"`).toBeGreaterThan(0);
  const end = DOC.indexOf('\n##', start + 1);
  return DOC.slice(start, end);
}

/**
 * The upstream CRD files a download of the page is: the same project and version in the pinned
 * data (Gateway API's release bundle is held in its experimental channel, a superset of
 * `standard-install.yaml`; GAIE's release `manifests.yaml` is its `config/crd`, every file of that
 * version; llm-d-router's `config/crd/bases/<file>` is the file of that name).
 */
function upstreamFilesOf(url: string): string[] {
  const rules: Array<[RegExp, (m: RegExpExecArray) => RegExp]> = [
    [/github\.com\/kubernetes-sigs\/gateway-api\/releases\/download\/(v[\d.]+)\/standard-install\.yaml$/, (m) => new RegExp(`^gateway-api-${m[1]}-experimental\\.yaml$`)],
    [/github\.com\/kubernetes-sigs\/gateway-api-inference-extension\/releases\/download\/(v[\d.]+)\/manifests\.yaml$/, (m) => new RegExp(`^gaie-${m[1]}-.*\\.yaml$`)],
    [/raw\.githubusercontent\.com\/llm-d\/llm-d-router\/(v[\d.]+)\/config\/crd\/bases\/(.+\.yaml)$/, (m) => new RegExp(`^llm-d-router-${m[1]}-${m[2]!.replace(/\./g, '\\.')}$`)],
  ];
  for (const [pattern, file] of rules) {
    const match = pattern.exec(url);
    if (!match) continue;
    const wanted = file(match);
    const found = ['crds', 'current/crds'].flatMap((dir) => readdirSync(join(upstreamDir(), dir)).filter((f) => wanted.test(f)).map((f) => `${dir}/${f}`));
    expect(found, `the pinned upstream data holds ${url}`).not.toEqual([]);
    return found;
  }
  throw new Error(`air-gap.md downloads ${url}, which this test cannot map to pinned upstream data: add its rule`);
}

/** The CRD files a prerequisites section lists (its `curl` downloads), and Istio's (which `istioctl install` applies). */
function listedCrdFiles(title: string): string[] {
  const urls = [...section(title).matchAll(/^\s*curl [^\n]*?(https:\/\/\S+)$/gm)].map((m) => m[1]!);
  expect(urls.length, title).toBeGreaterThan(1);
  // Istio's CRDs come with its installation; the pinned data holds 1.28.5's, the same kinds and versions
  // (DestinationRule v1beta1 and v1, Telemetry v1) that Istio 1.29 serves.
  return [...urls.flatMap(upstreamFilesOf), 'crds/istio-1.28.5-crd-all.gen.yaml'];
}

/** What istiod makes once installed: the GatewayClass `istio`. */
const ISTIO_CLASS: KubeObject = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'istio' }, spec: { controllerName: 'istio.io/gateway-controller' } };

/**
 * What the page's `istioctl install` leaves in `istio-system` that preflight reads: the istiod
 * Deployment (label `app=istiod`), its image `<hub>/pilot:<tag>` and its `values.pilot.env.*`
 * variables, all taken from the command as the page writes it (`$ISTIO_VERSION` from the line that sets it).
 */
function istiodOfPage(): KubeObject[] {
  const both = section('For both sets');
  const version = /^\s*ISTIO_VERSION=(\S+)/m.exec(both)?.[1];
  const install = /istioctl install(?:[^\n\\]|\\\n)*/.exec(both)?.[0] ?? '';
  const set = (key: string) => new RegExp(`--set '?${key.replace(/[.[\]]/g, '\\$&')}=([^\\s']+)`).exec(install)?.[1];
  const hub = set('hub');
  const tag = set('tag')?.replace('$ISTIO_VERSION', version ?? '');
  const env = [...install.matchAll(/--set '?values\.pilot\.env\.([A-Z_]+)=([^\s']+)/g)].map((m) => ({ name: m[1]!, value: m[2]! }));
  expect({ version, hub, tag, env: env.length }, 'the istioctl install command of air-gap.md').toMatchObject({ version: expect.any(String), hub: expect.any(String), tag: version, env: 1 });
  const labels = { app: 'istiod', istio: 'pilot' };
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'istio-system' } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'istiod', namespace: 'istio-system', labels },
      spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'discovery', image: `${hub}/pilot:${tag}`, env }] } } },
    },
  ];
}

let cluster: TestCluster;

beforeAll(async () => {
  // No upstream CRDs: only what the page lists goes in. Its `hostpath` StorageClass is one of the cluster's own.
  cluster = await startCluster({ upstreamCrds: false });
  // The example stacks' on-prem RKE2 cluster: tainted GPU nodes, the hostPath node among them, and CPU nodes.
  const taints = [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' as const }];
  await createNodes(cluster, [
    { name: 'gpu-node-1', labels: { workload: 'gpu' }, taints, gpus: 2 },
    { name: 'cpu-node-1', labels: { workload: 'cpu' } },
  ]);
}, 600_000);
afterAll(async () => cluster?.stop());

/** Preflight as the CLI runs it (its Harbor host is not looked up: no network in tests); the failed checks, warnings aside. */
async function failedChecks(file: string): Promise<string[]> {
  const result: PreflightResult = await runPreflight(planOf(file), { kubeconfig: cluster.kubeconfigPath, resolveHost: async () => undefined, timeoutMs: 60_000, deadlineMs: 300_000 });
  return result.checks.filter((c) => c.status !== 'pass' && c.severity === 'error').map((c) => `${c.id}: ${c.message}`);
}

describe('docs/air-gap.md, followed word by word', () => {
  it('Istio for the 2026-08 set is 1.29 or newer, installed with the inference extension', () => {
    const both = section('For both sets');
    const version = /^\s*ISTIO_VERSION=(\d+)\.(\d+)\.\d+/m.exec(both);
    expect(version).not.toBeNull();
    expect([Number(version![1]), Number(version![2])]).toEqual([1, expect.any(Number)]);
    expect(Number(version![2])).toBeGreaterThanOrEqual(29);
    expect(both).toContain('--set values.pilot.env.ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true');
    expect(section('The `2026-08` set')).toMatch(/Istio 1\.29 or newer/);
  });

  it('with the 2026-02 list: the 2026-02 example passes preflight, and a 2026-08 stack fails on the CRDs that list lacks', async () => {
    await installCrdFiles(cluster, listedCrdFiles('The `2026-02` set'));
    await applyObjects(cluster, [ISTIO_CLASS, ...istiodOfPage()]);
    expect(await failedChecks('Pulumi.example.yaml')).toEqual([]);
    expect((await failedChecks('Pulumi.current.yaml')).map((f) => f.split(':').slice(0, 2).join(':')).sort()).toEqual(['crd:inferenceobjectives.llm-d.ai', 'crd:inferencepools.inference.networking.k8s.io']);
  }, 600_000);

  it("with the 2026-08 list applied over it: Pulumi.current.yaml passes preflight, and the 2026-02 example still does", async () => {
    await installCrdFiles(cluster, listedCrdFiles('The `2026-08` set'));
    expect(await failedChecks('Pulumi.current.yaml')).toEqual([]);
    expect(await failedChecks('Pulumi.example.yaml')).toEqual([]);
  }, 600_000);
});
