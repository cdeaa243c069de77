import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

// Every test file imports @pulumi/pulumi and @pulumi/kubernetes (about 2 s each); without
// isolation a worker loads them once. The tests share no state beyond Pulumi's mock runtime,
// which every run sets up afresh (recordUnderMocks).
export default mergeConfig(defineConfig(sharedTestConfig(import.meta.dirname, 'pulumi-components')), defineConfig({ test: { isolate: false } }));
