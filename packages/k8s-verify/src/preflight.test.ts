import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStackFile, planDeployment, preflightChecks, type DeploymentPlan } from '@app-serving/core';
import { readUpstreamYaml, upstreamPath } from '@app-serving/test-cluster';
import { describe, expect, it } from 'vitest';
import { formatPreflight, formatPreflightJunit } from './preflight-format.ts';
import { KubeError } from './cluster.ts';
import { runPreflight, tolerates, type DeploymentInfo, type NodeInfo, type PreflightReader } from './preflight.ts';

const APP = join(import.meta.dirname, '..', '..', '..', 'apps', 'app-serving');
const preflightIds = (plan: DeploymentPlan) => preflightChecks(plan).map((c) => c.id);
const planOf = (file: string): DeploymentPlan => planDeployment(loadStackFile(join(APP, file), file, { checkRules: false }), join(APP, '..', '..', 'models'));

/** A reader that answers like a cluster prepared for the KServe example, with overrides. */
function reader(over: { version?: string; nodes?: NodeInfo[]; version$?: (signal: AbortSignal) => Promise<string> } = {}): PreflightReader {
  const gpuNode: NodeInfo = { name: 'gpu-1', labels: { 'nvidia.com/gpu.present': 'true' }, taints: [], unschedulable: false, gpus: 1 };
  return {
    version: over.version$ ?? (async () => over.version ?? 'v1.31.2'),
    async get(ref) {
      if (ref.plural === 'customresourcedefinitions') {
        return { spec: { versions: [{ name: ref.name.startsWith('inferencepools.') ? 'v1' : ref.name.includes('kserve') ? 'v1alpha1' : 'v1', served: true, schema: { openAPIV3Schema: { properties: { spec: { properties: { scaling: {}, router: { properties: { gateway: { properties: { refs: { items: { properties: { sectionName: {} } } } } } } } } } } } } }] } };
      }
      if (ref.plural === 'configmaps') return { data: { 'envoy-gateway.yaml': 'extensionManager:\n  backendResources:\n  - {group: inference.networking.k8s.io, kind: InferencePool, version: v1}\n' } };
      if (ref.plural === 'namespaces') return null;
      return { metadata: { name: ref.name } };
    },
    listNodes: async () => over.nodes ?? [gpuNode],
    canI: async () => ({ allowed: true, reason: null }),
  };
}
const fails = (result: Awaited<ReturnType<typeof runPreflight>>) => result.checks.filter((c) => c.status !== 'pass').map((c) => `${c.id}: ${c.message}`);

