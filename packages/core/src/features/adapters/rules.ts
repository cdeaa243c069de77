import { ADAPTERS_FOLDER, CATEGORIES, type Category } from '../../constants.ts';
import type { StackConfig } from '../../config/load.ts';
import type { ModelAdapter, ModelEntry } from '../../config/types.ts';
import type { ValuesFile } from '../../discovery.ts';
import type { Issue } from '../../errors.ts';
import { modelUpstream } from '../../upstream/select.ts';
import { isValuesMap } from '../../values/merge.ts';

/**
 * Rules of `adapters` (LoRA adapters served as models) across keys of the stack: one source per
 * adapter, a source the model's platform and volume can serve, names unique across the stack, and
 * where adapters are not served at all (and why). The checks that need a model's values file (the
 * server's launch and arguments) and every model's served name are at the end of this file; the
 * plan step runs them.
 */

/** The vLLM options app-serving writes for a model's adapters (`--enable-lora` and the sizes). */
export const LORA_FLAGS = ['--enable-lora', '--lora-modules', '--max-loras', '--max-lora-rank', '--max-cpu-loras'] as const;

type Located = { category: Category; index: number; entry: ModelEntry };

/** The enabled model entries of a stack, with where each is. */
function enabledEntries(config: Pick<StackConfig, 'models'>): Located[] {
  return CATEGORIES.flatMap((category) => config.models[category].map((entry, index) => ({ category, index, entry })).filter(({ entry }) => entry.enabled));
}

/** Every problem of the stack's `adapters` and `maxLoraRank` keys, each at its key path. */
export function checkAdapterRules(config: Pick<StackConfig, 'models' | 'platform' | 'upstream' | 'harborHostname' | 'locate'>): Issue[] {
  const issues: Issue[] = [];
  const { locate } = config;
  const seen = new Map<string, string>();
  for (const { category, index, entry } of enabledEntries(config)) {
    const at = (...rest: (string | number)[]) => ['models', category, index, ...rest];
    const adapters = entry.adapters ?? [];
    if (adapters.length === 0) {
      if (entry.maxLoraRank !== undefined) issues.push(locate('config.contradiction', at('maxLoraRank'), 'sizes the model\'s LoRA adapters, and it has none: remove it, or list them in adapters'));
      continue;
    }
    const platform = entry.platform ?? config.platform;
    const set = modelUpstream(config, entry);
    const refusal = whereRefused(category, platform, set);
    if (refusal) {
      issues.push(locate('config.contradiction', at('adapters'), refusal));
      continue;
    }
    adapters.forEach((adapter, i) => {
      const where = `models.${category}[${index}].adapters[${i}]`;
      const other = seen.get(adapter.name);
      if (other !== undefined) {
        issues.push(locate('name.duplicate', at('adapters', i, 'name'), `"${adapter.name}" is also the name of ${other}: clients reach an adapter by its name, so every adapter of the stack needs its own`));
      } else seen.set(adapter.name, `the adapter at ${where}`);
      issues.push(...sourceProblems(config, entry, platform, adapter, (...rest) => at('adapters', i, ...rest)));
    });
  }
  return issues;
}

/** Why a model of this category, platform and set is served without adapters, or null when it may have them. */
function whereRefused(category: Category, platform: 'llm-d' | 'kserve', set: string): string | null {
  if (category === 'embedder') {
    return 'is for generative models: a LoRA adapter is served (and verified, and routed by the shared endpoint) as a chat and completions model, and an llm-d embedding model is reached through its embeddings Service, not a pool that could tell its adapters apart; remove adapters';
  }
  if (set !== '2026-02') return null;
  if (platform === 'kserve') {
    return "is not served on the 2026-02 set: KServe v0.18's controller does not turn spec.model.lora into vLLM's arguments (static LoRA reconciliation came with KServe v0.20, kserve#5317); put the model on upstream: 2026-08";
  }
  return "is not served on the 2026-02 set: llm-d-modelservice v0.4.12 has no value for LoRA adapters (its values.yaml and templates name none), and vLLM's arguments there are the model author's decode.containers[].args (with modelCommand vllmServe, imageDefault or custom), a list Helm's merge replaces rather than extends — app-serving could add --lora-modules only by rewriting the rendered Deployment, on a set upstream has superseded; put the model on upstream: 2026-08 (docs/upgrading.md)";
}

