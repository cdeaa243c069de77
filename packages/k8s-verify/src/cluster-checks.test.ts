import { describe, expect, it } from 'vitest';
import { deploy, podOf } from '../test/deployed.ts';
import { startFakeKube } from '../test/fake-kube.ts';
import { kserve, llmd, planOf } from '../test/plans.ts';
import { checkKserveAddress, checkPulled, checkReady, llmInferenceServiceRef, probeReady } from './cluster-checks.ts';
import { createCluster } from './cluster.ts';

const generative = planOf([{ category: 'generative', name: 'Gen', slug: 'gen', pull: true }]);
const withPrefill = planOf([{ category: 'generative', name: 'Gen', slug: 'gen', prefill: 1 }]);
const embedder = planOf([{ category: 'embedder', name: 'Emb', slug: 'emb' }]);
const kservePlan = planOf([{ category: 'generative', name: 'Kq', slug: 'kq', platform: 'kserve', pull: true }]);

async function world(plan = generative, options: Parameters<typeof deploy>[2] = {}) {
  const kube = await startFakeKube();
  await deploy(kube, plan, options);
  const cluster = await createCluster(kube.kubeConfig());
  return { kube, cluster };
}

describe('ready', () => {
  it('passes a deployed llm-d generative model: decode, gateway and EPP pods Ready, pull Job succeeded', async () => {
    const { kube, cluster } = await world();
    const result = await checkReady(cluster, llmd(generative));
    expect(result).toMatchObject({ name: 'ready', status: 'pass', message: 'decode 1/1 Ready; gateway 1/1 Ready; EPP 1/1 Ready; pull Job succeeded', failure: null });
    expect(result.data).toEqual({ decode: '1/1', gateway: '1/1', EPP: '1/1', job: 'succeeded' });
    // Pods are found by the labels the chart applies: modelArtifacts.labels + llm-d.ai/role.
    expect(kube.log).toContain('GET /api/v1/namespaces/llm-d-gen/pods?labelSelector=llm-d.ai/inference-serving=true,llm-d.ai/model=gen,llm-d.ai/role=decode');
    // The gateway pods by the selector of the Service Istio generates, the EPP by its Service's.
    expect(kube.log).toContain('GET /api/v1/namespaces/llm-d-gen/services/infra-gen-inference-gateway-istio');
    expect(kube.log).toContain('GET /api/v1/namespaces/llm-d-gen/pods?labelSelector=gateway.networking.k8s.io/gateway-name=infra-gen-inference-gateway');
    expect(kube.log).toContain('GET /api/v1/namespaces/llm-d-gen/pods?labelSelector=inferencepool=gaie-gen-epp');
    expect(kube.log).toContain('GET /apis/batch/v1/namespaces/llm-d-gen/jobs/gen-model-pull');
    expect(kube.log.some((l) => l.includes('llm-d.ai/role=prefill'))).toBe(false);
  });

  it('checks prefill pods only when the plan has prefill replicas', async () => {
    const { kube, cluster } = await world(withPrefill);
    expect((await checkReady(cluster, llmd(withPrefill))).message).toBe('decode 1/1 Ready; prefill 1/1 Ready; gateway 1/1 Ready; EPP 1/1 Ready');
    expect(kube.log).toContain('GET /api/v1/namespaces/llm-d-gen/pods?labelSelector=llm-d.ai/inference-serving=true,llm-d.ai/model=gen,llm-d.ai/role=prefill');
  });

  it('checks only the decode pods of an embedder', async () => {
    const { cluster } = await world(embedder);
    expect((await checkReady(cluster, llmd(embedder))).message).toBe('decode 1/1 Ready');
  });

  it('fails with the reason a pod is not Ready, and a retry may help', async () => {
    const { kube, cluster } = await world();
    const decode = podOf(kube, 'ms-gen-llm-d-modelservice-decode');
    decode.ready = false;
    Object.assign(decode, { status: { containerStatuses: [{ name: 'vllm', ready: false, restartCount: 3, image: '', imageID: '', state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { reason: 'OOMKilled', exitCode: 137 } } }] } });
    const probe = await probeReady(cluster, llmd(generative));
    expect(probe.retryable).toBe(true);
    expect(probe.result.status).toBe('fail');
    expect(probe.result.message).toBe('decode 0/1 Ready (ms-gen-llm-d-modelservice-decode-7c9f0: container vllm: CrashLoopBackOff (last exit: OOMKilled 137))');
    expect(probe.result.failure).toMatchObject({
      expected: '1 Ready decode pod; 1 Ready gateway pod; 1 Ready EPP pod; the pull Job gen-model-pull succeeded (or gone after its TTL with the marker on the volume)',
      cause: 'a container keeps failing: kubectl logs --previous on the pod (OOMKilled: raise its memory limit)',
    });
  });

  it('fails when the chart created no pods, and when the Gateway Service is missing', async () => {
    const kube = await startFakeKube();
    const cluster = await createCluster(kube.kubeConfig());
    const result = await checkReady(cluster, llmd(withPrefill));
    expect(result.message).toBe(
      'no decode pods (selector llm-d.ai/inference-serving=true,llm-d.ai/model=gen,llm-d.ai/role=decode: is the ms-gen release installed?); no prefill pods (selector llm-d.ai/inference-serving=true,llm-d.ai/model=gen,llm-d.ai/role=prefill); gateway: Service infra-gen-inference-gateway-istio not found; EPP: Service gaie-gen-epp not found',
    );
    expect(result.failure?.cause).toContain('Istio creates Service infra-gen-inference-gateway-istio once Gateway infra-gen-inference-gateway is Programmed');
  });

  it('reads the pull Job: running (retry), failed (final), gone after its TTL with the marker present or missing', async () => {
    const { kube, cluster } = await world();
    const job = kube.state.jobs[0]!;
    job.status = { active: 1, failed: 1 };
    let probe = await probeReady(cluster, llmd(generative));
    expect([probe.result.message, probe.retryable]).toEqual(['pull Job gen-model-pull still running (1 active, 1 failed attempt(s))', true]);

    job.status = { failed: 4, conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }] };
    probe = await probeReady(cluster, llmd(generative));
    expect([probe.result.message, probe.retryable]).toEqual(['pull Job gen-model-pull failed (BackoffLimitExceeded: Job has reached the specified backoff limit)', false]);
    expect(probe.result.failure?.cause).toBe('read why: kubectl logs -n llm-d-gen job/gen-model-pull');

    kube.state.jobs = [];
    expect((await checkReady(cluster, llmd(generative))).message).toBe('decode 1/1 Ready; gateway 1/1 Ready; EPP 1/1 Ready; pull Job gone (TTL), marker present');
    podOf(kube, 'ms-gen-llm-d-modelservice-decode').files = [];
    expect((await checkReady(cluster, llmd(generative))).message).toBe(
      'pull Job gen-model-pull not found and no marker /model-cache/.pulled on the volume (test -f exited 1 in pod ms-gen-llm-d-modelservice-decode-7c9f0)',
    );
  });

  it('an RBAC denial is final, and names the missing rule', async () => {
    const { kube, cluster } = await world();
    kube.state.forbidden.add('list pods');
    const probe = await probeReady(cluster, llmd(generative));
    expect(probe.retryable).toBe(false);
    expect(probe.result.message).toMatch(/^forbidden: cannot list pods in namespace llm-d-gen \(RBAC: grant "list" on "pods"\)/);
  });

  it('passes a KServe model: LLMInferenceService Ready and its workload pods', async () => {
    const { kube, cluster } = await world(kservePlan);
    expect((await checkReady(cluster, kserve(kservePlan))).message).toBe('LLMInferenceService Ready; workload 1/1 Ready; download Job succeeded');
    expect(kube.log).toContain('GET /apis/serving.kserve.io/v1alpha1/namespaces/llm-d-kq/llminferenceservices/kq');
    expect(kube.log).toContain('GET /api/v1/namespaces/llm-d-kq/pods?labelSelector=app.kubernetes.io/name=kq,app.kubernetes.io/part-of=llminferenceservice,kserve.io/component=workload');
  });

  it('fails a KServe model whose LLMInferenceService is not Ready, naming the failing conditions', async () => {
    const { kube, cluster } = await world(kservePlan);
    kube.state.customObjects[0]!.object = {
      status: { conditions: [{ type: 'Ready', status: 'False', reason: 'RouterNotReady' }, { type: 'RouterReady', status: 'False', reason: 'GatewayNotFound', message: 'gateway kserve/kserve-ingress-gateway not found' }, { type: 'WorkloadsReady', status: 'True' }] },
    };
    const result = await checkReady(cluster, kserve(kservePlan));
    expect(result.message).toBe('LLMInferenceService Ready=False (RouterNotReady); not ready: RouterReady (GatewayNotFound: gateway kserve/kserve-ingress-gateway not found)');
  });
});

