// The app-serving Pulumi program as a function: read the stack config, plan with core, deploy with
// AppServing. `index.ts` runs it as the project's program; the deploy tests run it as the inline
// program of the Automation API, so what they deploy is exactly what `pulumi up` here deploys.
import { fileURLToPath } from 'node:url';
import { AppServing } from '@app-serving/pulumi-components';

/** The repository's `models/` folder. */
export const MODELS_DIR = fileURLToPath(new URL('../../../models', import.meta.url));

/**
 * Deploys the stack's models (AppServing.fromConfig reads the project's `<project>:*` keys) and
 * returns the stack's outputs.
 */
export function appServingProgram(modelsDir: string = MODELS_DIR) {
  const app = AppServing.fromConfig('app-serving', { modelsDir });
  /** Per model (by slug): name, platform, namespace, gateway host and URL, embeddings URL, KServe path prefix, PVC. */
  return { models: app.models };
}
