import { readdirSync, statSync, type Dirent } from 'node:fs';
import { join, sep } from 'node:path';
import { CATEGORIES, UPSTREAMS, type Category, type Platform, type Upstream } from './constants.ts';
import type { StackConfig } from './config/load.ts';
import { modelPlatform } from './config/rules.ts';
import type { ModelEntry } from './config/types.ts';
import { IssueList, type Issue } from './errors.ts';
import { displayPath } from './paths.ts';
import { didYouMean } from './suggest.ts';
import { invalidImageReferences } from './oci-reference.ts';
import { freezeValues } from './values/merge.ts';
import { MAX_VALUES_FILE_BYTES, readTextFile } from './text-file.ts';
import { parseYaml, sourceWithoutLines, type YamlSource } from './yaml-source.ts';
import { DEFAULT_UPSTREAM, LLMD_VALUES_FOLDERS, migrationCommand, modelUpstream, slugProblemOn } from './upstream/select.ts';

/** The values-folder prefixes of a model folder: `<prefix>-<slug>/values.yaml`. */
export const VALUES_FOLDERS = {
  gaie: 'gaie',
  modelService: 'ms',
  infra: 'infra',
  kserve: 'kserve',
  /** 2026-08: the model server (app-serving's own format, upstream/2026-08/server.ts). */
  server: 'server',
  /** 2026-08: the llm-d Router chart's values. */
  router: 'router',
} as const;
export type ValuesFolder = keyof typeof VALUES_FOLDERS;

/** One parsed values file. */
export interface ValuesFile {
  /** The file as shown in messages. */
  readonly file: string;
  /** Its content (a mapping; an empty file is `{}`). */
  readonly values: Record<string, unknown>;
  /** Locates key paths inside the file. */
  readonly source: YamlSource;
}

/** An enabled model found on disk with its values files. */
export interface DiscoveredModel {
  readonly category: Category;
  /** Index of the entry in `models.<category>` of the stack. */
  readonly index: number;
  readonly entry: ModelEntry;
  readonly platform: Platform;
  readonly slug: string;
  /** The model folder as shown in messages. */
  readonly folder: string;
  /** llm-d 2026-02: `gaie`, `modelService` and optionally `infra`; 2026-08: `server` and optionally `router`; kserve: `kserve`. */
  readonly values: Partial<Record<ValuesFolder, ValuesFile>>;
}

/**
 * A model's values handed over inline (by a Pulumi program) instead of read from its folder.
 * Planned with the same merge and checks; messages name `<label>.<chart>` (the caller's terms).
 */
export interface InlineValues {
  /** The model slug (what the values folders' `<prefix>-<slug>` would say). */
  readonly slug: string;
  /** llm-d: the GAIE chart's values (required). */
  readonly gaie?: Readonly<Record<string, unknown>>;
  /** llm-d: the llm-d-modelservice chart's values (required). */
  readonly modelService?: Readonly<Record<string, unknown>>;
  /** llm-d: the llm-d-infra chart's values (optional). */
  readonly infra?: Readonly<Record<string, unknown>>;
  /** KServe: the LLMInferenceService spec overlay (required). */
  readonly kserve?: Readonly<Record<string, unknown>>;
  /** llm-d on the 2026-08 set: the model server's values (required). */
  readonly server?: Readonly<Record<string, unknown>>;
  /** llm-d on the 2026-08 set: the llm-d Router chart's values (optional). */
  readonly router?: Readonly<Record<string, unknown>>;
  /**
   * What messages call these values, e.g. `values` (then `values.gaie`, `values.modelService`).
   * @default "values"
   */
  readonly label?: string;
}

/** Inline values by model, keyed `<category>/<name>` (see {@link InlineValues}). */
export type InlineModels = ReadonlyMap<string, InlineValues>;

