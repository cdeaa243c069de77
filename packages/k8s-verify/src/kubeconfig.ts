import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { expandHome, type DeploymentPlan } from '@app-serving/core';
import { clip, FileLimitError, readBoundedFile } from './bounded.ts';
import { createCluster, type Cluster } from './cluster.ts';
import { resolveCredentials } from './credentials.ts';
import { VerifyError } from './errors.ts';

/** Largest kubeconfig file read (a kubeconfig with certificates inline is a few KB a cluster). */
export const MAX_KUBECONFIG_BYTES = 4 * 1024 * 1024;
/** Most files of KUBECONFIG merged. */
export const MAX_KUBECONFIG_FILES = 64;
/** Most YAML alias expansions in one kubeconfig (the yaml library's guard against alias bombs). */
const MAX_KUBECONFIG_ALIASES = 100;

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
  /**
   * The command's deadline: reading the kubeconfig and running its credential plugins stop when it
   * aborts (a FIFO, a file on a hung mount, a plugin that never ends cannot outlast the run).
   */
  readonly signal?: AbortSignal;
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
  /**
   * The secrets of the current user (tokens, passwords, keys, what a plugin returned): every output
   * of the run redacts them, also when an API server echoes them back.
   */
  readonly secrets: readonly string[];
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
  const signal = options.signal;
  const fromFile = async (file: string, source: string): Promise<ResolvedKubeconfig> => {
    const kc = await readKubeconfig(KubeConfig, file, source, signal);
    return credentials(select(kc, source, options.context, false), dirname(file), env, signal);
  };

  if (options.kubeconfig) {
    const file = expandHome(options.kubeconfig, home);
    if (!existsSync(file)) throw new VerifyError('kubeconfig', `--kubeconfig ${clip(options.kubeconfig, 300)}: no such file`);
    return fromFile(file, `--kubeconfig ${clip(options.kubeconfig, 300)}`);
  }
  let note = '';
  const stack = options.stackKubeconfig;
  if (stack && 'path' in stack) {
    const file = expandHome(stack.path, home);
    if (existsSync(file)) return fromFile(file, `stack kubeconfig ${clip(stack.path, 300)}`);
    note = ` (the stack's kubeconfig ${clip(stack.path, 300)} is not on this machine)`;
  }
  const fromEnv = (env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
  if (fromEnv.length) {
    const files = fromEnv.filter((f) => existsSync(f));
    if (files.length === 0) throw new VerifyError('kubeconfig', `KUBECONFIG names no existing file (${clip(fromEnv.join(delimiter), 300)})`);
    if (files.length > MAX_KUBECONFIG_FILES) throw new VerifyError('kubeconfig', `KUBECONFIG names ${files.length} files: at most ${MAX_KUBECONFIG_FILES} are merged`);
    const kc = await readKubeconfig(KubeConfig, files[0]!, 'KUBECONFIG', signal);
    // kubectl's merge: the first file that sets a name (or the current-context) wins.
    for (const file of files.slice(1)) {
      const more = await readKubeconfig(KubeConfig, file, 'KUBECONFIG', signal);
      for (const c of more.getClusters()) if (!kc.getCluster(c.name)) kc.addCluster(c);
      for (const u of more.getUsers()) if (!kc.getUser(u.name)) kc.addUser(u);
      for (const c of more.getContexts()) if (!kc.getContextObject(c.name)) kc.addContext(c);
      if (!kc.getCurrentContext() && more.getCurrentContext()) kc.setCurrentContext(more.getCurrentContext());
    }
    return credentials(select(kc, `KUBECONFIG${note}`, options.context, false), dirname(files[0]!), env, signal);
  }
  const defaultFile = join(home, '.kube', 'config');
  if (existsSync(defaultFile)) return fromFile(defaultFile, `~/.kube/config${note}`);
  if (env.KUBERNETES_SERVICE_HOST && existsSync(SERVICE_ACCOUNT_TOKEN)) {
    if (options.context) throw new VerifyError('context', `--context ${clip(options.context, 300)}: running in-cluster, there are no contexts`);
    const kc = new KubeConfig();
    kc.loadFromCluster();
    return credentials({ kubeConfig: kc, source: `in-cluster${note}`, context: null, inCluster: true, secrets: [] }, undefined, env, signal);
  }
  throw new VerifyError(
    'kubeconfig',
    options.command === 'preflight'
      ? `no kubeconfig found${note}: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run preflight inside the cluster`
      : `no kubeconfig found${note}: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, run verify inside the cluster, or check an endpoint directly with --base-url`,
  );
}

