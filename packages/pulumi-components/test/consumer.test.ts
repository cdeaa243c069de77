import { execFileSync } from 'node:child_process';
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
  return execFileSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' } });
}

describe('a consumer of the packed packages', () => {
  it('builds an LlmdModel under mocks and type-checks', () => {
    // Up to date after `nx run-many -t build` (the test target depends on build): then a no-op.
    run(bin('tsc'), ['--build', 'packages/pulumi-components/tsconfig.lib.json'], REPO);
    const packs = join(dir, 'packs');
    mkdirSync(packs);
    run('npm', ['pack', '--offline', '--silent', '--pack-destination', packs, '-w', '@app-serving/core', '-w', '@app-serving/pulumi-components'], REPO);
    expect(readdirSync(packs).sort()).toEqual([tarball('core'), tarball('pulumi-components')]);

    const app = join(dir, 'app');
    const modules = join(app, 'node_modules');
    for (const [pkg, tgz] of [
      ['core', tarball('core')],
      ['pulumi-components', tarball('pulumi-components')],
    ] as const) {
      const target = join(modules, '@app-serving', pkg);
      mkdirSync(target, { recursive: true });
      run('tar', ['-xzf', join(packs, tgz), '-C', target, '--strip-components=1'], dir);
    }
    // The published packages hold their build and nothing of the sources.
    expect(readdirSync(join(modules, '@app-serving/pulumi-components')).sort()).toEqual(['README.md', 'dist', 'package.json']);
    expect(readdirSync(join(modules, '@app-serving/pulumi-components/dist')).filter((f) => /\.test\.|\.tsbuildinfo$/.test(f))).toEqual([]);
    // Peer and third-party dependencies come from the workspace (as `npm i` would install them).
    for (const dep of ['@pulumi/pulumi', '@pulumi/kubernetes', 'zod', 'yaml', '@types/node']) {
      mkdirSync(join(modules, dep, '..'), { recursive: true });
      symlinkSync(join(NODE_MODULES, dep), join(modules, dep));
    }
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'team-program', private: true, type: 'module', main: 'dist/program.js' }));
    cpSync(join(import.meta.dirname, 'consumer/program.ts'), join(app, 'program.ts'));
    cpSync(join(import.meta.dirname, 'consumer/tsconfig.json'), join(app, 'tsconfig.json'));

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
    // The nodeSelector places the gateway pods (a transform on the infra chart); readyTimeout
    // raises the await timeout of the model Deployments (a transform on the modelservice chart).
    expect(out.transforms).toBe(2);
    expect(out.rendered).toBe(14);
  }, 60_000);
});
