import { Secret, StackError, isStackError, loadStackConfigFromMap, planDeployment, type Category, type DeploymentPlan, type InlineValues, type Issue, type Platform, type StackConfigInput } from '@app-serving/core';

type ModelEntryInput = NonNullable<StackConfigInput['models']['generative']>[number];

/** A model's chart values given inline instead of read from a model folder. */
export interface ModelValuesArgs {
  /** The model slug (what `gaie-<slug>`/`ms-<slug>` folders would say); every name derives from it. */
  readonly slug: string;
  /** llm-d: values of the GAIE `inferencepool` chart (required for llm-d). */
  readonly gaie?: Readonly<Record<string, unknown>>;
  /** llm-d: values of the `llm-d-modelservice` chart (required for llm-d). */
  readonly modelService?: Readonly<Record<string, unknown>>;
  /** llm-d: values of the `llm-d-infra` chart (optional). */
  readonly infra?: Readonly<Record<string, unknown>>;
  /** KServe: the LLMInferenceService spec overlay (required for KServe). */
  readonly kserve?: Readonly<Record<string, unknown>>;
  /** llm-d on the 2026-08 set: the model server's values (`server-<slug>/values.yaml`; required there). */
  readonly server?: Readonly<Record<string, unknown>>;
  /** llm-d on the 2026-08 set: the llm-d Router chart's values (`router-<slug>/values.yaml`; optional). */
  readonly router?: Readonly<Record<string, unknown>>;
}

/**
 * A model for building a component without a stack plan: named by its folder, or with its values
 * inline. Core plans it exactly as it plans a stack entry (same names, values merge and checks).
 */
export interface ModelFolderArgs {
  /** The `models/` directory that holds `<category>/<name>/`. Required unless {@link values} is given. */
  readonly modelsDir?: string;
  /** The model's name (its folder name, when read from `modelsDir`). */
  readonly name: string;
  /**
   * The chart values inline, per chart: no model folder is read. Merged and checked as the files
   * of a model folder are; messages name `folder.values.<chart>`.
   */
  readonly values?: ModelValuesArgs;
  /** @default "generative" */
  readonly category?: Category;
  /** @default "llm-d" */
  readonly platform?: Platform;
  /** @default "cloud" */
  readonly cloudProvider?: 'cloud' | 'on-prem';
  /**
   * The set of upstream versions (the stack file's `upstream`): `2026-02` (the llm-d-infra, GAIE and
   * llm-d-modelservice charts; KServe v0.18) or `2026-08` (the llm-d Router chart and a model-server
   * Deployment; KServe v0.20). @default "2026-02"
   */
  readonly upstream?: StackConfigInput['upstream'];
  /** How clients reach a 2026-08 llm-d model (the stack file's `router`). */
  readonly router?: StackConfigInput['router'];
  /** Node labels the model's pods must run on. @default {} */
  readonly nodeSelector?: Readonly<Record<string, string>>;
  /** Namespace override. @default `llm-d-<slug>` */
  readonly namespace?: string;
  /** @deprecated use {@link namespace} (the stack file's key is `nameSpace`). */
  readonly nameSpace?: string;
  /** llm-d-infra release override. @default `infra-<slug>` */
  readonly releaseName?: string;
  /** Where the weights come from (the stack file's `modelSource`). */
  readonly modelSource?: ModelEntryInput['modelSource'];
  /** The GPU taint toleration (the stack file's `gpuToleration`). */
  readonly gpuToleration?: StackConfigInput['gpuToleration'];
  /** Chart overrides (the stack file's `charts`). */
  readonly charts?: StackConfigInput['charts'];
  /** KServe settings (the stack file's `kserve`). */
  readonly kserve?: StackConfigInput['kserve'];
}

/** Registry and token facts the planner needs (a token's presence, never its value). */
export interface FolderCredentials {
  readonly harborHostname?: string | undefined;
  readonly harborUser?: string | undefined;
  readonly harborToken: boolean;
  readonly hfToken: boolean;
}

