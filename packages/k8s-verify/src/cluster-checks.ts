import { KSERVE_RELEASES, LABEL_ROLE, shellCommand, type AnyLlmdModelPlan, type KserveModelPlan, type ModelPlan, type StoragePlan, type Upstream } from '@app-serving/core';
import { checkSignal } from './clock.ts';
import { KubeError, kubeErrorOf, labelSelector, type Cluster, type CustomObjectRef, type PodSummary } from './cluster.ts';
import { findEnvoyGatewayService } from './endpoints.ts';
import { DEFAULT_CHECK_TIMEOUT_MS } from './openai.ts';
import { checkResult, timed } from './result.ts';
import type { CheckResult, JsonValue } from './types.ts';

/** Options of the cluster checks. */
export interface ClusterCheckOptions {
  /** Timeout of the check (all its API calls). @default 30000 */
  readonly timeoutMs?: number;
  /** Aborts the check. */
  readonly signal?: AbortSignal;
  /** Where Envoy Gateway runs the proxies of a Gateway (class `envoy`). @default "envoy-gateway-system" */
  readonly envoyNamespace?: string;
}

/** A check result, and whether trying again later may change it (`--wait`). */
export interface Probe {
  readonly result: CheckResult;
  readonly retryable: boolean;
}

/** The API coordinates of a KServe model's LLMInferenceService. */
export function llmInferenceServiceRef(model: Pick<KserveModelPlan, 'apiVersion' | 'namespace' | 'service'>): CustomObjectRef {
  // The version the model was written with: v1alpha1 (KServe v0.18, 2026-02) or v1alpha2 (v0.20, 2026-08).
  const [group = '', version = ''] = model.apiVersion.split('/');
  return { group, version, plural: 'llminferenceservices', namespace: model.namespace, name: model.service };
}

/**
 * `ready`: the model's pods are Ready, and its weights Job finished.
 *
 * - llm-d: decode pods (plan `podLabels` + `llm-d.ai/role=decode`, at least `decodeReplicas`),
 *   prefill pods when `prefillReplicas > 0`; for generative models also the gateway pods (behind
 *   the Service Istio creates for the Gateway) and the EPP pods (behind the `gaie-<slug>-epp` Service).
 * - KServe: the LLMInferenceService exists and its `Ready` condition is True; its workload pods are Ready.
 * - With `modelSource`: the pull Job succeeded, or it is gone (TTL) and the `.pulled` marker is on
 *   the volume (llm-d; read by exec, as in `pulled`).
 */
export async function checkReady(cluster: Cluster, model: ModelPlan, options: ClusterCheckOptions = {}): Promise<CheckResult> {
  return (await probeReady(cluster, model, options)).result;
}

/** {@link checkReady}, telling also whether a retry may help (pods starting, Job running) or not (RBAC, Job failed). */
export async function probeReady(cluster: Cluster, model: ModelPlan, options: ClusterCheckOptions = {}): Promise<Probe> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  const signal = checkSignal(timeoutMs, options.signal);
  let retryable = true;
  const result = await timed('ready', `namespace ${model.namespace}`, async () => {
    const state = new Readiness();
    try {
      if (model.platform === 'llm-d') await llmdReadiness(cluster, model, state, signal, options.envoyNamespace);
      else await kserveReadiness(cluster, model, state, signal);
      if (model.storage) await jobReadiness(cluster, model, model.storage, state, signal);
    } catch (error) {
      const e = kubeErrorOf(error, 'get', 'objects', model.namespace, signal);
      state.problem(e.message, e.status === 401 || e.status === 403 ? 'final' : 'retry');
    }
    retryable = state.retryable;
    return state.result();
  });
  return { result, retryable };
}

class Readiness {
  readonly parts: string[] = [];
  readonly problems: string[] = [];
  readonly wants: string[] = [];
  readonly causes: string[] = [];
  readonly data: Record<string, JsonValue> = {};
  retryable = true;

