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

export default defineConfig({
  input: { main: 'dist/main.js', 'code-cache': 'dist/code-cache.js' },
  platform: 'node',
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
