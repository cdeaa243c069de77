import { defineConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

// Most of these tests wait on the CLI processes they spawn (deadlines, slow servers, credential
// plugins that sleep): 3 files at a time took the project from 5.2 min of test time to 1.8 min on 2
// cores (`time npx vitest run --maxWorkers=3` here). Vitest's default is one per core but one.
export default defineConfig(sharedTestConfig(import.meta.dirname, 'cli', { maxWorkers: 3 }));
