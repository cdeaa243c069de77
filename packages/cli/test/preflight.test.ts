import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStackFile, planDeployment, type DeploymentPlan } from '@app-serving/core';
import { runPreflight, type PreflightResult } from '@app-serving/k8s-verify';
import { applyObjects, createNodes, readUpstreamYaml, applyCrd, startCluster, waitFor, type KubeObject, type TestCluster } from '@app-serving/test-cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, REPO_ROOT, type CliResult } from './run-cli.ts';

/**
 * `app-serving preflight` against a real control plane (test-cluster, with the upstream CRDs): a
 * cluster prepared for the example stacks passes every check; each prerequisite taken away fails
 * exactly its own check, with its fix; and no run writes anything (the API server's audit log has
 * only SelfSubjectAccessReviews, which are evaluated and never stored).
 */
const MODELS = join(REPO_ROOT, 'models');
const stack = (file: string) => join(REPO_ROOT, 'apps', 'app-serving', file);
const planOf = (file: string): DeploymentPlan => planDeployment(loadStackFile(file, file, { checkRules: false }), MODELS);

const TMP = mkdtempSync(join(tmpdir(), 'app-serving-preflight-'));
/** The KServe example with a storage class of its own (the example uses the cluster default, which preflight does not check). */
const KSERVE_STACK = join(TMP, 'Pulumi.kserve-ssd.yaml');
writeFileSync(KSERVE_STACK, readFileSync(stack('Pulumi.kserve.yaml'), 'utf8').replace('storageSize: 5Gi', 'storageSize: 5Gi\n          storageClass: fast-ssd'));
const CLOUD_STACK = stack('Pulumi.cloud.yaml');
const ONPREM_STACK = stack('Pulumi.example.yaml');
/** The on-prem embedder's PVC asks for the on-prem storage class (no hostPath node). */
const ON_PREM_STORAGE_CLASS = planOf(ONPREM_STACK).models.find((m) => m.storage?.storageClass)!.storage!.storageClass!;

const ISTIO_CLASS: KubeObject = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'istio' }, spec: { controllerName: 'istio.io/gateway-controller' } };
const ENVOY_CONFIG = (backendResources: unknown[]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'envoy-gateway-config', namespace: 'envoy-gateway-system' },
  data: { 'envoy-gateway.yaml': `apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: EnvoyGateway\nextensionManager:\n  backendResources: ${JSON.stringify(backendResources)}\n` },
});
const POOL_BACKEND = [{ group: 'inference.networking.k8s.io', kind: 'InferencePool', version: 'v1' }];
const kserveConfig = (name: string): KubeObject => ({ apiVersion: 'serving.kserve.io/v1alpha1', kind: 'LLMInferenceServiceConfig', metadata: { name, namespace: 'kserve' }, spec: {} });
const storageClass = (name: string): KubeObject => ({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner: 'kubernetes.io/no-provisioner' });
const CURRENT_STACK = stack('Pulumi.current.yaml');
/**
 * istiod as Istio's chart installs it (istio/istio 1.29.6 manifests/charts/istio-control/istio-discovery
 * templates/deployment.yaml): Deployment `istiod` in istio-system labelled `app: istiod`, container
 * `discovery` running `<hub>/pilot:<tag>`, the feature flags in its env (`pilot.env` / `env` values).
 */
const ISTIOD = (version: string, inferenceExtension: string | null): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'istiod', namespace: 'istio-system', labels: { app: 'istiod', istio: 'pilot', 'istio.io/rev': 'default', 'app.kubernetes.io/name': 'istiod', 'app.kubernetes.io/part-of': 'istio', 'app.kubernetes.io/version': version } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { istio: 'pilot' } },
    template: {
      metadata: { labels: { app: 'istiod', istio: 'pilot', 'istio.io/rev': 'default' } },
      spec: {
        containers: [
          {
            name: 'discovery',
            image: `docker.io/istio/pilot:${version}`,
            args: ['discovery', '--monitoringAddr=:15014'],
            env: [{ name: 'REVISION', value: 'default' }, ...(inferenceExtension === null ? [] : [{ name: 'ENABLE_GATEWAY_API_INFERENCE_EXTENSION', value: inferenceExtension }])],
          },
        ],
      },
    },
  },
});

