import { createRequire } from 'node:module';
import * as pulumi from '@pulumi/pulumi';

/**
 * Runs a Pulumi program under Pulumi's unit-test mocks and records every resource it registers:
 * type, name, inputs (secrets kept wrapped), parent, dependencies, provider, options and the
 * transforms it carries. No engine, no CLI, no network; an invoke is an error.
 *
 * `setMocks` is process-global: runs are serialised, and every run sets the mocks up afresh and
 * disconnects when the program's registrations have drained.
 */

/** One registered resource. URNs are the mock monitor's. */
export interface RecordedResource {
  readonly urn: string;
  readonly type: string;
  readonly name: string;
  /** True for a custom resource (a Kubernetes object, a provider). */
  readonly custom: boolean;
  /** True for a component implemented by a provider plugin (e.g. `helm.v4.Chart`). */
  readonly remote: boolean;
  /** The parent's URN, or undefined for a root resource. */
  readonly parent: string | undefined;
  /** URNs of the resources it depends on (explicit `dependsOn` and inputs' dependencies), sorted. */
  readonly dependencies: readonly string[];
  /** The provider reference (`<urn>::<id>`) of a custom resource. */
  readonly provider: string | undefined;
  /** Provider references by package, as sent for a component. */
  readonly providers: Readonly<Record<string, string>>;
  /** The inputs; a secret value is the SDK's wrapper `{ [SECRET_SIG_KEY]: SECRET_SIG, value }`. */
  readonly inputs: Readonly<Record<string, unknown>>;
  /** The transforms registered with the resource (`opts.transforms`), runnable. */
  readonly transforms: readonly pulumi.ResourceTransform[];
  readonly options: {
    readonly deleteBeforeReplace: boolean;
    readonly replaceOnChanges: readonly string[];
    readonly ignoreChanges: readonly string[];
    readonly customTimeouts: { readonly create: string; readonly update: string; readonly delete: string } | undefined;
    /** Earlier identities the resource takes over (`opts.aliases`): a URN, or `name type parent` of an alias spec. */
    readonly aliases: readonly string[];
  };
}

/** Options of {@link recordUnderMocks}. */
export interface MockRunOptions {
  /** @default "project" */
  readonly project?: string;
  /** @default "stack" */
  readonly stack?: string;
  /** Answers invokes; the default throws on every invoke. */
  readonly call?: (args: pulumi.runtime.MockCallArgs) => pulumi.runtime.MockCallResult | Promise<pulumi.runtime.MockCallResult>;
}

/** The key and value Pulumi marks a secret with in serialized properties. */
export const SECRET_SIG_KEY = '4dabf18193072939515e22adb298388d';
export const SECRET_SIG = '1b47061264138c4ac30d75fd1eb44270';

/** True for a serialized secret `{ [SECRET_SIG_KEY]: SECRET_SIG, value }`. */
export function isSecretValue(value: unknown): value is { value: unknown } {
  return typeof value === 'object' && value !== null && (value as Record<string, unknown>)[SECRET_SIG_KEY] === SECRET_SIG;
}

/** `value` with every secret replaced by `replacement`. */
export function redactSecrets(value: unknown, replacement: unknown = '[secret]'): unknown {
  if (isSecretValue(value)) return replacement;
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, replacement));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactSecrets(v, replacement)]));
  }
  return value;
}

/** `value` with every secret unwrapped (for tests that check what a secret holds). */
export function revealSecrets(value: unknown): unknown {
  if (isSecretValue(value)) return revealSecrets(value.value);
  if (Array.isArray(value)) return value.map(revealSecrets);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, revealSecrets(v)]));
  return value;
}

/** Dotted paths of the secret values in `value`. */
export function secretPaths(value: unknown, at = ''): string[] {
  if (isSecretValue(value)) return [at];
  if (Array.isArray(value)) return value.flatMap((v, i) => secretPaths(v, `${at}[${i}]`));
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([k, v]) => secretPaths(v, at ? `${at}.${k}` : k));
  return [];
}

// Pulumi's runtime internals this module relies on (Node SDK 3.x). The mock monitor of
// @pulumi/pulumi ≤ 3.2xx turns transforms off; the engine normally runs them through a gRPC
// callback server. Here a local registry stands in for that server: transforms are recorded with
// their resource, never sent anywhere, and tests call them directly.
interface RuntimeStore {
  supportsTransforms: boolean;
  callbacks: unknown;
}
interface Internals {
  getStore(): RuntimeStore;
  Callback: new () => { setTarget(t: string): void; setToken(t: string): void; getToken(): string };
}
let internals: Internals | undefined;
function pulumiInternals(): Internals {
  if (!internals) {
    const require = createRequire(import.meta.url);
    // Resolve the copy of @pulumi/pulumi this package itself uses.
    const root = require.resolve('@pulumi/pulumi');
    const fromPulumi = createRequire(root);
    const state = fromPulumi('./runtime/state.js') as { getStore?: () => RuntimeStore };
    const proto = fromPulumi('./proto/callback_pb.js') as { Callback?: Internals['Callback'] };
    if (typeof state.getStore !== 'function' || typeof proto.Callback !== 'function') {
      throw new Error('this version of @pulumi/pulumi has no runtime store or callback protocol where app-serving expects them; record/render need @pulumi/pulumi 3.x');
    }
    internals = { getStore: state.getStore, Callback: proto.Callback };
  }
  return internals;
}

