import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO } from './harness.ts';

/**
 * Ready to publish: core and pulumi-components (the packages with a CommonJS build), as npm
 * would publish them, are clean for publint (package.json vs files), @arethetypeswrong/cli (types
 * for node10, node16 from CJS and ESM, bundlers) and `npm publish --dry-run`. Offline.
 */
const bin = (name: string) => join(REPO, 'node_modules', '.bin', name);
const dir = mkdtempSync(join(tmpdir(), 'app-serving-publish-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { ...process.env, NO_COLOR: '1', npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' };

function run(command: string, args: string[], cwd: string): { status: number; output: string } {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8' });
  return { status: result.status ?? 1, output: `${result.stdout}${result.stderr}` };
}

describe.each(['core', 'pulumi-components'])('@app-serving/%s is ready to publish', (pkg) => {
  const cwd = join(REPO, 'packages', pkg);

  it('publint: no errors, warnings or suggestions', () => {
    const { status, output } = run(bin('publint'), ['--strict'], cwd);
    expect(output).toContain('All good!');
    expect(status).toBe(0);
  }, 120_000);

  it('are the types wrong: none, for every entry point and resolution mode', () => {
    const packs = mkdtempSync(join(dir, `${pkg}-`));
    expect(run('npm', ['pack', '--offline', '--silent', '--pack-destination', packs], cwd).status).toBe(0);
    const [tarball] = readdirSync(packs);
    const { status, output } = run(bin('attw'), [join(packs, tarball!), '--format', 'ascii'], cwd);
    expect(output).toContain('No problems found');
    expect(status).toBe(0);
  }, 120_000);

  it('npm publish --dry-run: no warnings but the login notice (offline)', () => {
    const { status, output } = run('npm', ['publish', '--dry-run', '--offline'], cwd);
    const warnings = output.split('\n').filter((l) => l.startsWith('npm warn') && !l.includes('logged in'));
    expect(warnings).toEqual([]);
    expect(output).toMatch(/total files: \d+/);
    expect(status).toBe(0);
  }, 120_000);
});
