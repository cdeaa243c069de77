/**
 * `@app-serving/core/schema`: the zod schemas of a stack's `app-serving:*` keys, for programs that
 * validate or extend a stack configuration themselves. Kept off the main entry point so that
 * core's public declarations never reach zod's (whose `.d.cts` files do not compile under Pulumi's
 * older `module: commonjs` template without `esModuleInterop`); the main entry point has the same
 * shapes as plain types (`ParsedStackConfig`, `StackConfigInput`, `ModelEntry`, …).
 *
 * @packageDocumentation
 */
export {
  stackConfigSchema,
  modelEntrySchema,
  modelSourceSchema,
  huggingFaceSourceSchema,
  gpuTolerationSchema,
  chartOverrideSchema,
  modelGatewaySchema,
  kserveSchema,
  secretSchema,
} from './config/schema.ts';
