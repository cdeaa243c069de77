import type { Feature } from '../types.ts';
import { checkAdapterNames, checkAdapterRules } from './rules.ts';

export * from './plan.ts';
export * from './rules.ts';

/** LoRA adapters served as models, each under its own name (docs/configuration.md#adapters). */
export const ADAPTERS: Feature = {
  name: 'adapters',
  checkStack: checkAdapterRules,
  checkModels: (config, models) =>
    checkAdapterNames(
      config,
      models.map((m) => ({ category: m.category, name: m.name, servedModelName: m.platform === 'llm-d' ? m.modelServer.servedModelName : m.servedModelName, adapters: m.adapters })),
    ),
};