describe('runPreflight (a stand-in reader)', () => {
  const plan = planOf('Pulumi.kserve.yaml');

  it('passes on a prepared cluster', async () => {
    const result = await runPreflight(plan, { reader: reader() });
    expect(fails(result)).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.schemaVersion).toBe(1);
  });

  it('Kubernetes older than 1.30 fails the version check (Istio 1.28 supports 1.30 to 1.34)', async () => {
    expect(fails(await runPreflight(plan, { reader: reader({ version: 'v1.29.9+rke2r1' }) }))).toEqual(['kubernetes-version: Kubernetes v1.29.9+rke2r1 is older than 1.30']);
    expect(fails(await runPreflight(plan, { reader: reader({ version: 'v1.30.0-gke.1' }) }))).toEqual([]);
  });

  it("KServe v0.17 is not taken for v0.18: its LLMInferenceService schema lacks spec.router.gateway.refs[].sectionName", async () => {
    // The real v0.18.1 CRDs pass; without that one field, the only one v0.18.0 added to the schema
    // (git diff v0.17.1 v0.18.0 of kserve's CRD), the CRD stands for v0.17's, which has spec.scaling too.
    const real = Object.fromEntries(
      ['llminferenceservices', 'llminferenceserviceconfigs'].map((plural) => [`${plural}.serving.kserve.io`, readUpstreamYaml(`crds/kserve-v0.18.1-serving.kserve.io_${plural}.yaml`)[0] as any]),
    );
    const withCrds = (crds: Record<string, any>): PreflightReader => {
      const base = reader();
      return { ...base, get: async (ref, signal) => (ref.plural === 'customresourcedefinitions' && crds[ref.name]) || base.get(ref, signal) };
    };
    expect(fails(await runPreflight(plan, { reader: withCrds(real) }))).toEqual([]);
    const v017 = structuredClone(real);
    for (const version of v017['llminferenceservices.serving.kserve.io'].spec.versions) {
      expect(version.schema.openAPIV3Schema.properties.spec.properties.scaling).toBeDefined();
      delete version.schema.openAPIV3Schema.properties.spec.properties.router.properties.gateway.properties.refs.items.properties.sectionName;
    }
    const result = await runPreflight(plan, { reader: withCrds(v017) });
    expect(fails(result)).toEqual(['crd:llminferenceservices.serving.kserve.io: CRD llminferenceservices.serving.kserve.io v1alpha1 has no field spec.router.gateway.refs[].sectionName: the installed version is too old']);
    expect(result.checks.find((c) => c.status === 'fail')!.fix).toBe('install KServe v0.18.0 or v0.18.1 (kserve-llmisvc-crd chart): older versions lack spec.scaling, spec.router.gateway.refs[].sectionName');
  });

  it('a 403 names the RBAC rule that is missing, not the check\'s usual fix', async () => {
    const base = reader();
    const forbidden: PreflightReader = {
      ...base,
      get: async (ref, signal) => {
        if (ref.plural !== 'customresourcedefinitions') return base.get(ref, signal);
        throw new KubeError(`forbidden: cannot get ${ref.plural}.${ref.group}`, 403, 'get', `${ref.plural}.${ref.group}`, '');
      },
    };
    const result = await runPreflight(plan, { reader: forbidden });
    const crd = result.checks.find((c) => c.id === 'crd:gateways.gateway.networking.k8s.io')!;
    expect(crd).toMatchObject({ status: 'fail', message: 'forbidden: cannot get customresourcedefinitions.apiextensions.k8s.io' });
    expect(crd.fix).toBe(
      'grant the kubeconfig\'s user "get" on customresourcedefinitions.apiextensions.k8s.io: a ClusterRole rule { apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs: ["get"] }, bound to the user',
    );
  });

  it('with no kubeconfig, names the options preflight has (no --base-url)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'app-serving-home-'));
    await expect(runPreflight(plan, { env: {}, home })).rejects.toMatchObject({
      code: 'kubeconfig',
      message: 'no kubeconfig found: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run preflight inside the cluster',
    });
    rmSync(home, { recursive: true, force: true });
  });

  it('a timeout says so in its fix, not "upgrade the cluster"', async () => {
    const result = await runPreflight(plan, { reader: reader({ version$: () => new Promise(() => undefined) }), timeoutMs: 200 });
    expect(result.checks[0]!.fix).toBe('make sure the API server answers from here (kubectl version), or allow each check longer with --timeout (it was 200 ms)');
  });

  it('GPU capacity: the matching nodes must hold replicas × GPUs per pod', async () => {
    const nodes = [{ name: 'gpu-1', labels: { 'nvidia.com/gpu.present': 'true' }, taints: [], unschedulable: false, gpus: 0 }];
    expect(fails(await runPreflight(plan, { reader: reader({ nodes }) }))).toEqual([
      "placement:qwen25-05b: 1 pod × 1 nvidia.com/gpu do not fit the matching nodes' allocatable nvidia.com/gpu (gpu-1: 0)",
    ]);
  });

  it('a cordoned node cannot take the model', async () => {
    const nodes = [{ name: 'gpu-1', labels: { 'nvidia.com/gpu.present': 'true' }, taints: [], unschedulable: true, gpus: 1 }];
    expect(fails(await runPreflight(plan, { reader: reader({ nodes }) }))).toEqual(['placement:qwen25-05b: 1 node matches nvidia.com/gpu.present=true, none can take the model: on gpu-1, it is cordoned (unschedulable)']);
  });

  it('a silent API server: the version check times out, the rest are skipped, within the per-check timeout', async () => {
    // The version call never answers: only the 200 ms timeout can end it (the message says so).
    const result = await runPreflight(plan, { reader: reader({ version$: () => new Promise(() => undefined) }), timeoutMs: 200 });
    expect(result.checks[0]).toMatchObject({ status: 'fail', message: 'no answer within 200 ms (per-check timeout): the API server is slow or unreachable' });
    expect(result.checks.slice(1).every((c) => c.status === 'skip')).toBe(true);
    expect(result.ok).toBe(false);
  });

  it('the run deadline stops checks that hang after the version answered', async () => {
    const slow = reader();
    const result = await runPreflight(plan, { reader: { ...slow, get: () => new Promise(() => undefined) }, timeoutMs: 60_000, deadlineMs: 300 });
    const crd = result.checks.find((c) => c.type === 'crd')!;
    expect(crd).toMatchObject({ status: 'fail', message: "the run's deadline (300 ms) passed" });
  });

  it('formats one line per check with the fix, and JUnit with one case per check', async () => {
    const result = await runPreflight(plan, { reader: reader({ version: 'v1.27.0' }) });
    const text = formatPreflight(result);
    expect(text).toContain('FAIL  Kubernetes ≥ 1.30: Kubernetes v1.27.0 is older than 1.30\n      fix: upgrade the cluster to Kubernetes 1.30 or newer');
    expect(text).toMatch(/\nNOT READY: \d+ passed, 1 failed, 0 warnings, 0 skipped in /);
    const junit = formatPreflightJunit(result);
    expect(junit.match(/<testcase /g)).toHaveLength(result.checks.length);
    expect(junit).toContain('<failure message="Kubernetes v1.27.0 is older than 1.30" type="kubernetes-version">');
  });
});

