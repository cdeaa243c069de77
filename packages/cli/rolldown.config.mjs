// Bundles the compiled CLI (dist/*.js from tsc) into a few files: Node 20 spends most of a cold
// start resolving and linking the hundreds of small ESM files of zod and yaml; one chunk per
// command loads in a fraction of that. Pulumi and the Kubernetes client stay external: only
// `render` and `verify` load them, from the installed packages.
//
// CommonJS, so that V8 can keep the compiled code of a command between runs (src/code-cache.ts;
// Node 20 has no code cache for ES modules): `validate` of 50 heavy models 2.9× → 2.5× node's start
// (scripts/bench.mjs, with and without the cache).
//
// Minified (names kept, source maps shipped): V8 reads less text before the first line runs;
// measured with valgrind --tool=callgrind, 846 → 826 million instructions for `validate` of one
// model (node -e '' is 511).
import { defineConfig } from 'rolldown';

/**
 * commander requires node:child_process at its top, for subcommands that are executables of their
 * own (we have none): loading it cost every command, --help included, ~1.5 ms of a cold start. Its
 * uses are property reads at call time, so a stand-in that loads the module on the first read keeps
 * commander's behaviour whole.
 */
const lazyChildProcess = {
  name: 'app-serving:lazy-child-process',
  resolveId(source, importer) {
    if (source === 'node:child_process' && importer && /[\\/]node_modules[\\/]commander[\\/]/.test(importer)) return '\0lazy-child-process';
    return null;
  },
  load(id) {
    if (id !== '\0lazy-child-process') return null;
    return "let loaded;\nmodule.exports = new Proxy({}, { get: (_, key) => (loaded ??= require('node:child_process'))[key] });\n";
  },
};

export default defineConfig({
  input: { main: 'dist/main.js', 'code-cache': 'dist/code-cache.js' },
  platform: 'node',
  plugins: [lazyChildProcess],
  external: [/^@pulumi\//, /^@app-serving\/pulumi-components/, /^@app-serving\/k8s-verify/, /^@kubernetes\//],
  output: {
    dir: 'dist/cli',
    // Earlier builds' chunks have hashed names: without this they pile up and get published.
    cleanDir: true,
    format: 'cjs',
    // No import() left in the bundle: a script compiled from V8's code cache cannot run one on
    // Node 20 (its dynamic-import callback is not carried over). The packages it loads on demand
    // (pulumi-components, k8s-verify) have CommonJS builds, so require() loads them.
    dynamicImportInCjs: false,
    entryFileNames: '[name].cjs',
    chunkFileNames: '[name]-[hash].cjs',
    sourcemap: true,
    minify: true,
    // Class and function names stay as written: error names and stack traces still read.
    keepNames: true,
  },
});
