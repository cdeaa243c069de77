/**
 * `renderStack`: what `pulumi up` would register for a plan, computed offline.
 *
 * Import it from `@app-serving/pulumi-components/render`. It runs the real {@link AppServing}
 * under Pulumi's mocks (no engine, no CLI, no cluster, no network; an invoke is an error) and
 * lists every resource with its inputs, secrets replaced by `"[secret]"`.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { MAYBE_SECRET_KEYS, REDACTED_SECRET, SECRET_KEYS, SECRET_MAP_KEYS, redactedSecret, type DeploymentPlan } from '@app-serving/core';
import * as pulumi from '@pulumi/pulumi';
import { AppServing, type AppServingArgs } from './app-serving.ts';
import { TYPE_TOKENS, childName } from './component-names.ts';
import { isSecretValue, recordUnderMocks, redactSecrets, type RecordedResource } from './mock-runtime.ts';

/** What a secret input is printed as. */
export const REDACTED = REDACTED_SECRET;

/** A key for {@link RenderOptions.secretDigests}, new in every process: digests compare within one process only. */
const DIGEST_KEY = randomBytes(32);

/** Options of {@link renderStack}. */
export interface RenderOptions {
  /**
   * Pulumi project name (part of every URN).
   * @default "app-serving"
   */
  readonly project?: string;
  /**
   * Logical name of the AppServing component (`apps/app-serving` uses `app-serving`).
   * @default "app-serving"
   */
  readonly name?: string;
  /**
   * Where `~/` in the plan's kubeconfig path points; fix it for output that does not depend on the machine.
   * @default os.homedir()
   */
  readonly homeDir?: string;
  /**
   * Values the program receives for its secrets. Only their presence matters: every secret input is
   * printed as "[secret]". By default each secret the plan needs gets a placeholder.
   */
  readonly secrets?: { readonly [K in RenderSecretKey]?: string } & { readonly [K in (typeof SECRET_MAP_KEYS)[number]]?: Readonly<Record<string, string>> };
  /**
   * Print each secret input as `[secret:<digest>]` instead of `[secret]`: an HMAC of the value
   * under a key made afresh in each process, so that two renders in one process can tell whether
   * a secret input changed (`app-serving diff`), while the digest means nothing anywhere else.
   * @default false
   */
  readonly secretDigests?: boolean;
}

/** One resource of a rendered stack. */
export interface RenderedResource {
  /** The resource's URN: what `parent` and `dependsOn` refer to. */
  readonly urn: string;
  /** Pulumi type token, e.g. `kubernetes:core/v1:Namespace`, `kubernetes:helm.sh/v4:Chart`. */
  readonly type: string;
  /** Logical name. */
  readonly name: string;
  /** URN of the parent, or null for the root. */
  readonly parent: string | null;
  /** URNs of the resources this one waits for, sorted. */
  readonly dependsOn: string[];
  /** Inputs, every secret value replaced by "[secret]" (or `[secret:<digest>]`, see {@link RenderOptions.secretDigests}). */
  readonly inputs: Record<string, unknown>;
  /** The name of the plan's model this resource belongs to (its model component or below), or null for stack-wide ones. */
  readonly model: string | null;
  /** The resource options that decide how Pulumi changes it. */
  readonly options: {
    readonly replaceOnChanges: readonly string[];
    readonly deleteBeforeReplace: boolean;
    readonly ignoreChanges: readonly string[];
  };
}

/** A rendered stack: resources in tree order (pre-order; siblings by name, then type). */
export interface RenderedStack {
  readonly resources: RenderedResource[];
}

const PLACEHOLDER = 'app-serving-render-placeholder';

/** The stack's secret keys (core's SECRET_KEYS, and the kubeconfig when it is a secret): each an argument of {@link AppServing}. */
export type RenderSecretKey = (typeof SECRET_KEYS)[number] | (typeof MAYBE_SECRET_KEYS)[number];
/** Every secret key of core's schema is an argument of AppServing: a new one fails the type check here until AppServing takes it. */
true satisfies [RenderSecretKey] extends [keyof AppServingArgs] ? true : false;
true satisfies [(typeof SECRET_MAP_KEYS)[number]] extends ['apiKeys'] ? true : false;

/**
 * A placeholder (or the given value) for every secret key of the schema, whether or not the plan
 * uses it: AppServing reads only those its models need, so that no secret a stack can hold is ever
 * missing from a render (`prometheusCredentials` once was: exit 70 on every authenticated Prometheus).
 */
function secretArgs(given: RenderOptions['secrets'] = {}): Pick<AppServingArgs, RenderSecretKey> {
  return Object.fromEntries([...SECRET_KEYS, ...MAYBE_SECRET_KEYS].map((key) => [key, pulumi.secret(given[key] ?? `${PLACEHOLDER}-${key}`)])) as Pick<AppServingArgs, RenderSecretKey>;
}

/**
 * Runs {@link AppServing} for `plan` under Pulumi's mocks and returns what it registers.
 * Deterministic for a given plan and options; may be called any number of times in a process
 * (calls are serialised). Rejects with the component's error for a plan it cannot deploy.
 */
