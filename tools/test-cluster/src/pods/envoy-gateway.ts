/**
 * Envoy Gateway installed into the data-path tier's cluster the way its users install it: the
 * `gateway-helm` chart of the release (from the Go module `github.com/envoyproxy/gateway`, which
 * the module proxy serves with its `charts/` folder), rendered by real Helm and applied, with the
 * controller's certificates made by the release's own `envoy-gateway certgen` (the chart runs it as
 * a Job; Job pods are kwok's here, so the tier runs it once itself, with the same effect: the
 * Secrets `envoy-gateway`, `envoy`, `envoy-rate-limit` in its namespace).
 *
 * The chart's controller Deployment is then an ordinary pod of the cluster: the pod runtime runs it
 * (`envoy-gateway server`), with its ServiceAccount's RBAC from the chart, its config at /config and
 * its certificates at /certs. It creates each Gateway's proxy Deployment, whose pod the runtime runs
 * as a real Envoy from the Deployment's own arguments (the bootstrap that dials the controller's
 * xDS at `envoy-gateway.envoy-gateway-system.svc.cluster.local:18000`).
 *
 * Left out, with the reason: the topology injector (a mutating webhook for the proxy pods, which the
 * API server would call through the controller's Service: no kube-proxy runs here). The chart's
 * CRDs are the cluster's already (current/crds).
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestCluster } from '../cluster.ts';
import { helmTemplate } from '../helm.ts';
import { ENVOY_GATEWAY_SYSTEM } from '../controllers.ts';
import { applyObjects, type KubeObject } from '../objects.ts';


export interface EnvoyGatewayInstall {
  /** The folder of the chart in the module (`<module>/charts/gateway-helm`). */
  readonly chartDir: string;
  /** The release's version, e.g. `v1.8.1`: the chart's version and the controller's image tag. */
  readonly version: string;
  /** The `envoy-gateway` binary of that release (for certgen). */
  readonly binary: string;
  /** Values over the chart's (merged after the tier's own). */
  readonly values?: Record<string, unknown>;
}

/** The controller's image as the release names it (what the pod runtime maps to the binary). */
export function envoyGatewayImage(version: string): string {
  return `docker.io/envoyproxy/gateway:${version}`;
}

/**
 * The chart as the release packages it: `values.yaml` from `values.tmpl.yaml` with the controller's
 * image and its pull policy filled in, the chart's version and appVersion set. Returns the objects Helm renders.
 */
export async function renderEnvoyGateway(install: EnvoyGatewayInstall): Promise<KubeObject[]> {
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-eg-chart-'));
  try {
    const chart = join(dir, 'gateway-helm');
    cpSync(install.chartDir, chart, { recursive: true, dereference: true });
    // The release fills in the image and its pull policy (tools/make/helm.mk: envsubst); nothing else.
    const filled: Record<string, string> = { GatewayImage: envoyGatewayImage(install.version), GatewayImagePullPolicy: 'IfNotPresent' };
    const template = readFileSync(join(chart, 'values.tmpl.yaml'), 'utf8');
    const unknown = [...template.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]!).filter((name) => !(name in filled));
    if (unknown.length > 0 || !template.includes('${GatewayImage}')) throw new Error(`${install.chartDir}/values.tmpl.yaml: placeholders ${unknown.join(', ') || '(no GatewayImage)'}: the release's packaging changed`);
    writeFileSync(join(chart, 'values.yaml'), template.replace(/\$\{(\w+)\}/g, (_, name: string) => filled[name]!));
    const version = install.version.replace(/^v/, '');
    writeFileSync(join(chart, 'Chart.yaml'), readFileSync(join(chart, 'Chart.yaml'), 'utf8').replace(/^version: .*$/m, `version: v${version}`).replace(/^appVersion: .*$/m, `appVersion: "v${version}"`));
    return await helmTemplate({
      chart,
      release: 'eg',
      namespace: ENVOY_GATEWAY_SYSTEM,
      values: { topologyInjector: { enabled: false }, ...install.values },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Installs Envoy Gateway: the namespace, its certificates (certgen), then the chart's objects. Returns them. */
export async function installEnvoyGateway(cluster: TestCluster, install: EnvoyGatewayInstall): Promise<KubeObject[]> {
  const objects = (await renderEnvoyGateway(install)).filter((o) => o.kind !== 'CustomResourceDefinition' && !isCertgen(o));
  await applyObjects(cluster, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ENVOY_GATEWAY_SYSTEM } }]);
  await certgen(cluster, install.binary);
  await applyObjects(cluster, objects);
  return objects;
}

/** The chart's certgen Job and what only it uses (the tier runs certgen itself). */
function isCertgen(object: KubeObject): boolean {
  return /certgen/.test(object.metadata.name ?? '');
}

function certgen(cluster: TestCluster, binary: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const home = mkdtempSync(join(tmpdir(), 'app-serving-certgen-'));
    const child = spawn(binary, ['certgen', '--disable-topology-injector'], {
      env: { PATH: process.env.PATH, HOME: home, KUBECONFIG: cluster.kubeconfigPath, ENVOY_GATEWAY_NAMESPACE: ENVOY_GATEWAY_SYSTEM },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => {
      rmSync(home, { recursive: true, force: true });
      if (code === 0) resolve();
      else reject(new Error(`envoy-gateway certgen exited with ${code}: ${output.slice(-2000)}`));
    });
  });
}
