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
 * Built-in modules the bundle requires at its top but uses only in some commands, each loaded on
 * its first use instead, by a stand-in whose property reads load the module (all their uses are
 * property reads at call time: `node_crypto.createHash(…)`):
 * - node:child_process, which commander requires for subcommands that are executables of their
 *   own (we have none): ~1.5 ms of every cold start, --help included;
 * - node:crypto, which core uses for the access policies' password hashes, the Envoy Gateway
 *   config hash and diff's secret digests: loading it (and the stream modules it pulls in) was
 *   1.2–1.5 ms of every `validate` and `plan`, which need none of it.
 * Only where the importer matches: elsewhere (`bin/`, tests) the real module.
 */
const LAZY_BUILTINS = {
  'node:child_process': /[\\/]node_modules[\\/]commander[\\/]/,
  'node:crypto': /./,
};

const lazyBuiltins = {
  name: 'app-serving:lazy-builtins',
  resolveId(source, importer) {
    const importers = LAZY_BUILTINS[source];
    // The stand-in's own require is the real module.
    if (importers && importer && !importer.startsWith('\0lazy:') && importers.test(importer)) return `\0lazy:${source}`;
    return null;
  },
  load(id) {
    if (!id.startsWith('\0lazy:')) return null;
    const source = id.slice('\0lazy:'.length);
    return `let loaded;\nmodule.exports = new Proxy({}, { get: (_, key) => (loaded ??= require(${JSON.stringify(source)}))[key] });\n`;
  },
};

export default defineConfig({
  input: { main: 'dist/main.js', 'code-cache': 'dist/code-cache.js' },
  platform: 'node',
  plugins: [lazyBuiltins],
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
    // Non-ASCII characters (78 in core's messages: —, →, ×) escaped: with one of them, V8 holds
    // the whole 500 KB chunk as a two-byte string (1 MB), read, copied and checksummed at each run.
    charset: 'ascii',
  },
});
