import { basename } from 'node:path';
import { z } from 'zod';
import { CONFIG_NAMESPACE } from '../constants.ts';
import { IssueList, StackError, formatPath, isAtOrUnder, type Issue } from '../errors.ts';
import { CATEGORIES } from '../constants.ts';
import { redactUrlCredentials } from '../redact.ts';
import { Secret, isSecret } from '../secret.ts';
import { didYouMean } from '../suggest.ts';
import { MAX_STACK_FILE_BYTES, readTextFile } from '../text-file.ts';
import { parseYaml, sourceWithoutLines, type YamlSource } from '../yaml-source.ts';
import { checkConfigRules } from './rules.ts';
import { MAYBE_SECRET_KEYS, SECRET_KEYS, SECRET_MAP_KEYS, STACK_KEYS } from './keys.ts';
import { stackConfigSchema } from './schema.ts';
import type { ParsedStackConfig } from './types.ts';

/** A validated stack configuration, with where it came from. */
export interface StackConfig extends ParsedStackConfig {
  /** Stack name: `<stack>` of `Pulumi.<stack>.yaml`, or what the Pulumi program says. */
  readonly stackName: string;
  /** The file (or description) the config was read from, for messages. */
  readonly file: string;
  /** Locates a config key path in the source, for issues raised later (discovery, planning). */
  readonly locate: ConfigLocator;
  /** Whether the rules across keys were checked when loading (else planning checks them). */
  readonly rulesChecked: boolean;
  /**
   * Problems found while loading that did not stop the config from being parsed (a plain-text
   * secret, an unknown key), left for {@link planDeployment} to report together with the rules and
   * the model folders in one pass. Empty unless loaded with `checkRules: false`.
   */
  readonly deferredIssues: readonly Issue[];
}

/** Options of the stack loaders. */
export interface LoadOptions {
  /**
   * Check the rules across keys (credentials, platform-specific sources) while loading.
   * `false` leaves them to {@link planDeployment}, which then reports them together with the
   * model folder problems in one pass; so are the problems that do not stop the config from being
   * parsed (they are kept in `deferredIssues`). Default: true.
   */
  readonly checkRules?: boolean;
  /**
   * The rules across keys. Default: config's own ({@link checkConfigRules}); the loaders that
   * `@app-serving/core` exports (`stack.ts`) pass every feature's rules too (access, autoscaling, …),
   * so that config imports no feature.
   */
  readonly rules?: (config: StackConfig) => Issue[];
}

/** Builds an issue about a key path of the stack config, with file and line where known. */
export type ConfigLocator = (code: Issue['code'], path: readonly (string | number)[], message: string) => Issue;

const SECRET_KEY_SET = new Set<string>(SECRET_KEYS);
const MAYBE_SECRET_KEY_SET = new Set<string>(MAYBE_SECRET_KEYS);
const SECRET_MAP_KEY_SET = new Set<string>(SECRET_MAP_KEYS);
const KNOWN_KEYS = new Set<string>(STACK_KEYS);

/**
 * Reads a Pulumi stack file (`Pulumi.<stack>.yaml`) and validates its `app-serving:*` keys.
 *
 * Keys of other namespaces (`kubernetes:context`, …) are ignored. Keys written without a namespace
 * belong to the project, `app-serving`, as Pulumi reads them. Secure values (`secure: v1:…`) are
 * recognised as secrets without being decrypted. Throws a {@link StackError} listing every problem.
 *
 * @param file path of the stack file
 * @param displayName the file name used in messages (default: `file`)
 */