/**
 * Preflight runs as the test cluster's `nobody`, which nothing else uses: the audit log's entries of
 * that user are exactly preflight's requests. It gets rights through this ClusterRole (read
 * everything; create what `rules` says).
 */
const binding = (rules: object[]): KubeObject[] => [
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'preflight-test' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['get', 'list'] }, ...rules] },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'preflight-test' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'preflight-test' }, subjects: [{ kind: 'User', name: 'nobody', apiGroup: 'rbac.authorization.k8s.io' }] },
];
const CREATE_ALL = [{ apiGroups: ['*'], resources: ['*'], verbs: ['create'] }];

let cluster: TestCluster;
let kubeconfig: string;

beforeAll(async () => {
  // The StorageClasses are the test's own (fast-ssd, hostpath): none of the simulated ones.
  cluster = await startCluster({ storageClasses: [] });
  await createNodes(cluster, [
    // Pulumi.cloud.yaml: a tainted L4 pool and CPU nodes.
    { name: 'gke-l4-1', labels: { 'cloud.google.com/gke-accelerator': 'nvidia-l4' }, taints: [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }], gpus: 1 },
    { name: 'gke-cpu-1', labels: { nodegroup: 'cpu' } },
    // Pulumi.kserve.yaml: an untainted GPU node (the stack has no GPU toleration).
    { name: 'kserve-gpu-1', labels: { 'nvidia.com/gpu.present': 'true' }, gpus: 1 },
    // Pulumi.example.yaml (on-prem): tainted GPU nodes, one of them the hostPath node, and CPU nodes.
    { name: 'gpu-node-1', labels: { workload: 'gpu' }, taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }], gpus: 2 },
    { name: 'cpu-node-1', labels: { workload: 'cpu' } },
  ]);
  await applyObjects(cluster, [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kserve' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'envoy-gateway-system' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'istio-system' } },
    // A supported Istio with the inference extension on (1.31: no end of support known to core).
    ISTIOD('1.31.1', 'true'),
    ISTIO_CLASS,
    ENVOY_CONFIG(POOL_BACKEND),
    ...['kserve-config-llm-template', 'kserve-config-llm-scheduler', 'kserve-config-llm-router-route'].map(kserveConfig),
    storageClass('fast-ssd'),
    storageClass(ON_PREM_STORAGE_CLASS),
    ...binding(CREATE_ALL),
  ]);
  kubeconfig = cluster.kubeconfigFor('nobody');
  await until('allowed', nobodyMayRead);
}, 600_000);
afterAll(async () => {
  await cluster?.stop();
  rmSync(TMP, { recursive: true, force: true });
});

/** Asserts that `body` (one preflight run) wrote nothing: preflight's identity sent only SelfSubjectAccessReviews, which are never stored. */
async function readOnly<T>(body: () => Promise<T>): Promise<T> {
  const before = cluster.mutations().length;
  const value = await body();
  const mine = cluster.mutations().slice(before).filter((m) => m.user === 'nobody');
  expect(mine.filter((m) => m.resource !== 'selfsubjectaccessreviews'), 'preflight wrote to the cluster').toEqual([]);
  expect(mine.length, 'the audit log sees preflight').toBeGreaterThan(0);
  return value;
}

/** Runs the built CLI with `--json` as preflight's identity; asserts it wrote nothing. */
/**
 * Generous limits (the cluster answers; no test here is about a timeout): in a loaded CI run, right
 * after a test changed KServe's 2 MB CRD, the API server took longer than the default 10 s to
 * answer another CRD's check, which then failed beside the one the test meant.
 */
const LIMITS = ['--timeout', '60s', '--deadline', '5m'];

async function preflight(file: string): Promise<{ run: CliResult; result: PreflightResult }> {
  const run = await readOnly(() => cli(['preflight', '--stack', file, '--models-dir', MODELS, '--kubeconfig', kubeconfig, ...LIMITS, '--json']));
  expect(run.stderr).toBe('');
  return { run, result: JSON.parse(run.stdout) as PreflightResult };
}

