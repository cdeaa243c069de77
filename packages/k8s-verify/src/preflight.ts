import { lookup } from 'node:dns/promises';
import { parse as parseYaml } from 'yaml';
import { preflightChecks, formatCrdField, GPU_RESOURCE, ISTIO, MODEL_LABEL, type DeploymentPlan, type PreflightCheck, type PreflightSeverity, type Toleration } from '@app-serving/core';
import { ApiError, KubeApi } from './api.ts';
import { AnswerError, bounded, clip, getJson } from './bounded.ts';
import { DeadlineError, abortKind, checkSignal, formatMs } from './clock.ts';
import { KubeError, kubeErrorOf } from './cluster.ts';
import { Redactor } from './redact.ts';
import { MAX_DURATION_MS } from './duration.ts';
import { VerifyError } from './errors.ts';
import { loadKubeconfig, type KubeconfigOptions } from './kubeconfig.ts';

/**
 * What preflight reads from the API server, and nothing more: get/list and SelfSubjectAccessReview
 * (which the API server evaluates and never stores). Each call takes an AbortSignal; `get` of a
 * missing object resolves null; any other failure throws a {@link KubeError}.
 */
export interface PreflightReader {
  /** `GET /version`: `v1.34.1`. */
  version(signal: AbortSignal): Promise<string>;
  /** `get` a cluster-scoped object (`group` '' for the core group). */
  get(ref: { group: string; version: string; plural: string; name: string; namespace?: string }, signal: AbortSignal): Promise<Record<string, any> | null>;
  /** `list nodes`. */
  listNodes(signal: AbortSignal): Promise<NodeInfo[]>;
  /** SelfSubjectAccessReview: may the current identity do `verb` on the resource? */
  canI(attributes: { verb: string; group: string; resource: string; namespace: string | null }, signal: AbortSignal): Promise<{ allowed: boolean; reason: string | null }>;
  /** `GET` a path of a Service through the API server's service proxy (`/api/v1/namespaces/<ns>/services/<scheme>:<name>:<port>/proxy<path>`); the parsed JSON answer. */
  serviceGet?(target: { namespace: string; name: string; port: number; scheme: 'http' | 'https' }, path: string, signal: AbortSignal): Promise<unknown>;
  /** `list deployments` of a namespace by a label selector (istiod's), each reduced to {@link DeploymentInfo}. */
  listDeployments?(namespace: string, labelSelector: string, signal: AbortSignal): Promise<DeploymentInfo[]>;
}

/** A Deployment, reduced to what the Istio check reads: its name, labels, and its containers' images and env (a value from a reference is null). */
export interface DeploymentInfo {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly containers: readonly { readonly name: string; readonly image: string; readonly env: readonly { readonly name: string; readonly value: string | null }[] }[];
}

/** A node, reduced to what placement needs. */
export interface NodeInfo {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly { readonly key: string; readonly value?: string; readonly effect: string }[];
  readonly unschedulable: boolean;
  readonly gpus: number;
}

/** The status of one check: `warn` is a failed check of severity `warning` (it does not fail the run). */
export type PreflightStatus = 'pass' | 'fail' | 'warn' | 'skip';

export interface PreflightCheckResult {
  readonly id: string;
  readonly type: PreflightCheck['type'];
  readonly title: string;
  readonly status: PreflightStatus;
  readonly severity: PreflightSeverity;
  readonly models: readonly string[];
  /** What was found. */
  readonly message: string;
  /** What to do, when the check did not pass; else null. */
  readonly fix: string | null;
  readonly durationMs: number;
}

/** The `--json` document of `app-serving preflight` (docs/cli.md). */
export interface PreflightResult {
  readonly schemaVersion: 1;
  readonly ok: boolean;
  readonly stack: string;
  readonly target: { readonly source: string; readonly context: string | null; readonly server: string | null };
  readonly startedAt: string;
  readonly durationMs: number;
  readonly counts: Readonly<Record<PreflightStatus, number>>;
  readonly checks: readonly PreflightCheckResult[];
}

export const PREFLIGHT_SCHEMA_VERSION = 1;

export interface PreflightOptions extends Omit<KubeconfigOptions, 'stackKubeconfig'> {
  /** A reader to use instead of loading a kubeconfig (tests). */
  readonly reader?: PreflightReader;
  /** Per-check time limit, ms. @default 10000 */
  readonly timeoutMs?: number;
  /** Whole-run deadline, ms. @default 60000 */
  readonly deadlineMs?: number;
  /** Checks running at once. @default 8 */
  readonly concurrency?: number;
  readonly signal?: AbortSignal;
  /** Resolves a hostname (the Harbor check); default: the system resolver. */
  readonly resolveHost?: (host: string, signal: AbortSignal) => Promise<void>;
  /** GETs a URL outside the cluster and parses its JSON (the Prometheus check); default: the bounded reader's getJson, answers capped at 1 MiB, never inflated or redirected. */
  readonly httpGetJson?: (url: string, signal: AbortSignal) => Promise<unknown>;
  /** Each finished check, as it finishes. */
  readonly onCheck?: (result: PreflightCheckResult) => void;
  /** Today, for the checks of upstream support windows (Istio's); default: the clock. */
  readonly now?: () => Date;
}

