// A Pulumi program of another team, using the packed packages the way the README shows.
// Copied into a temporary directory outside the workspace by consumer.test.ts; run under mocks.
import * as pulumi from '@pulumi/pulumi';
import { LlmdModel, type LlmdModelArgs, type ModelOutputs } from '@app-serving/pulumi-components';
import { renderStack, type RenderedStack } from '@app-serving/pulumi-components/render';
import { setMocksWithTransforms } from '@app-serving/pulumi-components/testing';
import { loadStackConfigFromMap, planDeployment } from '@app-serving/core';

const modelsDir = process.argv[2]!;
const registered: string[] = [];

// Like pulumi.runtime.setMocks, but accepting the charts' transforms (see the package README).
const transforms = await setMocksWithTransforms(
  {
    newResource: (args) => {
      registered.push(`${args.type} ${args.name}`);
      return { id: args.custom ? `${args.name}-id` : '', state: args.inputs };
    },
    call: (args) => {
      throw new Error(`unexpected invoke ${args.token}`);
    },
  },
  'consumer',
  'dev',
  false,
);

const args: LlmdModelArgs = { folder: { modelsDir, name: 'Sim', nodeSelector: { pool: 'cpu' } } };
const model = new LlmdModel('team-sim', args);

// @ts-expect-error — the args are typed: a model needs a plan or a folder, not a string.
void (() => new LlmdModel('wrong', 'Sim'));
const unusedOutputs: ModelOutputs | undefined = undefined;
void unusedOutputs;

const [namespace, gatewayUrl] = await new Promise<[string, string]>((resolve) => pulumi.all([model.namespace, model.gatewayUrl]).apply((v) => resolve(v)));
await pulumi.runtime.disconnect();

// The render subpath works from the published package too.
const config = loadStackConfigFromMap({ 'app-serving:cloudProvider': 'cloud', 'app-serving:models': JSON.stringify({ generative: [{ name: 'Sim' }] }) }, { stackName: 'dev' });
const rendered: RenderedStack = await renderStack(planDeployment(config, modelsDir));

console.log(JSON.stringify({ namespace, gatewayUrl, registered: registered.sort(), transforms: transforms.size, rendered: rendered.resources.length }));
