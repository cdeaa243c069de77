// The consumer program of consumer.test.ts for CommonJS setups: `module: commonjs` (Pulumi's older
// TypeScript template, `moduleResolution: node`) and `module: nodenext` in a CommonJS package.
// No top-level await (CommonJS); the same checks as program.ts.
import * as pulumi from '@pulumi/pulumi';
import { LlmdModel, type LlmdModelArgs, type ModelOutputs } from '@app-serving/pulumi-components';
import { renderStack, type RenderedStack } from '@app-serving/pulumi-components/render';
import { setMocksWithTransforms } from '@app-serving/pulumi-components/testing';
import { loadStackConfigFromMap, planDeployment } from '@app-serving/core';

async function main(): Promise<void> {
  const modelsDir = process.argv[2]!;
  const registered: string[] = [];
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
  const outputs: ModelOutputs = model.outputs;
  const [namespace, gatewayUrl] = await new Promise<[string, string]>((resolve) => pulumi.all([outputs.namespace, model.gatewayUrl]).apply((v) => resolve(v)));
  await pulumi.runtime.disconnect();

  const config = loadStackConfigFromMap({ 'app-serving:cloudProvider': 'cloud', 'app-serving:models': JSON.stringify({ generative: [{ name: 'Sim' }] }) }, { stackName: 'dev' });
  const rendered: RenderedStack = await renderStack(planDeployment(config, modelsDir));
  console.log(JSON.stringify({ module: typeof module === 'object' ? 'commonjs' : 'esm', namespace, gatewayUrl, registered: registered.length, transforms: transforms.size, rendered: rendered.resources.length }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