export function loadStackFile(file: string, displayName = file, options: LoadOptions = {}): StackConfig {
  let read: ReturnType<typeof readTextFile>;
  try {
    read = readTextFile(file, MAX_STACK_FILE_BYTES);
  } catch (error) {
    throw new StackError([{ code: 'file.unreadable', path: '', message: `cannot read the stack file: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, file: displayName }]);
  }
  if ('problem' in read) throw new StackError([{ code: 'notAFile' in read ? 'file.unreadable' : 'file.too-large', path: '', message: `the stack file ${read.problem}`, file: displayName }]);
  return parseStackFile(read.text, displayName, stackNameFromFile(file), options);
}

/** Like {@link loadStackFile}, from the file's text. */
export function parseStackFile(text: string, file: string, stackName = stackNameFromFile(file), options: LoadOptions = {}): StackConfig {
  const { source, issues } = parseYaml(file, text);
  if (issues.length > 0) throw new StackError(issues);
  const root = source.value ?? {};
  if (!isPlainObject(root)) throw new StackError([source.issue('yaml.not-a-map', [], 'a Pulumi stack file must be a YAML mapping with a "config:" section')]);
  const misplaced = misplacedKeys(root, source);
  const config = root.config;
  if (config === undefined) throw new StackError([...misplaced, source.issue('config.missing-key', [], 'the stack file has no "config:" section', 'config')]);
  if (!isPlainObject(config)) throw new StackError([...misplaced, source.issue('config.invalid', ['config'], '"config:" must be a mapping of keys to values', 'config')]);

  const list = new IssueList();
  list.addAll(misplaced);
  const raw: Record<string, unknown> = {};
  const yamlKeyOf = new Map<string, string>();
  for (const [fullKey, value] of Object.entries(config)) {
    const key = ownKey(fullKey);
    if (key === undefined) continue;
    if (yamlKeyOf.has(key)) {
      list.add(source.issue('config.invalid', ['config', fullKey], `"${key}" is set twice (as "${yamlKeyOf.get(key)}" and "${fullKey}")`, key));
      continue;
    }
    yamlKeyOf.set(key, fullKey);
    const isSecure = isPlainObject(value) && Object.keys(value).length === 1 && typeof value.secure === 'string';
    if (SECRET_MAP_KEY_SET.has(key)) {
      raw[key] = secretMapFromFile(value, fullKey, key, isSecure, source, list);
      continue;
    }
    if (isSecure) {
      if (SECRET_KEY_SET.has(key) || MAYBE_SECRET_KEY_SET.has(key)) raw[key] = Secret.encrypted();
      else list.add(source.issue('config.invalid', ['config', fullKey], `"${key}" cannot be a secret; set it as a plain value`, key));
    } else if (MAYBE_SECRET_KEY_SET.has(key) && typeof value === 'string' && looksLikeKubeconfig(value)) {
      list.add(
        source.issue(
          'config.not-secret',
          ['config', fullKey],
          `holds kubeconfig content, not a path: content carries credentials and must be a secret (\`pulumi config set --secret ${key} < <kubeconfig file>\`), or give the file's path`,
          key,
        ),
      );
    } else if (SECRET_KEY_SET.has(key) && value !== undefined && value !== null) {
      list.add(
        source.issue('config.not-secret', ['config', fullKey], `must be a secret, not plain text in the stack file: run \`pulumi config set --secret ${key} <value>\``, key),
      );
      // The key is set (only in the wrong form): the rules must not also call it missing. Its
      // plain text is dropped here, so it can reach no message.
      raw[key] = Secret.encrypted();
    } else {
      raw[key] = value;
    }
  }
  const locate: ConfigLocator = (code, path, message) => {
    const [key, ...rest] = path;
    const yamlKey = typeof key === 'string' ? (yamlKeyOf.get(key) ?? `${CONFIG_NAMESPACE}:${key}`) : undefined;
    return source.issue(code, yamlKey === undefined ? ['config'] : ['config', yamlKey, ...rest], message, formatPath(path));
  };
  return validate(raw, stackName, file, locate, list, options);
}

/** Options of {@link loadStackConfigFromMap}. */
export interface LoadFromMapOptions extends LoadOptions {
  /** The stack name (`pulumi.getStack()`). */
  readonly stackName: string;
  /** What to call the source in messages. Default: `Pulumi.<stack>.yaml`. */
  readonly file?: string;
  /**
   * The config namespace the keys sit under: a Pulumi program's keys are `<project>:<key>`, so a
   * program of another project passes its project name (`pulumi.getProject()`). Known keys found
   * under another namespace only are reported, with the fix.
   * @default "app-serving"
   */
  readonly namespace?: string;
}

/**
 * Validates a config map a Pulumi program already has (`pulumi.runtime.allConfig()`): keys
 * `app-serving:<key>` (or bare), values as Pulumi hands them over — strings, with structured
 * values JSON-encoded — or already-parsed values. Secret keys are wrapped in {@link Secret}.
 */
export function loadStackConfigFromMap(map: Readonly<Record<string, unknown>>, options: LoadFromMapOptions): StackConfig {
  const file = options.file ?? `Pulumi.${options.stackName}.yaml`;
  const source = sourceWithoutLines(file, map);
  const list = new IssueList();
  const raw: Record<string, unknown> = {};
  const namespace = options.namespace ?? CONFIG_NAMESPACE;
  // Known keys under another namespace, by namespace (`kubernetes:kubeconfig` is the provider's own).
  const elsewhere = new Map<string, string[]>();
  for (const [fullKey, value] of Object.entries(map)) {
    const key = ownKey(fullKey, namespace);
    if (key === undefined) {
      const colon = fullKey.indexOf(':');
      const bare = fullKey.slice(colon + 1);
      if (KNOWN_KEYS.has(bare)) elsewhere.set(fullKey.slice(0, colon), [...(elsewhere.get(fullKey.slice(0, colon)) ?? []), bare]);
      continue;
    }
    if (SECRET_MAP_KEY_SET.has(key)) {
      raw[key] = secretMapFromProgram(value, key, source, list);
      continue;
    }
    if (SECRET_KEY_SET.has(key) || (MAYBE_SECRET_KEY_SET.has(key) && (isSecret(value) || (typeof value === 'string' && looksLikeKubeconfig(value))))) {
      if (isSecret(value)) raw[key] = value;
      else if (typeof value === 'string') raw[key] = Secret.plain(value);
      else list.add(source.issue('config.invalid', [key], 'must be a string'));
    } else {
      raw[key] = typeof value === 'string' ? decodeStructured(value) : value;
    }
  }
  for (const [other, keys] of elsewhere) {
    // An app-serving config under another namespace holds the models (the one required key).
    if (!keys.includes('models') || 'models' in raw) continue;
    for (const key of keys) {
      const fullKey = `${other}:${key}`;
      list.add(
      source.issue(
        'config.unknown-key',
        [fullKey],
          `sits under the namespace "${other}", but this program reads "${namespace}:*" keys (its project's): set it as "${namespace}:${key}" (pulumi config set ${namespace}:${key} …), or read the config with namespace "${other}"`,
          fullKey,
        ),
      );
    }
  }
  const locate: ConfigLocator = (code, path, message) => source.issue(code, path, message);
  return validate(raw, options.stackName, file, locate, list, options, namespace);
}

/**
 * A map of named secrets as a stack file holds it (`apiKeys: {<name>: {secure: v1:…}}`): each entry
 * becomes an encrypted {@link Secret}. A plain-text entry is reported (its text dropped, so that it
 * reaches no message), as is a whole map set as one secret.
 */
function secretMapFromFile(value: unknown, fullKey: string, key: string, isSecure: boolean, source: YamlSource, list: IssueList): unknown {
  if (isSecure) {
    list.add(
      source.issue('config.invalid', ['config', fullKey], `must be a map of named keys, each a secret: pulumi config set --secret --path '${CONFIG_NAMESPACE}:${key}.<name>' <key>`, key),
    );
    return undefined;
  }
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(value)) {
    if (isPlainObject(entry) && Object.keys(entry).length === 1 && typeof entry.secure === 'string') out[name] = Secret.encrypted();
    else {
      list.add(
        source.issue(
          'config.not-secret',
          ['config', fullKey, name],
          `must be a secret, not plain text in the stack file: run \`pulumi config set --secret --path '${CONFIG_NAMESPACE}:${key}.${name}' <key>\``,
          `${key}.${name}`,
        ),
      );
      out[name] = Secret.encrypted();
    }
  }
  return out;
}