/** Problems of one adapter's source: exactly one, and one the model can serve. */
function sourceProblems(config: Pick<StackConfig, 'harborHostname' | 'locate'>, entry: ModelEntry, platform: 'llm-d' | 'kserve', adapter: ModelAdapter, at: (...rest: (string | number)[]) => (string | number)[]): Issue[] {
  const issues: Issue[] = [];
  const { locate } = config;
  const sources = (['harborRef', 'huggingFace', 'path'] as const).filter((key) => adapter[key] !== undefined);
  if (sources.length === 0) {
    issues.push(locate('config.missing-key', at(), 'needs a source: harborRef (an OCI artifact in Harbor), huggingFace (a Hub repository) or path (a folder on the model\'s volume)'));
    return issues;
  }
  if (sources.length > 1) {
    issues.push(locate('config.contradiction', at(sources[1]!), `sets ${sources.join(' and ')}: an adapter has one source; keep one of them`));
    return issues;
  }
  const source = entry.modelSource;
  if (adapter.harborRef !== undefined) {
    if (!source?.harborRef) {
      issues.push(
        locate(
          'config.contradiction',
          at('harborRef'),
          `is pulled by the model's pull Job into ${ADAPTERS_FOLDER}/${adapter.name}/ on its volume, and ${source ? "this model's weights come from Hugging Face, whose download Job has no ORAS" : 'this model has no modelSource (no volume, no pull Job)'}: give the model modelSource.harborRef, or use huggingFace${source ? ' or path' : ''}`,
        ),
      );
    } else if (config.harborHostname && adapter.harborRef.split('/')[0] !== config.harborHostname) {
      issues.push(locate('config.contradiction', at('harborRef'), `points at registry "${adapter.harborRef.split('/')[0]}", but the Harbor credentials are for "${config.harborHostname}"; the pull Job could not authenticate`));
    }
  }
  if (adapter.path !== undefined) {
    if (!source) issues.push(locate('config.contradiction', at('path'), 'is a folder on the model\'s volume, and this model has no modelSource (no volume): give it one, or use huggingFace'));
    if (adapter.path === ADAPTERS_FOLDER || adapter.path.startsWith(`${ADAPTERS_FOLDER}/`)) {
      issues.push(locate('config.invalid', at('path'), `is under ${ADAPTERS_FOLDER}/, the folder the pull Job fills and empties (pulled adapters, by name): put your own adapters elsewhere on the volume`));
    }
  }
  const hf = adapter.huggingFace;
  if (hf !== undefined) {
    if (platform === 'llm-d' && source) {
      issues.push(
        locate(
          'config.contradiction',
          at('huggingFace'),
          `cannot be fetched for this model: its weights are on a volume filled by the ORAS pull Job (no Hugging Face download there), and its server runs offline (HF_HUB_OFFLINE=1); push the adapter to Harbor and use harborRef (docs/model-storage.md#adapters), or put it on the volume and use path`,
        ),
      );
    } else if (platform === 'llm-d' && hf.revision !== undefined) {
      issues.push(
        locate(
          'config.contradiction',
          at('huggingFace', 'revision'),
          'cannot be pinned: vLLM downloads an adapter named by its repository id at start-up, from the default branch (vllm/lora/utils.py get_adapter_absolute_path: snapshot_download(repo_id) with no revision); remove revision, or pin the adapter by pushing it to Harbor (harborRef, with a modelSource)',
        ),
      );
    } else if (platform === 'kserve' && hf.revision !== undefined && /[/:]/.test(hf.revision)) {
      issues.push(locate('config.invalid', at('huggingFace', 'revision'), 'must not contain "/" or ":" on kserve: KServe reads the adapter as hf://<owner>/<model>:<revision> (kserve_storage.py _download_hf); use the commit id'));
    }
  }
  return issues;
}

/** What a set tells a values-file check about its model server's values. */
export interface ServerArgsKeys {
  /** The key of the launch mode (2026-08 server values: `launch`), when there is one. */
  readonly launch?: readonly string[];
  /** Every list of server arguments, by key path. */
  readonly args: readonly (readonly (string | number)[])[];
  /** Strings holding more arguments, split at spaces (KServe's `VLLM_ADDITIONAL_ARGS`), by key path. */
  readonly argStrings?: readonly (readonly (string | number)[])[];
}