/**
 * Finds the folder of every enabled model under `modelsDir/<category>/<name>/` and reads its
 * values files (DESIGN §3). An llm-d model needs exactly one `gaie-<slug>/values.yaml` and one
 * `ms-<slug>/values.yaml` with the same slug (and may have one `infra-<slug>/values.yaml`);
 * a kserve model needs exactly one `kserve-<slug>/values.yaml`. Disabled models are not read.
 * Slugs must be valid and unique across the stack. Throws one StackError with every problem.
 */
export function discoverModels(config: StackConfig, modelsDir: string): DiscoveredModel[] {
  const list = new IssueList();
  const found = collectModels(config, modelsDir, list);
  list.throwIfAny();
  return found;
}

/** Like {@link discoverModels}, adding problems to `list` instead of throwing. */
export function collectModels(config: StackConfig, modelsDir: string, list: IssueList, inline?: InlineModels): DiscoveredModel[] {
  const found: DiscoveredModel[] = [];
  for (const category of CATEGORIES) {
    const categoryDir = join(modelsDir, category);
    config.models[category].forEach((entry, index) => {
      if (!entry.enabled) return;
      const given = inline?.get(`${category}/${entry.name}`);
      const model = given ? inlineOne(config, category, index, entry, given, list) : discoverOne(config, modelsDir, categoryDir, category, index, entry, list);
      if (model) found.push(model);
    });
  }
  const bySlug = new Map<string, DiscoveredModel>();
  for (const model of found) {
    const other = bySlug.get(model.slug);
    if (other) {
      list.add(
        config.locate('slug.duplicate', ['models', model.category, model.index, 'name'], `slug "${model.slug}" is already used by ${other.category}/${other.entry.name}; every model of a stack needs its own slug (rename the values folders of one of them)`),
      );
    } else bySlug.set(model.slug, model);
  }
  return found;
}

/** The values folders read for a model (`wanted`) and those it must have (`required`): by platform, and for llm-d by set. */
function valuesFoldersOf(config: StackConfig, entry: ModelEntry, platform: Platform): { wanted: readonly ValuesFolder[]; required: readonly ValuesFolder[] } {
  return platform === 'kserve' ? { wanted: ['kserve'], required: ['kserve'] } : LLMD_VALUES_FOLDERS[modelUpstream(config, entry)];
}

/** Names of the model folders of a category (for suggestions and `new-model`). */
export function listModelFolders(modelsDir: string, category: Category): string[] {
  return subdirectories(join(modelsDir, category)).sort();
}

/**
 * One model's folder, `categoryDir` (`join(modelsDir, category)`) + its name. Paths below it are
 * put together by hand: the name and the folders' names hold no separator and are neither `.` nor
 * `..`, so `join` would only give the same string, and it cost 2% of a `validate` of 50 models
 * (node's path functions run interpreted in a short process).
 */
