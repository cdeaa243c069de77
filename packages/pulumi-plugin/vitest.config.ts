import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

export default mergeConfig(defineConfig(sharedTestConfig(import.meta.dirname, 'pulumi-plugin')), defineConfig({ test: { include: ['test/**/*.test.ts'], isolate: false } }));