export const DEFAULT_PREFLIGHT_TIMEOUT_MS = 10_000;
export const DEFAULT_PREFLIGHT_DEADLINE_MS = 60_000;

type Outcome = { status: 'pass' | 'fail'; message: string };

/**
 * Runs every check of {@link preflightChecks} for `plan` against the cluster, read-only, in bounded
 * time. The Kubernetes version is read first: when the API server cannot be reached (refused, timed
 * out, credentials rejected), every other check is skipped with that reason. Check failures are
 * results, never exceptions; a bad kubeconfig or option throws a {@link VerifyError}.
 */
export async function runPreflight(plan: DeploymentPlan, options: PreflightOptions = {}): Promise<PreflightResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_PREFLIGHT_TIMEOUT_MS;
  const deadlineMs = options.deadlineMs ?? DEFAULT_PREFLIGHT_DEADLINE_MS;
  for (const [name, value] of [['timeoutMs', timeoutMs], ['deadlineMs', deadlineMs]] as const) {
    if (!(value > 0 && value <= MAX_DURATION_MS)) throw new VerifyError('invalid-option', `${name} must be between 1 ms and ${MAX_DURATION_MS} ms`);
  }
  const started = performance.now();
  const startedAt = new Date().toISOString();
  // The deadline starts now: reading the kubeconfig and running its credential plugins are under it.
  const run = new AbortController();
  const deadline = setTimeout(() => run.abort(new DeadlineError(deadlineMs)), deadlineMs);
  deadline.unref?.();
  const onAbort = () => run.abort(options.signal!.reason);
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  let target: PreflightResult['target'] = { source: 'reader', context: null, server: null };
  let reader = options.reader;
  let redactor = new Redactor([]);
  try {
    if (!reader) {
      const resolved = await loadKubeconfig({ ...options, stackKubeconfig: plan.kubeconfig, signal: run.signal, command: 'preflight' });
      redactor = new Redactor(resolved.secrets);
      target = { source: resolved.source, context: resolved.context, server: clip(resolved.kubeConfig.getCurrentCluster()?.server ?? '', 500) || null };
      reader = await createPreflightReader(resolved.kubeConfig, resolved.secrets);
    }
  } catch (error) {
    clearTimeout(deadline);
    options.signal?.removeEventListener('abort', onAbort);
    throw error;
  }

  const checks = preflightChecks(plan);
  const results = new Array<PreflightCheckResult>(checks.length);
  // Every result is redacted (a server that echoes the token back) and bounded (a server's text of any length).
  const finish = (index: number, result: PreflightCheckResult) => {
    const safe = bounded(redactor.deep(result));
    results[index] = safe;
    options.onCheck?.(safe);
  };
  const ctx = new Context(reader, options.resolveHost ?? defaultResolve, options.httpGetJson ?? defaultGetJson, options.now ?? (() => new Date()));
  try {
    // The version first: it tells whether the API server answers at all.
    const versionIndex = checks.findIndex((c) => c.type === 'kubernetes-version');
    let unreachable: string | null = null;
    if (versionIndex >= 0) {
      const result = await runOne(checks[versionIndex]!, ctx, timeoutMs, run.signal);
      finish(versionIndex, result);
      if (result.status === 'fail' && ctx.unreachable) unreachable = result.message;
    }
    const queue = checks.map((c, i) => [c, i] as const).filter(([, i]) => i !== versionIndex);
    if (unreachable) {
      for (const [check, index] of queue) finish(index, skip(check, `not run: ${unreachable}`));
    } else {
      const workers = Array.from({ length: Math.max(1, options.concurrency ?? 8) }, async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          const [check, index] = next;
          finish(index, run.signal.aborted ? skip(check, `not run: ${(run.signal.reason as Error)?.message ?? 'cancelled'}`) : await runOne(check, ctx, timeoutMs, run.signal));
        }
      });
      await Promise.all(workers);
    }
  } finally {
    clearTimeout(deadline);
    options.signal?.removeEventListener('abort', onAbort);
  }
  const counts = { pass: 0, fail: 0, warn: 0, skip: 0 };
  for (const r of results) counts[r.status] += 1;
  return {
    schemaVersion: PREFLIGHT_SCHEMA_VERSION,
    ok: counts.fail === 0 && counts.skip === 0,
    stack: plan.stack,
    target: bounded(redactor.deep(target)),
    startedAt,
    durationMs: Math.round(performance.now() - started),
    counts,
    checks: results,
  };
}

function skip(check: PreflightCheck, message: string): PreflightCheckResult {
  return { id: check.id, type: check.type, title: check.title, status: 'skip', severity: check.severity, models: check.models, message, fix: null, durationMs: 0 };
}

