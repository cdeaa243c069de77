import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MODELS_DIR, REPO } from './harness.ts';

/**
 * The packages as another team gets them: built, packed with `npm pack`, unpacked into the
 * node_modules of a Pulumi program outside the workspace (third-party dependencies linked from
 * the workspace's node_modules: no network), type-checked with tsc and run under mocks.
 * Proves the exports map (`.`, `./render`, `./testing`), the peer dependencies and the published types.
 */
const NODE_MODULES = join(REPO, 'node_modules');
const bin = (name: string) => join(NODE_MODULES, '.bin', name);
const dir = mkdtempSync(join(tmpdir(), 'app-serving-consumer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The tarball `npm pack` makes of a workspace package: `app-serving-<pkg>-<version>.tgz`. */
function tarball(pkg: string): string {
  const { version } = JSON.parse(readFileSync(join(REPO, 'packages', pkg, 'package.json'), 'utf8')) as { version: string };
  return `app-serving-${pkg}-${version}.tgz`;
}

function run(command: string, args: string[], cwd: string): string {
  try {
    return execFileSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' } });
  } catch (error) {
    // The command's own output says what broke (tsc's diagnostics are on stdout).
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout ?? ''}${stderr ?? ''}`.slice(0, 40000), { cause: error });
  }
}

/** Packs the packages once; returns the directory holding the tarballs. */
let packed: string | undefined;
function pack(): string {
  if (packed) return packed;
  // Up to date after `nx run-many -t build` (the test target depends on build): then a no-op.
  run(bin('tsc'), ['--build', 'packages/pulumi-components/tsconfig.lib.json'], REPO);
  const packs = join(dir, 'packs');
  mkdirSync(packs);
  run('npm', ['pack', '--offline', '--silent', '--pack-destination', packs, '-w', '@app-serving/core', '-w', '@app-serving/pulumi-components'], REPO);
  expect(readdirSync(packs).sort()).toEqual([tarball('core'), tarball('pulumi-components')]);
  packed = packs;
  return packs;
}

/**
 * A consumer program directory `name` outside the workspace: the packed packages unpacked into its
 * node_modules, peer and third-party dependencies linked from the workspace (as `npm i` would
 * install them), `package.json` and `tsconfig.json` as given, `program` copied as `file`.
 */
function consumer(name: string, pkg: Record<string, unknown>, tsconfig: Record<string, unknown>, program: string, file: string, extraDeps: readonly string[] = []): string {
  const packs = pack();
  const app = join(dir, name);
  const modules = join(app, 'node_modules');
  for (const p of ['core', 'pulumi-components']) {
    const target = join(modules, '@app-serving', p);
    mkdirSync(target, { recursive: true });
    run('tar', ['-xzf', join(packs, tarball(p)), '-C', target, '--strip-components=1'], dir);
  }
  // What `npm i` would install beside them: their dependencies and peers (read from their manifests,
  // so a new dependency of core is one the consumer gets too), @types/node and the setup's own.
  const manifests = ['core', 'pulumi-components'].map((p) => JSON.parse(readFileSync(join(REPO, 'packages', p, 'package.json'), 'utf8')) as { dependencies?: Record<string, string>; peerDependencies?: Record<string, string> });
  const thirdParty = manifests.flatMap((m) => Object.keys({ ...m.dependencies, ...m.peerDependencies })).filter((d) => !d.startsWith('@app-serving/'));
  for (const dep of new Set([...thirdParty, '@types/node', ...extraDeps])) {
    mkdirSync(join(modules, dep, '..'), { recursive: true });
    symlinkSync(join(NODE_MODULES, dep), join(modules, dep));
  }
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: `team-${name}`, private: true, ...pkg }));
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(tsconfig));
  cpSync(join(import.meta.dirname, 'consumer', program), join(app, file));
  return app;
}

interface CjsOut {
  module: string;
  namespace: string;
  gatewayUrl: string;
  registered: number;
  transforms: number;
  rendered: number;
}

describe('a consumer of the packed packages', () => {
  it('ESM + nodenext: builds an LlmdModel under mocks and type-checks', () => {
    const app = consumer('esm', { type: 'module', main: 'dist/program.js' }, JSON.parse(readFileSync(join(import.meta.dirname, 'consumer/tsconfig.json'), 'utf8')), 'program.ts', 'program.ts');
    const modules = join(app, 'node_modules');
    // The published packages hold their build (ESM and CommonJS) and the sources its maps point to, no tests.
    expect(readdirSync(join(modules, '@app-serving/pulumi-components')).sort()).toEqual(['LICENSE', 'README.md', 'dist', 'package.json', 'src']);
    expect(readdirSync(join(modules, '@app-serving/pulumi-components/dist')).filter((f) => /\.test\.|\.tsbuildinfo$/.test(f))).toEqual([]);

    run(bin('tsc'), ['-p', 'tsconfig.json'], app);
    const out = JSON.parse(run(process.execPath, ['dist/program.js', MODELS_DIR], app)) as { namespace: string; gatewayUrl: string; registered: string[]; transforms: number; rendered: number };
    expect(out.namespace).toBe('llm-d-sim');
    expect(out.gatewayUrl).toBe('http://infra-sim-inference-gateway-istio.llm-d-sim.svc.cluster.local:80');
    expect(out.registered).toEqual([
      'app-serving:llmd:InferencePool team-sim-pool',
      'app-serving:llmd:InferenceRoute team-sim-route',
      'app-serving:llmd:LlmdInfra team-sim-infra',
      'app-serving:llmd:LlmdModel team-sim',
      'app-serving:llmd:ModelService team-sim-model-service',
      'app-serving:model:ModelNamespace team-sim-namespace',
      'kubernetes:core/v1:Namespace team-sim-namespace-namespace',
      'kubernetes:core/v1:Service team-sim-infra-gateway-alias',
      'kubernetes:gateway.networking.k8s.io/v1:HTTPRoute team-sim-route-httproute',
      'kubernetes:helm.sh/v4:Chart team-sim-infra-chart',
      'kubernetes:helm.sh/v4:Chart team-sim-model-service-chart',
      'kubernetes:helm.sh/v4:Chart team-sim-pool-chart',
    ]);
    // One transform per chart: it applies the chart's patches (the nodeSelector places the gateway
    // pods; readyTimeout raises the await timeout of the EPP and model Deployments) and replaces the
    // chart's objects delete-first.
    expect(out.transforms).toBe(3);
    expect(out.rendered).toBe(14);
  }, 300_000);

  const expected: Omit<CjsOut, 'module'> = {
    namespace: 'llm-d-sim',
    gatewayUrl: 'http://infra-sim-inference-gateway-istio.llm-d-sim.svc.cluster.local:80',
    registered: 12,
    // As above: one per chart.
    transforms: 3,
    rendered: 14,
  };

  it('CommonJS + nodenext: the require condition, CommonJS declarations', () => {
    const tsconfig = { compilerOptions: { target: 'ES2022', lib: ['ES2023'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, outDir: 'dist', types: ['node'] }, files: ['program.ts'] };
    const app = consumer('cjs-nodenext', { main: 'dist/program.js' }, tsconfig, 'program-cjs.ts', 'program.ts');
    run(bin('tsc'), ['-p', 'tsconfig.json'], app);
    expect(JSON.parse(run(process.execPath, ['dist/program.js', MODELS_DIR], app))).toEqual({ module: 'commonjs', ...expected });
  }, 300_000);

  it("CommonJS + node (Pulumi's older TypeScript template: module commonjs, moduleResolution node)", () => {
    // The tsconfig.json of Pulumi's `typescript` template before it moved to nodenext.
    const tsconfig = {
      compilerOptions: {
        strict: true,
        outDir: 'bin',
        target: 'es2020',
        module: 'commonjs',
        moduleResolution: 'node',
        sourceMap: true,
        experimentalDecorators: true,
        pretty: false,
        noFallthroughCasesInSwitch: true,
        noImplicitReturns: true,
        forceConsistentCasingInFileNames: true,
      },
      files: ['index.ts'],
    };
    const app = consumer('cjs-node', { main: 'bin/index.js' }, tsconfig, 'program-cjs.ts', 'index.ts');
    // No skipLibCheck, no esModuleInterop: every declaration the program reaches compiles. Core's
    // public types are written out (zod's own .d.cts files need esModuleInterop: TS1259), and the
    // subpaths (/render, /testing) resolve through typesVersions (no TS2307).
    run(bin('tsc'), ['-p', 'tsconfig.json'], app);
    expect(JSON.parse(run(process.execPath, ['bin/index.js', MODELS_DIR], app))).toEqual({ module: 'commonjs', ...expected });
  }, 300_000);

  it('ts-jest: a unit test of the consumer program runs as CommonJS', () => {
    const tsconfig = { compilerOptions: { target: 'ES2022', module: 'commonjs', moduleResolution: 'node', strict: true, esModuleInterop: true, skipLibCheck: true, types: ['node', 'jest'] } };
    const app = consumer('ts-jest', { jest: { preset: 'ts-jest', testEnvironment: 'node', testMatch: ['**/program.test.ts'] } }, tsconfig, 'program.jest.ts', 'program.test.ts', ['ts-jest', '@types/jest']);
    const result = spawnSync(process.execPath, [join(NODE_MODULES, 'jest/bin/jest.js'), '--ci', '--colors=false'], {
      cwd: app,
      encoding: 'utf8',
      env: { ...process.env, MODELS_DIR, NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    // eslint-disable-next-line no-control-regex -- colour codes, whatever the environment says
    const output = `${result.stdout}${result.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
    expect(output).toMatch(/Tests:\s+1 passed, 1 total/);
    expect(result.status).toBe(0);
  }, 300_000);

  it("the README's TypeScript snippets type-check against the packed packages (each with the names earlier snippets define)", () => {
    const readme = readFileSync(join(REPO, 'packages', 'pulumi-components', 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    // What a snippet may use without defining it: what the README's first snippet and prose set up.
    const prelude: ReadonlyArray<[string, string]> = [
      ['pulumi', "import * as pulumi from '@pulumi/pulumi';"],
      ['k8s', "import * as k8s from '@pulumi/kubernetes';"],
      ...['AppServing', 'KserveModel', 'LlmdModel', 'LlmdRouterModel'].map((n) => [n, `import { ${n} } from '@app-serving/pulumi-components';`] as [string, string]),
      ['DeploymentPlan', "import type { DeploymentPlan } from '@app-serving/core';"],
      ['config', 'const config = new pulumi.Config();'],
      ['provider', 'declare const provider: k8s.Provider;'],
      ['app', 'declare const app: AppServing;'],
      ['plan', 'declare const plan: DeploymentPlan;'],
    ];
    const defines = (code: string, name: string) => new RegExp(`(import[^;]*\\b${name}\\b[^;]*from|\\b(const|let|var|function|class)\\s+${name}\\b)`).test(code);
    const files = blocks.map((code, i) => {
      const lines = prelude.filter(([name]) => new RegExp(`\\b${name}\\b`).test(code) && !defines(code, name)).map(([, line]) => line);
      // A name the prelude uses (`pulumi` for `config`) comes in too, when the snippet does not bring it.
      const needed = prelude.filter(([name]) => lines.some((l) => new RegExp(`\\b${name}\\.`).test(l) || new RegExp(`: ${name}\\b`).test(l)) && !defines(code, name) && !lines.includes(prelude.find(([n]) => n === name)![1]));
      const all = [...needed.map(([, l]) => l), ...lines];
      // Imports first, as a module wants them; the snippet's own imports are hoisted by TypeScript anyway.
      const text = [...all.filter((l) => l.startsWith('import')), ...all.filter((l) => !l.startsWith('import')), code, 'export {};', ''].join('\n');
      return [`readme-${i + 1}.ts`, text] as const;
    });
    const tsconfig = { compilerOptions: { target: 'ES2022', lib: ['ES2023'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'] }, files: files.map(([f]) => f) };
    const app = consumer('readme', { type: 'module' }, tsconfig, 'program.ts', 'program.ts');
    for (const [file, text] of files) writeFileSync(join(app, file), text);
    run(bin('tsc'), ['-p', 'tsconfig.json'], app);
  }, 300_000);
});