describe('the Istio checks (a stand-in reader): istiod\'s version and inference extension, and its support window', () => {
  const current = planOf('Pulumi.current.yaml'); // 2026-08, gateway mode with Istio: ≥ 1.29
  const cloud = planOf('Pulumi.cloud.yaml'); // 2026-02 (llm-d-infra's Istio Gateway): ≥ 1.28
  const istiod = (version: string, env?: { value?: string; valueFrom?: boolean }, name = 'istiod'): DeploymentInfo => ({
    name,
    labels: { app: 'istiod', 'app.kubernetes.io/version': version },
    containers: [{ name: 'discovery', image: `docker.io/istio/pilot:${version}-distroless`, env: env ? [{ name: 'ENABLE_GATEWAY_API_INFERENCE_EXTENSION', value: env.valueFrom ? null : (env.value ?? '') }] : [] }],
  });
  const on = { value: 'true' };
  const withIstio = (deployments: DeploymentInfo[] | 'forbidden', crdVersion?: string): PreflightReader => {
    const base = reader();
    return {
      ...base,
      async get(ref, signal) {
        if (ref.name === 'destinationrules.networking.istio.io') return { metadata: { labels: crdVersion ? { 'app.kubernetes.io/version': crdVersion } : {} }, ...(await base.get(ref, signal)) };
        return base.get(ref, signal);
      },
      async listDeployments(namespace, selector) {
        expect([namespace, selector]).toEqual(['istio-system', 'app=istiod']);
        if (deployments === 'forbidden') throw new KubeError('forbidden: cannot list deployments.apps in namespace istio-system', 403, 'list', 'deployments.apps', 'istio-system');
        return deployments;
      },
    };
  };
  // A day after 1.29's support ended, before 1.30's.
  const now = () => new Date('2026-09-15T12:00:00Z');
  const istio = async (plan: DeploymentPlan, r: PreflightReader) => {
    const result = await runPreflight(plan, { reader: r, now });
    return Object.fromEntries(result.checks.filter((c) => c.type === 'istio' || c.type === 'istio-support').map((c) => [c.id, [c.status, c.message]]));
  };

  it('2026-08 gateway mode: Istio ≥ 1.29 with the extension on passes; 1.28, or the flag off, fails with the fix', async () => {
    expect(await istio(current, withIstio([istiod('1.30.3', on)]))).toEqual({
      'istio:1.29': ['pass', 'istiod istiod (Istio 1.30.3, ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true)'],
      'istio-support': ['pass', 'Istio 1.30.3: supported: 1.30 (about until 2026-11-30), and newer than 1.30'],
    });
    const old = await runPreflight(current, { reader: withIstio([istiod('1.28.5', on)]), now });
    const check = old.checks.find((c) => c.id === 'istio:1.29')!;
    expect([check.status, check.message]).toEqual(['fail', 'istiod istiod is Istio 1.28.5, older than 1.29']);
    expect(check.fix).toBe(
      'install or upgrade Istio to 1.29 or newer (a supported release) with the inference extension on in istiod: istioctl install --set values.pilot.env.ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true, or helm upgrade istiod istio/istiod -n istio-system --set env.ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true',
    );
    expect(old.checks.find((c) => c.id === 'istio-support')).toMatchObject({ status: 'warn', message: "Istio 1.28.5's support ended on 2026-07-01 (supported: 1.30 (about until 2026-11-30), and newer than 1.30)" });
    for (const env of [undefined, { value: 'false' }, { value: '' }]) {
      expect((await istio(current, withIstio([istiod('1.31.1', env)])))['istio:1.29']).toEqual([
        'fail',
        'istiod istiod runs without ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true (off by default): Istio ignores InferencePools, and the HTTPRoute to the pool is not accepted',
      ]);
    }
  });

  it("2026-02: Istio ≥ 1.28; every istiod revision is held to it; a flag set from a reference is not guessed", async () => {
    const result = await istio(cloud, withIstio([istiod('1.28.5', on), istiod('1.27.9', on, 'istiod-1-27-9')]));
    expect(result['istio:1.28']).toEqual(['fail', 'istiod istiod-1-27-9 is Istio 1.27.9, older than 1.28']);
    expect(result['istio-support']![1]).toBe("Istio 1.28.5's support ended on 2026-07-01; Istio 1.27.9's support ended on 2026-04-07 (supported: 1.30 (about until 2026-11-30), and newer than 1.30)");
    expect((await istio(cloud, withIstio([istiod('1.29.6', { valueFrom: true })])))['istio:1.28']).toEqual([
      'pass',
      'istiod istiod (Istio 1.29.6, ENABLE_GATEWAY_API_INFERENCE_EXTENSION set from a reference: not checked)',
    ]);
  });

  it("istiod not readable here (403) or not found: the version from Istio's CRD label; none at all fails", async () => {
    expect((await istio(current, withIstio('forbidden', '1.31.1')))['istio:1.29']).toEqual([
      'pass',
      "Istio 1.31.1 (label app.kubernetes.io/version of CRD destinationrules.networking.istio.io); istiod's Deployments cannot be read here (forbidden: cannot list deployments.apps in namespace istio-system), so ENABLE_GATEWAY_API_INFERENCE_EXTENSION was not checked",
    ]);
    expect((await istio(current, withIstio([], '1.28.10')))['istio:1.29']).toEqual(['fail', 'Istio 1.28.10 (label app.kubernetes.io/version of CRD destinationrules.networking.istio.io) is older than 1.29']);
    expect(await istio(current, withIstio([]))).toEqual({
      'istio:1.29': ['fail', 'Istio not found: no Deployment labelled app=istiod in istio-system, and CRD destinationrules.networking.istio.io has no app.kubernetes.io/version label'],
      'istio-support': ['warn', 'no Istio version found to check (see the Istio check); supported: 1.30 (about until 2026-11-30), and newer than 1.30'],
    });
  });

  it('no Istio check for a stack without an Istio Gateway (KServe)', async () => {
    const ids = (plan: DeploymentPlan) => preflightIds(plan).filter((id) => id.startsWith('istio'));
    expect(ids(planOf('Pulumi.kserve.yaml'))).toEqual([]);
    expect(ids(current)).toEqual(['istio:1.29', 'istio-support']);
  });
});