async function runOne(check: PreflightCheck, ctx: Context, timeoutMs: number, parent: AbortSignal): Promise<PreflightCheckResult> {
  const started = performance.now();
  const signal = checkSignal(timeoutMs, parent);
  let outcome: Outcome;
  // A check that could not look has the fix of what stopped it, not its own ("install the CRDs").
  let fix = check.fix;
  try {
    outcome = await Promise.race([evaluate(check, ctx, signal), aborted(signal)]);
  } catch (error) {
    const kind = abortKind(signal);
    let message: string;
    if (kind === 'timeout') message = `no answer within ${formatMs(timeoutMs)} (per-check timeout): ${answerer(check)} is slow or unreachable`;
    else if (kind === 'deadline') message = (signal.reason as Error).message;
    else if (error instanceof KubeError) message = error.message;
    else if (kind === 'aborted') message = `cancelled: ${(signal.reason as Error)?.message ?? 'aborted'}`;
    // The checks read nothing but the API server's answers: what else fails is an answer not shaped as Kubernetes shapes it.
    else message = `the API server's answer cannot be read as a Kubernetes object (${clip(error instanceof Error ? error.message : String(error), 200)})`;
    if ((kind === 'timeout' && answerer(check) === API_SERVER) || (error instanceof KubeError && (error.status === null || error.status === 401))) ctx.unreachable = true;
    outcome = { status: 'fail', message };
    fix = kind === 'timeout' && answerer(check) !== API_SERVER ? `make sure ${answerer(check)} answers from here, or allow each check longer with --timeout (it was ${formatMs(timeoutMs)})` : errorFix(kind, error, timeoutMs);
  }
  const failed = outcome.status === 'fail';
  return {
    id: check.id,
    type: check.type,
    title: check.title,
    status: failed ? (check.severity === 'warning' ? 'warn' : 'fail') : 'pass',
    severity: check.severity,
    models: check.models,
    message: outcome.message,
    fix: failed ? fix : null,
    durationMs: Math.round(performance.now() - started),
  };
}

const API_SERVER = 'the API server';

/** Who a check waits for: the API server, or a server outside the cluster (Prometheus from here, the DNS resolver). */
function answerer(check: PreflightCheck): string {
  if (check.type === 'prometheus' && !inClusterService(check.address)) return `the Prometheus at ${check.address}`;
  if (check.type === 'registry-dns') return `the DNS resolver (looking up ${check.host})`;
  return API_SERVER;
}

/** The fix of a check that failed because the API server refused, failed or did not answer. */
function errorFix(kind: ReturnType<typeof abortKind>, error: unknown, timeoutMs: number): string {
  if (kind === 'timeout') return `make sure the API server answers from here (kubectl version), or allow each check longer with --timeout (it was ${formatMs(timeoutMs)})`;
  if (kind === 'deadline') return 'allow the whole run longer with --deadline, or find out why the API server is slow';
  if (kind === 'aborted') return 'run preflight again';
  if (error instanceof KubeError) {
    if (error.status === 403) return rbacFix(error);
    if (error.status === 401) return "renew the kubeconfig's credentials (log in again, or a fresh token), then run preflight again";
    if (error.status === null) return "make sure the API server is reachable from here: the kubeconfig's server address, VPN or proxy (kubectl version)";
    return `the API server answered HTTP ${error.status}: run preflight again, and read the API server's logs if it persists`;
  }
  return 'please report it: this is a bug in @app-serving/k8s-verify';
}

