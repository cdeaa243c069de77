import { CATEGORIES } from '../constants.ts';
import { chartRefProblem, chartRefs } from '../charts.ts';
import type { Issue } from '../errors.ts';
import type { StackConfig } from './load.ts';

/** The platform a model entry is served on: its own `platform`, else the stack's. */
export function modelPlatform(config: Pick<StackConfig, 'platform'>, entry: { platform?: 'llm-d' | 'kserve' | undefined }): 'llm-d' | 'kserve' {
  return entry.platform ?? config.platform;
}

/**
 * Rules across keys of a parsed stack config (DESIGN §4): credentials per `cloudProvider`,
 * the `modelSource` fields each platform needs, hostPath only on-prem, chart overrides that
 * name a repository when they need one. Returns every problem found. The rules of each feature
 * (access, autoscaling, …) are the feature's own (`features/<name>/rules.ts`); `stack.ts` runs both.
 */
export function checkConfigRules(config: StackConfig): Issue[] {
  const issues: Issue[] = [];
  const { locate } = config;
  const harborKeys = ['harborHostname', 'harborUser', 'harborToken'] as const;
  const harborSet = harborKeys.filter((k) => config[k] !== undefined);
  const enabled = CATEGORIES.flatMap((category) =>
    config.models[category].map((entry, index) => ({ category, entry, index })).filter(({ entry }) => entry.enabled),
  );
  const needsHarbor = enabled.some(({ entry }) => entry.modelSource?.harborRef !== undefined);

  if (config.cloudProvider === 'on-prem') {
    for (const key of ['kubeconfig', ...harborKeys] as const) {
      if (config[key] === undefined) {
        issues.push(locate('config.missing-credential', [key], `is required when cloudProvider is on-prem${key === 'harborToken' ? ' (pulumi config set --secret harborToken <robot secret>)' : ''}`));
      }
    }
  } else if (needsHarbor || harborSet.length > 0) {
    const reason = needsHarbor ? 'a model pulls its weights from Harbor (modelSource.harborRef)' : `${harborSet.join(', ')} ${harborSet.length === 1 ? 'is' : 'are'} set`;
    for (const key of harborKeys) {
      if (config[key] === undefined) issues.push(locate('config.missing-credential', [key], `is required because ${reason}`));
    }
  }

  const seen = new Map<string, string>();
  for (const { category, entry, index } of enabled) {
    const at = (...rest: (string | number)[]) => ['models', category, index, ...rest];
    const id = `${category}/${entry.name}`;
    if (seen.has(id)) issues.push(locate('model.duplicate', at('name'), `model "${entry.name}" is listed twice under models.${category} (also at ${seen.get(id)})`));
    else seen.set(id, `models.${category}[${index}]`);
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(entry.name)) {
      issues.push(locate('config.invalid', at('name'), `"${entry.name}" is not a model folder name (letters, digits, ".", "_", "-"; no "/")`));
    }

    const platform = entry.platform ?? config.platform;
    if (platform === 'kserve' && entry.readyTimeout !== undefined) {
      issues.push(locate('config.contradiction', at('readyTimeout'), 'is only for llm-d models (it sets how long `pulumi up` awaits their Deployments); remove it'));
    }
    const source = entry.modelSource;
    if (!source) continue;
    if (platform === 'llm-d') {
      if (source.huggingFace) issues.push(locate('config.contradiction', at('modelSource', 'huggingFace'), 'is only for the kserve platform; llm-d models pull their weights from Harbor (harborRef)'));
      if (!source.harborRef) issues.push(locate('config.missing-key', at('modelSource', 'harborRef'), 'is required: the OCI artifact the ORAS Job pulls the model from'));
    } else if (source.harborRef && source.huggingFace) {
      issues.push(locate('config.contradiction', at('modelSource'), 'set either harborRef (pull from Harbor) or huggingFace (download from Hugging Face), not both'));
    } else if (!source.harborRef && !source.huggingFace) {
      issues.push(locate('config.missing-key', at('modelSource'), 'needs harborRef (pull from Harbor) or huggingFace (download from Hugging Face)'));
    }
    if (source.harborRef && !source.modelUri) {
      issues.push(locate('config.missing-key', at('modelSource', 'modelUri'), 'is required with harborRef: the path of the model inside the pulled artifact, e.g. hub/Qwen/Qwen3-0.6B'));
    }
    if (source.huggingFace && source.modelUri) {
      issues.push(locate('config.contradiction', at('modelSource', 'modelUri'), 'is derived from huggingFace.repo; remove it'));
    }
    if (source.harborRef && source.modelUri && source.layout === 'hf-cache' && source.modelUri.split('/').length < 3) {
      issues.push(
        locate('config.invalid', at('modelSource', 'modelUri'), `"${source.modelUri}" is not a Hugging Face cache path: use <cache-dir>/<org>/<model> (e.g. hub/Qwen/Qwen3-0.6B), or set layout: directory`),
      );
    }
    if (source.harborRef && config.harborHostname) {
      const registry = source.harborRef.split('/')[0];
      if (registry !== config.harborHostname) {
        issues.push(
          locate('config.contradiction', at('modelSource', 'harborRef'), `points at registry "${registry}", but the Harbor credentials are for "${config.harborHostname}"; the pull Job could not authenticate`),
        );
      }
    }
    if (config.cloudProvider === 'cloud') {
      for (const key of ['hostpathNode', 'hostpathDir'] as const) {
        if (source[key] !== undefined) issues.push(locate('config.contradiction', at('modelSource', key), 'is only for on-prem clusters (cloudProvider: on-prem); cloud PVCs use a StorageClass'));
      }
    } else if (source.hostpathDir !== undefined && source.hostpathNode === undefined) {
      issues.push(locate('config.missing-key', at('modelSource', 'hostpathNode'), 'is required with hostpathDir: the node whose directory backs the PV'));
    }
  }

  const toleration = config.gpuToleration;
  if (toleration?.operator === 'Exists' && toleration.value !== undefined) {
    issues.push(locate('config.contradiction', ['gpuToleration', 'value'], 'must not be set when operator is Exists'));
  }

  const charts = chartRefs(config);
  for (const key of ['infra', 'gaie', 'modelService'] as const) {
    if (!config.charts?.[key]) continue;
    const problem = chartRefProblem(charts[key]);
    if (problem) {
      const code = problem.message.startsWith('is required') ? 'config.missing-key' : 'config.contradiction';
      issues.push(locate(code, ['charts', key, problem.key], problem.message));
    }
  }
  return issues;
}