describe('ready names missing KServe prerequisites', () => {
  it('the well-known LLMInferenceServiceConfigs, when the controller cannot find them', async () => {
    const { kube, cluster } = await world(kservePlan);
    // As KServe v0.18.1 reports it: MarkPresetsCombinedNotReady("CombineBaseError", err) with getConfig's error.
    kube.state.customObjects[0]!.object = {
      status: {
        conditions: [
          { type: 'Ready', status: 'False', reason: 'CombineBaseError' },
          {
            type: 'PresetsCombined',
            status: 'False',
            reason: 'CombineBaseError',
            message: 'failed to get LLMInferenceServiceConfig "kserve-config-llm-template" from namespaces ["llm-d-kq", "kserve"]: llminferenceserviceconfigs.serving.kserve.io "kserve-config-llm-template" not found',
          },
        ],
      },
    };
    const probe = await probeReady(cluster, kserve(kservePlan));
    expect(probe.retryable).toBe(false);
    expect(probe.result.failure?.cause).toBe(
      "KServe's well-known LLMInferenceServiceConfigs are missing (kserve-config-llm-template not found in the model namespace or in kserve): install them with KServe's chart, helm upgrade -i kserve-runtime-configs oci://ghcr.io/kserve/charts/kserve-runtime-configs --version v0.18.1 -n kserve --set kserve.llmisvcConfigs.enabled=true (the chart ships them disabled); see docs/deployment-flow.md#kserve-prerequisites",
    );
  });

  it('Envoy AI Gateway, when plain Envoy Gateway rejects the InferencePool backend', async () => {
    const { kube, cluster } = await world(kservePlan);
    // Envoy Gateway v1.6.3 sets ResolvedRefs False/InvalidKind; KServe relays it in HTTPRoutesReady.
    const route =
      'Failed to process route rule 0 backendRef 0: Group is invalid, only the core API group (specified by omitting the group field or setting it to an empty string), multicluster.x-k8s.io and gateway.envoyproxy.io are supported.';
    kube.state.customObjects[0]!.object = {
      status: {
        conditions: [
          { type: 'Ready', status: 'False', reason: 'RouterNotReady' },
          { type: 'RouterReady', status: 'False', reason: 'HTTPRoutesNotReady' },
          { type: 'HTTPRoutesReady', status: 'False', reason: 'HTTPRoutesNotReady', message: `The following HTTPRoutes are not ready: [llm-d-kq/kq-kserve-route: "False" (reason "InvalidKind", message ${JSON.stringify(route)})]` },
        ],
      },
    };
    const probe = await probeReady(cluster, kserve(kservePlan));
    expect(probe.retryable).toBe(false);
    expect(probe.result.failure?.cause).toBe(
      "the Gateway rejects the InferencePool backend of KServe's HTTPRoute (ResolvedRefs False, InvalidKind): plain Envoy Gateway routes only to Services; install Envoy AI Gateway v0.5.0 as its extension and enable InferencePool backends in Envoy Gateway (extensionManager.backendResources: inference.networking.k8s.io/v1 InferencePool); see docs/deployment-flow.md#kserve-prerequisites",
    );
  });

  it('on KServe v0.20 (2026-08): its configs chart at v0.20.0, Envoy AI Gateway v1.0.0 (what v0.20 installs with), the upgrade guide', async () => {
    const current = planOf([{ category: 'generative', name: 'Kq', slug: 'kq', platform: 'kserve', pull: true }], { upstream: '2026-08' });
    const { kube, cluster } = await world(current);
    // As KServe v0.20.0 reports them: getConfig's configNotFoundError, reason ConfigNotFound (config_merge.go);
    // the route's refusal relayed in HTTPRoutesReady (router.go, EvaluateHTTPRouteConditions).
    kube.state.customObjects[0]!.object = {
      status: {
        conditions: [
          { type: 'Ready', status: 'False', reason: 'RouterNotReady' },
          { type: 'PresetsCombined', status: 'False', reason: 'ConfigNotFound', message: 'LLMInferenceServiceConfig "kserve-config-llm-template" not found in namespaces [llm-d-kq kserve]' },
          { type: 'HTTPRoutesReady', status: 'False', reason: 'HTTPRoutesNotReady', message: 'The following HTTPRoutes are not ready: [llm-d-kq/kq-kserve-route: "False" (reason "InvalidKind", message "Kind is invalid")]' },
        ],
      },
    };
    const probe = await probeReady(cluster, kserve(current));
    expect(probe.retryable).toBe(false);
    expect(probe.result.failure?.cause).toBe(
      [
        "KServe's well-known LLMInferenceServiceConfigs are missing (kserve-config-llm-template not found in the model namespace or in kserve): install them with KServe's chart, helm upgrade -i kserve-runtime-configs oci://ghcr.io/kserve/charts/kserve-runtime-configs --version v0.20.0 -n kserve --set kserve.llmisvcConfigs.enabled=true (the chart ships them disabled); see docs/upgrading.md#kserve-v018--v020",
        "the Gateway rejects the InferencePool backend of KServe's HTTPRoute (ResolvedRefs False, InvalidKind): plain Envoy Gateway routes only to Services; install Envoy AI Gateway v1.0.0 as its extension and enable InferencePool backends in Envoy Gateway (extensionManager.backendResources: inference.networking.k8s.io/v1 InferencePool); see docs/upgrading.md#kserve-v018--v020",
      ].join('; '),
    );
  });

  it('nothing, for other reasons (and keeps retrying)', async () => {
    const { kube, cluster } = await world(kservePlan);
    kube.state.customObjects[0]!.object = { status: { conditions: [{ type: 'Ready', status: 'False' }, { type: 'PresetsCombined', status: 'False', message: 'failed to get LLMInferenceServiceConfig "kq-config"' }] } };
    const probe = await probeReady(cluster, kserve(kservePlan));
    expect(probe.retryable).toBe(true);
    expect(probe.result.failure?.cause).toContain('kubectl describe llminferenceservice');
  });
});