/**
 * A model server's values file against the model's adapters: app-serving writes vLLM's LoRA options
 * (`LORA_FLAGS`), so with adapters the file may not set them (it would contradict them, or repeat
 * `--lora-modules`, whose second occurrence replaces the first in vLLM's parser), and the server must
 * be launched as vLLM. Without adapters, `--lora-modules` in the file serves adapters app-serving
 * does not know of: a warning.
 */
export function serverAdapterConflicts(file: ValuesFile | undefined, keys: ServerArgsKeys, adapters: readonly { readonly name: string }[]): { issues: Issue[]; warnings: Issue[] } {
  const issues: Issue[] = [];
  const warnings: Issue[] = [];
  if (!file) return { issues, warnings };
  if (adapters.length > 0 && keys.launch) {
    const launch = valueAt(file.values, keys.launch);
    if (launch !== undefined && launch !== 'vllm') {
      issues.push(
        file.source.issue(
          'values.conflict',
          [...keys.launch],
          `is ${JSON.stringify(launch)}, but the stack gives this model adapters (${adapters.map((a) => a.name).join(', ')}), which app-serving serves through vLLM's --lora-modules: use launch: vllm, or remove the adapters`,
        ),
      );
    }
  }
  const places = [
    ...keys.args.flatMap((path) => {
      const args = valueAt(file.values, path);
      return Array.isArray(args) ? args.map((arg, i) => ({ path: [...path, i], words: typeof arg === 'string' ? [arg] : [] })) : [];
    }),
    ...(keys.argStrings ?? []).map((path) => {
      const text = valueAt(file.values, path);
      return { path: [...path], words: typeof text === 'string' ? text.split(/\s+/) : [] };
    }),
  ];
  const has = (words: readonly string[], flag: string) => words.some((arg) => arg === flag || arg.startsWith(`${flag}=`));
  for (const { path, words } of places) {
    const flag = LORA_FLAGS.find((f) => has(words, f));
    if (flag && adapters.length > 0) {
      issues.push(
        file.source.issue(
          'values.conflict',
          path,
          `is ${flag}, which app-serving writes from the stack's adapters (${adapters.map((a) => a.name).join(', ')}) and maxLoraRank: remove it from the file (the adapters' sizes come from the stack: docs/configuration.md#adapters)`,
        ),
      );
    } else if (adapters.length === 0 && has(words, '--lora-modules')) {
      warnings.push(
        file.source.issue(
          'warning.no-effect',
          path,
          "serves LoRA adapters app-serving does not know of: verify does not check them and the shared endpoint does not route them; list them in the stack's adapters instead (docs/configuration.md#adapters)",
        ),
      );
    }
  }
  return { issues, warnings };
}

function valueAt(values: unknown, path: readonly (string | number)[]): unknown {
  let current = values;
  for (const key of path) {
    if (typeof key === 'number') current = Array.isArray(current) ? current[key] : undefined;
    else current = isValuesMap(current) ? current[key] : undefined;
  }
  return current;
}

/** A model of the plan, as the check of served names needs it. */
export interface ServedModel {
  readonly category: Category;
  readonly name: string;
  readonly servedModelName: string;
  readonly adapters: readonly { readonly name: string }[];
}

/**
 * An adapter may not be named like a model the stack serves: clients (and the shared endpoint) tell
 * them apart by that name alone. Each problem at the adapter's `name` key.
 */
export function checkAdapterNames(config: Pick<StackConfig, 'models' | 'locate'>, models: readonly ServedModel[]): Issue[] {
  const issues: Issue[] = [];
  const served = new Map(models.map((m) => [m.servedModelName, m]));
  for (const model of models) {
    const index = config.models[model.category].findIndex((e) => e.enabled && e.name === model.name);
    const entry = config.models[model.category][index];
    model.adapters.forEach((adapter) => {
      const owner = served.get(adapter.name);
      if (!owner || !entry) return;
      const i = (entry.adapters ?? []).findIndex((a) => a.name === adapter.name);
      issues.push(
        config.locate(
          'name.duplicate',
          ['models', model.category, index, 'adapters', i, 'name'],
          `"${adapter.name}" is the name ${owner === model ? 'its own model' : `${owner.category}/${owner.name}`} serves (servedModelName): clients reach a model and an adapter by name alone, so give the adapter another`,
        ),
      );
    });
  }
  return issues;
}
