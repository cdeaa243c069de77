import * as pulumi from '@pulumi/pulumi';
import { formatIssue, isStackError, type DeploymentPlan, type ModelPlan } from '@app-serving/core';
import { folderIssue, planModelFolder, type ModelFolderArgs } from './model-folder.ts';
import { claimNamespace } from './namespace-claims.ts';

/** The two ways a model component gets its plan, and the credentials it deploys with. */
export interface ModelPlanSource<P extends ModelPlan> {
  /**
   * The model's entry of a core `DeploymentPlan` (`planDeployment(...).models[i]`).
   * Give this, or {@link folder}.
   */
  readonly plan?: P;
  /**
   * Plan the model here from its folder (`<modelsDir>/<category>/<name>/`), with the same rules as
   * a stack entry. Give this, or {@link plan}. `harborHostname` and `harborUser` must then be plain strings.
   */
  readonly folder?: ModelFolderArgs;
  /** Harbor registry host name (the plan's `harbor.hostname`). Required when the plan has a pull secret. */
  readonly harborHostname?: pulumi.Input<string>;
  /** Harbor robot account (the plan's `harbor.user`). Required when the plan has a pull secret. */
  readonly harborUser?: pulumi.Input<string>;
  /** Harbor robot token; stays a Pulumi secret. Required when the plan has a pull secret (`plan.pullSecret`). */
  readonly harborToken?: pulumi.Input<string>;
  /**
   * The Hugging Face token (KServe); stays a Pulumi secret. Required when the plan has an HF token
   * Secret (`plan.hfTokenSecret`).
   * @see https://huggingface.co/docs/hub/security-tokens
   */
  readonly hfToken?: pulumi.Input<string>;
  /**
   * The Prometheus's bearer token or password (stack secret `prometheusCredentials`); stays a Pulumi
   * secret. Required when an autoscaled llm-d model's Prometheus needs authentication
   * (`plan.autoscaling.prometheus.secret`).
   */
  readonly prometheusCredentials?: pulumi.Input<string>;
  /**
   * The API keys the plan's `access.apiKeys` names (stack secret `apiKeys`), by name; they stay
   * Pulumi secrets and only their SHA-1 reaches the cluster. Required when the plan's access is `apiKeys`.
   */
  readonly apiKeys?: Readonly<Record<string, pulumi.Input<string>>>;
  /**
   * Create the model's namespace (the plan's `namespace`). `false` deploys into an existing
   * namespace that something else manages: the component never creates or deletes it. Two
   * components in one program may share a namespace only when neither creates it.
   * @default true
   */
  readonly createNamespace?: boolean;
  /**
   * How long `pulumi up` waits for the model's pull Job.
   * @default "60m"
   */
  readonly pullTimeout?: string;
}

/**
 * Records that `component` deploys into the plan's namespace (and creates it, unless
 * `createNamespace: false`); a second component claiming it in a way that would clash is a ResourceError.
 */
export function claimModelNamespace(component: pulumi.ComponentResource, name: string, model: ModelPlan, createNamespace: boolean | undefined): void {
  const secrets = [model.pullSecret, model.platform === 'kserve' ? model.hfTokenSecret : null].filter((s): s is string => s !== null);
  const problem = claimNamespace(component.getProvider('kubernetes::'), model.namespace, { owner: name, creates: createNamespace !== false, objects: secrets });
  if (problem !== undefined) throw new pulumi.ResourceError(`${name}: ${problem}`, component);
}

/** Resolves a component's model plan from `plan` or `folder`; bad arguments are InputPropertyErrors. */
export function resolveModelPlan<P extends ModelPlan>(args: ModelPlanSource<P>, platform: P['platform']): { model: P; stack: DeploymentPlan | undefined } {
  if (args.folder !== undefined && args.folder.modelsDir === undefined && args.folder.values === undefined) {
    throw new pulumi.InputPropertyError({ propertyPath: 'folder.modelsDir', reason: 'is required unless the values are given inline (folder.values)' });
  }
  if ((args.plan === undefined) === (args.folder === undefined)) {
    throw new pulumi.InputPropertyError({ propertyPath: 'plan', reason: 'give exactly one of plan (a core plan entry) or folder (a model folder to plan here)' });
  }
  if (args.plan !== undefined) {
    if (args.plan.platform !== platform) {
      throw new pulumi.InputPropertyError({ propertyPath: 'plan.platform', reason: `is ${args.plan.platform}; this component deploys ${platform} models` });
    }
    return { model: args.plan, stack: undefined };
  }
  for (const key of ['harborHostname', 'harborUser'] as const) {
    const value = args[key];
    if (value !== undefined && typeof value !== 'string') {
      throw new pulumi.InputPropertyError({ propertyPath: key, reason: 'must be a plain string when the model is planned from its folder (the planner checks it)' });
    }
  }
  let stack: DeploymentPlan;
  try {
    stack = planModelFolder(args.folder!, {
      harborHostname: args.harborHostname as string | undefined,
      harborUser: args.harborUser as string | undefined,
      harborToken: args.harborToken !== undefined,
      hfToken: args.hfToken !== undefined,
    });
  } catch (error) {
    if (isStackError(error)) {
      throw new pulumi.InputPropertyError({ propertyPath: 'folder', reason: error.issues.map((i) => formatIssue(folderIssue(i))).join('; ') });
    }
    throw error;
  }
  const model = stack.models[0];
  if (!model || model.platform !== platform) {
    throw new pulumi.InputPropertyError({ propertyPath: 'folder.platform', reason: `the folder plans as a ${model?.platform ?? 'missing'} model; this component deploys ${platform} models` });
  }
  return { model: model as P, stack };
}
