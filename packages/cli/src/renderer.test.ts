import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { collect, REPO_ROOT, CLI_ROOT } from '../test/run-cli.ts';

describe('the renderer', () => {
  it('renders without loading TypeScript or Arborist (Pulumi requires them for closures render never serialises)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'app-serving-renderer-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    // Preloaded into the CLI's process: on exit, lists the modules that were really loaded.
    const probe = join(dir, 'probe.cjs');
    writeFileSync(probe, "process.on('exit', () => process.stderr.write('\\nLOADED ' + JSON.stringify(Object.keys(require.cache).filter((f) => /node_modules\\/(typescript|@npmcli\\/arborist)\\//.test(f)).length)));\n");
    const result = await collect(process.execPath, ['--require', probe, join(CLI_ROOT, 'bin', 'app-serving.js'), 'render', '--json'], { cwd: REPO_ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME } });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).resources.length).toBeGreaterThan(10);
    expect(result.stderr.trim().split('\n').at(-1)).toBe('LOADED 0');
  });

  it('hands out a stand-in that loads the real module the first time it is used', async () => {
    const { loadRenderer } = await import('./renderer.ts');
    await loadRenderer();
    const pulumiRequire = createRequire(createRequire(import.meta.url).resolve('@pulumi/pulumi'));
    const ts = pulumiRequire('typescript') as { version: string; __esModule?: boolean; ScriptTarget: Record<string, number> };
    expect(ts.__esModule).toBe(true);
    expect(ts.version).toMatch(/^\d+\.\d+/);
    expect(typeof ts.ScriptTarget.ES2020).toBe('number');
    const { Arborist } = pulumiRequire('@npmcli/arborist') as { Arborist: new (options: { path: string }) => { path: string } };
    expect(new Arborist({ path: REPO_ROOT }).path).toBe(REPO_ROOT);
  });
});
