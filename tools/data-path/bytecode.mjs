#!/usr/bin/env node
// Compiles the Python modules of the vLLM venv (vllm.mjs) to bytecode, once, beside their sources.
//
// uv installs packages without their bytecode, and Python compiles a module from source on import
// unless its `__pycache__` holds a current `.pyc`. Where Python may not write that cache — the
// machine sets PYTHONDONTWRITEBYTECODE, as this project's CI machines do — every Python process
// compiled torch, transformers and vLLM from source again: each of vLLM's three processes (the API
// server, its engine core and its worker, each imports them), at every start of every vLLM pod of
// the data-path tier. Measured on the 2-core machine (one `vllm serve` of SmolLM2 until /health
// answers, `/usr/bin/time`): 40.4 s and 26.5 s of CPU without the bytecode, 22.9 s and 15.4 s with
// it; compiling the venv once took 19 s (35 s of CPU on 2 cores).
//
// A step of its own, not part of vllm.mjs: that folder's name hashes vllm.mjs, so a change there
// prepares the whole venv (about 9 minutes) anew; this step compiles an existing venv in place.
// The venv's `.app-serving-bytecode` marks it done.
//
//   node tools/data-path/bytecode.mjs      prepare vLLM if needed (vllm.mjs), compile its venv, print the paths as JSON
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from '../test-cluster/lock.mjs';
import { run, secondsSince, stderrLog } from './cache.mjs';
import { ensureVllm } from './vllm.mjs';

/** The file in the venv that says its modules are compiled. */
export const BYTECODE_MARKER = '.app-serving-bytecode';

/**
 * Every module of the venv's site-packages, in all cores, with timestamp checks (what Python does
 * itself; SOURCE_DATE_EPOCH would otherwise make it hash every source at each import). A module
 * this Python cannot compile (torch ships a few in 3.12 syntax, for 3.12 only) is never imported
 * here: compile_dir's result is not checked, and its messages are left out (quiet=2).
 */
const COMPILE = [
  'import compileall, py_compile, sysconfig',
  "compileall.compile_dir(sysconfig.get_paths()['purelib'], quiet=2, workers=0, invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)",
].join('\n');

/**
 * Compiles the modules of the venv of `python` (`<venv>/bin/python`) unless its marker says it was
 * done; one process at a time (a lock beside the marker), the others wait for it.
 */
export function ensureBytecode(python, { env = process.env, log = stderrLog } = {}) {
  const venv = dirname(dirname(python));
  const marker = join(venv, BYTECODE_MARKER);
  once(marker, () => existsSync(marker), () => {
    const started = Date.now();
    // Written beside the sources, where every process of the venv looks, whatever its environment.
    const { PYTHONDONTWRITEBYTECODE: _noWrite, PYTHONPYCACHEPREFIX: _prefix, ...compileEnv } = env;
    run(python, ['-c', COMPILE], { env: compileEnv });
    writeFileSync(marker, `compiled in ${secondsSince(started)} s\n`);
    log(`data-path: vLLM's venv compiled to bytecode in ${secondsSince(started)} s`);
  });
}

/**
 * {@link ensureVllm}, its venv compiled: what the tests use. A folder given by APP_SERVING_VLLM is
 * someone else's (maybe read-only) and is used as it is.
 */
export function ensureCompiledVllm(options = {}) {
  const paths = ensureVllm(options);
  if (!(options.env ?? process.env).APP_SERVING_VLLM) ensureBytecode(paths.python, options);
  return paths;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(JSON.stringify(ensureCompiledVllm(), null, 2));
  } catch (error) {
    console.error(`data-path: ${error.message}`);
    process.exit(1);
  }
}