export async function renderStack(plan: DeploymentPlan, options: RenderOptions = {}): Promise<RenderedStack> {
  const secrets = options.secrets ?? {};
  const keyNames = [...new Set([...plan.models.flatMap((m) => m.access?.apiKeys ?? []), ...Object.keys(plan.endpoint?.access.grants ?? {})])].sort();
  const records = await recordUnderMocks(
    () => {
      new AppServing(options.name ?? 'app-serving', {
        plan,
        ...secretArgs(secrets),
        // A key's placeholder passes the key-strength rule (the components check every key they hash).
        ...(keyNames.length > 0 && { apiKeys: Object.fromEntries(keyNames.map((key) => [key, pulumi.secret(secrets.apiKeys?.[key] ?? `${PLACEHOLDER}-${createHash('sha256').update(key).digest('base64url')}`)])) }),
        ...(options.homeDir !== undefined && { homeDir: options.homeDir }),
      });
    },
    { project: options.project ?? 'app-serving', stack: plan.stack },
  );
  const urns = engineUrns(records, plan.stack, options.project ?? 'app-serving');
  const urn = (mock: string) => urns.get(mock) ?? mock;
  const models = modelOf(records, plan, options.name ?? 'app-serving');
  const redact = options.secretDigests ? digestSecrets : (value: unknown) => redactSecrets(value, REDACTED);
  return {
    resources: treeOrder(records).map((r) => ({
      urn: urn(r.urn),
      type: r.type,
      name: r.name,
      parent: r.parent === undefined ? null : urn(r.parent),
      dependsOn: r.dependencies.map(urn).sort(),
      inputs: redact(r.inputs) as Record<string, unknown>,
      model: models.get(r.urn) ?? null,
      options: { replaceOnChanges: r.options.replaceOnChanges, deleteBeforeReplace: r.options.deleteBeforeReplace, ignoreChanges: r.options.ignoreChanges },
    })),
  };
}

/** `value` with every secret replaced by `[secret:<digest>]` (see {@link RenderOptions.secretDigests}). */
function digestSecrets(value: unknown): unknown {
  if (isSecretValue(value)) return redactedSecret(createHmac('sha256', DIGEST_KEY).update(JSON.stringify(value.value ?? null)).digest('hex').slice(0, 16));
  if (Array.isArray(value)) return value.map(digestSecrets);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, digestSecrets(v)]));
  return value;
}

/** Mock URN → the name of the model whose component (`<root>-<slug>`, a child of the root) it is or is under. */
function modelOf(records: readonly RecordedResource[], plan: DeploymentPlan, rootName: string): Map<string, string> {
  const root = records.find((r) => r.parent === undefined && r.name === rootName);
  const bySlugName = new Map(plan.models.map((m) => [childName(rootName, m.slug), m.name]));
  const out = new Map<string, string>();
  const byUrn = new Map(records.map((r) => [r.urn, r]));
  const find = (r: RecordedResource): string | undefined => {
    if (out.has(r.urn)) return out.get(r.urn);
    if (r.parent === undefined) return undefined;
    const isModel = r.type === TYPE_TOKENS.LlmdModel || r.type === TYPE_TOKENS.KserveModel;
    const model = r.parent === root?.urn ? (isModel ? bySlugName.get(r.name) : undefined) : (byUrn.get(r.parent) && find(byUrn.get(r.parent)!));
    if (model !== undefined) out.set(r.urn, model);
    return model;
  };
  for (const r of records) find(r);
  return out;
}

/**
 * The URNs the Pulumi engine gives these resources: `urn:pulumi:<stack>::<project>::<qualified
 * type>::<name>`, the qualified type being every ancestor's type and the resource's, joined by `$`.
 * (Pulumi's mock monitor keeps only the parent's own type, so its URNs differ for deeper resources.)
 */
function engineUrns(records: readonly RecordedResource[], stack: string, project: string): Map<string, string> {
  const byUrn = new Map(records.map((r) => [r.urn, r]));
  const qualified = new Map<string, string>();
  const qualify = (r: RecordedResource): string => {
    const known = qualified.get(r.urn);
    if (known !== undefined) return known;
    const parent = r.parent === undefined ? undefined : byUrn.get(r.parent);
    const type = parent ? `${qualify(parent)}$${r.type}` : r.type;
    qualified.set(r.urn, type);
    return type;
  };
  return new Map(records.map((r) => [r.urn, `urn:pulumi:${stack}::${project}::${qualify(r)}::${r.name}`]));
}

/** Pre-order over the parent tree; siblings sorted by name, then type. */
export function treeOrder(records: readonly RecordedResource[]): RecordedResource[] {
  const children = new Map<string | undefined, RecordedResource[]>();
  const known = new Set(records.map((r) => r.urn));
  for (const r of records) {
    const parent = r.parent !== undefined && known.has(r.parent) ? r.parent : undefined;
    children.set(parent, [...(children.get(parent) ?? []), r]);
  }
  const out: RecordedResource[] = [];
  const visit = (parent: string | undefined) => {
    const list = (children.get(parent) ?? []).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
    for (const r of list) {
      out.push(r);
      visit(r.urn);
    }
  };
  visit(undefined);
  return out;
}
