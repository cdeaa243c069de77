/**
 * Working with objects in the test cluster: server-side apply (optionally as a dry run), kwok nodes
 * shaped like a target cluster, waiting for a condition, and mapping a pod's exec and port-forward
 * to local targets.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ApiResponse, TestCluster, TestUser } from './cluster.ts';
import { KWOK_NODE_ANNOTATION } from './kwok.ts';

/** A Kubernetes object as plain data. */
export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly [key: string]: unknown };
  readonly [key: string]: unknown;
}

interface ResourceInfo {
  readonly plural: string;
  readonly namespaced: boolean;
}

const discovery = new WeakMap<TestCluster, Map<string, Promise<Map<string, ResourceInfo>>>>();

/** The resources of one group/version, by kind (the API server's discovery, cached per cluster). */
async function resourcesOf(cluster: TestCluster, apiVersion: string): Promise<Map<string, ResourceInfo>> {
  let cache = discovery.get(cluster);
  if (!cache) discovery.set(cluster, (cache = new Map()));
  let entry = cache.get(apiVersion);
  if (!entry) {
    entry = (async () => {
      const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      const res = await cluster.request('GET', path);
      if (res.status !== 200) throw new Error(`${apiVersion} is not served by the test cluster (${res.status}): is its CRD installed?`);
      const list = res.body as { resources: Array<{ name: string; kind: string; namespaced: boolean }> };
      return new Map(list.resources.filter((r) => !r.name.includes('/')).map((r) => [r.kind, { plural: r.name, namespaced: r.namespaced }]));
    })();
    entry.catch(() => cache!.delete(apiVersion));
    cache.set(apiVersion, entry);
  }
  return entry;
}

/** The REST path of an object (`/api/v1/namespaces/ns/pods/name`). */
export async function objectPath(cluster: TestCluster, object: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>): Promise<string> {
  const info = (await resourcesOf(cluster, object.apiVersion)).get(object.kind);
  if (!info) throw new Error(`${object.apiVersion} serves no kind ${object.kind}`);
  const base = object.apiVersion.includes('/') ? `/apis/${object.apiVersion}` : `/api/${object.apiVersion}`;
  const ns = info.namespaced ? `/namespaces/${object.metadata.namespace ?? 'default'}` : '';
  return `${base}${ns}/${info.plural}/${encodeURIComponent(object.metadata.name)}`;
}

export interface ApplyOptions {
  /** `dryRun=All`: admission, defaulting and validation run in full, nothing is stored. */
  readonly dryRun?: boolean;
  readonly user?: TestUser;
  /** @default "app-serving-test" */
  readonly fieldManager?: string;
}

/** Server-side applies one object and returns the API server's answer, whatever it is. */
export async function applyObject(cluster: TestCluster, object: KubeObject, options: ApplyOptions = {}): Promise<ApiResponse> {
  const path = await objectPath(cluster, object);
  const query = `?fieldManager=${options.fieldManager ?? 'app-serving-test'}&force=true${options.dryRun ? '&dryRun=All' : ''}`;
  return cluster.request('PATCH', `${path}${query}`, object, { contentType: 'application/apply-patch+yaml', ...(options.user && { user: options.user }) });
}

/** A rejected object: which one, and the API server's message. */
export interface Rejection {
  readonly object: string;
  readonly status: number;
  readonly message: string;
}

/** `kind namespace/name` of an object. */
export function describeObject(object: Pick<KubeObject, 'kind' | 'metadata'>): string {
  return `${object.kind} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ''}${object.metadata.name}`;
}

/** Applies objects in order and returns every rejection (empty when all were accepted). */
export async function tryApply(cluster: TestCluster, objects: readonly KubeObject[], options: ApplyOptions = {}): Promise<Rejection[]> {
  const rejections: Rejection[] = [];
  for (const object of objects) {
    const res = await applyObject(cluster, object, options);
    if (res.status >= 300) rejections.push({ object: describeObject(object), status: res.status, message: (res.body as { message?: string })?.message ?? String(res.body) });
  }
  return rejections;
}

/** Applies objects in order; throws listing every rejection. */
export async function applyObjects(cluster: TestCluster, objects: readonly object[], options: ApplyOptions = {}): Promise<void> {
  const rejections = await tryApply(cluster, objects as KubeObject[], options);
  if (rejections.length) throw new Error(`rejected by the API server:\n${rejections.map((r) => `  ${r.object}: ${r.status} ${r.message}`).join('\n')}`);
}

