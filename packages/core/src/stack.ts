import * as config from './config/load.ts';
import { checkConfigRules } from './config/rules.ts';
import type { Issue } from './errors.ts';
import { checkFeatureRules } from './features/index.ts';

/**
 * The stack loaders of `@app-serving/core`: config's loaders (`config/load.ts`) with every rule
 * across keys — config's own, then each feature's (`features/`). Config itself imports no feature.
 */

/** Rules across keys of a parsed stack config: config's own, then every feature's. Every problem found. */
export function checkStackRules(stack: config.StackConfig): Issue[] {
  return [...checkConfigRules(stack), ...checkFeatureRules(stack)];
}

/** {@link config.loadStackFile} with every rule. */
export function loadStackFile(file: string, displayName = file, options: config.LoadOptions = {}): config.StackConfig {
  return config.loadStackFile(file, displayName, { rules: checkStackRules, ...options });
}

/** {@link config.parseStackFile} with every rule. */
export function parseStackFile(text: string, file: string, stackName = config.stackNameFromFile(file), options: config.LoadOptions = {}): config.StackConfig {
  return config.parseStackFile(text, file, stackName, { rules: checkStackRules, ...options });
}

/** {@link config.loadStackConfigFromMap} with every rule. */
export function loadStackConfigFromMap(map: Readonly<Record<string, unknown>>, options: config.LoadFromMapOptions): config.StackConfig {
  return config.loadStackConfigFromMap(map, { rules: checkStackRules, ...options });
}
export type { StackConfig, LoadOptions, LoadFromMapOptions, ConfigLocator } from './config/load.ts';
