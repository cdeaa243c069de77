/**
 * Real Helm (v4, built from its Go module: ../helm.mjs) rendering a published chart package with the
 * values we give it: `helm template`, as the Kubernetes provider's `helm.v4.Chart` renders it,
 * without Pulumi. Tests apply what it renders to the control plane.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ensureHelm } from '../helm.mjs';
import type { TestCluster } from './cluster.ts';
import type { KubeObject } from './objects.ts';
import { upstreamPath } from './upstream.ts';

export interface HelmTemplateArgs {
  /** A chart package (`.tgz`) or folder. */
  readonly chart: string;
  readonly release: string;
  readonly namespace: string;
  readonly values: unknown;
  /** `--api-versions`: what the chart's `.Capabilities.APIVersions.Has` sees (e.g. from {@link clusterApiVersions}). */
  readonly apiVersions?: readonly string[];
  /** `--kube-version`. @default "v1.34.4" (the test cluster's) */
  readonly kubeVersion?: string;
}

/** Renders a chart with Helm and returns its objects (every non-empty document); throws with Helm's error. */
export async function helmTemplate(args: HelmTemplateArgs): Promise<KubeObject[]> {
  const helm = ensureHelm();
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-helm-'));
  try {
    const valuesFile = join(dir, 'values.json');
    writeFileSync(valuesFile, JSON.stringify(args.values ?? {}));
    const argv = [
      'template', args.release, args.chart,
      '--namespace', args.namespace,
      '--values', valuesFile,
      '--kube-version', args.kubeVersion ?? 'v1.34.4',
      ...(args.apiVersions ?? []).flatMap((v) => ['--api-versions', v]),
    ];
    const { code, stdout, stderr } = await run(helm, argv, { HOME: dir, HELM_CACHE_HOME: join(dir, 'cache'), HELM_CONFIG_HOME: join(dir, 'config'), HELM_DATA_HOME: join(dir, 'data') });
    if (code !== 0) throw new Error(`helm template ${args.release} ${args.chart} failed (${code}): ${stderr.trim() || stdout.slice(0, 2000)}`);
    return parseAllDocuments(stdout)
      .map((doc) => doc.toJS() as KubeObject | null)
      .filter((o): o is KubeObject => o !== null && typeof o === 'object' && typeof o.kind === 'string');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The group/versions the cluster serves (for `--api-versions`), as the provider's Helm would see them. */
export async function clusterApiVersions(cluster: TestCluster): Promise<string[]> {
  const res = await cluster.request('GET', '/apis');
  const groups = (res.body as { groups: Array<{ versions: Array<{ groupVersion: string }> }> }).groups;
  return ['v1', ...groups.flatMap((g) => g.versions.map((v) => v.groupVersion))].sort();
}

function run(command: string, args: readonly string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The published package of a chart in the upstream data (`charts/<name>-<version>.tgz`), or undefined. */
export function publishedChart(chart: string, version: string): string | undefined {
  const name = chart.replace(/\/+$/, '').split('/').pop()!.replace(/\.tgz$/, '').replace(new RegExp(`-${version.replace(/\./g, '\\.')}$`), '');
  for (const dir of ['charts', 'current/charts']) {
    const file = upstreamPath(`${dir}/${name}-${version}.tgz`, { optional: true });
    if (file) return file;
  }
  return undefined;
}

/** Kinds that live outside namespaces (what a chart of ours may render). */
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'PersistentVolume', 'StorageClass', 'PriorityClass', 'GatewayClass', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']);

/** One Helm release of a model's plan: chart, release name, namespace, values, post-render patches. */
export interface PlannedRelease {
  readonly chart: { readonly chart: string; readonly version: string };
  readonly release: string;
  readonly namespace: string;
  readonly values: unknown;
  readonly patches: readonly unknown[];
}

/**
 * What the releases of a plan render, as the Kubernetes provider would register them: the published
 * chart package (a local chart as given; a remote one from the upstream data) rendered by Helm with
 * the plan's values, namespaced objects put in the release's namespace, and the plan's post-render
 * patches applied by `applyPatches` (core's, passed in: test-cluster does not depend on core).
 */
export async function renderReleases(
  releases: readonly PlannedRelease[],
  options: { applyPatches: (patches: readonly any[], object: any) => unknown; apiVersions?: readonly string[] },
): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const r of releases) {
    const local = r.chart.chart.startsWith('/') ? r.chart.chart : publishedChart(r.chart.chart, r.chart.version);
    if (!local) throw new Error(`no published package of ${r.chart.chart} ${r.chart.version} in the upstream data`);
    for (const object of await helmTemplate({ chart: local, release: r.release, namespace: r.namespace, values: r.values, ...(options.apiVersions && { apiVersions: options.apiVersions }) })) {
      const placed = CLUSTER_SCOPED.has(object.kind) || object.metadata.namespace ? object : { ...object, metadata: { ...object.metadata, namespace: r.namespace } };
      out.push(options.applyPatches(r.patches, placed) as KubeObject);
    }
  }
  return out;
}
