/**
 * ../bytecode.mjs: the vLLM venv's modules compiled once, so that no Python process of a vLLM pod
 * compiles torch, transformers or vLLM from source again — where the machine forbids Python to
 * write its bytecode cache (PYTHONDONTWRITEBYTECODE, set on this project's CI machines), each did,
 * at every start. Held by Python itself: `python -v` says, for each module, whether its code came
 * from a `.pyc` or was compiled from the source.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BYTECODE_MARKER, VLLM_SERVER_MODULE, ensureBytecode, ensureVllm } from '../src/index.ts';

/** The modules under `root` that `python` compiled from source while importing `module`, with the writing of bytecode forbidden. */
function compiledFromSource(python: string, module: string, root: string): string[] {
  const { PYTHONPYCACHEPREFIX: _prefix, ...env } = process.env;
  const result = spawnSync(python, ['-v', '-c', `import ${module}`], { env: { ...env, PYTHONDONTWRITEBYTECODE: '1', HF_HUB_OFFLINE: '1' }, encoding: 'utf8', maxBuffer: 1 << 28 });
  expect(result.status, result.stderr.slice(-2000)).toBe(0);
  // `# code object from '<…>.pyc'` when read from the cache, `# code object from <…>.py` when compiled.
  return result.stderr
    .split('\n')
    .map((line) => /^# code object from (.+\.py)$/.exec(line)?.[1])
    .filter((path): path is string => path !== undefined && path.startsWith(root));
}

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe('the venv compiled to bytecode', () => {
  it('a venv of modules: compiled once (its marker), then imported from bytecode only; a second call compiles nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'app-serving-bytecode-'));
    made.push(dir);
    const venv = join(dir, 'venv');
    const created = spawnSync('python3', ['-m', 'venv', '--without-pip', venv], { encoding: 'utf8' });
    expect(created.status, created.stderr).toBe(0);
    const python = join(venv, 'bin', 'python');
    const purelib = spawnSync(python, ['-c', "import sysconfig; print(sysconfig.get_paths()['purelib'])"], { encoding: 'utf8' }).stdout.trim();
    writeFileSync(join(purelib, 'app_serving_probe.py'), 'VALUE = 42\n');
    // A module in a newer Python's syntax (torch ships some): left uncompiled, not an error.
    writeFileSync(join(purelib, 'app_serving_newer.py'), 'def f[T](a): return a\n');
    expect(compiledFromSource(python, 'app_serving_probe', venv)).toEqual([join(purelib, 'app_serving_probe.py')]);

    const lines: string[] = [];
    ensureBytecode(python, { log: (line) => lines.push(line) });
    expect(existsSync(join(venv, BYTECODE_MARKER))).toBe(true);
    expect(lines).toEqual([expect.stringMatching(/compiled to bytecode/)]);
    expect(compiledFromSource(python, 'app_serving_probe', venv)).toEqual([]);

    ensureBytecode(python, { log: (line) => lines.push(line) });
    expect(lines.length).toBe(1);
  });

  it("vLLM's server module and all it imports come from bytecode: nothing of the venv is compiled from source", () => {
    const { python } = ensureVllm();
    const venv = join(python, '..', '..');
    const fromSource = compiledFromSource(python, VLLM_SERVER_MODULE, venv);
    expect({ count: fromSource.length, some: fromSource.slice(0, 5) }).toEqual({ count: 0, some: [] });
    expect(readFileSync(join(venv, BYTECODE_MARKER), 'utf8')).toMatch(/^compiled in \d+ s/);
  }, 600_000);
});