/**
 * Plans one model from its folder with core's `planDeployment`, as a one-model stack. Throws
 * core's `StackError` listing every problem. On-prem, the stack rules want a kubeconfig: the
 * component's caller brings the provider, so a placeholder stands in for it.
 */
export function planModelFolder(folder: ModelFolderArgs, credentials: FolderCredentials): DeploymentPlan {
  const category = folder.category ?? 'generative';
  const namespace = folder.namespace ?? folder.nameSpace;
  const entry: ModelEntryInput = {
    name: folder.name,
    enabled: true,
    nodeSelector: { ...(folder.nodeSelector ?? {}) },
    ...(namespace !== undefined && { nameSpace: namespace }),
    ...(folder.releaseName !== undefined && { releaseName: folder.releaseName }),
    ...(folder.modelSource !== undefined && { modelSource: folder.modelSource }),
  };
  const map: Record<string, unknown> = {
    cloudProvider: folder.cloudProvider ?? 'cloud',
    platform: folder.platform ?? 'llm-d',
    ...(folder.upstream !== undefined && { upstream: folder.upstream }),
    ...(folder.router !== undefined && { router: folder.router }),
    models: { [category]: [entry] },
    ...(folder.gpuToleration !== undefined && { gpuToleration: folder.gpuToleration }),
    ...(folder.charts !== undefined && { charts: folder.charts }),
    ...(folder.kserve !== undefined && { kserve: folder.kserve }),
    ...(credentials.harborHostname !== undefined && { harborHostname: credentials.harborHostname }),
    ...(credentials.harborUser !== undefined && { harborUser: credentials.harborUser }),
    ...(credentials.harborToken && { harborToken: Secret.encrypted() }),
    ...(credentials.hfToken && { hfToken: Secret.encrypted() }),
    ...(folder.cloudProvider === 'on-prem' && { kubeconfig: Secret.encrypted() }),
  };
  const inline: InlineValues | undefined = folder.values ? { ...folder.values, label: 'folder.values' } : undefined;
  const options = inline ? { inline: new Map([[`${category}/${folder.name}`, inline]]) } : {};
  const modelsDir = folder.modelsDir ?? '';
  let config;
  try {
    config = loadStackConfigFromMap(map, { stackName: 'component', file: FOLDER_FILE, checkRules: false });
  } catch (error) {
    if (!isStackError(error)) throw error;
    // Every problem in one pass: the model's values are still checked, planned with the arguments
    // that decide how they are read (name, category, platform) and nothing else.
    const bare = { cloudProvider: 'cloud', platform: map.platform, ...(folder.upstream !== undefined && { upstream: folder.upstream }), models: { [category]: [{ name: folder.name }] } };
    try {
      planDeployment(loadStackConfigFromMap(bare, { stackName: 'component', file: FOLDER_FILE, checkRules: false }), modelsDir, options);
    } catch (more) {
      if (isStackError(more)) throw new StackError([...error.issues, ...more.issues.filter((i) => i.file !== FOLDER_FILE)]);
      throw more;
    }
    throw error;
  }
  return planDeployment(config, modelsDir, options);
}

const FOLDER_FILE = 'component arguments';
const FOLDER_KEYS = new Set(['cloudProvider', 'platform', 'upstream', 'router', 'gpuToleration', 'charts', 'kserve']);

/**
 * An issue of {@link planModelFolder} in the component's terms: `folder.nodeSelector`, not
 * `models.generative[0].nodeSelector` of a stack file the caller never wrote.
 */
export function folderIssue(issue: Issue): Issue {
  const entry = /^models\.[a-z]+\[0\]/.exec(issue.path);
  const key = issue.path.split(/[.[]/)[0]!;
  const path = entry ? `folder${issue.path.slice(entry[0].length)}` : FOLDER_KEYS.has(key) ? `folder.${issue.path}` : issue.path;
  const { file, line, ...rest } = issue;
  return file === FOLDER_FILE ? { ...rest, path: path.replace(/^folder\.nameSpace/, 'folder.namespace') } : issue;
}