describe('pulled', () => {
  it('passes when test -f finds the marker in the decode pod', async () => {
    const { kube, cluster } = await world();
    const result = await checkPulled(cluster, llmd(generative));
    expect(result).toMatchObject({ status: 'pass', message: 'marker /model-cache/.pulled present', target: 'exec test -f /model-cache/.pulled in pod/ms-gen-llm-d-modelservice-decode-7c9f0 container vllm' });
    expect(kube.log.filter((l) => l.startsWith('EXEC'))).toEqual(['EXEC llm-d-gen/ms-gen-llm-d-modelservice-decode-7c9f0 vllm: test -f /model-cache/.pulled']);
  });

  it('fails when test -f exits 1, pointing at the pull Job', async () => {
    const { cluster } = await world(generative, { pulled: false });
    const result = await checkPulled(cluster, llmd(generative));
    expect(result.status).toBe('fail');
    expect(result.failure).toMatchObject({
      expected: 'the marker /model-cache/.pulled on the model volume (test -f exits 0)',
      got: 'test -f /model-cache/.pulled exited 1 in pod ms-gen-llm-d-modelservice-decode-7c9f0: the marker is missing',
      cause: 'the pull Job gen-model-pull has not completed (kubectl logs -n llm-d-gen job/gen-model-pull); the server may be running on an empty or partial volume',
    });
  });

  it('skips, never fails, without exec permission', async () => {
    const { kube, cluster } = await world();
    kube.state.forbidden.add('create pods/exec');
    const result = await checkPulled(cluster, llmd(generative));
    expect(result).toMatchObject({ status: 'skip', message: 'cannot check: no exec permission (RBAC: create pods/exec)', failure: null });
  });

  it('skips a model without modelSource', async () => {
    const { cluster } = await world(embedder);
    expect((await checkPulled(cluster, llmd(embedder))).status).toBe('skip');
  });

  it('reads the download Job for KServe (the marker is not visible in its pods)', async () => {
    const { kube, cluster } = await world(kservePlan);
    expect((await checkPulled(cluster, kserve(kservePlan))).message).toBe('download Job kq-model-pull succeeded (it writes /model-cache/.pulled last)');
    kube.state.jobs[0]!.status = { active: 1 };
    expect((await checkPulled(cluster, kserve(kservePlan))).failure?.got).toBe('the Job is still running (1 active)');
  });
});

