// The app-serving Pulumi program: read the stack config, plan with core, deploy with AppServing.
// AppServing.fromConfig does all of it (any project name: it reads the project's `<project>:*` keys).
import { fileURLToPath } from 'node:url';
import { AppServing } from '@app-serving/pulumi-components';

const modelsDir = fileURLToPath(new URL('../../../models', import.meta.url));
const app = AppServing.fromConfig('app-serving', { modelsDir });

/** Per model (by slug): name, platform, namespace, gateway host and URL, embeddings URL, KServe path prefix, PVC. */
export const models = app.models;
