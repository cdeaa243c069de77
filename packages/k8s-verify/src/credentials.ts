import { spawn } from 'node:child_process';
import { isAbsolute, join } from 'node:path';
import type { Cluster, KubeConfig, User } from '@kubernetes/client-node';
import { clip, FileLimitError, formatLimit, parseJson, readBoundedFile } from './bounded.ts';
import { VerifyError } from './errors.ts';

/** Largest certificate, key or token file a kubeconfig names. */
export const MAX_CREDENTIAL_FILE_BYTES = 1024 * 1024;
/** Most output read from a credential plugin (an ExecCredential is a few KB). */
export const MAX_PLUGIN_OUTPUT_BYTES = 1024 * 1024;
/** Most of a credential plugin's stderr kept for its error message. */
const MAX_PLUGIN_STDERR_BYTES = 16 * 1024;
/** What kubectl gives an exec plugin in KUBERNETES_EXEC_INFO (client-go, no cluster info, not interactive). */
const EXEC_INFO = (apiVersion: string) => JSON.stringify({ kind: 'ExecCredential', apiVersion, spec: { interactive: false } });

/** The credentials of a kubeconfig's current user, and the secrets among them (to keep out of every output). */
export interface ResolvedCredentials {
  /** The kubeconfig with its current user's credentials and its files' contents inline: nothing left to run or read. */
  readonly kubeConfig: KubeConfig;
  /** Every secret value: tokens, passwords, keys, whatever a plugin returned. */
  readonly secrets: readonly string[];
}

/**
 * Resolves, once for the whole run, what `@kubernetes/client-node` would otherwise work out on
 * every request: the current user's exec plugin or auth-provider command is run (asynchronously,
 * without a shell, its output bounded, killed with its children when `signal` aborts — the
 * command's deadline), and the certificate, key and token files of the current context are read
 * (bounded, regular files only). The kubeconfig returned holds the results inline, so no request
 * runs a command or reads a file again. The library would run an exec plugin for every request
 * whose credential has no expiry (33 times in one preflight), and a gcp/azure `cmd-path`
 * synchronously through a shell.
 *
 * Throws a {@link VerifyError} (`kubeconfig`) naming what failed; never with a secret in it.
 */
export async function resolveCredentials(kc: KubeConfig, options: { readonly signal?: AbortSignal; readonly baseDir?: string; readonly env?: NodeJS.ProcessEnv } = {}): Promise<ResolvedCredentials> {
  const k8s = await import('@kubernetes/client-node');
  const secrets: string[] = [];
  const user = kc.getCurrentUser();
  const cluster = kc.getCurrentCluster();
  const read = async (what: string, file: string): Promise<Buffer> => {
    try {
      return await readBoundedFile(file, MAX_CREDENTIAL_FILE_BYTES, options.signal);
    } catch (error) {
      if (options.signal?.aborted) throw deadline(`reading the kubeconfig's ${what} ${file}`, options.signal);
      throw new VerifyError('kubeconfig', `the kubeconfig's ${what} ${clip(file, 300)} ${error instanceof FileLimitError ? error.message : `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`}`);
    }
  };

  let newCluster: Cluster | null = cluster;
  if (cluster?.caFile) {
    const ca = await read('certificate-authority', cluster.caFile);
    newCluster = { ...cluster, caFile: undefined, caData: ca.toString('base64') } as Cluster;
  }

  let newUser: User | null = user;
  if (user) {
    let certData = user.certData;
    let keyData = user.keyData;
    if (user.certFile) certData = (await read('client-certificate', user.certFile)).toString('base64');
    if (user.keyFile) keyData = (await read('client-key', user.keyFile)).toString('base64');
    let token = user.token;
    if (user.exec || user.authProvider) {
      const got = await pluginCredential(user, { ...options, read });
      token = got.token ?? token;
      certData = got.certData ?? certData;
      keyData = got.keyData ?? keyData;
    }
    if (keyData) secrets.push(Buffer.from(keyData, 'base64').toString('utf8').trim(), keyData);
    if (token) secrets.push(token, `Bearer ${token}`);
    if (user.password) secrets.push(user.password, `${user.username ?? ''}:${user.password}`, Buffer.from(`${user.username ?? ''}:${user.password}`).toString('base64'));
    newUser = {
      name: user.name,
      ...(certData && { certData }),
      ...(keyData && { keyData }),
      ...(token && { token }),
      ...(user.username && { username: user.username }),
      ...(user.password && { password: user.password }),
      ...(user.impersonateUser && { impersonateUser: user.impersonateUser }),
    };
  }
  // The current context's user and cluster are replaced by what was resolved; the other entries
  // stay as they are (this run never uses them: nothing of theirs runs or is read).
  const resolved = new k8s.KubeConfig();
  resolved.loadFromOptions({
    clusters: kc.getClusters().map((c) => (c === cluster && newCluster ? newCluster : c)),
    users: kc.getUsers().map((u) => (u === user && newUser ? newUser : u)),
    contexts: kc.getContexts(),
    currentContext: kc.getCurrentContext(),
  });
  return { kubeConfig: resolved, secrets: secrets.filter((s) => s.length >= 4) };
}

