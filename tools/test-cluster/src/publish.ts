// `@app-serving/test-cluster/publish`, for each published package's test/publish.test.ts (a
// subpath: it needs vitest, the rest of this package does not). The package, as npm would publish it,
// is clean for publint (package.json against its files), @arethetypeswrong/cli (types for node10,
// node16 from CommonJS and ESM, bundlers) and `npm publish --dry-run`. Offline. The package must
// be built first (its test target depends on its build).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from './upstream.ts';

const bin = (name: string) => join(PROJECT_ROOT, 'node_modules', '.bin', name);
const env = { ...process.env, NO_COLOR: '1', npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' };

function run(command: string, args: readonly string[], cwd: string): { status: number; output: string } {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8' });
  return { status: result.status ?? 1, output: `${result.stdout}${result.stderr}` };
}

export interface PublishOptions {
  /**
   * `esm-only` for a package that is ESM by design (a command): attw then does not ask for a
   * CommonJS build. Default: every resolution mode, CommonJS included.
   */
  attwProfile?: 'esm-only';
}

/** The three publish checks of the package in `packageDir`. */
export function describePublishReadiness(packageDir: string, options: PublishOptions = {}): void {
  const name = packageDir.split('/').pop()!;
  describe(`@app-serving/${name} is ready to publish`, () => {
    const scratch = mkdtempSync(join(tmpdir(), `app-serving-publish-${name}-`));
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));

    it('publint: no errors, warnings or suggestions', () => {
      const { status, output } = run(bin('publint'), ['--strict'], packageDir);
      expect(output).toContain('All good!');
      expect(status).toBe(0);
    }, 120_000);

    it(`are the types wrong: none, for ${options.attwProfile === 'esm-only' ? 'ESM (the package is ESM-only)' : 'every entry point and resolution mode'}`, () => {
      expect(run('npm', ['pack', '--offline', '--silent', '--pack-destination', scratch], packageDir).status).toBe(0);
      const [tarball] = readdirSync(scratch).filter((f) => f.endsWith('.tgz'));
      const profile = options.attwProfile ? ['--profile', options.attwProfile] : [];
      const { status, output } = run(bin('attw'), [join(scratch, tarball!), '--format', 'ascii', ...profile], packageDir);
      if (options.attwProfile) {
        // Only the problems the profile sets aside (a CommonJS `require` of an ESM-only package).
        const problems = output.split('\n').filter((l) => /^(⚠️|❌|💀|🐛|🥴|🎭|❗|🚭)/u.test(l.trim()));
        expect(problems).toEqual([]);
        expect(output).toMatch(/\(ignoring resolutions: 'node10', 'node16-cjs'\)/);
      } else {
        expect(output).toContain('No problems found');
      }
      expect(status).toBe(0);
    }, 120_000);

    it('npm publish --dry-run: no warnings (npm would otherwise correct or drop fields) but the login notice', () => {
      const { status, output } = run('npm', ['publish', '--dry-run', '--offline'], packageDir);
      const warnings = output.split('\n').filter((l) => l.startsWith('npm warn') && !l.includes('logged in'));
      expect(warnings).toEqual([]);
      expect(output).toMatch(/total files: \d+/);
      expect(status).toBe(0);
    }, 120_000);
  });
}
