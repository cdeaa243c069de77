/**
 * The Go flags every build of the tests' programs shares (../go-flags.mjs), held against the real Go
 * toolchain: a program built with them and linked as the build scripts link (`-s -w`) still names
 * its functions, files and lines when it panics — what dropping the compiler's DWARF must not lose —
 * and no build script sets GOFLAGS of its own instead.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { GO_BUILD_FLAGS, goFlags } from '../go-flags.mjs';

const tools = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const scratch = mkdtempSync(join(tmpdir(), 'app-serving-go-flags-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the shared Go build flags', () => {
  it('put a script\'s own flags after the shared ones', () => {
    expect(goFlags()).toBe(GO_BUILD_FLAGS.join(' '));
    expect(goFlags('-mod=readonly')).toBe(`${GO_BUILD_FLAGS.join(' ')} -mod=readonly`);
    expect(GO_BUILD_FLAGS).toContain('-gcflags=all=-dwarf=false');
  });

  it('build a program whose panic still names its function, file and line', () => {
    writeFileSync(join(scratch, 'go.mod'), 'module example.test/flags\n\ngo 1.22\n');
    writeFileSync(join(scratch, 'main.go'), ['package main', '', 'func explode() {', '\tpanic("boom")', '}', '', 'func main() {', '\texplode()', '}', ''].join('\n'));
    const env = { ...process.env, GOFLAGS: goFlags(), CGO_ENABLED: '0', GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? 'auto' };
    const built = spawnSync('go', ['build', '-ldflags=-s -w', '-o', join(scratch, 'flags'), '.'], { cwd: scratch, env, encoding: 'utf8', timeout: 600_000 });
    expect(built.status, built.stderr).toBe(0);
    const ran = spawnSync(join(scratch, 'flags'), [], { encoding: 'utf8', timeout: 60_000 });
    expect(ran.status).toBe(2);
    expect(ran.stderr).toContain('panic: boom');
    expect(ran.stderr).toMatch(/main\.explode\(\.\.\.\)\n\t\S*\/main\.go:4\nmain\.main\(\)\n\t\S*\/main\.go:8 /);
    // -trimpath: the module's path, not the build folder's.
    expect(ran.stderr).not.toContain(scratch);
  }, 660_000);

  it('are the only GOFLAGS the build scripts set', () => {
    const scripts = ['test-cluster/build.mjs', 'test-cluster/helm.mjs', 'test-cluster/keda.mjs', 'pulumi/build.mjs', 'data-path/envoy-gateway.mjs', 'data-path/epp.mjs'];
    for (const script of scripts) {
      const text = readFileSync(join(tools, script), 'utf8');
      const set = [...text.matchAll(/GOFLAGS:\s*([^,}\n]+)/g)].map((m) => m[1]!.trim());
      expect(set.length, script).toBeGreaterThan(0);
      for (const value of set) expect(value, script).toMatch(/^goFlags\(/);
      // The cache folder's key holds the flags, so a change to them builds anew.
      expect(text, script).toMatch(/goFlags\(\)\)|hashOf\(goFlags\(\)|goFlags\(\)\]/);
    }
  });
});
