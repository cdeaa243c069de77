import { defineConfig } from 'vitest/config';
import { sharedTestConfig } from '../../../vitest.shared.ts';

/** The deploy benchmarks: not part of `npm test` (they measure; they assert nothing about time). */
const shared = sharedTestConfig(`${import.meta.dirname}/..`, 'app-bench');
export default defineConfig({ ...shared, test: { ...shared.test, include: ['bench/**/*.measure.ts'], testTimeout: 3_600_000, hookTimeout: 900_000, reporters: ['default'] } });