  problem(text: string, kind: 'retry' | 'final' = 'retry', cause?: string): void {
    this.problems.push(text);
    if (kind === 'final') this.retryable = false;
    if (cause && !this.causes.includes(cause)) this.causes.push(cause);
  }

  result(): CheckResult {
    if (this.problems.length === 0) return checkResult('ready', 'pass', this.parts.join('; '), { data: this.data });
    return checkResult('ready', 'fail', this.problems.join('; '), {
      data: this.data,
      failure: {
        expected: this.wants.join('; '),
        got: this.problems.join('; '),
        cause: this.causes.join('; ') || null,
        httpStatus: null,
        body: null,
      },
    });
  }
}

/** Pods of one role/component: at least `want` of them Ready. */
function podGroup(state: Readiness, label: string, pods: readonly PodSummary[], want: number, missing: string): void {
  const ready = pods.filter((p) => p.ready).length;
  const need = Math.max(1, want);
  state.wants.push(`${need} Ready ${label} pod${need > 1 ? 's' : ''}`);
  state.data[label] = `${ready}/${need}`;
  if (pods.length === 0) {
    state.problem(`no ${label} pods (${missing})`, 'retry', `${label}: nothing created the pods yet: check the release/Deployment and its events`);
    return;
  }
  if (ready >= need) {
    state.parts.push(`${label} ${ready}/${need} Ready`);
    return;
  }
  const notReady = pods.filter((p) => !p.ready);
  const details = notReady.slice(0, 3).map((p) => `${p.name}: ${p.problem ?? p.phase}`);
  state.problem(`${label} ${ready}/${need} Ready (${details.join('; ')}${notReady.length > 3 ? '; …' : ''})`, 'retry', podCause(notReady));
}