/**
 * Reads one kubeconfig file: a regular file of at most {@link MAX_KUBECONFIG_BYTES}, YAML with at
 * most {@link MAX_KUBECONFIG_ALIASES} alias expansions, read under `signal`. Messages never quote
 * the file's content (it holds credentials).
 */
async function readKubeconfig(KubeConfigClass: typeof KubeConfig, file: string, source: string, signal: AbortSignal | undefined): Promise<KubeConfig> {
  const what = `the kubeconfig ${clip(file, 300)}${source.startsWith('--kubeconfig') ? '' : ` (${source})`}`;
  let bytes: Buffer;
  try {
    bytes = await readBoundedFile(file, MAX_KUBECONFIG_BYTES, signal);
  } catch (error) {
    if (signal?.aborted) throw new VerifyError('kubeconfig', `reading ${what}: stopped, ${(signal.reason as Error | undefined)?.message ?? 'the run was cancelled'}`);
    if (error instanceof FileLimitError) throw new VerifyError('kubeconfig', `cannot load ${what}: it ${error.message}`);
    throw new VerifyError('kubeconfig', `cannot load ${what}: ${firstLine(error)}`);
  }
  if (bytes.includes(0)) throw new VerifyError('kubeconfig', `cannot load ${what}: a binary file, not YAML`);
  let document: unknown;
  try {
    document = parseYaml(bytes.toString('utf8'), { maxAliasCount: MAX_KUBECONFIG_ALIASES, prettyErrors: false, uniqueKeys: false });
  } catch (error) {
    const e = error as { code?: string; linePos?: { line: number }[]; message?: string };
    const where = e.linePos?.[0] ? ` at line ${e.linePos[0].line}` : '';
    const why = /alias count/i.test(e.message ?? '') ? `more than ${MAX_KUBECONFIG_ALIASES} YAML alias expansions (an alias bomb?)` : `YAML ${e.code ?? 'error'}${where}`;
    throw new VerifyError('kubeconfig', `cannot load ${what}: ${why}`);
  }
  if (document !== null && document !== undefined && (typeof document !== 'object' || Array.isArray(document))) throw new VerifyError('kubeconfig', `cannot load ${what}: not a YAML mapping`);
  const kc = new KubeConfigClass();
  try {
    // JSON is YAML: the library's own loader reads the checked document without aliases.
    kc.loadFromString(JSON.stringify(document ?? {}));
    kc.makePathsAbsolute(dirname(file));
  } catch (error) {
    throw new VerifyError('kubeconfig', `cannot load ${what}: ${firstLine(error)}`);
  }
  return kc;
}

/** Runs the current user's credential plugin once, reads its files, and keeps the secrets to redact. */
async function credentials(resolved: ResolvedKubeconfig, baseDir: string | undefined, env: Readonly<Record<string, string | undefined>>, signal: AbortSignal | undefined): Promise<ResolvedKubeconfig> {
  const { kubeConfig, secrets } = await resolveCredentials(resolved.kubeConfig, { ...(signal && { signal }), ...(baseDir && { baseDir }), env: env as NodeJS.ProcessEnv });
  return { ...resolved, kubeConfig, secrets };
}

function select(kc: KubeConfig, source: string, context: string | undefined, inCluster: boolean): ResolvedKubeconfig {
  const names = () => clip(kc.getContexts().map((c) => c.name).join(', ') || 'none', 500);
  if (context) {
    if (!kc.getContextObject(context)) throw new VerifyError('context', `--context ${clip(context, 300)}: no such context in ${source} (contexts: ${names()})`);
    kc.setCurrentContext(context);
  }
  const current = kc.getCurrentContext();
  if (!current || !kc.getCurrentCluster()) throw new VerifyError('kubeconfig', `${source} has no current context with a cluster: pass --context (contexts: ${names()})`);
  return { kubeConfig: kc, source, context: clip(current, 300), inCluster, secrets: [] };
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 200);
}


/** {@link loadKubeconfig}, then {@link createCluster}. */
export async function connectCluster(options: KubeconfigOptions = {}): Promise<Cluster> {
  const resolved = await loadKubeconfig(options);
  return createCluster(resolved.kubeConfig, { source: resolved.source, inCluster: resolved.inCluster, secrets: resolved.secrets });
}
