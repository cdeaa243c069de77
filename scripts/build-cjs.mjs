// Adds a CommonJS build next to a package's ESM build (dist/ from tsc), for CommonJS consumers
// (ts-jest, Pulumi's `module: commonjs` template): dist/cjs/<entry>.cjs bundled by rolldown (every
// dependency external), and the declarations as dist/cjs/**/*.d.cts with `.cjs` specifiers, so
// TypeScript reads them as CommonJS declarations. ESM stays the source.
//
// Usage (in a package directory): node ../../scripts/build-cjs.mjs <entry> [<entry>…]   e.g. index render testing
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { build } from 'rolldown';

const entries = process.argv.slice(2);
const dist = 'dist';
const out = join(dist, 'cjs');
rmSync(out, { recursive: true, force: true });

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const deps = Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies });
const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
await build({
  input: Object.fromEntries(entries.map((e) => [e, join(dist, `${e}.js`)])),
  platform: 'node',
  external: (id) => builtins.has(id) || deps.some((d) => id === d || id.startsWith(`${d}/`)),
  logLevel: 'warn',
  output: { dir: out, format: 'cjs', entryFileNames: '[name].cjs', chunkFileNames: '[name]-[hash].cjs', sourcemap: true, exports: 'named' },
});

// Declarations: every dist/**/*.d.ts (not tests) as dist/cjs/**/*.d.cts.
function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return path === out ? [] : walk(path);
    return d.name.endsWith('.d.ts') && !d.name.includes('.test.') ? [path] : [];
  });
}
for (const file of walk(dist)) {
  const target = join(out, relative(dist, file)).replace(/\.d\.ts$/, '.d.cts');
  mkdirSync(dirname(target), { recursive: true });
  const text = readFileSync(file, 'utf8')
    .replace(/(from\s+|import\(\s*)(['"])(\.{1,2}\/[^'"]+)\.(?:js|ts)\2/g, '$1$2$3.cjs$2')
    .replace(/^\/\/# sourceMappingURL=.*$/m, '');
  writeFileSync(target, text);
}
