// The app-serving Pulumi program: read the stack config, plan with core, deploy with AppServing
// (src/program.ts; AppServing.fromConfig reads the project's `<project>:*` keys, any project name).
import { appServingProgram } from './program.ts';

/** Per model (by slug): name, platform, namespace, gateway host and URL, embeddings URL, KServe path prefix, PVC. */
export const models = appServingProgram().models;
