import { defineConfig } from 'vitest/config';
import { sharedTestConfig } from '../../../vitest.shared.ts';

/** The data-path tools' benchmark: not part of `npm test` (it measures; it asserts nothing about time). bench/vllm-cpu.measure.ts says how to run it. */
const shared = sharedTestConfig(`${import.meta.dirname}/..`, 'data-path-tools-bench');
export default defineConfig({ ...shared, test: { ...shared.test, include: ['bench/**/*.measure.ts'], testTimeout: 3_600_000, hookTimeout: 1_800_000, reporters: ['default'] } });