describe('runPreflight of an llm-d model behind Envoy Gateway (router.gatewayClass: envoy), against the real CRDs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-preflight-envoy-'));
  const file = join(dir, 'Pulumi.envoy.yaml');
  writeFileSync(
    file,
    readFileSync(join(APP, 'Pulumi.example.yaml'), 'utf8').replace(
      'config:\n',
      'config:\n  app-serving:upstream: 2026-08\n  app-serving:router:\n    gatewayClass: envoy\n  app-serving:kserve:\n    gateway:\n      className: eg\n      create: false\n',
    ),
  );
  const plan = planDeployment(loadStackFile(file, 'Pulumi.envoy.yaml', { checkRules: false }), join(APP, '..', '..', 'models'));
  // Every CRD of the 2026-08 set as upstream ships it (Envoy Gateway v1.8.1's among them).
  const crds = Object.fromEntries(
    readdirSync(upstreamPath('current/crds'))
      .flatMap((f) => readUpstreamYaml(`current/crds/${f}`) as any[])
      .filter((d) => d?.kind === 'CustomResourceDefinition')
      .map((d) => [d.metadata.name, d]),
  );
  const accepted = { type: 'Accepted', status: 'True', reason: 'Accepted' };
  const cluster = (over: { crds?: Record<string, any>; gatewayClass?: any } = {}): PreflightReader => {
    const base = reader({ nodes: [{ name: 'n', labels: { workload: 'gpu' }, taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }], unschedulable: false, gpus: 8 }] });
    return {
      ...base,
      get: async (ref, signal) => {
        if (ref.plural === 'customresourcedefinitions') return (over.crds ?? crds)[ref.name] ?? null;
        if (ref.plural === 'gatewayclasses') return over.gatewayClass === undefined ? { spec: { controllerName: 'gateway.envoyproxy.io/gatewayclass-controller' }, status: { conditions: [accepted] } } : over.gatewayClass;
        return base.get(ref, signal);
      },
    };
  };
  const envoyFails = async (reader: PreflightReader) => fails(await runPreflight(plan, { reader })).filter((f) => /gateway\.envoyproxy\.io|gateway-class/.test(f));

  it("passes with Envoy Gateway v1.8.1's CRDs and an Accepted class of its controller", async () => {
    expect(await envoyFails(cluster())).toEqual([]);
  });

  it('refuses CRDs older than the fields it writes, naming the release that has them', async () => {
    const old = structuredClone(crds);
    const btp = old['backendtrafficpolicies.gateway.envoyproxy.io'];
    for (const v of btp.spec.versions) delete v.schema.openAPIV3Schema.properties.spec.properties.loadBalancer.properties.endpointOverride;
    const eep = old['envoyextensionpolicies.gateway.envoyproxy.io'];
    for (const v of eep.spec.versions) {
      const body = v.schema.openAPIV3Schema.properties.spec.properties.extProc.items.properties.processingMode.properties.request.properties.body;
      body.enum = body.enum.filter((e: string) => e !== 'FullDuplexStreamed');
    }
    const result = await runPreflight(plan, { reader: cluster({ crds: old }) });
    const failed = result.checks.filter((c) => c.status === 'fail' && c.id.includes('gateway.envoyproxy.io'));
    expect(failed.map((c) => c.message).sort()).toEqual([
      'CRD backendtrafficpolicies.gateway.envoyproxy.io v1alpha1 has no field spec.loadBalancer.endpointOverride: the installed version is too old',
      'CRD envoyextensionpolicies.gateway.envoyproxy.io v1alpha1 does not take spec.extProc[].processingMode.request.body: FullDuplexStreamed: the installed version is too old',
    ]);
    expect(failed.find((c) => c.id.startsWith('crd:backendtrafficpolicies'))!.fix).toMatch(/^install Envoy Gateway ≥ v1\.5\.0 /);
  });

  it("the class must be Envoy Gateway's, and Accepted by it", async () => {
    expect(await envoyFails(cluster({ gatewayClass: null }))).toEqual(['gateway-class:eg: GatewayClass eg does not exist']);
    expect(await envoyFails(cluster({ gatewayClass: { spec: { controllerName: 'istio.io/gateway-controller' }, status: { conditions: [accepted] } } }))).toEqual([
      'gateway-class:eg: GatewayClass eg belongs to controller istio.io/gateway-controller, not gateway.envoyproxy.io/gatewayclass-controller',
    ]);
    expect(
      await envoyFails(cluster({ gatewayClass: { spec: { controllerName: 'gateway.envoyproxy.io/gatewayclass-controller' }, status: { conditions: [{ type: 'Accepted', status: 'False', reason: 'InvalidParameters', message: 'EnvoyProxy not found' }] } } })),
    ).toEqual(['gateway-class:eg: GatewayClass eg is not accepted by gateway.envoyproxy.io/gatewayclass-controller: Accepted False (InvalidParameters): EnvoyProxy not found']);
    expect(await envoyFails(cluster({ gatewayClass: { spec: { controllerName: 'gateway.envoyproxy.io/gatewayclass-controller' } } }))).toEqual([
      'gateway-class:eg: GatewayClass eg is not accepted by gateway.envoyproxy.io/gatewayclass-controller: no Accepted condition: is its controller running?',
    ]);
  });
});

describe('tolerates (Kubernetes toleration rules)', () => {
  const taint = { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' };
  it.each([
    [{ key: 'nvidia.com/gpu', operator: 'Exists' as const }, true],
    [{ key: 'nvidia.com/gpu', operator: 'Exists' as const, effect: 'NoSchedule' as const }, true],
    [{ key: 'nvidia.com/gpu', operator: 'Exists' as const, effect: 'NoExecute' as const }, false],
    [{ operator: 'Exists' as const }, true],
    [{ key: 'nvidia.com/gpu', operator: 'Equal' as const, value: 'present' }, true],
    [{ key: 'nvidia.com/gpu', operator: 'Equal' as const, value: 'absent' }, false],
    [{ key: 'nvidia.com/gpu', value: 'present' }, true],
    [{ key: 'other', operator: 'Exists' as const }, false],
  ])('%j → %s', (toleration, expected) => {
    expect(tolerates(toleration, taint)).toBe(expected);
  });
});