function discoverOne(config: StackConfig, modelsDir: string, categoryDir: string, category: Category, index: number, entry: ModelEntry, list: IssueList): DiscoveredModel | undefined {
  const at = (...rest: (string | number)[]) => ['models', category, index, ...rest];
  // Never read outside models/<category>/ (the schema refuses such names; a program may bypass it).
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(entry.name)) {
    list.add(config.locate('config.invalid', at('name'), 'must be a model folder name (letters, digits, ".", "_", "-"; no "/" or "..")'));
    return undefined;
  }
  const platform = modelPlatform(config, entry);
  const dir = `${categoryDir}${sep}${entry.name}`;
  const shown = displayPath(dir);
  // One read of the folder says whether it is there, readable, and what it holds.
  const read = readFolder(dir);
  if (read && 'problem' in read) {
    list.add(config.locate('file.unreadable', at('name'), `cannot read the model folder ${shown} (${read.problem}): check its permissions, or where its link points`));
    return undefined;
  }
  if (!read) {
    const elsewhere = CATEGORIES.find((c) => c !== category && isDirectory(join(modelsDir, c, entry.name)));
    const hint = elsewhere
      ? ` (it is in ${displayPath(join(modelsDir, elsewhere))}: list it under models.${elsewhere})`
      : didYouMean(entry.name, listModelFolders(modelsDir, category)) || ` (create it with: app-serving new-model ${entry.name} --category ${category} --slug <slug>)`;
    list.add(config.locate('model.not-found', at('name'), `no model folder ${shown}${hint}`));
    return undefined;
  }

  const { wanted, required } = valuesFoldersOf(config, entry, platform);
  const folders = new Map<ValuesFolder, string[]>();
  for (const name of folderNames(dir, read.entries)) {
    for (const kind of wanted) {
      const prefix = `${VALUES_FOLDERS[kind]}-`;
      if (name.startsWith(prefix) && name.length > prefix.length) folders.set(kind, [...(folders.get(kind) ?? []), name]);
    }
  }

  // A folder of the other set only (new-model's default set in a stack on the other one): one
  // problem that says so, with both ways out, instead of one "has no …" per missing folder.
  if (platform === 'llm-d' && folders.size === 0) {
    const mismatch = otherSetProblem(config, modelsDir, category, entry, shown, folderNames(dir, read.entries));
    if (mismatch) {
      list.add(config.locate('model.values-missing', at('name'), mismatch));
      return undefined;
    }
  }

  const before = list.size;
  const chosen = new Map<ValuesFolder, string>();
  for (const kind of wanted) {
    const names = (folders.get(kind) ?? []).sort();
    const pattern = `${VALUES_FOLDERS[kind]}-<slug>/values.yaml`;
    if (names.length === 0) {
      if (required.includes(kind)) {
        list.add(config.locate('model.values-missing', at('name'), `${shown} has no ${pattern} (needed for the ${platform} platform${setNamed(config, entry, platform)})`));
      }
    } else if (names.length > 1) {
      list.add(config.locate('model.values-ambiguous', at('name'), `${shown} has ${names.length} ${VALUES_FOLDERS[kind]}-* folders (${names.join(', ')}); keep exactly one`));
    } else chosen.set(kind, names[0]!);
  }
  if (list.size > before) return undefined;

  const slugs = new Map<ValuesFolder, string>([...chosen].map(([kind, name]) => [kind, name.slice(VALUES_FOLDERS[kind].length + 1)]));
  const slug = slugs.get(required[0]!)!;
  for (const [kind, other] of slugs) {
    if (other !== slug) {
      list.add(
        config.locate(
          'model.slug-mismatch',
          at('name'),
          `${shown}: ${chosen.get(kind)} and ${chosen.get(required[0]!)} name different slugs ("${other}" and "${slug}"); the values folders of one model share one slug`,
        ),
      );
    }
  }
  const problem = slugProblemOn(slug, platform === 'llm-d' ? modelUpstream(config, entry) : DEFAULT_UPSTREAM);
  if (problem) list.add(config.locate('slug.invalid', at('name'), `${shown}: ${problem}`));
  if (list.size > before) return undefined;

  const values: Partial<Record<ValuesFolder, ValuesFile>> = {};
  for (const [kind, folder] of chosen) {
    const file = `${dir}${sep}${folder}${sep}values.yaml`;
    const loaded = readValuesFile(file, list);
    if (loaded) values[kind] = loaded;
    else if (!isFile(file)) list.add(config.locate('model.values-missing', at('name'), `${displayPath(`${dir}${sep}${folder}`)} has no values.yaml`));
  }
  if (list.size > before) return undefined;
  return { category, index, entry, platform, slug, folder: shown, values };
}

