/**
 * `@app-serving/core/schema`: the zod schemas of a stack's `app-serving:*` keys, for programs that
 * validate or extend a stack configuration themselves. Kept off the main entry point so that
 * core's public declarations never reach zod's (whose `.d.cts` files do not compile under Pulumi's
 * older `module: commonjs` template without `esModuleInterop`); the main entry point has the same
 * shapes as plain types (`ParsedStackConfig`, `StackConfigInput`, `ModelEntry`, …).
 *
 * @packageDocumentation
 */
import { huggingFaceSourceSchema as huggingFaceSource, kserveSchema as kserve, modelSourceSchema as modelSource } from './config/schema.ts';

export { stackConfigSchema, modelEntrySchema, gpuTolerationSchema, chartOverrideSchema, modelGatewaySchema, secretSchema } from './config/schema.ts';

// Core builds these sections the first time a stack reaches them (zod's lazy schema); a program
// that imports them gets the object schemas themselves, built here.
export const modelSourceSchema = modelSource.unwrap();
export const huggingFaceSourceSchema = huggingFaceSource.unwrap();
export const kserveSchema = kserve.unwrap();
