// The app-serving Pulumi program: read the stack config, plan with core, deploy with AppServing.
import { fileURLToPath } from 'node:url';
import * as pulumi from '@pulumi/pulumi';
import { formatIssue, isSecret, isStackError, loadStackConfigFromMap, planDeployment, type Secret } from '@app-serving/core';
import { AppServing } from '@app-serving/pulumi-components';

const modelsDir = fileURLToPath(new URL('../../../models', import.meta.url));
const secret = (value: Secret | string | undefined) => (isSecret(value) ? pulumi.secret(value.reveal()) : undefined);

function plan() {
  try {
    const config = loadStackConfigFromMap(pulumi.runtime.allConfig(), { stackName: pulumi.getStack() });
    return { config, plan: planDeployment(config, modelsDir) };
  } catch (error) {
    // Every problem of the stack, one per line, without a stack trace.
    if (isStackError(error)) throw new pulumi.RunError(error.issues.map((issue) => formatIssue(issue)).join('\n'));
    throw error;
  }
}

const { config, plan: deployment } = plan();
for (const warning of deployment.warnings) void pulumi.log.warn(formatIssue(warning));
const app = new AppServing('app-serving', {
  plan: deployment,
  harborToken: secret(config.harborToken),
  hfToken: secret(config.hfToken),
  kubeconfig: secret(config.kubeconfig),
});

/** Per model (by slug): name, platform, namespace, gateway host and URL, embeddings URL, KServe path prefix, PVC. */
export const models = app.models;
