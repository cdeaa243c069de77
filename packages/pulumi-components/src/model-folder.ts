import { Secret, loadStackConfigFromMap, planDeployment, type Category, type DeploymentPlan, type Platform, type StackConfigInput } from '@app-serving/core';

type ModelEntryInput = NonNullable<StackConfigInput['models']['generative']>[number];

/**
 * A model named by its folder, for building a component without a stack plan. Core plans it
 * exactly as it plans a stack entry (same discovery, names, values merge and checks).
 */
export interface ModelFolderArgs {
  /** The `models/` directory that holds `<category>/<name>/`. */
  readonly modelsDir: string;
  /** The model folder name. */
  readonly name: string;
  /** @default "generative" */
  readonly category?: Category;
  /** @default "llm-d" */
  readonly platform?: Platform;
  /** @default "cloud" */
  readonly cloudProvider?: 'cloud' | 'on-prem';
  /** Node labels the model's pods must run on. @default {} */
  readonly nodeSelector?: Readonly<Record<string, string>>;
  /** Namespace override. @default `llm-d-<slug>` */
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
  const entry: ModelEntryInput = {
    name: folder.name,
    enabled: true,
    nodeSelector: { ...(folder.nodeSelector ?? {}) },
    ...(folder.nameSpace !== undefined && { nameSpace: folder.nameSpace }),
    ...(folder.releaseName !== undefined && { releaseName: folder.releaseName }),
    ...(folder.modelSource !== undefined && { modelSource: folder.modelSource }),
  };
  const map: Record<string, unknown> = {
    cloudProvider: folder.cloudProvider ?? 'cloud',
    platform: folder.platform ?? 'llm-d',
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
  const config = loadStackConfigFromMap(map, { stackName: 'component', file: `model folder ${category}/${folder.name}` });
  return planDeployment(config, folder.modelsDir);
}
