import { CATEGORIES, type Category, type Upstream } from '../../constants.ts';
import type { StackConfig } from '../../config/load.ts';
import type { ModelAutoscaling } from '../../config/types.ts';
import type { ValuesFile } from '../../discovery.ts';
import type { Issue } from '../../errors.ts';
import type { AutoscalerKeys, RequestBuffering } from '../../upstream/generation.ts';
import { GAIE_NO_REQUEST_BUFFERING } from '../../upstream/2026-02.ts';
import { ROUTER_EMBEDDER_NO_BUFFERING, ROUTER_REQUEST_BUFFERING } from '../../upstream/2026-08/facts.ts';
import { modelUpstream } from '../../upstream/select.ts';
import { getPath, isValuesMap } from '../../values/merge.ts';
import { durationLimitProblem, durationSeconds } from '../../config/formats.ts';
import { AUTOSCALING_DEFAULTS, AUTOSCALING_LIMITS } from './facts.ts';

export type { AutoscalerKeys, RequestBuffering } from '../../upstream/generation.ts';

/** What a model's platform and upstream can do, for {@link autoscalingProblems}. */
export interface AutoscalingCapabilities {
  /** `llm-d` (KEDA) or `kserve` (the LLMInferenceService's `scaling`, WVA). */
  readonly platform: 'llm-d' | 'kserve';
  /**
   * Whether something holds a request while the model has no replica (the set's fact): scale to
   * zero is refused, with the set's own reason, where nothing does.
   */
  readonly requestBuffering: RequestBuffering;
  /** Why the model's traffic does not pass the EPP (an embedder's Service), or null when it does. */
  readonly noEpp: string | null;
}

/** One problem of a model's `autoscaling`: the key under `autoscaling` and the message. */
export interface AutoscalingProblem {
  readonly key: 'minReplicas' | 'maxReplicas' | 'signal' | 'target' | 'cooldown' | 'pollingInterval';
  readonly message: string;
}

/** The contradictions in a model's `autoscaling`, given what its platform can do. */
export function autoscalingProblems(settings: ModelAutoscaling, capabilities: AutoscalingCapabilities): AutoscalingProblem[] {
  const problems: AutoscalingProblem[] = [];
  const min = settings.minReplicas ?? AUTOSCALING_DEFAULTS.minReplicas;
  // On KServe only the cool-down is ours (signal, target and polling are refused below as unused).
  problems.push(...limitProblems(settings).filter((p) => capabilities.platform !== 'kserve' || p.key === 'cooldown'));
  if (min > settings.maxReplicas) {
    problems.push({ key: 'minReplicas', message: `is ${min}, more than maxReplicas (${settings.maxReplicas}): raise maxReplicas or lower minReplicas` });
  }
  if (capabilities.platform === 'kserve') {
    if (min === 0) {
      problems.push({
        key: 'minReplicas',
        message:
          "is 0, but KServe's LLMInferenceService allows no fewer than 1 (its CRD: scaling.minReplicas minimum 1, in v0.18 and v0.20; idle scale to zero is only on KServe's main branch): set minReplicas: 1 or more",
      });
    }
    for (const key of ['signal', 'target', 'pollingInterval'] as const) {
      if (settings[key] !== undefined) {
        problems.push({
          key,
          message: `is not used on KServe: its scaling is driven by the Workload Variant Autoscaler, which chooses the signal and its target itself (the CRD's scaling has no such field) — remove it`,
        });
      }
    }
    return problems;
  }
  const buffering = capabilities.requestBuffering;
  if (min === 0 && !buffering.holds) {
    problems.push({
      key: 'minReplicas',
      message: `is 0, but ${buffering.why}, so every request during a cold start would fail — set minReplicas: 1 or more${buffering.fix ? `, ${buffering.fix}` : ''} (see docs/autoscaling.md, "At zero")`,
    });
  }
  const signal = settings.signal ?? AUTOSCALING_DEFAULTS.signal;
  if (capabilities.noEpp !== null && (signal === 'epp-queue' || signal === 'epp-kv-cache')) {
    problems.push({ key: 'signal', message: `is ${signal}, but ${capabilities.noEpp}: use queue-depth or kv-cache (vLLM's own metrics)` });
  }
  if ((signal === 'kv-cache' || signal === 'epp-kv-cache') && settings.target !== undefined && settings.target > 1) {
    problems.push({ key: 'target', message: `is ${settings.target}, but KV-cache utilisation is a fraction from 0 to 1: use e.g. 0.8` });
  }
  return problems;
}

/**
 * What holds an llm-d model's requests while it has no replica, by set: the 2026-08 Router's flow
 * control (not for an embedder, whose Service bypasses the EPP); nothing on 2026-02 (GAIE v1.2).
 */
export function requestBufferingOf(upstream: Upstream, category: Category): RequestBuffering {
  if (upstream === '2026-02') return GAIE_NO_REQUEST_BUFFERING;
  return category === 'embedder' ? ROUTER_EMBEDDER_NO_BUFFERING : ROUTER_REQUEST_BUFFERING;
}

/**
 * The values the API server or KEDA would refuse later (the ScaledObject is admitted, the HPA KEDA
 * makes from it is not, and the model never scales): cooldown, pollingInterval and target against
 * {@link AUTOSCALING_LIMITS}, each message with the limit and its source.
 */