/** A simulated node. */
export interface NodeSpec {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints?: ReadonlyArray<{ key: string; value?: string; effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' }>;
  /** `nvidia.com/gpu` capacity. @default 0 */
  readonly gpus?: number;
  /** @default "16" */
  readonly cpu?: string;
  /** @default "64Gi" */
  readonly memory?: string;
}

/** Creates kwok nodes and waits until each is Ready. */
export async function createNodes(cluster: TestCluster, nodes: readonly NodeSpec[]): Promise<void> {
  for (const node of nodes) {
    const capacity: Record<string, string> = { cpu: node.cpu ?? '16', memory: node.memory ?? '64Gi', pods: '110', ...(node.gpus ? { 'nvidia.com/gpu': String(node.gpus) } : {}) };
    const res = await cluster.request('POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: node.name,
        annotations: { [KWOK_NODE_ANNOTATION]: 'fake' },
        labels: { 'kubernetes.io/hostname': node.name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok', ...node.labels },
      },
      spec: { taints: node.taints ?? [] },
      status: { capacity, allocatable: capacity },
    });
    if (res.status >= 300 && res.status !== 409) throw new Error(`node ${node.name}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  for (const node of nodes) {
    await waitFor(cluster, `/api/v1/nodes/${node.name}`, (n) => n.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'));
  }
}

/**
 * Polls an object until `predicate` holds and returns it; throws with the object's last state after
 * `timeoutMs`.
 */
export async function waitFor(cluster: TestCluster, path: string, predicate: (object: any) => unknown, timeoutMs = 30_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  let last: unknown = null;
  for (;;) {
    const res = await cluster.request('GET', path);
    last = res.body;
    if (res.status === 200 && predicate(res.body)) return res.body;
    if (Date.now() > until) throw new Error(`${path}: condition not met after ${timeoutMs} ms; last state: ${JSON.stringify(last).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Lists objects (`/api/v1/namespaces/ns/pods?labelSelector=...`) and returns the items. */
export async function list(cluster: TestCluster, path: string): Promise<any[]> {
  const res = await cluster.request('GET', path);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 500)}`);
  return (res.body as { items: any[] }).items;
}

/**
 * Maps `kubectl port-forward` of a pod's ports to a local address. kwok keeps one PortForward per
 * pod, so every port of the pod goes in one call: a second call replaces the first one's ports (a pod
 * of two containers, the Router's EPP and its Envoy proxy, lost all but its last port that way).
 */
export async function forwardPodPorts(cluster: TestCluster, namespace: string, pod: string, ports: readonly number[], target: { host?: string; port: number }): Promise<void> {
  await applyObjects(cluster, [{
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'PortForward',
    metadata: { name: pod, namespace },
    spec: { forwards: [{ ports: [...new Set(ports)], target: { address: target.host ?? '127.0.0.1', port: target.port } }] },
  }]);
}

/**
 * Gives a pod a file system for exec: commands run locally in `pods/<namespace>/<pod>/` of the
 * cluster's folder, where `test -f /abs/path` looks at `<that folder>/abs/path`. `files` are written
 * there (path → content). Returns the folder.
 */
export async function podFileSystem(cluster: TestCluster, namespace: string, pod: string, files: Readonly<Record<string, string>> = {}): Promise<string> {
  const root = join(cluster.dir, 'pods', namespace, pod);
  mkdirSync(root, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    const file = join(root, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  await applyObjects(cluster, [{
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Exec',
    metadata: { name: pod, namespace },
    spec: { execs: [{ local: { workDir: root } }] },
  }]);
  return root;
}

/** What `render` prints in place of a secret value. */
const REDACTED = '[secret]';

/**
 * The plain Kubernetes objects of a rendered stack (`render`'s resources: not the components, the
 * Helm charts or the provider), as manifests the API server accepts: a Secret value `render`
 * redacted gets a placeholder of the right form (a docker config for a dockerconfigjson Secret).
 */
export function renderedManifests(resources: ReadonlyArray<{ type: string; inputs: Record<string, unknown> }>): KubeObject[] {
  return resources
    .filter((r) => /^kubernetes:[^:]+:[A-Z]/.test(r.type) && r.type !== 'kubernetes:helm.sh/v4:Chart')
    .map((r) => secretPlaceholders(r.inputs as unknown as KubeObject));
}

function secretPlaceholders(object: KubeObject): KubeObject {
  if (object.kind !== 'Secret') return object;
  const docker = object.type === 'kubernetes.io/dockerconfigjson';
  const text = docker ? '{"auths":{}}' : 'placeholder';
  const fill = (map: unknown, value: string) =>
    map === REDACTED
      ? { [docker ? '.dockerconfigjson' : 'value']: value }
      : Object.fromEntries(Object.entries((map ?? {}) as Record<string, unknown>).map(([k, v]) => [k, v === REDACTED ? value : v]));
  return {
    ...object,
    ...(object.data !== undefined && { data: fill(object.data, Buffer.from(text).toString('base64')) }),
    ...(object.stringData !== undefined && { stringData: fill(object.stringData, text) }),
  };
}

/**
 * Creates the namespaces that objects live in and that none of them creates: what the cluster has
 * before a stack is deployed (KServe's own namespace, for one).
 */
export async function ensureNamespaces(cluster: TestCluster, objects: readonly KubeObject[]): Promise<void> {
  const created = new Set(objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name));
  const needed = [...new Set(objects.map((o) => o.metadata.namespace).filter((n): n is string => !!n && !created.has(n)))];
  await applyObjects(cluster, needed.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })));
  await applyObjects(cluster, objects.filter((o) => o.kind === 'Namespace'));
}