function inlineOne(config: StackConfig, category: Category, index: number, entry: ModelEntry, given: InlineValues, list: IssueList): DiscoveredModel | undefined {
  const platform = modelPlatform(config, entry);
  const label = given.label ?? 'values';
  const { wanted, required } = valuesFoldersOf(config, entry, platform);
  const before = list.size;
  const problem = slugProblemOn(given.slug, platform === 'llm-d' ? modelUpstream(config, entry) : DEFAULT_UPSTREAM);
  if (problem) list.add({ code: 'slug.invalid', path: `${label}.slug`, message: problem });
  const values: Partial<Record<ValuesFolder, ValuesFile>> = {};
  for (const kind of wanted) {
    const value = given[kind];
    const shown = `${label}.${kind}`;
    if (value === undefined) {
      if (required.includes(kind)) list.add({ code: 'model.values-missing', path: shown, message: `is required for the ${platform} platform${setNamed(config, entry, platform)} (the values a model folder keeps in ${VALUES_FOLDERS[kind]}-<slug>/values.yaml)` });
    } else if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      list.add({ code: 'yaml.not-a-map', path: shown, message: 'must be a mapping of chart values' });
    } else {
      const copy = structuredClone(value) as Record<string, unknown>;
      values[kind] = { file: shown, values: copy, source: sourceWithoutLines(shown, copy) };
    }
  }
  for (const kind of Object.keys(VALUES_FOLDERS) as ValuesFolder[]) {
    if (!wanted.includes(kind) && given[kind] !== undefined) {
      list.add({ code: 'config.invalid', path: `${label}.${kind}`, message: `is not used by the ${platform} platform${setNamed(config, entry, platform)} (it takes ${wanted.map((k) => `${label}.${k}`).join(', ')})` });
    }
  }
  if (list.size > before) return undefined;
  return { category, index, entry, platform, slug: given.slug, folder: label, values };
}

