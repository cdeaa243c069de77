import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startFakeKube } from '../test/fake-kube.ts';
import { connectCluster, loadKubeconfig } from './kubeconfig.ts';

function kubeconfig(contexts: string[], current: string, server = 'http://127.0.0.1:1'): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    ...contexts.flatMap((c) => [`- name: ${c}`, '  cluster:', `    server: ${server}`, '    insecure-skip-tls-verify: true']),
    'users:',
    '- name: u',
    '  user:',
    '    token: kubeconfig-token-value',
    'contexts:',
    ...contexts.flatMap((c) => [`- name: ${c}`, '  context:', `    cluster: ${c}`, '    user: u']),
    `current-context: ${current}`,
    '',
  ].join('\n');
}

function home(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-verify-home-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe('kubeconfig resolution (as kubectl, with the stack file second)', () => {
  it('--kubeconfig wins, and --context selects a context', async () => {
    const dir = home({ 'kc.yaml': kubeconfig(['a', 'b'], 'a'), '.kube/config': kubeconfig(['home'], 'home') });
    const resolved = await loadKubeconfig({ kubeconfig: join(dir, 'kc.yaml'), context: 'b', env: { KUBECONFIG: join(dir, '.kube/config') }, home: dir });
    expect([resolved.source, resolved.context, resolved.inCluster]).toEqual([`--kubeconfig ${join(dir, 'kc.yaml')}`, 'b', false]);
  });

  it('expands ~ in --kubeconfig, and fails clearly when the file is missing', async () => {
    const dir = home({ 'kc.yaml': kubeconfig(['a'], 'a') });
    expect((await loadKubeconfig({ kubeconfig: '~/kc.yaml', env: {}, home: dir })).context).toBe('a');
    await expect(loadKubeconfig({ kubeconfig: '~/missing.yaml', env: {}, home: dir })).rejects.toMatchObject({ code: 'kubeconfig', message: '--kubeconfig ~/missing.yaml: no such file' });
  });

  it('an unknown --context lists the contexts there are', async () => {
    const dir = home({ '.kube/config': kubeconfig(['kind-kind', 'prod'], 'kind-kind') });
    await expect(loadKubeconfig({ context: 'staging', env: {}, home: dir })).rejects.toMatchObject({
      code: 'context',
      message: '--context staging: no such context in ~/.kube/config (contexts: kind-kind, prod)',
    });
  });

  it("uses the stack's kubeconfig before KUBECONFIG, and says when it is not on this machine", async () => {
    const dir = home({ 'rke2.yaml': kubeconfig(['rke2'], 'rke2'), 'env.yaml': kubeconfig(['env'], 'env') });
    const fromStack = await loadKubeconfig({ stackKubeconfig: { path: '~/rke2.yaml' }, env: { KUBECONFIG: join(dir, 'env.yaml') }, home: dir });
    expect([fromStack.source, fromStack.context]).toEqual(['stack kubeconfig ~/rke2.yaml', 'rke2']);
    const fallback = await loadKubeconfig({ stackKubeconfig: { path: '~/gone.yaml' }, env: { KUBECONFIG: join(dir, 'env.yaml') }, home: dir });
    expect([fallback.source, fallback.context]).toEqual(["KUBECONFIG (the stack's kubeconfig ~/gone.yaml is not on this machine)", 'env']);
  });

  it('merges the files of KUBECONFIG; the first current-context wins', async () => {
    const dir = home({ 'one.yaml': kubeconfig(['one'], 'one'), 'two.yaml': kubeconfig(['two'], 'two') });
    const resolved = await loadKubeconfig({ env: { KUBECONFIG: [join(dir, 'one.yaml'), join(dir, 'missing.yaml'), join(dir, 'two.yaml')].join(delimiter) }, home: dir });
    expect(resolved.context).toBe('one');
    expect(resolved.kubeConfig.getContexts().map((c) => c.name)).toEqual(['one', 'two']);
    const two = await loadKubeconfig({ context: 'two', env: { KUBECONFIG: [join(dir, 'one.yaml'), join(dir, 'two.yaml')].join(delimiter) }, home: dir });
    expect(two.context).toBe('two');
  });

  it('falls back to ~/.kube/config, then explains what to do', async () => {
    const dir = home({ '.kube/config': kubeconfig(['home'], 'home') });
    expect((await loadKubeconfig({ env: {}, home: dir })).source).toBe('~/.kube/config');
    const empty = home();
    await expect(loadKubeconfig({ env: {}, home: empty })).rejects.toMatchObject({
      code: 'kubeconfig',
      message: 'no kubeconfig found: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, run verify inside the cluster, or check an endpoint directly with --base-url',
    });
    // preflight has no --base-url: its message names only what it has.
    await expect(loadKubeconfig({ env: {}, home: empty, command: 'preflight' })).rejects.toMatchObject({
      code: 'kubeconfig',
      message: 'no kubeconfig found: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run preflight inside the cluster',
    });
  });

  it('never puts credentials in its messages', async () => {
    const dir = home({ 'bad.yaml': 'users: [\n  token: kubeconfig-token-value\n' });
    const error = await loadKubeconfig({ kubeconfig: join(dir, 'bad.yaml'), env: {}, home: dir }).catch((e: Error) => e);
    expect(error).toMatchObject({ code: 'kubeconfig' });
    expect((error as Error).message).not.toContain('kubeconfig-token-value');
  });

  it('connects a cluster from a kubeconfig file to the API server it names', async () => {
    const kube = await startFakeKube({ pods: [{ namespace: 'ns', name: 'p', labels: { app: 'x' } }] });
    const dir = home({ 'kc.yaml': kubeconfig(['fake'], 'fake', kube.url) });
    const cluster = await connectCluster({ kubeconfig: join(dir, 'kc.yaml'), env: {}, home: dir });
    expect([cluster.context, cluster.source, cluster.inCluster]).toEqual(['fake', `--kubeconfig ${join(dir, 'kc.yaml')}`, false]);
    expect((await cluster.listPods('ns', { app: 'x' }, AbortSignal.timeout(5000))).map((p) => p.name)).toEqual(['p']);
  });
});
