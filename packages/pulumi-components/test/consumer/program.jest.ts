// A ts-jest unit test of another team's program (CommonJS through ts-jest), using the packed
// packages: the `require` condition of the exports map and the /testing subpath.
import * as pulumi from '@pulumi/pulumi';
import { LlmdModel } from '@app-serving/pulumi-components';
import { setMocksWithTransforms } from '@app-serving/pulumi-components/testing';

test('an LlmdModel under mocks, from the /testing subpath', async () => {
  const registered: string[] = [];
  await setMocksWithTransforms(
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
  const model = new LlmdModel('team-sim', { folder: { modelsDir: process.env.MODELS_DIR!, name: 'Sim' } });
  const url = await new Promise<string>((resolve) => model.gatewayUrl.apply(resolve));
  await pulumi.runtime.disconnect();
  expect(url).toBe('http://infra-sim-inference-gateway-istio.llm-d-sim.svc.cluster.local:80');
  expect(registered).toContain('app-serving:llmd:LlmdModel team-sim');
  expect(typeof module).toBe('object');
});