/** Reads one values file: YAML syntax errors (with lines) and a non-mapping root are issues. */
export function readValuesFile(file: string, list: IssueList): ValuesFile | undefined {
  if (!isFile(file)) return undefined;
  const shown = displayPath(file);
  let read: ReturnType<typeof readTextFile>;
  try {
    read = readTextFile(file, MAX_VALUES_FILE_BYTES);
  } catch (error) {
    list.add({ code: 'file.unreadable', path: '', message: `cannot read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, file: shown });
    return undefined;
  }
  if ('problem' in read) {
    list.add({ code: 'notAFile' in read ? 'file.unreadable' : 'file.too-large', path: '', message: `the values file ${read.problem}`, file: shown });
    return undefined;
  }
  const { source, issues } = parseYaml(shown, read.text);
  if (issues.length > 0) {
    list.addAll(issues);
    return undefined;
  }
  const value = source.value ?? {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    list.add(source.issue('yaml.not-a-map', [], 'a values file must be a YAML mapping of chart values', ''));
    return undefined;
  }
  // Image references are checked where they are written: they end up in skopeo commands and pod specs.
  const bad = invalidImageReferences(value);
  for (const { path, problem } of bad) list.add(source.issue('values.invalid', path, problem));
  if (bad.length > 0) return undefined;
  // Frozen: merges share the file's values instead of copying them, and nothing can change them.
  return { file: shown, values: freezeValues(value as Record<string, unknown>), source };
}

/** Folders in `dir`, symlinks to folders included (a values folder may be a link to a shared one). */
function subdirectories(dir: string): string[] {
  try {
    return folderNames(dir, readdirSync(dir, { withFileTypes: true }));
  } catch {
    return [];
  }
}

function folderNames(dir: string, entries: readonly Dirent[]): string[] {
  return entries.filter((d) => d.isDirectory() || (d.isSymbolicLink() && isDirectory(join(dir, d.name)))).map((d) => d.name);
}

/**
 * The entries of the folder `path`; null when it is absent or not a folder; its problem when it
 * exists but cannot be read (EACCES, ELOOP, …).
 */
function readFolder(path: string): { entries: Dirent[] } | { problem: string } | null {
  try {
    return { entries: readdirSync(path, { withFileTypes: true }) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? null : { problem: code ?? String(error) };
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** ` on the <set> set` for an llm-d model whose stack or entry names its set; '' otherwise (messages of a stack without `upstream` read as before sets existed). */
function setNamed(config: StackConfig, entry: ModelEntry, platform: Platform): string {
  if (platform !== 'llm-d' || (config.upstream === undefined && entry.upstream === undefined)) return '';
  return ` on the ${modelUpstream(config, entry)} set`;
}

/**
 * For an llm-d model whose folder holds none of its set's values folders: when it holds another
 * set's, the problem that says so — which folders, which set the model is on and why — with both
 * fixes: the model's own `upstream` (the set its folders are for), or the folders of its set
 * written beside them by `new-model` (and, for a 2026-02 folder, `migrate` to convert it later).
 * Undefined when the folder holds no other set's folders either (the usual "has no …" applies).
 */
function otherSetProblem(config: StackConfig, modelsDir: string, category: Category, entry: ModelEntry, shown: string, names: readonly string[]): string | undefined {
  const set = modelUpstream(config, entry);
  for (const other of UPSTREAMS.filter((u) => u !== set)) {
    const kinds: readonly ValuesFolder[] = LLMD_VALUES_FOLDERS[other].wanted;
    const found = names.filter((name) => kinds.some((kind) => name.startsWith(`${VALUES_FOLDERS[kind]}-`) && name.length > VALUES_FOLDERS[kind].length + 1)).sort();
    if (found.length === 0) continue;
    const required = VALUES_FOLDERS[LLMD_VALUES_FOLDERS[other].required[0]];
    const slugFolder = found.find((name) => name.startsWith(`${required}-`)) ?? found[0]!;
    const slug = slugFolder.slice(slugFolder.indexOf('-') + 1);
    const why =
      entry.upstream !== undefined
        ? `its entry says upstream: ${set}`
        : config.upstream !== undefined
          ? `the stack's app-serving:upstream is ${set}`
          : `a stack without app-serving:upstream is on ${DEFAULT_UPSTREAM}`;
    const keep =
      other === DEFAULT_UPSTREAM
        ? `keep the model on ${other} with "upstream: ${other}" on this entry (${migrationCommand(config.file)} --model ${entry.name} converts its folders later)`
        : entry.upstream !== undefined && config.upstream === other
          ? `put the model on ${other}: remove "upstream: ${set}" from this entry (the stack is on ${other})`
          : `put the model on ${other} with "upstream: ${other}" on this entry${entry.upstream === undefined ? ` (or app-serving:upstream: ${other} for the whole stack)` : ''}`;
    return `${shown} holds ${found.map((f) => `${f}/`).join(', ')}, the folders of the ${other} set, but the model is on the ${set} set (${why}): either ${keep}, or add its ${set} folders beside them with: ${newModelCommand(entry, category, slug, set, modelsDir)}`;
  }
  return undefined;
}

/** The `app-serving new-model` command that writes a model's folders of `set` into its existing folder. */
function newModelCommand(entry: ModelEntry, category: Category, slug: string, set: Upstream, modelsDir: string): string {
  // A cluster variant (`<Name>-<target>`, slug `<slug>-<target>`) whose weights come from its
  // modelSource was made with --target: its values leave the model's location to the stack.
  const target = /-([a-z0-9]+)$/.exec(slug)?.[1];
  const variant = entry.modelSource !== undefined && target !== undefined && entry.name.endsWith(`-${target}`) && entry.name.length > target.length + 1;
  const name = variant ? entry.name.slice(0, -(target!.length + 1)) : entry.name;
  const base = variant ? slug.slice(0, -(target!.length + 1)) : slug;
  return `app-serving new-model ${name} --category ${category} --slug ${base}${variant ? ` --target ${target}` : ''} --upstream ${set} --models-dir ${displayPath(modelsDir)}`;
}
