// The report is named after the package (@app-serving/app-serving), as scripts/test.mjs expects.
import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

export default mergeConfig(defineConfig(sharedTestConfig(import.meta.dirname, 'app-serving')), defineConfig({ test: { include: ['test/**/*.test.ts'], isolate: false } }));