interface RegisterRequest {
  getType(): string;
  getName(): string;
  getParent(): string;
  getCustom(): boolean;
  getRemote(): boolean;
  getObject(): unknown;
  getDependenciesList(): string[];
  getProvider(): string;
  getProvidersMap(): { entries(): Iterable<[string, string]> };
  getTransformsList(): { getToken(): string }[];
  getDeletebeforereplace(): boolean;
  getReplaceonchangesList(): string[];
  getIgnorechangesList(): string[];
  getCustomtimeouts(): { getCreate(): string; getUpdate(): string; getDelete(): string } | undefined;
  getAliasesList(): { getUrn(): string; getSpec(): { getName(): string; getType(): string; getParenturn(): string } | undefined }[];
}
interface MockMonitorLike {
  registerResource(req: RegisterRequest, callback: (...args: unknown[]) => void): unknown;
  newUrn(parent: string, type: string, name: string): string;
}

let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs `program` under Pulumi's mocks and returns every resource it registered, in registration
 * order. Rejects with the program's error. Calls are serialised (the mocks are process-global).
 * `Error.stackTraceLimit` is 0 while the program runs (Pulumi captures a stack per promise; this
 * makes large programs several times faster), and no resource reads its source position from the
 * stack; both are restored afterwards.
 */
export function recordUnderMocks(program: () => unknown, options: MockRunOptions = {}): Promise<RecordedResource[]> {
  const run = queue.then(() => recordOnce(program, options));
  queue = run.catch(() => undefined);
  return run;
}

/**
 * `pulumi.runtime.setMocks`, plus support for resource transforms: the mock monitor of
 * @pulumi/pulumi 3.2xx rejects any resource with `transforms` ("The Pulumi CLI does not support
 * transforms"), and the chart components register their post-render patches as transforms. Here
 * the transforms are accepted and kept (not run: nothing is rendered under mocks); the returned
 * map holds them by callback token. Use it instead of `setMocks` in unit tests of programs that
 * use these components.
 */
export async function setMocksWithTransforms(
  mocks: pulumi.runtime.Mocks,
  project?: string,
  stack?: string,
  preview?: boolean,
): Promise<ReadonlyMap<string, pulumi.ResourceTransform>> {
  const { getStore, Callback } = pulumiInternals();
  await pulumi.runtime.setMocks(mocks, project, stack, preview);
  const transforms = new Map<string, pulumi.ResourceTransform>();
  const store = getStore();
  store.supportsTransforms = true;
  store.callbacks = {
    async registerTransform(transform: pulumi.ResourceTransform) {
      const token = `transform-${transforms.size}`;
      transforms.set(token, transform);
      const callback = new Callback();
      callback.setTarget('mock');
      callback.setToken(token);
      return callback;
    },
    awaitStackRegistrations: async () => undefined,
    shutdown: () => undefined,
  };
  return transforms;
}

/** Pulumi's Resource class, whose constructor reads the call stack for a source position. */
const resourceClass = pulumi.Resource as unknown as { callsites: () => unknown[] };

async function recordOnce(program: () => unknown, options: MockRunOptions): Promise<RecordedResource[]> {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  // Every resource's constructor also reads the whole call stack (its limit set to Infinity, then
  // parsed) for the source position the engine shows: nothing here shows it, and for 100 models
  // it was a fifth of `render`'s time with its garbage. No position under mocks; restored after.
  const callsites = resourceClass.callsites;
  resourceClass.callsites = () => [];
  const records: RecordedResource[] = [];
  try {
    const transforms = await setMocksWithTransforms(
      {
        newResource: (args) => ({ id: args.custom ? `${args.name}-id` : '', state: args.inputs }),
        call:
          options.call ??
          ((args) => {
            // The SDK re-raises a failed invoke with the error's `details` (a gRPC field) as message.
            const message = `unexpected invoke ${args.token} under mocks: nothing may call a provider`;
            throw Object.assign(new Error(message), { details: message });
          }),
      },
      options.project ?? 'project',
      options.stack ?? 'stack',
    );

    const monitor = pulumi.runtime.getMonitor() as unknown as MockMonitorLike;
    const register = monitor.registerResource.bind(monitor);
    monitor.registerResource = (req, callback) => {
      const parent = req.getParent() || undefined;
      const timeouts = req.getCustomtimeouts();
      records.push({
        urn: monitor.newUrn(req.getParent(), req.getType(), req.getName()),
        type: req.getType(),
        name: req.getName(),
        custom: req.getCustom(),
        remote: req.getRemote(),
        parent,
        dependencies: [...req.getDependenciesList()].sort(),
        provider: req.getProvider() || undefined,
        providers: Object.fromEntries(req.getProvidersMap().entries()),
        inputs: pulumi.runtime.deserializeProperties(req.getObject() as Parameters<typeof pulumi.runtime.deserializeProperties>[0]),
        transforms: req.getTransformsList().map((t) => transforms.get(t.getToken())!),
        options: {
          deleteBeforeReplace: req.getDeletebeforereplace(),
          replaceOnChanges: req.getReplaceonchangesList(),
          ignoreChanges: req.getIgnorechangesList(),
          customTimeouts: timeouts ? { create: timeouts.getCreate(), update: timeouts.getUpdate(), delete: timeouts.getDelete() } : undefined,
          aliases: req.getAliasesList().map((a) => a.getUrn() || [a.getSpec()?.getName(), a.getSpec()?.getType(), a.getSpec()?.getParenturn()].filter(Boolean).join(' ')),
        },
      });
      return register(req, callback);
    };

    let failure: unknown;
    try {
      await program();
    } catch (error) {
      failure = error;
    }
    // Let every registration already started finish, then drop the mock monitor.
    await pulumi.runtime.disconnect();
    if (failure !== undefined) throw failure;
    return records;
  } finally {
    Error.stackTraceLimit = limit;
    resourceClass.callsites = callsites;
  }
}