/** The RBAC rule a 403 lacks, written as a Role or ClusterRole rule. */
function rbacFix(error: KubeError): string {
  if (error.resource.startsWith('/')) {
    return `grant the kubeconfig's user "${error.verb}" on ${error.resource}: a ClusterRole rule { nonResourceURLs: ["${error.resource}"], verbs: ["${error.verb}"] }, bound to the user`;
  }
  const dot = error.resource.indexOf('.');
  const [resource, group] = dot < 0 ? [error.resource, ''] : [error.resource.slice(0, dot), error.resource.slice(dot + 1)];
  const role = error.namespace ? `a Role rule in namespace ${error.namespace}` : 'a ClusterRole rule';
  return `grant the kubeconfig's user "${error.verb}" on ${error.resource}: ${role} { apiGroups: ["${group}"], resources: ["${resource}"], verbs: ["${error.verb}"] }, bound to the user`;
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

class Context {
  unreachable = false;
  private nodes: Promise<NodeInfo[]> | null = null;
  private istioFound: Promise<IstioFound> | null = null;
  constructor(
    readonly reader: PreflightReader,
    readonly resolveHost: (host: string, signal: AbortSignal) => Promise<void>,
    readonly httpGetJson: (url: string, signal: AbortSignal) => Promise<unknown> = defaultGetJson,
    readonly now: () => Date = () => new Date(),
  ) {}
  istio(signal: AbortSignal): Promise<IstioFound> {
    // One read for both Istio checks of the run; a failed read is not cached.
    this.istioFound ??= readIstio(this.reader, signal).catch((error) => {
      this.istioFound = null;
      throw error;
    });
    return this.istioFound;
  }
  listNodes(signal: AbortSignal): Promise<NodeInfo[]> {
    // One list for every placement check of the run; a failed list is not cached.
    this.nodes ??= this.reader.listNodes(signal).catch((error) => {
      this.nodes = null;
      throw error;
    });
    return this.nodes;
  }
}

/** What a cluster shows of Istio: each istiod (version and the inference extension's flag), else its CRDs' version label. */
interface IstioFound {
  readonly istiods: readonly { readonly name: string; readonly version: string | null; readonly image: string; readonly inferenceExtension: boolean | null }[];
  /** Why istiod's Deployments could not be read (forbidden), or null. */
  readonly hidden: string | null;
  /** The `app.kubernetes.io/version` label of Istio's CRD, when it was read (no istiod with a version). */
  readonly crd: { readonly exists: boolean; readonly version: string | null } | null;
}

async function readIstio(reader: PreflightReader, signal: AbortSignal): Promise<IstioFound> {
  let deployments: DeploymentInfo[] = [];
  let hidden: string | null = null;
  if (!reader.listDeployments) hidden = 'this reader cannot list Deployments';
  else {
    try {
      deployments = await reader.listDeployments(ISTIO.namespace, ISTIO.istiodSelector, signal);
    } catch (error) {
      if (!(error instanceof KubeError && error.status === 403) || signal.aborted) throw error;
      hidden = error.message;
    }
  }
  const istiods = deployments.map((d) => {
    const container = d.containers.find((c) => c.name === ISTIO.container) ?? d.containers[0];
    const image = container?.image ?? '';
    const label = d.labels[ISTIO.versionLabel];
    const version = versionOf(imageTag(image)) ?? (label ? versionOf(label) : null);
    const env = container?.env.find((e) => e.name === ISTIO.inferenceExtensionEnv);
    // Istio reads it with Go's strconv.ParseBool; unset (or unreadable by Istio) is its default, false.
    const inferenceExtension = env === undefined ? false : env.value === null ? null : ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(env.value);
    return { name: d.name, version, image, inferenceExtension };
  });
  let crd: IstioFound['crd'] = null;
  if (istiods.every((i) => i.version === null)) {
    const object = await reader.get({ group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', name: ISTIO.crd }, signal);
    const label = asObject(asObject(object?.metadata).labels)[ISTIO.versionLabel];
    crd = { exists: object !== null, version: typeof label === 'string' ? versionOf(label) : null };
  }
  return { istiods, hidden, crd };
}

/** The tag of an image reference (`docker.io/istio/pilot:1.29.6-distroless` → `1.29.6-distroless`), or '' (a digest, no tag). */
function imageTag(image: string): string {
  const last = image.slice(image.lastIndexOf('/') + 1).split('@')[0]!;
  const colon = last.lastIndexOf(':');
  return colon < 0 ? '' : last.slice(colon + 1);
}

/** `1.29.6` from a tag or label (`1.29.6-distroless`, `v1.29.6`), or null. */
function versionOf(text: string): string | null {
  const match = /^v?(\d+\.\d+(?:\.\d+)?)(?:$|[-+_])/.exec(text);
  return match ? clip(match[1]!, 30) : null;
}

/** `a` ≥ `b` by major and minor. */
function atLeast(a: string, b: string): boolean {
  const [x, y] = [minorOf(a), minorOf(b)];
  return !!x && !!y && (x[0] > y[0] || (x[0] === y[0] && x[1] >= y[1]));
}

function istioCheck(found: IstioFound, min: string, inferenceExtension: boolean): Outcome {
  const env = ISTIO.inferenceExtensionEnv;
  if (found.istiods.length === 0) {
    const where = found.hidden ? `istiod's Deployments cannot be read here (${clip(found.hidden, 200)})` : `no Deployment labelled ${ISTIO.istiodSelector} in ${ISTIO.namespace}`;
    const version = found.crd?.version ?? null;
    if (!version) return fail(`Istio not found: ${where}, and CRD ${ISTIO.crd} ${found.crd?.exists ? `has no ${ISTIO.versionLabel} label` : 'is not installed'}`);
    if (!atLeast(version, min)) return fail(`Istio ${version} (label ${ISTIO.versionLabel} of CRD ${ISTIO.crd}) is older than ${min}`);
    return pass(`Istio ${version} (label ${ISTIO.versionLabel} of CRD ${ISTIO.crd}); ${where}, so ${env} was not checked`);
  }
  const problems: string[] = [];
  const seen: string[] = [];
  for (const istiod of found.istiods) {
    const version = istiod.version ?? found.crd?.version ?? null;
    const name = `istiod ${clip(istiod.name, 100)}`;
    if (!version) problems.push(`${name}: version unknown (image ${JSON.stringify(clip(istiod.image, 200))} has no version tag, no ${ISTIO.versionLabel} label)`);
    else if (!atLeast(version, min)) problems.push(`${name} is Istio ${version}, older than ${min}`);
    if (inferenceExtension && istiod.inferenceExtension === false) problems.push(`${name} runs without ${env}=true (off by default): Istio ignores InferencePools, and the HTTPRoute to the pool is not accepted`);
    seen.push(`${name} (Istio ${version ?? 'version unknown'}${istiod.inferenceExtension === null ? `, ${env} set from a reference: not checked` : istiod.inferenceExtension ? `, ${env}=true` : ''})`);
  }
  return problems.length ? fail(problems.join('; ')) : pass(seen.join('; '));
}

function istioSupportCheck(found: IstioFound, endOfSupport: Extract<PreflightCheck, { type: 'istio-support' }>['endOfSupport'], now: Date): Outcome {
  const today = now.toISOString().slice(0, 10);
  const versions = [...new Set([...found.istiods.map((i) => i.version), found.crd?.version ?? null].filter((v): v is string => v !== null))];
  const supported = endOfSupport.filter((e) => e.date > today).map((e) => `${e.minor} (${e.estimated ? 'about ' : ''}until ${e.date})`);
  const newest = endOfSupport.at(-1)!.minor;
  const supportedText = `supported: ${[...supported, `${supported.length ? 'and ' : ''}newer than ${newest}`].join(', ')}`;
  if (versions.length === 0) return fail(`no Istio version found to check (see the Istio check); ${supportedText}`);
  const ended: string[] = [];
  for (const version of versions) {
    const [major, minor] = minorOf(version)!;
    const entry = endOfSupport.find((e) => e.minor === `${major}.${minor}`);
    const oldest = minorOf(endOfSupport[0]!.minor)!;
    if (entry && entry.date <= today) ended.push(`Istio ${version}'s support ended on ${entry.date}`);
    else if (!entry && (major < oldest[0] || (major === oldest[0] && minor < oldest[1]))) ended.push(`Istio ${version} is older than ${endOfSupport[0]!.minor}, out of support`);
  }
  return ended.length ? fail(`${ended.join('; ')} (${supportedText})`) : pass(`Istio ${versions.join(', ')}: ${supportedText}`);
}

const pass = (message: string): Outcome => ({ status: 'pass', message });
const fail = (message: string): Outcome => ({ status: 'fail', message });

async function evaluate(check: PreflightCheck, ctx: Context, signal: AbortSignal): Promise<Outcome> {
  const { reader } = ctx;
  switch (check.type) {
    case 'kubernetes-version': {
      const version = await reader.version(signal);
      const have = minorOf(version);
      const want = minorOf(check.min);
      if (!have || !want) return fail(`cannot read the version from ${JSON.stringify(clip(version, 100))}`);
      return have[0] > want[0] || (have[0] === want[0] && have[1] >= want[1]) ? pass(`Kubernetes ${version}`) : fail(`Kubernetes ${version} is older than ${check.min}`);
    }
    case 'crd': {
      const { crd } = check;
      const name = `${crd.plural}.${crd.group}`;
      const object = await reader.get({ group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', name }, signal);
      if (!object) return fail(`CRD ${name} is not installed`);
      const spec = asObject(object.spec);
      if (!Array.isArray(spec.versions)) return fail(`CRD ${name} is malformed: spec.versions is not a list`);
      const versions = spec.versions.map(asObject);
      const version = versions.find((v) => v.name === crd.version);
      const served = versions.filter((v) => v.served === true && typeof v.name === 'string').map((v) => clip(v.name as string, 60));
      if (version?.served !== true) return fail(`CRD ${name} does not serve ${crd.version} (it serves ${clip(served.join(', '), 300) || 'nothing'})`);
      const schemaAt = (field: readonly string[]) => {
        let schema: Record<string, any> | undefined = asObject(asObject(version.schema).openAPIV3Schema);
        for (const key of field) schema = schema ? asObjectOrUndefined(key === '[]' ? schema.items : asObject(schema.properties)[key]) : undefined;
        return schema;
      };
      for (const field of crd.fields ?? []) {
        if (!schemaAt(field)) return fail(`CRD ${name} ${crd.version} has no field ${formatCrdField(field)}: the installed version is too old`);
      }
      for (const { field, value } of crd.enums ?? []) {
        const schema = schemaAt(field);
        const values = Array.isArray(schema?.enum) ? schema.enum : null;
        if (!values || !values.includes(value)) return fail(`CRD ${name} ${crd.version} does not take ${formatCrdField(field)}: ${value}: the installed version is too old`);
      }
      return pass(`CRD ${name} serves ${served.join(', ')}`);
    }
    case 'gateway-class': {
      const object = await reader.get({ group: 'gateway.networking.k8s.io', version: 'v1', plural: 'gatewayclasses', name: check.name }, signal);
      if (!object) return fail(`GatewayClass ${check.name} does not exist`);
      const controller = asObject(object.spec).controllerName;
      const shown = typeof controller === 'string' ? clip(controller, 200) : 'unknown';
      if (check.controllerName !== undefined && controller !== check.controllerName) return fail(`GatewayClass ${check.name} belongs to controller ${shown}, not ${check.controllerName}`);
      if (check.accepted) {
        const conditions = Array.isArray(asObject(object.status).conditions) ? (asObject(object.status).conditions as unknown[]).map(asObject) : [];
        const accepted = conditions.find((c) => c.type === 'Accepted');
        if (accepted?.status !== 'True') {
          const why = accepted ? `Accepted ${clip(String(accepted.status), 20)}${typeof accepted.reason === 'string' ? ` (${clip(accepted.reason, 100)})` : ''}${typeof accepted.message === 'string' ? `: ${clip(accepted.message, 300)}` : ''}` : 'no Accepted condition: is its controller running?';
          return fail(`GatewayClass ${check.name} is not accepted by ${shown}: ${why}`);
        }
      }
      return pass(`GatewayClass ${check.name} (controller ${shown}${check.accepted ? ', Accepted' : ''})`);
    }
    case 'custom-object': {
      const object = await reader.get({ group: check.group, version: check.version, plural: check.plural, name: check.name, namespace: check.namespace }, signal);
      return object ? pass(`${check.namespace}/${check.name} exists`) : fail(`${check.plural}.${check.group} ${check.namespace}/${check.name} does not exist`);
    }
    case 'envoy-inference-pool': {
      const object = await reader.get({ group: '', version: 'v1', plural: 'configmaps', name: check.configMap, namespace: check.namespace }, signal);
      if (!object) return fail(`ConfigMap ${check.namespace}/${check.configMap} does not exist: Envoy Gateway is not installed there`);
      let config: any;
      try {
        const text = asObject(object.data)[check.key];
        // A ConfigMap holds at most 1 MiB; aliases are bounded by the yaml library's default.
        config = parseYaml(typeof text === 'string' ? text : '', { maxAliasCount: 100 });
      } catch {
        return fail(`ConfigMap ${check.namespace}/${check.configMap}: ${check.key} is not YAML`);
      }
      const manager = asObject(asObject(config).extensionManager);
      const resources = Array.isArray(manager.backendResources) ? manager.backendResources.map(asObject) : [];
      const pool = resources.some((r) => r.kind === 'InferencePool' && r.group === 'inference.networking.k8s.io');
      return pool ? pass('Envoy Gateway lists InferencePool among its extension backend resources') : fail('Envoy Gateway does not list InferencePool (inference.networking.k8s.io) under extensionManager.backendResources: it will refuse routes to the pool');
    }
    case 'placement':
      return placement(check, await ctx.listNodes(signal));
    case 'node': {
      const node = await reader.get({ group: '', version: 'v1', plural: 'nodes', name: check.name }, signal);
      return node ? pass(`node ${check.name} exists`) : fail(`node ${check.name} does not exist`);
    }
    case 'storage-class': {
      const object = await reader.get({ group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses', name: check.name }, signal);
      return object ? pass(`StorageClass ${check.name} (provisioner ${typeof object.provisioner === 'string' ? clip(object.provisioner, 200) : 'unknown'})`) : fail(`StorageClass ${check.name} does not exist`);
    }
    case 'namespace': {
      const object = await reader.get({ group: '', version: 'v1', plural: 'namespaces', name: check.name }, signal);
      if (!object) return pass(`namespace ${check.name} does not exist yet: app-serving creates it`);
      const key = check.label ?? MODEL_LABEL;
      const label = asObject(asObject(object.metadata).labels)[key];
      return typeof label === 'string' && label ? pass(`namespace ${check.name} is app-serving's (${key}=${clip(label, 100)})`) : fail(`namespace ${check.name} exists and has no label ${key}: another owner manages it`);
    }
    case 'permission': {
      const { allowed, reason } = await reader.canI({ verb: check.verb, group: check.group, resource: check.resource, namespace: check.namespace }, signal);
      const what = `${check.verb} ${check.group ? `${check.resource}.${check.group}` : check.resource}${check.namespace ? ` in namespace ${check.namespace}` : ''}`;
      return allowed ? pass(`allowed: ${what}`) : fail(`denied: ${what}${reason ? ` (${reason})` : ''}`);
    }
    case 'prometheus': {
      // Prometheus's build-info endpoint answers `{status: "success", data: {version}}`.
      const path = '/api/v1/status/buildinfo';
      const service = inClusterService(check.address);
      let answer: unknown;
      try {
        if (service) {
          if (!reader.serviceGet) return fail('this reader cannot reach Services through the API server');
          answer = await reader.serviceGet(service, path, signal);
        } else {
          answer = await ctx.httpGetJson(`${check.address.replace(/\/+$/, '')}${path}`, signal);
        }
      } catch (error) {
        if (signal.aborted) throw error;
        const how = service ? `through the API server's service proxy (${service.namespace}/${service.name}:${service.port})` : 'from here';
        // An answer that is not one (too large, compressed, a redirect, not JSON) is said as such: it did answer.
        if (error instanceof AnswerError && error.kind === 'answer') return fail(`${check.address} ${error.message}: not Prometheus's build info (at ${path})`);
        return fail(`${check.address} does not answer ${how}: ${clip(error instanceof AnswerError ? error.message.replace(/^does not answer \((.*)\)$/, '$1') : error instanceof Error ? error.message : String(error), 300)}`);
      }
      const data = asObject(asObject(answer).data);
      return asObject(answer).status === 'success'
        ? pass(`${check.address} answers (Prometheus ${typeof data.version === 'string' ? clip(data.version, 50) : 'version unknown'})`)
        : fail(`${check.address} answered, but not as Prometheus does (no status "success" at ${path})`);
    }
    case 'istio':
      return istioCheck(await ctx.istio(signal), check.min, check.inferenceExtension);
    case 'istio-support':
      return istioSupportCheck(await ctx.istio(signal), check.endOfSupport, ctx.now());
    case 'registry-dns':
      try {
        await ctx.resolveHost(check.host, signal);
        return pass(`${check.host} resolves`);
      } catch (error) {
        if (signal.aborted) throw error;
        const code = (error as { code?: unknown })?.code;
        return fail(`${check.host} does not resolve from here (${typeof code === 'string' ? code : error instanceof Error ? error.message : String(error)})`);
      }
  }
}

function asObject(value: unknown): Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, any>) : {};
}

function asObjectOrUndefined(value: unknown): Record<string, any> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, any>) : undefined;
}

function minorOf(version: string): [number, number] | null {
  const match = /^v?(\d+)\.(\d+)/.exec(version);
  return match ? [Number(match[1]), Number(match[2])] : null;
}

/** Does `toleration` tolerate `taint` (Kubernetes' rules: key, operator Equal/Exists, effect)? */
export function tolerates(toleration: Toleration, taint: { key: string; value?: string; effect: string }): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.operator === 'Exists') return !toleration.key || toleration.key === taint.key;
  return toleration.key === taint.key && (toleration.value ?? '') === (taint.value ?? '');
}

function placement(check: Extract<PreflightCheck, { type: 'placement' }>, nodes: readonly NodeInfo[]): Outcome {
  const selector = Object.entries(check.nodeSelector);
  const show = selector.map(([k, v]) => `${k}=${v}`).join(',') || '(any)';
  const matching = nodes.filter((n) => selector.every(([k, v]) => n.labels[k] === v));
  if (matching.length === 0) return fail(`no node has the labels ${show} (${nodes.length} node${nodes.length === 1 ? '' : 's'} in the cluster)`);
  const blocking = (n: NodeInfo) => n.taints.filter((t) => (t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !check.tolerations.some((tol) => tolerates(tol, t)));
  const usable = matching.filter((n) => !n.unschedulable && blocking(n).length === 0);
  if (usable.length === 0) {
    const first = matching.find((n) => !n.unschedulable) ?? matching[0]!;
    const taint = blocking(first)[0];
    const why = taint ? `taint ${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect} is not tolerated by the stack's tolerations` : 'it is cordoned (unschedulable)';
    return fail(`${matching.length} node${matching.length === 1 ? ' matches' : 's match'} ${show}, none can take the model: on ${first.name}, ${why}`);
  }
  if (check.gpusPerPod > 0) {
    const slots = usable.reduce((n, node) => n + Math.floor(node.gpus / check.gpusPerPod), 0);
    if (slots < check.replicas) {
      const have = usable.map((n) => `${n.name}: ${n.gpus}`).join(', ');
      return fail(`${check.replicas} pod${check.replicas === 1 ? '' : 's'} × ${check.gpusPerPod} ${GPU_RESOURCE} do not fit the matching nodes' allocatable ${GPU_RESOURCE} (${have})`);
    }
  }
  return pass(`${usable.length} node${usable.length === 1 ? '' : 's'} can take the model (${usable.map((n) => n.name).slice(0, 5).join(', ')}${usable.length > 5 ? ', …' : ''})`);
}

/** `http://<name>.<namespace>.svc[.cluster.local][:port]` → the Service to reach through the API server; else null. */
export function inClusterService(address: string): { namespace: string; name: string; port: number; scheme: 'http' | 'https' } | null {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return null;
  }
  const match = /^([a-z0-9-]+)\.([a-z0-9-]+)\.svc(\.cluster\.local)?$/.exec(url.hostname);
  if (!match) return null;
  const scheme = url.protocol === 'https:' ? 'https' : 'http';
  return { name: match[1]!, namespace: match[2]!, port: url.port ? Number(url.port) : scheme === 'https' ? 443 : 80, scheme };
}

/** Largest answer of a server outside the cluster read (Prometheus's build info is under 1 KiB): 1 MiB. */
export const MAX_OUTSIDE_ANSWER_BYTES = 1024 * 1024;

/** GETs JSON through the one bounded reader: at most 1 MiB, never inflated, never redirected, under the check's signal. */
function defaultGetJson(url: string, signal: AbortSignal): Promise<unknown> {
  return getJson(url, { limit: MAX_OUTSIDE_ANSWER_BYTES, signal });
}

async function defaultResolve(host: string, signal: AbortSignal): Promise<void> {
  await Promise.race([lookup(host), aborted(signal)]);
}

/** Items per page when nodes are listed (a node with its images is 10-50 KB). */
const NODE_PAGE = 100;

/**
 * A {@link PreflightReader} over the kubeconfig's API server: bounded answers (see {@link KubeApi}),
 * and `secrets` redacted from what the server says before it is cut into a message.
 */
export async function createPreflightReader(kubeConfig: import('@kubernetes/client-node').KubeConfig, secrets: readonly string[] = []): Promise<PreflightReader> {
  const api = new KubeApi(kubeConfig, secrets);
  const seg = encodeURIComponent;
  return {
    async version(signal) {
      try {
        const answer = (await api.request({ path: '/version', signal })) as { gitVersion?: unknown };
        if (typeof answer.gitVersion !== 'string') throw new ApiError('the API server\'s /version answer has no gitVersion: not a Kubernetes API server', null, null, 'answer');
        return clip(api.redact(answer.gitVersion), 100);
      } catch (error) {
        throw kubeErrorOf(error, 'get', '/version', '', signal);
      }
    },
    async get(ref, signal) {
      const resource = ref.group ? `${ref.plural}.${ref.group}` : ref.plural;
      const base = ref.group ? `/apis/${seg(ref.group)}/${seg(ref.version)}` : `/api/${seg(ref.version)}`;
      const path = `${base}${ref.namespace ? `/namespaces/${seg(ref.namespace)}` : ''}/${seg(ref.plural)}/${seg(ref.name)}`;
      try {
        return (await api.request({ path, signal })) as Record<string, any>;
      } catch (error) {
        if (error instanceof ApiError && error.status === 404 && !signal.aborted) return null;
        throw kubeErrorOf(error, 'get', resource, ref.namespace ?? '', signal);
      }
    },
    async listNodes(signal) {
      try {
        return await api.list({ path: '/api/v1/nodes', signal }, NODE_PAGE, nodeInfo);
      } catch (error) {
        throw kubeErrorOf(error, 'list', 'nodes', '', signal);
      }
    },
    async canI(attributes, signal) {
      try {
        const review = (await api.request({
          method: 'POST',
          path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectAccessReview',
            spec: { resourceAttributes: { verb: attributes.verb, group: attributes.group, resource: attributes.resource, ...(attributes.namespace && { namespace: attributes.namespace }) } },
          },
          signal,
        })) as { status?: { allowed?: unknown; reason?: unknown } };
        const reason = review.status?.reason;
        return { allowed: review.status?.allowed === true, reason: typeof reason === 'string' && reason ? clip(api.redact(reason), 300) : null };
      } catch (error) {
        throw kubeErrorOf(error, 'create', 'selfsubjectaccessreviews.authorization.k8s.io', '', signal);
      }
    },
    async listDeployments(namespace, labelSelector, signal) {
      try {
        return await api.list({ path: `/apis/apps/v1/namespaces/${seg(namespace)}/deployments`, query: { labelSelector }, signal }, NODE_PAGE, deploymentInfo);
      } catch (error) {
        throw kubeErrorOf(error, 'list', 'deployments.apps', namespace, signal);
      }
    },
    async serviceGet(target, path, signal) {
      try {
        return await api.request({ path: `/api/v1/namespaces/${seg(target.namespace)}/services/${seg(`${target.scheme}:${target.name}:${target.port}`)}/proxy${path}`, signal });
      } catch (error) {
        throw kubeErrorOf(error, 'get', 'services/proxy', target.namespace, signal);
      }
    },
  };
}

