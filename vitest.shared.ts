import { resolve } from 'node:path';
import type { ViteUserConfig } from 'vitest/config';

/**
 * Shared vitest settings for every project: resolve workspace packages from their sources
 * (the `@app-serving/source` export condition) and write a JSON report that `scripts/test.mjs`
 * totals into the single `N passed, N failed` line CI reads.
 */
export function sharedTestConfig(projectDir: string, name: string, options: { maxWorkers?: number } = {}): ViteUserConfig {
  const root = resolve(projectDir, '../..');
  return {
    resolve: { conditions: ['@app-serving/source', 'import', 'module', 'node', 'default'] },
    // Vitest hands these to its workers as `node --conditions`: `import` must not be among them, or
    // CommonJS `require('ws')` inside @kubernetes/client-node resolves to ws's ESM wrapper and its
    // exec and port-forward fail ("WebSocket is not a constructor"). Vite adds import/require itself.
    ssr: { resolve: { conditions: ['@app-serving/source', 'node', 'default'] } },
    test: {
      name,
      root: projectDir,
      include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
      environment: 'node',
      ...(options.maxWorkers !== undefined && { maxWorkers: options.maxWorkers }),
      // Hang guards, not timings: generous enough for a 2-core machine at load 20 and for CI, where
      // every project runs at once beside the deploy tier (a test that needs more says so; 2 minutes
      // stopped tests that took 3-4 there). No test asserts how long something took; the benchmarks
      // measure that.
      testTimeout: 300_000,
      hookTimeout: 300_000,
      reporters: ['default', ['json', { outputFile: resolve(root, '.reports/vitest', `${name}.json`) }]],
      setupFiles: [resolve(root, 'scripts/vitest-setup.ts')],
      // A temporary folder per project run (TMPDIR), removed at its end: what tests leave in it goes too.
      globalSetup: [resolve(root, 'tools/test-cluster/tmpdir.mjs')],
      coverage: {
        provider: 'v8',
        include: ['src/**/*.ts'],
        exclude: ['src/**/*.test.ts'],
        reportsDirectory: resolve(root, 'coverage', name),
        reporter: ['text-summary', 'json-summary'],
      },
    },
  };
}
