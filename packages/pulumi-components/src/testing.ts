/**
 * Unit-test support for programs that use these components, from
 * `@app-serving/pulumi-components/testing`.
 *
 * - `setMocksWithTransforms`: `pulumi.runtime.setMocks` that also accepts resource transforms
 *   (the chart components register their post-render patches as transforms; Pulumi 3.2xx's mock
 *   monitor rejects them).
 * - `recordUnderMocks`: runs a program under mocks and returns every registered resource with
 *   parent, dependencies, inputs (secrets kept wrapped), options and runnable transforms.
 * - Secret helpers for the recorded inputs.
 */
export {
  setMocksWithTransforms,
  recordUnderMocks,
  redactSecrets,
  revealSecrets,
  secretPaths,
  isSecretValue,
  SECRET_SIG,
  SECRET_SIG_KEY,
} from './mock-runtime.ts';
export type { RecordedResource, MockRunOptions } from './mock-runtime.ts';