function deadline(what: string, signal: AbortSignal): VerifyError {
  const reason = signal.reason as Error | undefined;
  return new VerifyError('kubeconfig', `${what}: stopped, ${reason?.message ?? 'the run was cancelled'}`);
}

interface PluginResult {
  readonly token?: string;
  readonly certData?: string;
  readonly keyData?: string;
}

/** Runs the user's exec plugin, or its auth provider's command, once. */
async function pluginCredential(user: User, options: { readonly signal?: AbortSignal; readonly baseDir?: string; readonly env?: NodeJS.ProcessEnv; readonly read: (what: string, file: string) => Promise<Buffer> }): Promise<PluginResult> {
  const exec = (user.exec ?? user.authProvider?.config?.exec) as { command?: unknown; args?: unknown; env?: unknown; apiVersion?: unknown } | undefined;
  if (exec) {
    if (typeof exec.command !== 'string' || exec.command === '') throw new VerifyError('kubeconfig', `user ${clip(user.name, 100)}: exec has no command`);
    const args = Array.isArray(exec.args) ? exec.args.map(String) : [];
    const env: NodeJS.ProcessEnv = { ...(options.env ?? process.env) };
    if (Array.isArray(exec.env)) for (const e of exec.env as { name?: unknown; value?: unknown }[]) if (typeof e?.name === 'string') env[e.name] = String(e.value ?? '');
    const apiVersion = typeof exec.apiVersion === 'string' ? exec.apiVersion : 'client.authentication.k8s.io/v1';
    env.KUBERNETES_EXEC_INFO = EXEC_INFO(apiVersion);
    // client-go: a relative command with a path separator is relative to the kubeconfig's folder.
    const command = !isAbsolute(exec.command) && exec.command.includes('/') && options.baseDir ? join(options.baseDir, exec.command) : exec.command;
    const stdout = await runPlugin(`exec plugin ${clip(exec.command, 200)}`, command, args, env, options.signal);
    let credential: { status?: { token?: unknown; clientCertificateData?: unknown; clientKeyData?: unknown } };
    try {
      credential = parseJson(stdout) as typeof credential;
    } catch {
      throw new VerifyError('kubeconfig', `the kubeconfig's exec plugin ${clip(exec.command, 200)} did not print an ExecCredential (JSON)`);
    }
    const status = credential?.status;
    const token = typeof status?.token === 'string' ? status.token : undefined;
    const certData = typeof status?.clientCertificateData === 'string' ? Buffer.from(status.clientCertificateData).toString('base64') : undefined;
    const keyData = typeof status?.clientKeyData === 'string' ? Buffer.from(status.clientKeyData).toString('base64') : undefined;
    if (!token && !(certData && keyData)) throw new VerifyError('kubeconfig', `the kubeconfig's exec plugin ${clip(exec.command, 200)} returned no token and no client certificate`);
    return { ...(token && { token }), ...(certData && { certData }), ...(keyData && { keyData }) };
  }

  const provider = user.authProvider as { name?: unknown; config?: Record<string, unknown> } | undefined;
  const config = provider?.config ?? {};
  const name = String(provider?.name ?? '');
  if (name === 'tokenFile' && typeof config.tokenFile === 'string') {
    return { token: (await options.read('token file', config.tokenFile)).toString('utf8').trim() };
  }
  if (name === 'oidc') {
    // The id-token as it is: refreshing it would reach the identity provider (kubectl does that; so can you).
    const token = typeof config['id-token'] === 'string' ? config['id-token'] : undefined;
    if (!token) throw new VerifyError('kubeconfig', `user ${clip(user.name, 100)}: the oidc auth provider has no id-token: log in (e.g. with kubectl) first`);
    return { token };
  }
  if (name === 'gcp' || name === 'azure') {
    const token = typeof config['access-token'] === 'string' ? config['access-token'] : undefined;
    const expiry = typeof config.expiry === 'string' ? Date.parse(config.expiry) : typeof config['expires-on'] === 'string' ? Number(config['expires-on']) * 1000 : NaN;
    if (token && (Number.isNaN(expiry) || expiry > Date.now())) return { token };
    const cmd = config['cmd-path'];
    if (typeof cmd !== 'string' || cmd === '') throw new VerifyError('kubeconfig', `user ${clip(user.name, 100)}: the ${name} auth provider's token expired and it names no cmd-path to refresh it`);
    // Split as client-go splits cmd-args (on white space); run without a shell.
    const args = typeof config['cmd-args'] === 'string' ? config['cmd-args'].split(/\s+/).filter(Boolean) : [];
    const stdout = await runPlugin(`${name} auth-provider cmd-path ${clip(cmd, 200)}`, cmd, args, options.env ?? process.env, options.signal);
    let json: unknown;
    try {
      json = parseJson(stdout);
    } catch {
      throw new VerifyError('kubeconfig', `the kubeconfig's ${name} auth-provider command ${clip(cmd, 200)} did not print JSON`);
    }
    const found = jsonPath(json, typeof config['token-key'] === 'string' ? config['token-key'] : '{.access_token}');
    if (typeof found !== 'string' || !found) throw new VerifyError('kubeconfig', `the kubeconfig's ${name} auth-provider command ${clip(cmd, 200)} printed no token at ${clip(String(config['token-key'] ?? '{.access_token}'), 100)}`);
    return { token: found };
  }
  throw new VerifyError('kubeconfig', `user ${clip(user.name, 100)}: auth provider ${clip(name, 100) || '(no name)'} is not supported: use an exec plugin (client.authentication.k8s.io)`);
}