/**
 * A map of named secrets as a Pulumi program receives it: the whole key is a secret (Pulumi marks a
 * key secret when any value under it is) whose text is the JSON of the map; each entry becomes a
 * {@link Secret}. Already-parsed maps (tests, callers) keep their Secrets; a plain string entry in a
 * map that is not a secret is reported.
 */
function secretMapFromProgram(value: unknown, key: string, source: YamlSource, list: IssueList): unknown {
  let map: unknown = value;
  const wasSecret = isSecret(value);
  if (wasSecret) {
    try {
      map = JSON.parse((value as Secret).reveal());
    } catch {
      list.add(source.issue('config.invalid', [key], 'must be a map of named keys, each a secret'));
      return undefined;
    }
  } else if (typeof value === 'string') map = decodeStructured(value);
  if (!isPlainObject(map)) return map;
  const out: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(map)) {
    if (isSecret(entry)) out[name] = entry;
    else if (typeof entry === 'string' && wasSecret) out[name] = Secret.plain(entry);
    else {
      list.add(source.issue('config.not-secret', [key, name], `must be a secret: pulumi config set --secret --path '${CONFIG_NAMESPACE}:${key}.${name}' <key>`));
      out[name] = Secret.encrypted();
    }
  }
  return out;
}

/** `Pulumi.dev.yaml` → `dev`. */
export function stackNameFromFile(file: string): string {
  const match = /^Pulumi\.(.+)\.ya?ml$/.exec(basename(file));
  return match?.[1] ?? basename(file).replace(/\.ya?ml$/, '');
}