/** The likely cause behind pods that are not Ready. */
function podCause(pods: readonly PodSummary[]): string {
  const text = pods.map((p) => p.problem ?? '').join(' ');
  if (/Unschedulable|Insufficient|didn't match|untolerated/i.test(text)) return 'no node fits the pod: check nodeSelector, the GPU toleration and free GPUs (kubectl describe pod)';
  if (/ImagePull|ErrImage|InvalidImageName/.test(text)) return 'an image cannot be pulled: check its name and tag, the pull secret (harbor-creds on-prem) and registry access';
  if (/CrashLoopBackOff|Error|OOMKilled|terminated/.test(text)) return 'a container keeps failing: kubectl logs --previous on the pod (OOMKilled: raise its memory limit)';
  if (/readiness|not ready/i.test(text)) return 'the server is starting (loading the model can take minutes): rerun with --wait';
  if (/Pending|ContainerCreating|PodInitializing/.test(text)) return 'the pod is still starting (volume mount, image pull): rerun with --wait, or kubectl describe pod';
  return 'kubectl describe pod / kubectl logs on the pods named';
}

async function llmdReadiness(cluster: Cluster, model: AnyLlmdModelPlan, state: Readiness, signal: AbortSignal, envoyNamespace?: string): Promise<void> {
  const ns = model.namespace;
  const server = model.modelServer;
  const role = (r: 'decode' | 'prefill') => ({ ...server.podLabels, [LABEL_ROLE]: r });
  // Read concurrently, report in a fixed order.
  const groups: Promise<(s: Readiness) => void>[] = [
    cluster
      .listPods(ns, role('decode'), signal)
      .then((pods) => (s) => podGroup(s, 'decode', pods, server.decodeReplicas, `selector ${labelSelector(role('decode'))}: is ${model.origins.modelServer} installed?`)),
  ];
  if (server.prefillReplicas > 0) {
    groups.push(cluster.listPods(ns, role('prefill'), signal).then((pods) => (s) => podGroup(s, 'prefill', pods, server.prefillReplicas, `selector ${labelSelector(role('prefill'))}`)));
  }
  for (const target of model.autoscaling?.targets ?? []) {
    groups.push(autoscalerState(cluster, ns, target, model.autoscaling!, signal));
  }
  if (model.category === 'generative') {
    const gatewayPods =
      model.upstream === '2026-08' && model.router.gatewayClass === 'envoy'
        ? envoyGatewayPods(cluster, { name: model.gateway.name, namespace: ns }, model.gateway.port, signal, envoyNamespace)
        : servicePods(cluster, ns, model.gateway.service, signal);
    groups.push(
      gatewayPods.then((r) => (s) =>
        r.pods ? podGroup(s, 'gateway', r.pods, 1, `behind Service ${r.service ?? model.gateway.service}`) : gatewayMissing(s, model, r.problem),
      ),
    );
    groups.push(
      servicePods(cluster, ns, model.inferencePool.epp, signal).then((r) => (s) => {
        if (r.pods) return podGroup(s, 'EPP', r.pods, 1, `behind Service ${model.inferencePool.epp}`);
        s.wants.push('a Ready EPP pod');
        s.problem(`EPP: ${r.problem}`, 'retry', `${model.origins.epp} is not installed or failed`);
      }),
    );
  }
  for (const apply of await settleAll(groups)) apply(state);
}

/**
 * An autoscaled Deployment: the HPA KEDA made for its ScaledObject (`keda-hpa-<name>`), its
 * current and desired replicas and when it last scaled (`status.lastScaleTime`), and whether the
 * ScaledObject is Ready and Active (its conditions).
 */
async function autoscalerState(
  cluster: Cluster,
  namespace: string,
  target: NonNullable<AnyLlmdModelPlan['autoscaling']>['targets'][number],
  plan: NonNullable<AnyLlmdModelPlan['autoscaling']>,
  signal: AbortSignal,
): Promise<(s: Readiness) => void> {
  const [hpa, scaled] = await Promise.all([
    cluster.readCustomObject({ group: 'autoscaling', version: 'v2', plural: 'horizontalpodautoscalers', namespace, name: `keda-hpa-${target.scaledObject}` }, signal),
    cluster.readCustomObject({ group: 'keda.sh', version: 'v1alpha1', plural: 'scaledobjects', namespace, name: target.scaledObject }, signal),
  ]);
  return (s) => {
    const label = `autoscaling ${target.role}`;
    if (!scaled) {
      s.problem(`${label}: ScaledObject ${target.scaledObject} not found`, 'retry', 'pulumi up has not created it yet, or the KEDA CRDs are missing (kubectl get crd scaledobjects.keda.sh)');
      return;
    }
    const conditions = conditionsOf(scaled);
    const ready = conditions.find((c) => c.type === 'Ready');
    const active = conditions.find((c) => c.type === 'Active');
    const status = (hpa?.status ?? {}) as { currentReplicas?: number; desiredReplicas?: number; lastScaleTime?: string };
    const text = `${label}: ${status.currentReplicas ?? 0} current, ${status.desiredReplicas ?? 0} desired (${plan.minReplicas}–${plan.maxReplicas} on ${plan.signal}), last scaled ${status.lastScaleTime ?? 'never'}${active ? `, ${active.status === 'True' ? 'active' : 'idle'}` : ''}`;
    s.data[`autoscaling:${target.role}`] = { current: status.currentReplicas ?? 0, desired: status.desiredReplicas ?? 0, lastScaleTime: status.lastScaleTime ?? null, active: active?.status === 'True' };
    if (ready?.status === 'False') {
      s.problem(`${text}; ScaledObject not ready (${ready.reason ?? ''}${ready.message ? `: ${ready.message.slice(0, 150)}` : ''})`, 'retry', `KEDA cannot scale ${target.deployment}: kubectl describe scaledobject ${target.scaledObject} -n ${namespace} (is the Prometheus at ${plan.prometheus.address} reachable?)`);
      return;
    }
    if (!hpa) {
      // Serving does not wait for it: reported, not failed (KEDA makes the HPA once it runs).
      s.parts.push(`${label}: no HPA keda-hpa-${target.scaledObject} yet (KEDA makes it: is KEDA running?)`);
      return;
    }
    s.parts.push(text);
  };
}

function gatewayMissing(state: Readiness, model: AnyLlmdModelPlan, problem: string): void {
  state.wants.push('a Ready gateway pod');
  state.problem(
    `gateway: ${problem}`,
    'retry',
    model.origins.gateway,
  );
}

type ServicePods = { pods: PodSummary[]; problem: ''; service?: string } | { pods: null; problem: string; service?: undefined };

/** The pods behind a Service (by its selector). */
async function servicePods(cluster: Cluster, namespace: string, service: string, signal: AbortSignal): Promise<ServicePods> {
  const svc = await cluster.readService(namespace, service, signal);
  if (!svc) return { pods: null, problem: `Service ${service} not found` };
  if (!svc.selector) return { pods: null, problem: `Service ${service} has no selector` };
  return { pods: await cluster.listPods(namespace, svc.selector, signal), problem: '' };
}

/** The proxy pods of a Gateway of Envoy Gateway, behind the Service it made (found by its labels, endpoints.ts). */
async function envoyGatewayPods(cluster: Cluster, gateway: { name: string; namespace: string }, port: number, signal: AbortSignal, envoyNamespace?: string): Promise<ServicePods> {
  const found = await findEnvoyGatewayService(cluster, gateway, port, signal, envoyNamespace);
  if ('problem' in found) return { pods: null, problem: found.problem };
  const { service } = found;
  if (!service.selector) return { pods: null, problem: `Service ${service.namespace}/${service.name} has no selector` };
  return { pods: await cluster.listPods(service.namespace, service.selector, signal), problem: '', service: `${service.namespace}/${service.name}` };
}

/** Like Promise.all, but waits for every promise before rethrowing the first error (no API call left running). */
async function settleAll<T>(promises: readonly Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

async function kserveReadiness(cluster: Cluster, model: KserveModelPlan, state: Readiness, signal: AbortSignal): Promise<void> {
  const ref = llmInferenceServiceRef(model);
  const [object, pods] = await Promise.all([cluster.readCustomObject(ref, signal), cluster.listPods(model.namespace, model.podLabels, signal)]);
  state.wants.push(`LLMInferenceService ${model.service} Ready=True`);
  if (!object) {
    state.problem(
      `LLMInferenceService ${model.namespace}/${model.service} not found`,
      'retry',
      'pulumi up has not created it yet, or the KServe CRDs are missing (kubectl get crd llminferenceservices.serving.kserve.io)',
    );
  } else {
    const conditions = conditionsOf(object);
    const ready = conditions.find((c) => c.type === 'Ready');
    if (ready?.status === 'True') {
      state.parts.push('LLMInferenceService Ready');
    } else {
      const failing = conditions.filter((c) => c.type !== 'Ready' && c.status !== 'True').map((c) => `${c.type}${c.reason ? ` (${c.reason}${c.message ? `: ${c.message.slice(0, 100)}` : ''})` : ''}`);
      const text = `LLMInferenceService Ready=${ready?.status ?? 'unknown'}${ready?.reason ? ` (${ready.reason})` : ''}${failing.length ? `; not ready: ${failing.join(', ')}` : ''}`;
      const missing = kserveMissingPrerequisites(conditions, model.upstream);
      // A missing prerequisite does not come by waiting: say which, and stop retrying.
      for (const cause of missing) state.problem(text, 'final', cause);
      if (missing.length === 0) state.problem(text, 'retry', 'kubectl describe llminferenceservice: its conditions name the child (workload, router, scheduler) that is not ready');
    }
  }
  podGroup(state, 'workload', pods, model.replicas, `selector ${labelSelector(model.podLabels)}`);
}

/** Where the KServe prerequisites of each set are written up: v0.18's install, and the way to v0.20. */
const KSERVE_PREREQUISITES_DOC: Readonly<Record<Upstream, string>> = {
  '2026-02': 'docs/deployment-flow.md#kserve-prerequisites',
  '2026-08': 'docs/upgrading.md#kserve-v018--v020',
};

/**
 * The KServe prerequisites a not-ready LLMInferenceService's conditions show missing:
 *
 * - `PresetsCombined` False because a well-known config `kserve-config-llm-*` is not found: the
 *   controller merges every model with them (kserve v0.18.1 pkg/controller/v1alpha2/llmisvc/
 *   config_merge.go, getConfig: "failed to get LLMInferenceServiceConfig …"; v0.20.0: `LLMInferenceServiceConfig
 *   "…" not found in namespaces […]`, reason ConfigNotFound), and KServe's chart
 *   `kserve-runtime-configs` installs them only with `kserve.llmisvcConfigs.enabled=true`.
 * - `HTTPRoutesReady` False because the Gateway did not resolve the route's InferencePool backend:
 *   plain Envoy Gateway accepts only Service, ServiceImport and its Backend (envoyproxy/gateway
 *   v1.6.3 internal/gatewayapi/validate.go: ResolvedRefs False, reason InvalidKind, "Group is
 *   invalid" / "Kind is invalid"); KServe relays the route's condition in its message (router.go,
 *   EvaluateHTTPRouteConditions). Envoy AI Gateway, installed as Envoy Gateway's extension with
 *   InferencePool as a backend resource, makes it routable.
 *
 * Each fix names the versions of the model's set (`upstream`): KServe's release and the Envoy AI
 * Gateway it installs with (KSERVE_RELEASES).
 */
export function kserveMissingPrerequisites(conditions: readonly Condition[], upstream: Upstream = '2026-02'): string[] {
  // The KServe release of the model's set: its configs chart and the Envoy AI Gateway it installs with.
  const release = KSERVE_RELEASES[upstream];
  const doc = KSERVE_PREREQUISITES_DOC[upstream];
  const out: string[] = [];
  const failed = (type: string) => conditions.find((c) => c.type === type && c.status === 'False');
  const presets = failed('PresetsCombined');
  const config = presets?.message ? /LLMInferenceServiceConfig \\?"?(kserve-config-llm-[a-z0-9-]+)/.exec(presets.message) : null;
  if (config) {
    out.push(
      `KServe's well-known LLMInferenceServiceConfigs are missing (${config[1]} not found in the model namespace or in kserve): install them with KServe's chart, helm upgrade -i kserve-runtime-configs oci://ghcr.io/kserve/charts/kserve-runtime-configs --version ${release.version} -n kserve --set kserve.llmisvcConfigs.enabled=true (the chart ships them disabled); see ${doc}`,
    );
  }
  const routes = failed('HTTPRoutesReady');
  if (routes?.message && /InvalidKind|Group is invalid|Kind is invalid/.test(routes.message)) {
    out.push(
      `the Gateway rejects the InferencePool backend of KServe's HTTPRoute (ResolvedRefs False, InvalidKind): plain Envoy Gateway routes only to Services; install Envoy AI Gateway ${release.envoyAiGatewayVersion} as its extension and enable InferencePool backends in Envoy Gateway (extensionManager.backendResources: inference.networking.k8s.io/v1 InferencePool); see ${doc}`,
    );
  }
  return out;
}

/** A status condition. */
export interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason: string | null;
  readonly message: string | null;
}

function conditionsOf(object: Record<string, unknown>): Condition[] {
  const status = object.status as { conditions?: unknown } | undefined;
  const list = Array.isArray(status?.conditions) ? (status.conditions as Record<string, unknown>[]) : [];
  return list.map((c) => ({
    type: String(c.type ?? ''),
    status: String(c.status ?? 'Unknown'),
    reason: typeof c.reason === 'string' ? c.reason : null,
    message: typeof c.message === 'string' ? c.message : null,
  }));
}

async function jobReadiness(cluster: Cluster, model: ModelPlan, storage: StoragePlan, state: Readiness, signal: AbortSignal): Promise<void> {
  const what = storage.source.kind === 'oras' ? 'pull' : 'download';
  const logs = shellCommand(['kubectl', 'logs', '-n', model.namespace, `job/${storage.job}`]);
  state.wants.push(`the ${what} Job ${storage.job} succeeded (or gone after its TTL with the marker on the volume)`);
  const job = await cluster.readJob(model.namespace, storage.job, signal);
  if (job?.complete) {
    state.parts.push(`${what} Job succeeded`);
    state.data.job = 'succeeded';
  } else if (job?.failedCondition) {
    state.data.job = 'failed';
    state.problem(`${what} Job ${storage.job} failed (${job.failedCondition.reason}${job.failedCondition.message ? `: ${job.failedCondition.message}` : ''})`, 'final', `read why: ${logs}`);
  } else if (job) {
    state.data.job = job.active > 0 ? 'running' : 'pending';
    state.problem(
      `${what} Job ${storage.job} ${job.active > 0 ? `still running (${job.active} active, ${job.failed} failed attempt(s))` : 'not started'}`,
      'retry',
      `the weights are still being fetched: rerun with --wait, or follow ${logs}`,
    );
  } else if (model.platform === 'kserve') {
    // KServe mounts only the model folder, so the marker at the volume root cannot be read in its pods.
    state.parts.push(`${what} Job gone (removed after its TTL)`);
    state.data.job = 'gone';
  } else {
    state.data.job = 'gone';
    const marker = await markerPresent(cluster, model, storage, signal);
    if (marker.present === true) state.parts.push(`${what} Job gone (TTL), marker present`);
    else if (marker.present === null) state.parts.push(`${what} Job gone (TTL); marker not checked (${marker.why})`);
    else {
      state.problem(
        `${what} Job ${storage.job} not found and no marker ${storage.marker} on the volume (${marker.why})`,
        'retry',
        'the Job has not been created yet (pulumi up still running?) or was deleted before it finished: rerun pulumi up',
      );
    }
  }
}

/** Reads the marker by exec in a running decode pod: true/false, or null when it cannot be checked. */
async function markerPresent(cluster: Cluster, model: AnyLlmdModelPlan, storage: StoragePlan, signal: AbortSignal): Promise<{ present: boolean | null; why: string; pod?: string; container?: string; exitCode?: number }> {
  const pods = await cluster.listPods(model.namespace, { ...model.modelServer.podLabels, [LABEL_ROLE]: 'decode' }, signal);
  const pod = pods.find((p) => p.ready) ?? pods.find((p) => p.phase === 'Running');
  const container = pod?.containers[0]?.name;
  if (!pod || !container) return { present: null, why: 'no running decode pod to look in' };
  try {
    const outcome = await cluster.exec(model.namespace, pod.name, container, ['test', '-f', storage.marker], signal);
    if (outcome.exitCode === 0) return { present: true, why: `found in pod ${pod.name}`, pod: pod.name, container, exitCode: 0 };
    if (outcome.exitCode === 1) return { present: false, why: `test -f exited 1 in pod ${pod.name}`, pod: pod.name, container, exitCode: 1 };
    return { present: null, why: `test -f exited ${outcome.exitCode} in container ${container}${outcome.exitCode >= 126 ? ' (no `test` in the image?)' : ''}`, pod: pod.name, container, exitCode: outcome.exitCode };
  } catch (error) {
    const e = error instanceof KubeError ? error : kubeErrorOf(error, 'create', 'pods/exec', model.namespace, signal);
    if (e.status === 403) return { present: null, why: 'no exec permission (RBAC: create pods/exec)', pod: pod.name, container };
    if (e.status === 404) return { present: null, why: `pod ${pod.name} is gone`, pod: pod.name, container };
    throw e;
  }
}

/**
 * `pulled`: the `.pulled` marker the pull Job writes last is on the model volume.
 *
 * - llm-d: exec `test -f <storage.marker>` in the first container of a running decode pod
 *   (exit 0: present; exit 1: missing, a failure). Without exec permission the check is skipped
 *   ("cannot check: no exec permission"), never failed.
 * - KServe: its pods mount only the model folder, so the marker is not visible there; the check
 *   reads the download Job instead (the Job writes the marker last, so "succeeded" means present).
 * - No `modelSource`: skipped (the server fetches its own weights).
 */
export async function checkPulled(cluster: Cluster, model: ModelPlan, options: ClusterCheckOptions = {}): Promise<CheckResult> {
  const storage = model.storage;
  if (!storage) return checkResult('pulled', 'skip', 'no modelSource: the model server fetches its own weights (nothing pulled onto a volume)');
  const signal = checkSignal(options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS, options.signal);
  const logs = shellCommand(['kubectl', 'logs', '-n', model.namespace, `job/${storage.job}`]);
  if (model.platform === 'kserve') {
    return timed('pulled', `job/${storage.job}`, async () => {
      let job;
      try {
        job = await cluster.readJob(model.namespace, storage.job, signal);
      } catch (error) {
        const e = kubeErrorOf(error, 'get', 'jobs', model.namespace, signal);
        return e.status === 403 ? checkResult('pulled', 'skip', `cannot check: ${e.message}`) : checkResult('pulled', 'fail', e.message, { failure: { expected: `the download Job ${storage.job} succeeded`, got: e.message, cause: null, httpStatus: null, body: null } });
      }
      if (job?.complete) return checkResult('pulled', 'pass', `download Job ${storage.job} succeeded (it writes ${storage.marker} last)`);
      if (!job) return checkResult('pulled', 'skip', `cannot check: Job ${storage.job} is gone (TTL) and KServe mounts only the model folder, where the marker is not visible`);
      const got = job.failedCondition ? `the Job failed (${job.failedCondition.reason})` : job.active > 0 ? `the Job is still running (${job.active} active)` : 'the Job has not started';
      return checkResult('pulled', 'fail', got, { failure: { expected: `the download Job ${storage.job} succeeded`, got, cause: `the weights are not complete on the volume: ${logs}`, httpStatus: null, body: null } });
    });
  }
  return timed('pulled', `exec test -f ${storage.marker}`, async () => {
    const expected = `the marker ${storage.marker} on the model volume (test -f exits 0)`;
    let marker;
    try {
      marker = await markerPresent(cluster, model, storage, signal);
    } catch (error) {
      const e = kubeErrorOf(error, 'create', 'pods/exec', model.namespace, signal);
      return checkResult('pulled', 'fail', e.message, { failure: { expected, got: e.message, cause: null, httpStatus: null, body: null } });
    }
    const target = marker.pod ? `exec test -f ${storage.marker} in pod/${marker.pod} container ${marker.container}` : null;
    const data: Record<string, JsonValue> = { marker: storage.marker, pod: marker.pod ?? null, container: marker.container ?? null, exitCode: marker.exitCode ?? null };
    if (marker.present === true) return checkResult('pulled', 'pass', `marker ${storage.marker} present`, { target, data });
    if (marker.present === null) return checkResult('pulled', 'skip', `cannot check: ${marker.why}`, { target, data });
    return checkResult('pulled', 'fail', `no marker ${storage.marker} (test -f exited 1)`, {
      target,
      data,
      failure: {
        expected,
        got: `test -f ${storage.marker} exited 1 in pod ${marker.pod}: the marker is missing`,
        cause: `the pull Job ${storage.job} has not completed (${logs}); the server may be running on an empty or partial volume`,
        httpStatus: null,
        body: null,
      },
    });
  });
}

/** A KServe model's URL, from its LLMInferenceService status. */
export interface KserveAddress {
  readonly url: string;
  readonly source: 'status.url' | 'status.addresses';
}

/**
 * `address` (KServe): the URL from the LLMInferenceService status: `status.url`, else the first
 * `status.addresses[].url`. Since v0.18 KServe sets `status.url` to an external address, or else to
 * the first discovered one, cluster-internal included (kserve v0.18.1
 * pkg/controller/v1alpha2/llmisvc/router.go, updateRoutingStatus); the fallback serves a status
 * written otherwise. The path should be the plan's `/<namespace>/<name>` prefix.
 */
export async function checkKserveAddress(cluster: Cluster, model: KserveModelPlan, options: ClusterCheckOptions = {}): Promise<CheckResult> {
  return (await probeKserveAddress(cluster, model, options)).result;
}

/** {@link checkKserveAddress}, also returning the address. */
export async function probeKserveAddress(cluster: Cluster, model: KserveModelPlan, options: ClusterCheckOptions = {}): Promise<Probe & { address: KserveAddress | null }> {
  const signal = checkSignal(options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS, options.signal);
  const ref = llmInferenceServiceRef(model);
  let address: KserveAddress | null = null;
  let retryable = true;
  const expected = `a URL in status.url or status.addresses[].url ending in ${model.pathPrefix}`;
  const result = await timed('address', `llminferenceservice/${model.service}`, async () => {
    let object: Record<string, unknown> | null;
    try {
      object = await cluster.readCustomObject(ref, signal);
    } catch (error) {
      const e = kubeErrorOf(error, 'get', `${ref.plural}.${ref.group}`, model.namespace, signal);
      retryable = e.status !== 403 && e.status !== 401;
      return checkResult('address', 'fail', e.message, { failure: { expected, got: e.message, cause: null, httpStatus: null, body: null } });
    }
    if (!object) {
      return checkResult('address', 'fail', `LLMInferenceService ${model.namespace}/${model.service} not found`, {
        failure: { expected, got: 'no LLMInferenceService', cause: 'pulumi up has not created it, or the KServe CRDs are missing', httpStatus: null, body: null },
      });
    }
    const status = (object.status ?? {}) as { url?: unknown; addresses?: unknown };
    const addresses = (Array.isArray(status.addresses) ? status.addresses : [])
      .map((a: unknown) => (a && typeof a === 'object' && typeof (a as { url?: unknown }).url === 'string' ? (a as { url: string }).url : null))
      .filter((u): u is string => !!u);
    if (typeof status.url === 'string' && status.url) address = { url: status.url, source: 'status.url' };
    else if (addresses[0]) address = { url: addresses[0], source: 'status.addresses' };
    const data: Record<string, JsonValue> = { url: address?.url ?? null, source: address?.source ?? null, addresses };
    if (!address) {
      return checkResult('address', 'fail', 'no URL in the LLMInferenceService status yet', {
        data,
        failure: {
          expected,
          got: 'status.url and status.addresses are empty',
          cause: `KServe reports URLs once Gateway ${model.gateway.namespace}/${model.gateway.name} has an address and the route is accepted: is Envoy Gateway running and the Gateway Programmed? (kubectl get gateway -n ${model.gateway.namespace})`,
          httpStatus: null,
          body: null,
        },
      });
    }
    let path = '';
    try {
      path = new URL(address.url).pathname.replace(/\/$/, '');
    } catch {
      retryable = false;
      return checkResult('address', 'fail', `not a URL: ${address.url}`, { data, failure: { expected, got: `"${address.url}"`, cause: null, httpStatus: null, body: null } });
    }
    const note = address.source === 'status.addresses' ? ' (from status.addresses: status.url is empty)' : '';
    const prefixNote = path === model.pathPrefix ? '' : `; path ${path || '/'} differs from the planned ${model.pathPrefix}`;
    return checkResult('address', 'pass', `${address.url}${note}${prefixNote}`, { data });
  });
  return { result, retryable, address: result.status === 'pass' ? address : null };
}