describe('address (KServe)', () => {
  it('takes status.addresses when status.url is empty', async () => {
    const { cluster } = await world(kservePlan);
    const result = await checkKserveAddress(cluster, kserve(kservePlan));
    expect(result).toMatchObject({ status: 'pass', message: 'http://10.96.14.7/llm-d-kq/kq (from status.addresses: status.url is empty)' });
    expect(result.data).toEqual({ url: 'http://10.96.14.7/llm-d-kq/kq', source: 'status.addresses', addresses: ['http://10.96.14.7/llm-d-kq/kq'] });
  });

  it('prefers status.url, and notes a path that differs from the plan', async () => {
    const { kube, cluster } = await world(kservePlan);
    kube.state.customObjects[0]!.object = { status: { url: 'http://models.example.com/other', addresses: [{ url: 'http://10.0.0.1/llm-d-kq/kq' }] } };
    const result = await checkKserveAddress(cluster, kserve(kservePlan));
    expect(result.message).toBe('http://models.example.com/other; path /other differs from the planned /llm-d-kq/kq');
  });

  it('fails with the Gateway to look at when no address is reported', async () => {
    const { cluster } = await world(kservePlan, { kserveAddress: 'none' });
    const result = await checkKserveAddress(cluster, kserve(kservePlan));
    expect(result.failure).toMatchObject({ got: 'status.url and status.addresses are empty' });
    expect(result.failure?.cause).toContain('Gateway kserve/kserve-ingress-gateway has an address');
  });

  it('names the LLMInferenceService API from core', () => {
    expect(llmInferenceServiceRef(kserve(kservePlan))).toEqual({ group: 'serving.kserve.io', version: 'v1alpha1', plural: 'llminferenceservices', namespace: 'llm-d-kq', name: 'kq' });
  });
});