function validate(
  raw: Record<string, unknown>,
  stackName: string,
  file: string,
  locate: ConfigLocator,
  list: IssueList,
  options: LoadOptions,
  namespace: string = CONFIG_NAMESPACE,
): StackConfig {
  const checkRules = options.checkRules ?? true;
  const rules = options.rules ?? checkConfigRules;
  for (const key of Object.keys(raw)) {
    if (!KNOWN_KEYS.has(key)) {
      list.add(locate('config.unknown-key', [key], `unknown key "${namespace}:${key}"${didYouMean(key, KNOWN_KEYS)}`));
      delete raw[key];
    }
  }
  const parsed = stackConfigSchema.safeParse(raw, { reportInput: true, jitless: true });
  if (!parsed.success) {
    for (const zodIssue of parsed.error.issues) list.addAll(fromZodIssue(zodIssue, locate));
    const partial = salvage(raw, parsed.error.issues, stackName, file, locate);
    // The rules across keys still apply to what parsed; a rule about a key that did not parse
    // (e.g. "harborHostname is required" after its value was rejected) would repeat the problem.
    if (partial) list.addAll(rules(partial.config).filter((issue) => !partial.dropped.some((path) => isAtOrUnder(issue.path, path))));
    throw new StackError(list.items, partial ? { partial: partial.config } : {});
  }
  if (!checkRules) {
    // The planner checks the rules and the model folders; it reports these problems with them.
    return { ...(parsed.data as ParsedStackConfig), stackName, file, locate, rulesChecked: false, deferredIssues: [...list.items] };
  }
  const config: StackConfig = { ...(parsed.data as ParsedStackConfig), stackName, file, locate, rulesChecked: true, deferredIssues: [] };
  list.addAll(rules(config));
  // The keys that were reported (unknown, not a secret) are not part of the config: it is whole
  // otherwise, and its model folders can still be checked in the same run.
  if (list.size > 0) throw new StackError(list.items, { partial: config });
  return config;
}

/**
 * What remains of a stack whose schema check failed, for checking its model folders in the same
 * run: a model entry that does not parse is replaced by a disabled placeholder (the indexes of
 * the others stay right), and an optional top-level key that does not parse is dropped. Nothing
 * is salvaged when a problem concerns `cloudProvider`, `platform` or the shape of `models`: they
 * decide what every model folder must hold.
 */
function salvage(
  raw: Record<string, unknown>,
  issues: readonly ZodIssue[],
  stackName: string,
  file: string,
  locate: ConfigLocator,
): { config: StackConfig; dropped: string[] } | undefined {
  const copy: Record<string, unknown> = { ...raw };
  const models = isPlainObject(raw.models) ? { ...raw.models } : undefined;
  const dropped = new Set<string>();
  for (const issue of issues) {
    const [key, category, index] = issue.path;
    if (key === 'cloudProvider' || key === 'platform' || typeof key !== 'string') return undefined;
    if (key === 'models' && category === undefined && issue.code === 'unrecognized_keys' && models) {
      // a misspelt category (`embedders:`): the others can still be checked
      for (const unknown of issue.keys) delete models[unknown];
      continue;
    }
    if (key !== 'models') {
      delete copy[key];
      dropped.add(key);
      continue;
    }
    if (!models || typeof category !== 'string' || !(CATEGORIES as readonly string[]).includes(category) || typeof index !== 'number' || !Array.isArray(models[category])) return undefined;
    const entries = [...(models[category] as unknown[])];
    entries[index] = { name: 'invalid-entry', enabled: false };
    models[category] = entries;
    dropped.add(formatPath(['models', category, index]));
  }
  if (models) copy.models = models;
  const parsed = stackConfigSchema.safeParse(copy, { jitless: true });
  if (!parsed.success) return undefined;
  return { config: { ...(parsed.data as ParsedStackConfig), stackName, file, locate, rulesChecked: true, deferredIssues: [] }, dropped: [...dropped] };
}

/**
 * Our keys at the top level of a stack file, outside `config:` (`app-serving:charts:` or a bare
 * `kserve:`): Pulumi reads only `config:`, so they would be ignored without a word. It happens when a
 * block loses its indentation, as the template's commented blocks do when `pulumi config set`
 * rewrites the file and they are uncommented afterwards.
 */
