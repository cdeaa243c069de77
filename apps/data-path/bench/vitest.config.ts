import { defineConfig } from 'vitest/config';
import { sharedTestConfig } from '../../../vitest.shared.ts';

/** The data path's benchmark: not part of `npm test` (it measures; it asserts nothing about time). Run it inside the tier's namespace (bench/overhead.measure.ts says how). */
const shared = sharedTestConfig(`${import.meta.dirname}/..`, 'data-path-bench');
export default defineConfig({ ...shared, test: { ...shared.test, include: ['bench/**/*.measure.ts'], testTimeout: 3_600_000, hookTimeout: 1_800_000, reporters: ['default'] } });
