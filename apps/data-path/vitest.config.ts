import { defineConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

// One file at a time: each starts vLLM processes (about 2 GB and most of a core each while they
// load) beside a control plane, on a 2-core machine shared with every other project in CI.
export default defineConfig(sharedTestConfig(import.meta.dirname, 'data-path-tier', { maxWorkers: 1 }));