function misplacedKeys(root: Record<string, unknown>, source: YamlSource): Issue[] {
  return Object.keys(root)
    .filter((key) => key !== 'config' && (key.startsWith(`${CONFIG_NAMESPACE}:`) || KNOWN_KEYS.has(key)))
    .map((key) => {
      const own = ownKey(key)!;
      return source.issue(
        'config.misplaced-key',
        [key],
        `"${key}" is outside "config:" (at the top level of the file), where Pulumi and validate ignore it: indent it and its block by two spaces under "config:", as "  ${CONFIG_NAMESPACE}:${own}:"`,
        key,
      );
    });
}

function ownKey(fullKey: string, namespace: string = CONFIG_NAMESPACE): string | undefined {
  const colon = fullKey.indexOf(':');
  if (colon < 0) return fullKey;
  return fullKey.slice(0, colon) === namespace ? fullKey.slice(colon + 1) : undefined;
}

function decodeStructured(value: string): unknown {
  const trimmed = value.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[') || trimmed === 'true' || trimmed === 'false') {
    try {
      return JSON.parse(trimmed);
    } catch {
      return value;
    }
  }
  return value;
}

type ZodIssue = z.core.$ZodIssue;

/** Turns one zod issue into our issues, with a message a person can act on. */
function fromZodIssue(issue: ZodIssue, locate: ConfigLocator): Issue[] {
  const path = issue.path.filter((s): s is string | number => typeof s !== 'symbol');
  const missing = (issue.code === 'invalid_type' || issue.code === 'invalid_value' || issue.code === 'invalid_union') && issue.input === undefined;
  if (missing) return [locate('config.missing-key', path, 'is required')];
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => locate('config.unknown-key', [...path, key], `unknown key "${key}"${didYouMean(key, knownKeysAt(path))}`));
    case 'invalid_type':
      return [locate('config.invalid', path, `must be ${article(issue.expected)}, not ${describe(issue.input)}`)];
    case 'invalid_value':
      return [locate('config.invalid', path, `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, not ${describe(issue.input)}`)];
    case 'invalid_union':
      return [locate('config.invalid', path, `${describe(issue.input)} is not valid here: give a file path, or a secret (\`pulumi config set --secret\`)`)];
    case 'too_small':
      return [locate('config.invalid', path, issue.origin === 'string' ? 'must not be empty' : issue.message)];
    default:
      return [locate('config.invalid', path, issue.input === undefined ? issue.message : `${describe(issue.input)} ${issue.message}`)];
  }
}

/** Known keys of the object at `path` in the schema, for suggestions. */
function knownKeysAt(path: readonly (string | number)[]): string[] {
  let schema: z.core.$ZodType | undefined = stackConfigSchema;
  for (const segment of path) {
    schema = schema && unwrap(schema);
    if (!schema) return [];
    if (typeof segment === 'number') schema = schema instanceof z.ZodArray ? (schema.element as z.core.$ZodType) : undefined;
    else schema = schema instanceof z.ZodObject ? (schema.shape[segment] as z.core.$ZodType | undefined) : undefined;
  }
  schema = schema && unwrap(schema);
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
}

function unwrap(schema: z.core.$ZodType): z.core.$ZodType {
  let current = schema;
  for (let i = 0; i < 10; i += 1) {
    if (current instanceof z.ZodOptional || current instanceof z.ZodDefault || current instanceof z.ZodPrefault || current instanceof z.ZodNullable || current instanceof z.ZodLazy) {
      current = current.unwrap() as z.core.$ZodType;
    } else break;
  }
  return current;
}

function article(expected: string): string {
  if (expected === 'object') return 'a mapping';
  if (expected === 'array') return 'a list';
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

/** Describes a value for a message without echoing long or secret content. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (isSecret(value)) return 'a secret';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') {
    // Never echo credentials a user put in the wrong place (`https://robot:PASS@harbor.local`).
    if (/\b(apiVersion|clusters|users)\s*:|certificate-authority-data|client-key-data|\btoken\s*:/.test(value)) return 'kubeconfig content';
    const shown = redactUrlCredentials(value);
    return shown.length > 60 ? `"${shown.slice(0, 57)}..."` : JSON.stringify(shown);
  }
  return String(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !isSecret(value);
}

/** True for a value that is a kubeconfig's content (YAML with clusters, users, keys), not a path. */
export function looksLikeKubeconfig(value: string): boolean {
  return /[\r\n]/.test(value) || /\b(apiVersion|clusters|contexts|users|current-context)\s*:|certificate-authority-data|client-key-data|client-certificate-data|\btoken\s*:/.test(value);
}