/** The value at a client-go token-key such as `{.credential.access_token}` (dotted keys only). */
function jsonPath(json: unknown, path: string): unknown {
  const match = /^\{\.?([^{}]*)\}$/.exec(path.trim());
  if (!match) return undefined;
  let value = json;
  for (const key of match[1]!.split('.').filter(Boolean)) value = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

/**
 * Runs a credential command and returns its stdout: no shell, no stdin, at most
 * {@link MAX_PLUGIN_OUTPUT_BYTES} of output; its process group is killed when `signal` aborts, when
 * it prints too much, or when it is done (a child it left behind dies with it).
 */
function runPlugin(what: string, command: string, args: readonly string[], env: NodeJS.ProcessEnv, signal: AbortSignal | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(deadline(`the kubeconfig's ${what}`, signal));
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let settled = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(process.platform === 'win32' ? child.pid : -child.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    };
    const finish = (error: Error | null, value?: string) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      killGroup();
      child.stdout.destroy();
      child.stderr.destroy();
      if (error) reject(error);
      else resolve(value!);
    };
    const onAbort = () => finish(deadline(`the kubeconfig's ${what} did not finish`, signal!));
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > MAX_PLUGIN_OUTPUT_BYTES) return finish(new VerifyError('kubeconfig', `the kubeconfig's ${what} printed more than ${formatLimit(MAX_PLUGIN_OUTPUT_BYTES)}: not a credential`));
      out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < MAX_PLUGIN_STDERR_BYTES) err += chunk.toString('utf8');
    });
    child.on('error', (error: NodeJS.ErrnoException) => finish(new VerifyError('kubeconfig', `the kubeconfig's ${what} cannot be run (${error.code ?? error.message})`)));
    // Not 'close' alone: a child the plugin left behind may hold the pipes open. Once the plugin
    // exits, its process group is killed, the pipes close, and what it wrote is read to the end.
    let exited: { code: number | null; killed: NodeJS.Signals | null } | null = null;
    let drained = false;
    const done = () => {
      if (!exited || !drained) return;
      if (exited.code === 0) return finish(null, Buffer.concat(out).toString('utf8'));
      const said = err.trim().split('\n').filter(Boolean).at(-1);
      finish(new VerifyError('kubeconfig', `the kubeconfig's ${what} failed (${exited.code !== null ? `exit ${exited.code}` : `killed by ${exited.killed}`})${said ? `: ${clip(said, 300)}` : ''}`));
    };
    child.stdout.on('close', () => {
      drained = true;
      done();
    });
    child.on('exit', (code, killed) => {
      exited = { code, killed };
      killGroup();
      done();
    });
  });
}