function limitProblems(settings: ModelAutoscaling): AutoscalingProblem[] {
  const problems: AutoscalingProblem[] = [];
  for (const [key, limit] of [
    ['cooldown', AUTOSCALING_LIMITS.cooldownSeconds],
    ['pollingInterval', AUTOSCALING_LIMITS.pollingIntervalSeconds],
  ] as const) {
    const text = settings[key];
    const seconds = text === undefined ? undefined : durationSeconds(text);
    const problem = text === undefined || seconds === undefined ? null : durationLimitProblem(text, seconds, limit);
    if (problem) problems.push({ key, message: problem });
  }
  if (settings.target !== undefined && settings.target < AUTOSCALING_LIMITS.minTarget) {
    problems.push({
      key: 'target',
      message: `is ${settings.target}, less than ${AUTOSCALING_LIMITS.minTarget}: KEDA hands the target to the HPA with three decimals (v2.20 pkg/scalers/scaler.go, %.3f), so it would be 0, which the HPA refuses — use at least ${AUTOSCALING_LIMITS.minTarget}`,
    });
  }
  return problems;
}

const AUTOSCALER_KINDS = new Set(['HorizontalPodAutoscaler', 'ScaledObject', 'VerticalPodAutoscaler']);

/**
 * A values file of an autoscaled model that also fixes the replica count or brings its own
 * autoscaler: two owners of `replicas` would fight (each scaling undoing the other). One issue per key.
 */
export function valuesAutoscalerConflicts(file: ValuesFile | undefined, keys: AutoscalerKeys): Issue[] {
  if (!file) return [];
  const issues: Issue[] = [];
  for (const path of keys.replicas) {
    if (getPath(file.values, path) === undefined || getPath(file.values, path) === null) continue;
    issues.push(
      file.source.issue(
        'values.conflict',
        path,
        `fixes the replica count, but the stack autoscales this model (models[].autoscaling): the autoscaler owns replicas — remove it (autoscaling.minReplicas and maxReplicas bound the count)`,
      ),
    );
  }
  for (const path of keys.autoscalers) {
    const value = getPath(file.values, path);
    if (value === undefined || value === null || value === false) continue;
    issues.push(
      file.source.issue(
        'values.conflict',
        path,
        `turns on an autoscaler of its own, but the stack already autoscales this model (models[].autoscaling): two autoscalers would fight over replicas — remove it, or remove autoscaling from the stack`,
      ),
    );
  }
  if (keys.extraObjects) {
    const extra = getPath(file.values, keys.extraObjects);
    if (Array.isArray(extra)) {
      extra.forEach((object, index) => {
        const kind = isValuesMap(object) ? object.kind : undefined;
        if (typeof kind === 'string' && AUTOSCALER_KINDS.has(kind)) {
          issues.push(
            file.source.issue(
              'values.conflict',
              [...keys.extraObjects!, index, 'kind'],
              `is a ${kind}, but the stack already autoscales this model (models[].autoscaling): two autoscalers would fight over replicas — remove this object, or remove autoscaling from the stack`,
            ),
          );
        }
      });
    }
  }
  return issues;
}

/**
 * The rules of `autoscaling` across the stack: each autoscaled model's settings against what its
 * platform can do, and the Prometheus that KEDA reads (its address, and credentials that match its
 * `auth`). Every problem, with the key path.
 */
export function checkAutoscalingRules(config: Pick<StackConfig, 'models' | 'platform' | 'upstream' | 'prometheus' | 'prometheusCredentials' | 'locate'>): Issue[] {
  const issues: Issue[] = [];
  const { locate } = config;
  const autoscaledWithoutPrometheus: string[] = [];
  for (const category of CATEGORIES) {
    config.models[category].forEach((entry, index) => {
      if (!entry.enabled || !entry.autoscaling) return;
      const platform = entry.platform ?? config.platform;
      for (const problem of autoscalingProblems(entry.autoscaling, {
        platform,
        requestBuffering: requestBufferingOf(modelUpstream(config, entry), category),
        noEpp: category === 'embedder' && platform === 'llm-d' ? "an embedding model's requests go through its Service straight to the pods, not through the EPP" : null,
      })) {
        issues.push(locate('config.contradiction', ['models', category, index, 'autoscaling', problem.key], problem.message));
      }
      if (platform === 'llm-d' && config.prometheus === undefined) autoscaledWithoutPrometheus.push(`models.${category}[${index}]`);
    });
  }
  if (autoscaledWithoutPrometheus.length > 0) {
    issues.push(
      locate(
        'config.missing-key',
        ['prometheus'],
        `is required: ${autoscaledWithoutPrometheus.join(', ')} ${autoscaledWithoutPrometheus.length === 1 ? 'is' : 'are'} autoscaled, and KEDA reads the signal from Prometheus — set prometheus.address (e.g. http://prometheus-operated.monitoring.svc:9090)`,
      ),
    );
  }
  const prometheus = config.prometheus;
  if (prometheus?.auth !== undefined && config.prometheusCredentials === undefined) {
    issues.push(locate('config.missing-credential', ['prometheusCredentials'], `is required with prometheus.auth: ${prometheus.auth} (pulumi config set --secret prometheusCredentials <${prometheus.auth === 'bearer' ? 'token' : 'password'}>)`));
  }
  if (config.prometheusCredentials !== undefined && prometheus?.auth === undefined) {
    issues.push(locate('config.contradiction', ['prometheusCredentials'], 'is set, but prometheus.auth is not: set prometheus.auth to bearer or basic, or remove the credentials'));
  }
  if (prometheus?.auth === 'basic' && prometheus.username === undefined) {
    issues.push(locate('config.missing-key', ['prometheus', 'username'], 'is required with auth: basic'));
  }
  if (prometheus?.username !== undefined && prometheus.auth !== 'basic') {
    issues.push(locate('config.contradiction', ['prometheus', 'username'], 'is only for auth: basic; remove it or set auth: basic'));
  }
  return issues;
}
