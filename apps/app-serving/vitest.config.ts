import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

/**
 * The longest files first, so that no long one starts last and runs alone. Vitest orders by the
 * durations of the last run when it has them (a warm checkout); on a clean clone (CI) it has none, and
 * the one-line files that run the suites look small. LONGEST: the files that took longest here
 * (`.reports/vitest/app.json` of a run), longest first; the files not in it run after them.
 */
const LONGEST = ['test/deploy/2026-02', 'test/sets/2026-08', 'test/deploy/change', 'test/deploy/endpoint', 'test/sets/2026-02', 'test/deploy/2026-08', 'test/deploy/failure'];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      const path = spec.moduleId.replaceAll('\\', '/');
      const at = LONGEST.findIndex((prefix) => path.endsWith(`/${prefix}.test.ts`));
      return at === -1 ? LONGEST.length : at;
    };
    const sorted = await super.sort(files);
    return sorted.map((spec, i) => ({ spec, i })).sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i).map(({ spec }) => spec);
  }
}

// The app's test files mostly wait on what they drive (the Pulumi engine, the API server, Helm), each
// with a control plane of its own: 4 at a time on 2 cores (docs/testing.md has the figures). Vitest's
// default is one per core but one.
const config = sharedTestConfig(import.meta.dirname, 'app', { maxWorkers: 4 });
export default defineConfig({ ...config, test: { ...config.test, sequence: { sequencer: LongestFirst } } });
