// Bundles the compiled CLI (dist/*.js from tsc) into a few files: Node 20 spends most of a cold
// start resolving and linking the hundreds of small ESM files of zod and yaml; one chunk per
// command loads in a fraction of that. Pulumi and the Kubernetes client stay external: only
// `render` and `verify` load them, from the installed packages.
import { defineConfig } from 'rolldown';

export default defineConfig({
  input: { main: 'dist/main.js' },
  platform: 'node',
  external: [/^@pulumi\//, /^@app-serving\/pulumi-components/, /^@app-serving\/k8s-verify/, /^@kubernetes\//],
  output: {
    dir: 'dist/cli',
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: '[name]-[hash].js',
    sourcemap: true,
  },
});
