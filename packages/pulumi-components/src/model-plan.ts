import * as pulumi from '@pulumi/pulumi';
import { formatIssue, isStackError, type DeploymentPlan, type ModelPlan } from '@app-serving/core';
import { planModelFolder, type ModelFolderArgs } from './model-folder.ts';

/** The two ways a model component gets its plan. */
export interface ModelPlanSource<P extends ModelPlan> {
  /** The model's entry of a core `DeploymentPlan` (`plan.models[i]`). Give this, or `folder`. */
  readonly plan?: P;
  /** Plan the model here, from its folder. Give this, or `plan`. */
  readonly folder?: ModelFolderArgs;
  readonly harborHostname?: pulumi.Input<string>;
  readonly harborUser?: pulumi.Input<string>;
  readonly harborToken?: pulumi.Input<string>;
  readonly hfToken?: pulumi.Input<string>;
}

/** Resolves a component's model plan from `plan` or `folder`; bad arguments are InputPropertyErrors. */
export function resolveModelPlan<P extends ModelPlan>(args: ModelPlanSource<P>, platform: P['platform']): { model: P; stack: DeploymentPlan | undefined } {
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
      throw new pulumi.InputPropertyError({ propertyPath: 'folder', reason: error.issues.map((i) => formatIssue(i)).join('; ') });
    }
    throw error;
  }
  const model = stack.models[0];
  if (!model || model.platform !== platform) {
    throw new pulumi.InputPropertyError({ propertyPath: 'folder.platform', reason: `the folder plans as a ${model?.platform ?? 'missing'} model; this component deploys ${platform} models` });
  }
  return { model: model as P, stack };
}
