import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { expandHome, type DeploymentPlan } from '@app-serving/core';
import { createCluster, type Cluster } from './cluster.ts';
import { VerifyError } from './errors.ts';

/** How to find the cluster. */
export interface KubeconfigOptions {
  /** `--kubeconfig`: a kubeconfig file; must exist. */
  readonly kubeconfig?: string;
  /** `--context`: a context of the kubeconfig; default its current-context. */
  readonly context?: string;
  /** The stack's `kubeconfig` key (`plan.kubeconfig`): the file `pulumi up` deployed with. */
  readonly stackKubeconfig?: DeploymentPlan['kubeconfig'];
  /** @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** @default os.homedir() */
  readonly home?: string;
  /** The command whose options a "no kubeconfig found" error names. @default 'verify' */
  readonly command?: 'verify' | 'preflight';
}

/** A loaded kubeconfig and where it came from. */
export interface ResolvedKubeconfig {
  readonly kubeConfig: KubeConfig;
  /** `--kubeconfig <path>`, `stack kubeconfig <path>`, `KUBECONFIG`, `~/.kube/config`, or `in-cluster`. Never holds credentials. */
  readonly source: string;
  readonly context: string | null;
  readonly inCluster: boolean;
}

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * Loads the kubeconfig the way kubectl finds it, with the stack's own file in second place:
 *
 * 1. `kubeconfig` (the `--kubeconfig` flag): that file, which must exist;
 * 2. the stack's `kubeconfig` path (the cluster `pulumi up` deployed to), when the file exists here;
 * 3. `KUBECONFIG`: its files merged (the first file's current-context wins, as with kubectl);
 * 4. `~/.kube/config`;
 * 5. in-cluster (a verify Job): the pod's ServiceAccount, when `KUBERNETES_SERVICE_HOST` is set.
 *
 * Then `context` (`--context`) selects a context; an unknown one is a {@link VerifyError} listing the
 * contexts there are. Throws a VerifyError (`kubeconfig`) when nothing can be loaded.
 */
export async function loadKubeconfig(options: KubeconfigOptions = {}): Promise<ResolvedKubeconfig> {
  const env = options.env ?? process.env;
  const home = options.home ?? homedir();
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  const fromFile = (file: string, source: string): ResolvedKubeconfig => {
    try {
      kc.loadFromFile(file);
    } catch (error) {
      throw new VerifyError('kubeconfig', `cannot load the kubeconfig ${file} (${source}): ${firstLine(error)}`);
    }
    return select(kc, source, options.context, false);
  };

  if (options.kubeconfig) {
    const file = expandHome(options.kubeconfig, home);
    if (!existsSync(file)) throw new VerifyError('kubeconfig', `--kubeconfig ${options.kubeconfig}: no such file`);
    return fromFile(file, `--kubeconfig ${options.kubeconfig}`);
  }
  let note = '';
  const stack = options.stackKubeconfig;
  if (stack && 'path' in stack) {
    const file = expandHome(stack.path, home);
    if (existsSync(file)) return fromFile(file, `stack kubeconfig ${stack.path}`);
    note = ` (the stack's kubeconfig ${stack.path} is not on this machine)`;
  }
  const fromEnv = (env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
  if (fromEnv.length) {
    const files = fromEnv.filter((f) => existsSync(f));
    if (files.length === 0) throw new VerifyError('kubeconfig', `KUBECONFIG names no existing file (${fromEnv.join(delimiter)})`);
    try {
      kc.loadFromFile(files[0]!);
      // kubectl's merge: the first file that sets a name (or the current-context) wins.
      for (const file of files.slice(1)) {
        const more = new KubeConfig();
        more.loadFromFile(file);
        for (const c of more.getClusters()) if (!kc.getCluster(c.name)) kc.addCluster(c);
        for (const u of more.getUsers()) if (!kc.getUser(u.name)) kc.addUser(u);
        for (const c of more.getContexts()) if (!kc.getContextObject(c.name)) kc.addContext(c);
        if (!kc.getCurrentContext() && more.getCurrentContext()) kc.setCurrentContext(more.getCurrentContext());
      }
    } catch (error) {
      throw new VerifyError('kubeconfig', `cannot load KUBECONFIG: ${firstLine(error)}`);
    }
    return select(kc, `KUBECONFIG${note}`, options.context, false);
  }
  const defaultFile = join(home, '.kube', 'config');
  if (existsSync(defaultFile)) return fromFile(defaultFile, `~/.kube/config${note}`);
  if (env.KUBERNETES_SERVICE_HOST && existsSync(SERVICE_ACCOUNT_TOKEN)) {
    if (options.context) throw new VerifyError('context', `--context ${options.context}: running in-cluster, there are no contexts`);
    kc.loadFromCluster();
    return { kubeConfig: kc, source: `in-cluster${note}`, context: null, inCluster: true };
  }
  throw new VerifyError(
    'kubeconfig',
    options.command === 'preflight'
      ? `no kubeconfig found${note}: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run preflight inside the cluster`
      : `no kubeconfig found${note}: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, run verify inside the cluster, or check an endpoint directly with --base-url`,
  );
}

function select(kc: KubeConfig, source: string, context: string | undefined, inCluster: boolean): ResolvedKubeconfig {
  if (context) {
    if (!kc.getContextObject(context)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new VerifyError('context', `--context ${context}: no such context in ${source} (contexts: ${known.join(', ') || 'none'})`);
    }
    kc.setCurrentContext(context);
  }
  const current = kc.getCurrentContext();
  if (!current || !kc.getCurrentCluster()) {
    throw new VerifyError('kubeconfig', `${source} has no current context with a cluster: pass --context (contexts: ${kc.getContexts().map((c) => c.name).join(', ') || 'none'})`);
  }
  return { kubeConfig: kc, source, context: current, inCluster };
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 200);
}

/** {@link loadKubeconfig}, then {@link createCluster}. */
export async function connectCluster(options: KubeconfigOptions = {}): Promise<Cluster> {
  const resolved = await loadKubeconfig(options);
  return createCluster(resolved.kubeConfig, { source: resolved.source, inCluster: resolved.inCluster });
}
