/**
 * The real Pulumi engine against the test cluster: the Pulumi CLI and the Kubernetes provider built
 * from Go modules (tools/pulumi/build.mjs), driven through the Automation API with an inline
 * program (its language runtime runs in this process; the CLI connects to it, so no language-host
 * binary is needed), a local file backend and a passphrase secrets provider. Nothing is mocked:
 * the engine plans, orders and awaits, the provider renders the charts with its embedded Helm and
 * applies every object to the API server.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import type { EngineEvent, PreviewResult, Stack, UpResult, DestroyResult, OpType } from '@pulumi/pulumi/automation/index.js';
import { parse, stringify } from 'yaml';
import { ensureEngine, KUBERNETES_PROVIDER } from '../../pulumi/build.mjs';
import { withTestGoGc, type TestCluster } from './cluster.ts';

/** The engine's binaries (built once, cached). */
export interface PulumiEngine {
  /** The Pulumi CLI. */
  readonly pulumi: string;
  /** The Kubernetes provider (on the PATH of the CLI: an ambient plugin). */
  readonly kubernetesProvider: string;
  /** The version the provider reports. */
  readonly providerVersion: string;
}

/** Builds (first time) and returns the engine. */
export function pulumiEngine(): PulumiEngine {
  const built = ensureEngine();
  return { ...built, providerVersion: KUBERNETES_PROVIDER.pluginVersion };
}

/** A Pulumi program: resources are registered while it runs; what it returns are the stack's outputs. */
export type InlineProgram = () => Promise<Record<string, unknown> | void> | Record<string, unknown> | void;

export interface TestStackOptions {
  readonly cluster: TestCluster;
  /** The stack's name (the `<stack>` of `Pulumi.<stack>.yaml`). */
  readonly stackName: string;
  /** @default "app-serving" */
  readonly projectName?: string;
  /** The stack file's `config:` map (keys as a stack file writes them, values as YAML gives them); secrets go in `secrets`. */
  readonly config: Readonly<Record<string, unknown>>;
  /**
   * Secret config values by config path (`app-serving:harborToken`, `app-serving:apiKeys["ci"]`),
   * stored encrypted like `pulumi config set --secret --path`.
   */
  readonly secrets?: Readonly<Record<string, string>>;
  readonly program: InlineProgram;
  /** Extra environment of the engine (and so of the provider). */
  readonly env?: Readonly<Record<string, string>>;
}

/** One operation's result: the engine's own summary and the text it printed. */
export interface OperationResult<R> {
  readonly result: R;
  /** Everything the engine printed (colour off). */
  readonly output: string;
  /** The engine's events (resource steps, diagnostics). */
  readonly events: readonly EngineEvent[];
}

/** A resource step the engine planned or took: its URN, type and operation. */
export interface ResourceStep {
  readonly urn: string;
  readonly type: string;
  readonly op: OpType;
  /** Top-level keys whose change the provider reports (detailed diff when it gives one). */
  readonly diffs: readonly string[];
  /** Keys the provider says force a replacement. */
  readonly replaceKeys: readonly string[];
}

/** A stack of the test cluster, driven by the real engine. */
export interface TestStack {
  readonly stack: Stack;
  /** The folder that holds Pulumi.yaml, the stack file and the file backend. */
  readonly workDir: string;
  /** `pulumi up`; rejects with the engine's error (its `output` and `events` on the error object). */
  up(): Promise<OperationResult<UpResult>>;
  /** `pulumi preview --diff`. */
  preview(): Promise<OperationResult<PreviewResult> & { steps: ResourceStep[] }>;
  /** `pulumi destroy`. */
  destroy(): Promise<OperationResult<DestroyResult>>;
  /** Replaces the program's config (the `config:` map) for the next operation. */
  setConfig(config: Readonly<Record<string, unknown>>): Promise<void>;
  /** Sets one secret config value, by config path (as `secrets`). */
  setSecret(path: string, value: string): Promise<void>;
  /** Removes the stack and its folder (after a destroy). */
  remove(): Promise<void>;
}

/** The error an operation rejects with: the engine's message, with what it printed and its events. */
export interface OperationError extends Error {
  readonly output: string;
  readonly events: readonly EngineEvent[];
}

/** Whether a config value is a secret (`{secure: …}`) or holds one at any depth (`pulumi config set --path`). */
function holdsSecret(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (!Array.isArray(value) && 'secure' in value) return true;
  return Object.values(value).some(holdsSecret);
}

/**
 * A stack in a fresh folder: `Pulumi.yaml` (project `projectName`, runtime nodejs), a file backend
 * under the folder, the passphrase secrets provider, the given config and secrets. The engine finds
 * the Kubernetes provider on its PATH and the cluster through `KUBECONFIG` (the admin's) unless the
 * config names a kubeconfig.
 */