/** A Deployment as the Istio check needs it, whatever the shape of what the server sent. */
function deploymentInfo(item: unknown): DeploymentInfo {
  const deployment = asObject(item);
  const metadata = asObject(deployment.metadata);
  const pod = asObject(asObject(asObject(deployment.spec).template).spec);
  const strings = (value: unknown) => Object.fromEntries(Object.entries(asObject(value)).filter((e): e is [string, string] => typeof e[1] === 'string').map(([k, v]) => [clip(k, 253), clip(v, 100)]));
  const containers = (Array.isArray(pod.containers) ? pod.containers.map(asObject) : []).slice(0, 20).map((c) => ({
    name: typeof c.name === 'string' ? clip(c.name, 63) : '',
    image: typeof c.image === 'string' ? clip(c.image, 500) : '',
    env: (Array.isArray(c.env) ? c.env.map(asObject) : [])
      .filter((e) => typeof e.name === 'string')
      .slice(0, 500)
      .map((e) => ({ name: clip(e.name as string, 200), value: typeof e.value === 'string' ? clip(e.value, 100) : e.valueFrom !== undefined ? null : '' })),
  }));
  return { name: typeof metadata.name === 'string' ? clip(metadata.name, 253) : '', labels: strings(metadata.labels), containers };
}

/** A node as placement needs it, whatever the shape of what the server sent. */
function nodeInfo(item: unknown): NodeInfo {
  const node = asObject(item);
  const metadata = asObject(node.metadata);
  const spec = asObject(node.spec);
  const labels = Object.fromEntries(Object.entries(asObject(metadata.labels)).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const taints = (Array.isArray(spec.taints) ? spec.taints.map(asObject) : [])
    .filter((t) => typeof t.key === 'string' && typeof t.effect === 'string')
    .map((t) => ({ key: t.key as string, ...(typeof t.value === 'string' && { value: t.value }), effect: t.effect as string }));
  return {
    name: typeof metadata.name === 'string' ? clip(metadata.name, 253) : '',
    labels,
    taints,
    unschedulable: spec.unschedulable === true,
    gpus: Number(asObject(asObject(node.status).allocatable)[GPU_RESOURCE] ?? 0) || 0,
  };
}