/** The on-prem example through the library: its Harbor host must not be looked up (no network in tests). */
function preflightOnPrem(file = ONPREM_STACK, resolveHost = async () => undefined): Promise<PreflightResult> {
  return readOnly(() => runPreflight(planOf(file), { kubeconfig, resolveHost, timeoutMs: 60_000, deadlineMs: 300_000 }));
}

/** Polls until `probe` holds (RBAC and deletions take effect through the API server's caches); a hang guard of 2 min. */
async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 120_000;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`not ${what} after 2 min`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
const nobodyMayCreate = async (resource: string, group: string) =>
  (await cluster.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'create', group, resource, namespace: 'default' } } }, { user: 'nobody' })).body?.status?.allowed === true;
const nobodyMayRead = async () => (await cluster.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', undefined, { user: 'nobody' })).status === 200;

// The cloud stack's Prometheus (prometheus-operated.monitoring.svc) is not in the test cluster: its
// check is a warning, asserted on its own below.
const failed = (result: PreflightResult) => result.checks.filter((c) => c.status !== 'pass' && !c.id.startsWith('prometheus:')).map((c) => c.id);

describe('a cluster prepared for the stacks', () => {
  it('passes every check of the llm-d cloud, KServe and on-prem examples, exit 0, writing nothing', async () => {
    for (const file of [CLOUD_STACK, KSERVE_STACK]) {
      const { run, result } = await preflight(file);
      expect(failed(result), file).toEqual([]);
      expect(run.code).toBe(0);
      expect(result.ok).toBe(true);
    }
    const onPrem = await preflightOnPrem();
    expect(failed(onPrem)).toEqual([]);
    expect(onPrem.checks.map((c) => c.id)).toEqual(expect.arrayContaining(['node:gpu-node-1', `storage-class:${ON_PREM_STORAGE_CLASS}`, 'registry-dns:harbor.example.com']));
  });

  it('prints one line per check, and the verdict', async () => {
    const run = await cli(['preflight', '--stack', CLOUD_STACK, '--models-dir', MODELS, '--kubeconfig', kubeconfig, ...LIMITS]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^PASS {2}Kubernetes ≥ 1\.30: Kubernetes v1\.\d+/m);
    expect(run.stdout).toMatch(/^PASS {2}GatewayClass istio exists/m);
    expect(run.stdout).toMatch(/^ready: \d+ passed, 0 failed, 1 warnings?, 0 skipped in /m);
    expect(run.stdout).toMatch(/^PASS {2}CRD scaledobjects\.keda\.sh serves v1alpha1/m);
    expect(run.stdout).toMatch(/^PASS {2}CRD podmonitors\.monitoring\.coreos\.com serves v1/m);
    expect(run.stdout).toMatch(/^WARN {2}Prometheus http:\/\/prometheus-operated\.monitoring\.svc:9090 answers: .*does not answer through the API server's service proxy \(monitoring\/prometheus-operated:9090\)/m);
  });
});

describe('each prerequisite missing fails exactly its check, with the fix', () => {
  async function expectOnly(file: string, id: string, message: RegExp) {
    const { run, result } = await preflight(file);
    expect(failed(result)).toEqual([id]);
    expect(run.code).toBe(1);
    const check = result.checks.find((c) => c.id === id)!;
    expect(check.status).toBe('fail');
    expect(check.message).toMatch(message);
    expect(check.fix).toBeTruthy();
    return check;
  }

  it('the GatewayClass istio', async () => {
    await cluster.request('DELETE', '/apis/gateway.networking.k8s.io/v1/gatewayclasses/istio');
    try {
      const check = await expectOnly(CLOUD_STACK, 'gateway-class:istio', /GatewayClass istio does not exist/);
      expect(check.fix).toMatch(/install Istio/);
    } finally {
      await applyObjects(cluster, [ISTIO_CLASS]);
    }
  });

  it("a well-known KServe config", async () => {
    await cluster.request('DELETE', '/apis/serving.kserve.io/v1alpha1/namespaces/kserve/llminferenceserviceconfigs/kserve-config-llm-template');
    try {
      const check = await expectOnly(KSERVE_STACK, 'kserve-config:kserve-config-llm-template', /kserve\/kserve-config-llm-template does not exist/);
      expect(check.fix).toMatch(/kserve\.llmisvcConfigs\.enabled=true/);
    } finally {
      await applyObjects(cluster, [kserveConfig('kserve-config-llm-template')]);
    }
  });

  it("Envoy Gateway's InferencePool extension", async () => {
    await applyObjects(cluster, [ENVOY_CONFIG([])]);
    try {
      await expectOnly(KSERVE_STACK, 'envoy-inference-pool', /does not list InferencePool/);
    } finally {
      await applyObjects(cluster, [ENVOY_CONFIG(POOL_BACKEND)]);
    }
  });

  it('Istio too old for the 2026-08 gateway mode, or without the inference extension: its check fails with the fix; an ended release warns', async () => {
    const istio = async () => {
      const result = await preflightOnPrem(CURRENT_STACK);
      return Object.fromEntries(result.checks.filter((c) => c.type === 'istio' || c.type === 'istio-support').map((c) => [c.id, c]));
    };
    try {
      const good = await istio();
      expect(good['istio:1.29']).toMatchObject({ status: 'pass', message: 'istiod istiod (Istio 1.31.1, ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true)' });
      expect(good['istio-support']).toMatchObject({ status: 'pass' });
      // Istio 1.28 (the 2026-02 pin): too old for the Router's set, and out of support since 2026-07-01.
      await applyObjects(cluster, [ISTIOD('1.28.5', 'true')]);
      const old = await istio();
      expect(old['istio:1.29']).toMatchObject({ status: 'fail', message: 'istiod istiod is Istio 1.28.5, older than 1.29' });
      expect(old['istio:1.29']!.fix).toMatch(/^install or upgrade Istio to 1\.29 or newer .*ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true/);
      expect(old['istio-support']).toMatchObject({ status: 'warn', message: expect.stringMatching(/^Istio 1\.28\.5's support ended on 2026-07-01 \(supported: /) });
      // The 2026-02 set still takes 1.28 (with the warning).
      expect((await preflight(CLOUD_STACK)).result.checks.find((c) => c.id === 'istio:1.28')).toMatchObject({ status: 'pass' });
      // A new Istio without the flag (Istio's default: off).
      await applyObjects(cluster, [ISTIOD('1.30.3', null)]);
      expect((await istio())['istio:1.29']).toMatchObject({ status: 'fail', message: expect.stringMatching(/^istiod istiod runs without ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true \(off by default\)/) });
      await applyObjects(cluster, [ISTIOD('1.30.3', 'false')]);
      expect((await istio())['istio:1.29']).toMatchObject({ status: 'fail' });
      await applyObjects(cluster, [ISTIOD('1.30.3', 'true')]);
      expect((await istio())['istio:1.29']).toMatchObject({ status: 'pass', message: 'istiod istiod (Istio 1.30.3, ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true)' });
    } finally {
      await applyObjects(cluster, [ISTIOD('1.31.1', 'true')]);
    }
  });

  it('Istio not installed: the Istio check of the llm-d stack fails, with the fix', async () => {
    expect((await cluster.request('DELETE', '/apis/apps/v1/namespaces/istio-system/deployments/istiod')).status).toBeLessThan(300);
    try {
      await until('deleted', async () => (await cluster.request('GET', '/apis/apps/v1/namespaces/istio-system/deployments/istiod')).status === 404);
      // The cluster's Istio CRDs are the raw crd-all.gen.yaml (no version label): nothing tells the version.
      const { result } = await preflight(CLOUD_STACK);
      expect(failed(result)).toEqual(['istio:1.28', 'istio-support']);
      expect(result.checks.find((c) => c.id === 'istio:1.28')).toMatchObject({ status: 'fail', message: expect.stringMatching(/^Istio not found: no Deployment labelled app=istiod in istio-system/) });
    } finally {
      await applyObjects(cluster, [ISTIOD('1.31.1', 'true')]);
    }
  });

  it('the storage class a PVC asks for', async () => {
    await cluster.request('DELETE', '/apis/storage.k8s.io/v1/storageclasses/fast-ssd');
    try {
      await expectOnly(KSERVE_STACK, 'storage-class:fast-ssd', /StorageClass fast-ssd does not exist/);
    } finally {
      await applyObjects(cluster, [storageClass('fast-ssd')]);
    }
  });

  it('a node that matches the nodeSelector', async () => {
    await cluster.request('PATCH', '/api/v1/nodes/kserve-gpu-1', { metadata: { labels: { 'nvidia.com/gpu.present': null } } }, { contentType: 'application/merge-patch+json' });
    try {
      await expectOnly(KSERVE_STACK, 'placement:qwen25-05b', /no node has the labels nvidia\.com\/gpu\.present=true/);
    } finally {
      await cluster.request('PATCH', '/api/v1/nodes/kserve-gpu-1', { metadata: { labels: { 'nvidia.com/gpu.present': 'true' } } }, { contentType: 'application/merge-patch+json' });
    }
  });

  it('a taint the stack does not tolerate on the matching nodes', async () => {
    const taints = [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }, { key: 'reserved', value: 'batch', effect: 'NoSchedule' }];
    await cluster.request('PATCH', '/api/v1/nodes/gke-l4-1', { spec: { taints } }, { contentType: 'application/merge-patch+json' });
    try {
      await expectOnly(CLOUD_STACK, 'placement:qwen3-06b', /taint reserved=batch:NoSchedule is not tolerated/);
    } finally {
      await cluster.request('PATCH', '/api/v1/nodes/gke-l4-1', { spec: { taints: taints.slice(0, 1) } }, { contentType: 'application/merge-patch+json' });
    }
  });

  it('the on-prem hostPath node', async () => {
    const file = join(TMP, 'Pulumi.example-node.yaml');
    writeFileSync(file, readFileSync(ONPREM_STACK, 'utf8').replace('hostpathNode: gpu-node-1', 'hostpathNode: gpu-node-9'));
    const result = await preflightOnPrem(file);
    expect(failed(result)).toEqual(['node:gpu-node-9']);
    expect(result.checks.find((c) => c.id === 'node:gpu-node-9')!.message).toBe('node gpu-node-9 does not exist');
  });

  it('the Harbor host does not resolve: a warning, exit 0', async () => {
    const result = await preflightOnPrem(ONPREM_STACK, async () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })));
    expect(failed(result)).toEqual(['registry-dns:harbor.example.com']);
    expect(result.checks.find((c) => c.id === 'registry-dns:harbor.example.com')).toMatchObject({ status: 'warn', message: 'harbor.example.com does not resolve from here (ENOTFOUND)' });
    expect(result.ok).toBe(true);
  });

  it('a namespace another owner manages (no app-serving.io/model label)', async () => {
    await applyObjects(cluster, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'llm-d-qwen3-06b' } }]);
    try {
      await expectOnly(CLOUD_STACK, 'namespace:llm-d-qwen3-06b', /exists and has no label app-serving\.io\/model/);
      await cluster.request('PATCH', '/api/v1/namespaces/llm-d-qwen3-06b', { metadata: { labels: { 'app-serving.io/model': 'qwen3-06b' } } }, { contentType: 'application/merge-patch+json' });
      expect(failed((await preflight(CLOUD_STACK)).result)).toEqual([]);
    } finally {
      await cluster.request('DELETE', '/api/v1/namespaces/llm-d-qwen3-06b');
      await until('deleted', async () => (await cluster.request('GET', '/api/v1/namespaces/llm-d-qwen3-06b')).status === 404);
    }
  });

  it('403: an identity without read rights gets the RBAC rule it lacks, exit 1', async () => {
    await cluster.request('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/preflight-test');
    await until('denied', async () => !(await nobodyMayRead()));
    let outcome;
    try {
      outcome = await preflight(CLOUD_STACK);
    } finally {
      await applyObjects(cluster, binding(CREATE_ALL));
      await until('allowed', nobodyMayRead);
    }
    const { run, result } = outcome;
    expect(run.code).toBe(1);
    const crd = result.checks.find((c) => c.id === 'crd:httproutes.gateway.networking.k8s.io')!;
    expect(crd).toMatchObject({ status: 'fail' });
    expect(crd.message).toMatch(/^forbidden: cannot get customresourcedefinitions\.apiextensions\.k8s\.io \(RBAC: grant "get" on "customresourcedefinitions\.apiextensions\.k8s\.io"\)/);
    expect(result.checks.find((c) => c.id === 'permission:create:httproutes.gateway.networking.k8s.io:llm-d-qwen3-06b')!.message).toBe(
      'denied: create httproutes.gateway.networking.k8s.io in namespace llm-d-qwen3-06b',
    );
  });

  it('the right to create one kind', async () => {
    // Everything but HTTPRoutes.
    const createable = [
      { apiGroups: [''], resources: ['namespaces', 'secrets', 'services', 'serviceaccounts', 'configmaps', 'persistentvolumeclaims', 'persistentvolumes'] },
      { apiGroups: ['apps'], resources: ['deployments'] },
      { apiGroups: ['batch'], resources: ['jobs'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'] },
      { apiGroups: ['gateway.networking.k8s.io'], resources: ['gateways', 'gatewayclasses'] },
      { apiGroups: ['inference.networking.k8s.io'], resources: ['inferencepools'] },
      { apiGroups: ['networking.istio.io'], resources: ['destinationrules'] },
      { apiGroups: ['telemetry.istio.io'], resources: ['telemetries'] },
      // The cloud example's Qwen3-0.6B is autoscaled: KEDA's ScaledObject and the PodMonitors.
      { apiGroups: ['keda.sh'], resources: ['scaledobjects', 'triggerauthentications'] },
      { apiGroups: ['monitoring.coreos.com'], resources: ['podmonitors'] },
    ].map((r) => ({ ...r, verbs: ['create'] }));
    await applyObjects(cluster, binding(createable));
    await until('denied', async () => !(await nobodyMayCreate('httproutes', 'gateway.networking.k8s.io')));
    try {
      const { run, result } = await preflight(CLOUD_STACK);
      expect(failed(result)).toEqual(['permission:create:httproutes.gateway.networking.k8s.io:llm-d-qwen3-06b']);
      expect(result.checks.find((c) => c.status === 'fail')!.fix).toMatch(/^grant the deploying identity "create"/);
      expect(run.code).toBe(1);
    } finally {
      await applyObjects(cluster, binding(CREATE_ALL));
      await until('allowed', () => nobodyMayCreate('httproutes', 'gateway.networking.k8s.io'));
    }
  });

  // The CRD cases change the cluster's API: they run last.
  it('a KServe CRD too old for the fields we set (no spec.scaling)', async () => {
    const name = 'llminferenceservices.serving.kserve.io';
    const crd = (await cluster.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`)).body;
    for (const version of crd.spec.versions) {
      const spec = version.schema.openAPIV3Schema.properties.spec;
      delete spec.properties.scaling;
      // The CRD's own rules name the field; an older CRD has neither.
      spec['x-kubernetes-validations'] = (spec['x-kubernetes-validations'] ?? []).filter((r: { rule: string }) => !r.rule.includes('scaling'));
    }
    // Retried: a loaded API server answered this 2 MB update with 504 while it recompiled the schema.
    await applyCrd((method, path, body, opts) => cluster.request(method, path, body, opts), name, crd);
    await expectOnly(KSERVE_STACK, 'crd:llminferenceservices.serving.kserve.io', /v1alpha1 has no field spec\.scaling: the installed version is too old/);
  });

  it('a GAIE CRD (InferenceObjective) not installed', async () => {
    const path = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/inferenceobjectives.inference.networking.x-k8s.io';
    expect((await cluster.request('DELETE', path)).status).toBeLessThan(300);
    await waitFor(cluster, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', (list) => !list.items.some((c: any) => c.metadata.name === 'inferenceobjectives.inference.networking.x-k8s.io'));
    const check = await expectOnly(CLOUD_STACK, 'crd:inferenceobjectives.inference.networking.x-k8s.io', /is not installed/);
    expect(check.fix).toMatch(/Gateway API Inference Extension v1\.2/);
    // Held to the upstream file: the CRD we ask for is GAIE's.
    expect(readUpstreamYaml('crds/gaie-v1.2.0-inference.networking.x-k8s.io_inferenceobjectives.yaml')[0]).toMatchObject({ metadata: { name: 'inferenceobjectives.inference.networking.x-k8s.io' } });
  });
});

describe('an API server that cannot answer: a clear reason in bounded time', () => {
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  });
  const kubeconfig = (server: string) => {
    const file = join(TMP, `kubeconfig-${servers.length}-${Math.random().toString(36).slice(2)}`);
    writeFileSync(file, `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ${server}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n`);
    return file;
  };
  const listen = async (onConnection: (socket: Socket) => void) => {
    const server = createServer((socket) => {
      sockets.add(socket);
      onConnection(socket);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return (server.address() as { port: number }).port;
  };

  it('unreachable (connection refused): the version check says so, the rest are skipped, exit 1', async () => {
    const port = await listen(() => undefined);
    await new Promise((r) => servers.pop()!.close(r));
    const run = await cli(['preflight', '--stack', CLOUD_STACK, '--models-dir', MODELS, '--kubeconfig', kubeconfig(`https://127.0.0.1:${port}`), '--json']);
    const result = JSON.parse(run.stdout) as PreflightResult;
    expect(run.code).toBe(1);
    expect(result.checks[0]).toMatchObject({ id: 'kubernetes-version', status: 'fail' });
    expect(result.checks[0]!.message).toMatch(/cannot reach the API server \(ECONNREFUSED\)/);
    expect(result.checks.slice(1).every((c) => c.status === 'skip' && c.message.startsWith('not run: '))).toBe(true);
  });

  it('slow (a server that accepts and never answers): the per-check timeout, exit 1', async () => {
    const port = await listen(() => undefined);
    // The server never answers: only the 1 s per-check timeout can end the check (it says so).
    const run = await cli(['preflight', '--stack', CLOUD_STACK, '--models-dir', MODELS, '--kubeconfig', kubeconfig(`https://127.0.0.1:${port}`), '--timeout', '1s']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^FAIL {2}Kubernetes ≥ 1\.30: no answer within 1 s \(per-check timeout\): the API server is slow or unreachable$/m);
    expect(run.stdout).toMatch(/^NOT READY: 0 passed, 1 failed, 0 warnings, \d+ skipped/m);
  });

  it('credentials that cannot be loaded: exit 1, and --junit still writes a report holding that failure (preflight and verify)', async () => {
    // An exec plugin that prints no ExecCredential: the run stops before its first check.
    const file = join(TMP, 'kubeconfig-exec-nope');
    writeFileSync(file, readFileSync(kubeconfig('https://127.0.0.1:1'), 'utf8').replace('    token: t\n', '    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/echo\n      args: [nope]\n'));
    for (const command of ['preflight', 'verify']) {
      const junit = join(TMP, `${command}-exec-nope.xml`);
      const run = await cli([command, '--stack', CLOUD_STACK, '--models-dir', MODELS, '--kubeconfig', file, '--junit', junit]);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain('did not print an ExecCredential');
      const report = readFileSync(junit, 'utf8');
      expect(report).toMatch(new RegExp(`<testsuites name="app-serving ${command} cloud" tests="1" failures="1"`));
      expect(report).toMatch(/<testcase name="kubeconfig" classname="app-serving\.\w+\.cloud"[^>]*>\s*<failure message="[^"]*did not print an ExecCredential/);
    }
  });

  it('a bad duration is a usage error (exit 2)', async () => {
    const run = await cli(['preflight', '--stack', CLOUD_STACK, '--models-dir', MODELS, '--timeout', 'soon']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--timeout "soon": give a duration/);
  });
});
