import * as pulumi from '@pulumi/pulumi';
import { accessEnforced, istioGatewayPodLabels, type AnyLlmdModelPlan } from '@app-serving/core';
import { childName } from './component-names.ts';
import { ModelAccess } from './model-access.ts';
import { ModelNamespace } from './model-namespace.ts';
import { claimModelNamespace, type ModelPlanSource } from './model-plan.ts';
import { ModelStorage } from './model-storage.ts';
import { childOptions, type DependsOn } from './options.ts';

type LlmdSource = Omit<ModelPlanSource<AnyLlmdModelPlan>, 'hfToken'>;

/**
 * What an llm-d model of either set starts with, under the same logical names on both (so a model
 * moving across keeps them): the namespace and its pull secret (`<name>-namespace`), and the weights'
 * volume and pull Job (`<name>-storage`) with a modelSource. Checks the Harbor token first.
 */
export function llmdFoundation(
  component: pulumi.ComponentResource,
  name: string,
  plan: AnyLlmdModelPlan,
  args: LlmdSource,
  inherited: DependsOn,
): { modelNamespace: ModelNamespace; storage: ModelStorage | undefined } {
  if (plan.pullSecret !== null && args.harborToken === undefined) {
    throw new pulumi.InputPropertyError({
      propertyPath: 'harborToken',
      reason: `is required: the plan of ${plan.name} pulls with the Secret ${plan.pullSecret} (pulumi config set --secret harborToken <robot token>)`,
    });
  }
  claimModelNamespace(component, name, plan, args.createNamespace);
  const modelNamespace = new ModelNamespace(
    childName(name, 'namespace'),
    {
      name: plan.namespace,
      slug: plan.slug,
      ...(args.createNamespace === false && { create: false }),
      ...(plan.pullSecret !== null && {
        harborHostname: args.harborHostname,
        harborUser: args.harborUser,
        harborToken: args.harborToken,
        pullSecretName: plan.pullSecret,
      }),
    },
    childOptions(component, inherited),
  );
  const storage = plan.storage
    ? new ModelStorage(
        childName(name, 'storage'),
        {
          namespace: modelNamespace.name,
          slug: plan.slug,
          storage: plan.storage,
          ...(plan.pullSecret !== null && { pullSecret: plan.pullSecret }),
          nodeSelector: plan.nodeSelector,
          tolerations: plan.tolerations,
          ...(args.pullTimeout !== undefined && { pullTimeout: args.pullTimeout }),
        },
        childOptions(component, inherited, [modelNamespace]),
      )
    : undefined;
  return { modelNamespace, storage };
}

/**
 * The model's access filters on its Istio gateway's pods (`<name>-access`), when the plan enforces
 * access (a mode other than open, or a rate limit) and the model has a Gateway; else undefined.
 */
export function istioAccess(
  component: pulumi.ComponentResource,
  name: string,
  plan: AnyLlmdModelPlan,
  args: Pick<LlmdSource, 'apiKeys'>,
  inherited: DependsOn,
  after: readonly DependsOn[],
): ModelAccess | undefined {
  if (!accessEnforced(plan.access) || plan.gateway.kind !== 'gateway') return undefined;
  return new ModelAccess(
    childName(name, 'access'),
    {
      slug: plan.slug,
      access: plan.access,
      target: { istio: { namespace: plan.namespace, name: plan.gateway.name, podLabels: istioGatewayPodLabels(plan.gateway.name) } },
      ...(args.apiKeys !== undefined && { apiKeys: args.apiKeys }),
    },
    childOptions(component, inherited, [...after]),
  );
}