export async function createTestStack(options: TestStackOptions): Promise<TestStack> {
  const engine = pulumiEngine();
  const { LocalWorkspace, PulumiCommand } = await import('@pulumi/pulumi/automation/index.js');
  const workDir = mkdtempSync(join(tmpdir(), `app-serving-pulumi-${options.stackName}-`));
  const backend = join(workDir, 'backend');
  const home = join(workDir, 'pulumi-home');
  mkdirSync(backend);
  mkdirSync(home);
  const projectName = options.projectName ?? 'app-serving';
  writeFileSync(join(workDir, 'Pulumi.yaml'), stringify({ name: projectName, runtime: 'nodejs', backend: { url: `file://${backend}` } }));
  // None when the caller set only GOMEMLIMIT (kept as it is: see withTestGoGc).
  const testGoGc = withTestGoGc(process.env, 'pulumi').GOGC;
  const envVars: Record<string, string> = {
    PULUMI_HOME: home,
    PULUMI_BACKEND_URL: `file://${backend}`,
    PULUMI_CONFIG_PASSPHRASE: 'app-serving-test-passphrase',
    PULUMI_SKIP_UPDATE_CHECK: 'true',
    PULUMI_SKIP_CONFIRMATIONS: 'true',
    // Nothing may be downloaded: the provider is the one on the PATH.
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: 'true',
    PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: 'true',
    PATH: [dirname(engine.kubernetesProvider), dirname(engine.pulumi), process.env.PATH ?? '/usr/bin:/bin'].join(delimiter),
    KUBECONFIG: options.cluster.kubeconfigPath,
    // The engine and the provider collect garbage less often (cluster.ts: TEST_GOGC; small heaps, unlike the API server's).
    ...(testGoGc && { GOGC: testGoGc }),
    ...options.env,
  };
  const pulumiCommand = await PulumiCommand.get({ root: dirname(dirname(engine.pulumi)), skipVersionCheck: true });
  const stack = await LocalWorkspace.createOrSelectStack(
    { stackName: options.stackName, projectName, program: options.program as () => Promise<Record<string, unknown>> },
    { workDir, pulumiHome: home, envVars, secretsProvider: 'passphrase', pulumiCommand },
  );
  const settingsFile = join(workDir, `Pulumi.${options.stackName}.yaml`);
  const setConfig = async (config: Readonly<Record<string, unknown>>) => {
    // The CLI wrote the file with the passphrase's salt (and any secrets set since): keep those.
    const current = (parse(readFileSync(settingsFile, 'utf8')) ?? {}) as { config?: Record<string, unknown> };
    const secrets = Object.fromEntries(Object.entries(current.config ?? {}).filter(([, v]) => holdsSecret(v)));
    writeFileSync(settingsFile, stringify({ ...current, config: { ...config, ...secrets } }));
  };
  await setConfig(options.config);
  for (const [path, value] of Object.entries(options.secrets ?? {})) await stack.setConfig(path, { value, secret: true }, true);

  const run = async <R>(what: string, operation: (hooks: { onOutput: (s: string) => void; onEvent: (e: EngineEvent) => void }) => Promise<R>): Promise<OperationResult<R>> => {
    let output = '';
    const events: EngineEvent[] = [];
    await warmOpenApi(options.cluster);
    try {
      const result = await operation({ onOutput: (s) => (output += s), onEvent: (e) => events.push(e) });
      return { result, output, events };
    } catch (error) {
      const failure = new Error(`pulumi ${what} of stack ${options.stackName} failed: ${(error as Error).message}`) as Error & { output: string; events: EngineEvent[] };
      failure.output = output;
      failure.events = events;
      throw failure;
    }
  };

  return {
    stack,
    workDir,
    up: () => run('up', (hooks) => stack.up({ ...hooks, color: 'never' })),
    preview: async () => {
      const done = await run('preview', (hooks) => stack.preview({ ...hooks, color: 'never', diff: true }));
      return { ...done, steps: resourceSteps(done.events) };
    },
    destroy: () => run('destroy', (hooks) => stack.destroy({ ...hooks, color: 'never' })),
    setConfig,
    setSecret: async (path, value) => stack.setConfig(path, { value, secret: true }, true),
    remove: async () => {
      await stack.workspace.removeStack(options.stackName, { force: true }).catch(() => undefined);
      rmSync(workDir, { recursive: true, force: true });
    },
  };
}

/**
 * Has the API server build its OpenAPI v2 document before the engine runs. The Kubernetes provider
 * reads it to check every object, with a client timeout of 32 s it does not let us change; the API
 * server builds it on the first request after CRDs change (hundreds of schemas with the sets' CRDs),
 * and at load 40 in CI that took longer: the up failed with "configured Kubernetes cluster is
 * unreachable: unable to load schema information from the API server … Client.Timeout exceeded".
 * Asked here with a generous timeout, it is built once and served from the API server's cache.
 * A failure is left to the engine to report.
 */
export async function warmOpenApi(cluster: Pick<TestCluster, 'request'>, timeoutMs = 600_000): Promise<void> {
  await cluster.request('GET', '/openapi/v2', undefined, { timeoutMs }).catch(() => undefined);
}

/** The resource steps of a preview's events (one per resource the engine planned). */
export function resourceSteps(events: readonly EngineEvent[]): ResourceStep[] {
  return events
    .map((e) => e.resourcePreEvent?.metadata)
    .filter((m): m is NonNullable<typeof m> => m !== undefined)
    .map((m) => ({
      urn: m.urn,
      type: m.type,
      op: m.op,
      diffs: [...new Set([...(m.diffs ?? []), ...Object.keys(m.detailedDiff ?? {})].map((k) => k.split(/[.[]/)[0]!))].sort(),
      replaceKeys: [...(m.keys ?? [])].sort(),
    }));
}
