import { lstatSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import {
  CONFIG_NAMESPACE,
  CURRENT_UPSTREAM,
  DEFAULT_UPSTREAM,
  LLMD_VALUES_FOLDERS,
  MAX_STACK_FILE_BYTES,
  UPSTREAMS,
  displayPath,
  kserveSizing,
  mirrorTargetProblem,
  parseAdapterOption,
  parseModelSize,
  readTextFile,
  slugProblemOn,
  VALUES_FOLDERS,
  type Category,
  type ModelAdapter,
  type Upstream,
} from '@app-serving/core';
import { resolveModelsDir, resolveStackFile } from '../context.ts';
import { EXIT, UsageError } from '../errors.ts';
import { checkWritableDir } from '../paths.ts';
import type { Output } from '../output.ts';
import { renderTemplate, type TemplateName } from '../templates/templates.ts';

interface NewModelOptions {
  readonly category: Category;
  readonly slug: string;
  readonly template?: TemplateName;
  readonly target?: string;
  readonly modelId?: string;
  readonly size?: string;
  readonly mirrorTo?: string;
  readonly modelsDir?: string;
  readonly upstream?: string;
  readonly stack?: string;
  readonly adapter?: readonly string[];
  readonly json?: boolean;
}

/**
 * `app-serving new-model <name>`: scaffolds `models/<category>/<name>[-<target>]/` from a
 * template whose values validate, refuses to overwrite anything, and prints the stack snippet.
 * The folders are those of a set of upstream versions: `--upstream`, else the set of `--stack`,
 * else the current set (2026-08: `server-<slug>` and `router-<slug>`).
 */
export default async function newModel({ options, operands, output }: { options: NewModelOptions; operands: string[]; output: Output }): Promise<number> {
  const [name] = operands;
  if (!name || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new UsageError(`${JSON.stringify(name ?? '')} is not a model folder name: use letters, digits, ".", "_" and "-"`);
  if (name.length > MAX_MODEL_NAME_LENGTH) throw new UsageError(`the model folder name is ${name.length} characters long: use at most ${MAX_MODEL_NAME_LENGTH}`);
  const mirrorProblem = options.mirrorTo === undefined ? null : mirrorTargetProblem(options.mirrorTo);
  if (mirrorProblem) throw new UsageError(`--mirror-to ${JSON.stringify(options.mirrorTo)}: ${mirrorProblem}`);
  const target = options.target;
  if (target !== undefined && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(target)) throw new UsageError(`--target ${target}: use lower-case letters, digits and "-"`);
  const slug = target ? `${options.slug}-${target}` : options.slug;
  const template: TemplateName = options.template ?? (options.category === 'embedder' ? 'infinity' : 'vllm');
  if (template === 'infinity' && options.category !== 'embedder') throw new UsageError('--template infinity serves embedding models: use --category embedder');
  if (options.size !== undefined && template !== 'kserve-vllm') throw new UsageError('--size is for --template kserve-vllm');
  const billions = options.size === undefined ? undefined : parseModelSize(options.size);
  if (options.size !== undefined && billions === undefined) throw new UsageError(`--size ${options.size}: give the number of parameters in billions, e.g. 7B or 0.5B`);
  if (options.modelId !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)?$/.test(options.modelId)) {
    throw new UsageError(`--model-id ${options.modelId}: give a Hugging Face id such as Qwen/Qwen3-8B`);
  }

  const adapters = (options.adapter ?? []).map((text) => {
    const parsed = parseAdapterOption(text);
    if ('problem' in parsed) throw new UsageError(`--adapter ${JSON.stringify(text)}: ${parsed.problem}`);
    return parsed.adapter;
  });
  if (adapters.length > 0 && (options.category === 'embedder' || (template !== 'vllm' && template !== 'kserve-vllm'))) {
    throw new UsageError('--adapter is for generative models served by vLLM (--template vllm or kserve-vllm): LoRA adapters are vLLM\'s (docs/configuration.md#adapters)');
  }
  if (options.upstream !== undefined && !(UPSTREAMS as readonly string[]).includes(options.upstream)) throw new UsageError(`--upstream ${options.upstream}: the sets are ${UPSTREAMS.join(' and ')}`);
  const stackFile = options.stack === undefined ? undefined : resolveStackFile({ stack: options.stack });
  const stackSet = stackFile === undefined ? undefined : setOfStack(stackFile);
  const upstream = (options.upstream as Upstream | undefined) ?? stackSet ?? CURRENT_UPSTREAM;
  // The limit is explained with the names of the set the folders are for (hostile round 3, m18).
  const problem = slugProblemOn(slug, template === 'kserve-vllm' ? DEFAULT_UPSTREAM : upstream);
  if (problem) throw new UsageError(`--slug${target ? ' (with --target)' : ''}: ${problem}`);

  const modelsDir = resolveModelsDir({ ...(options.modelsDir !== undefined && { modelsDir: options.modelsDir }) }, stackFile === undefined ? process.cwd() : dirname(stackFile));
  const folderName = target ? `${name}-${target}` : name;
  const folder = join(modelsDir, options.category, folderName);
  // lstat, not exists: a dangling symlink "does not exist" but is the user's, and must be left alone.
  // An existing model folder is refused, unless it holds only the other set's llm-d folders: then
  // this set's are added beside them (what validate's set-mismatch problem asks for).
  const adding = lexists(folder) ? otherSetFolder(folder, slug, upstream, template, target) : false;
  if (!adding) checkWritableDir('--models-dir', join(modelsDir, options.category));

  const modelId = options.modelId ?? name;
  const files = renderTemplate(template, {
    slug,
    category: options.category,
    modelId,
    mirror: options.mirrorTo,
    pvcWeights: target !== undefined && template !== 'kserve-vllm',
    upstream,
    ...(billions !== undefined && { sizing: kserveSizing(billions) }),
  });
  if (!adding) {
    try {
      // The folder itself is created without `recursive`, so that it fails (EEXIST) rather than
      // writing into something that appeared meanwhile; only what this run created is removed.
      mkdirSync(join(modelsDir, options.category), { recursive: true });
      mkdirSync(folder);
    } catch (error) {
      throw new UsageError(`cannot create ${displayPath(folder)} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
  }
  const created: string[] = [];
  try {
    for (const [dir, text] of Object.entries(files)) {
      // Each values folder is created without `recursive` too: one that appeared meanwhile is never written into.
      mkdirSync(join(folder, dir));
      created.push(join(folder, dir));
      writeFileSync(join(folder, dir, 'values.yaml'), text, { flag: 'wx' });
    }
  } catch (error) {
    for (const dir of adding ? created : [folder]) rmSync(dir, { recursive: true, force: true });
    throw new UsageError(`cannot write into ${displayPath(folder)} (${(error as NodeJS.ErrnoException).code ?? String(error)}); nothing was left behind`);
  }

  // The model's own upstream key, where the stack may be on another set (the folders work on theirs only).
  const ownSet = template !== 'kserve-vllm' && stackSet !== upstream ? upstream : undefined;
  const snippet = stackSnippet(options.category, folderName, template, modelId, target === undefined ? undefined : weightsSource(options, template, modelId), ownSet, adapters, upstream);
  const written = Object.keys(files).map((dir) => displayPath(join(folder, dir, 'values.yaml')));
  if (options.json) {
    output.json({ folder: displayPath(folder), slug, template, upstream, added: adding, files: written, stackSnippet: snippet });
    return EXIT.ok;
  }
  output.out(`${output.color.green(adding ? 'added' : 'created')} ${adding ? `the ${upstream} folders to ` : ''}${displayPath(folder)} (template ${template}, slug ${slug}, the ${upstream} set)`);
  for (const file of written) output.out(`  ${file}`);
  output.out('');
  output.out('Enable it in your stack file (Pulumi.<stack>.yaml), then run `app-serving validate`:');
  output.out('');
  output.out(snippet);
  return EXIT.ok;
}

/**
 * For a model folder that exists already: true when new-model may add the folders of `upstream`
 * to it — a real folder (not a link) holding llm-d values folders of another set only, all with
 * `slug`; otherwise the usage error that says why not (new-model never overwrites a model).
 */
function otherSetFolder(folder: string, slug: string, upstream: Upstream, template: TemplateName, target: string | undefined): true {
  const shown = displayPath(folder);
  const refuse = (why = '') => new UsageError(`${shown} already exists${why}; new-model never overwrites a model (pick another name or remove it)`);
  let names: string[];
  try {
    if (!lstatSync(folder).isDirectory()) throw refuse();
    names = readdirSync(folder);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw refuse();
  }
  const prefixes = (set: Upstream) => LLMD_VALUES_FOLDERS[set].wanted.map((kind) => `${VALUES_FOLDERS[kind]}-`);
  const valuesFolders = (list: readonly string[]) => names.filter((n) => list.some((p) => n.startsWith(p) && n.length > p.length)).sort();
  const own = valuesFolders([...prefixes(upstream), `${VALUES_FOLDERS.kserve}-`]);
  const others = valuesFolders(UPSTREAMS.filter((u) => u !== upstream).flatMap(prefixes));
  if (template === 'kserve-vllm' || own.length > 0 || others.length === 0) throw refuse(own.length > 0 ? ` (it holds ${own.map((f) => `${f}/`).join(', ')})` : '');
  const slugs = new Set(others.map((f) => f.slice(f.indexOf('-') + 1)));
  if (slugs.size !== 1 || !slugs.has(slug)) {
    const theirs = [...slugs][0]!;
    const wanted = target !== undefined && theirs.endsWith(`-${target}`) ? `${theirs.slice(0, -(target.length + 1))} (with --target ${target})` : theirs;
    throw new UsageError(`${shown} holds ${others.map((f) => `${f}/`).join(', ')}: the values folders of one model share one slug; give --slug ${wanted}`);
  }
  return true;
}

/** Longest model folder name: the folder and its files must stay well under the 255-byte file name limit. */
export const MAX_MODEL_NAME_LENGTH = 100;

function lexists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The `modelSource` of a cluster variant's snippet: an artifact in Harbor holding a hub cache (or a plain folder). */
function weightsSource(options: NewModelOptions, template: TemplateName, modelId: string): string[] | undefined {
  if (template === 'kserve-vllm') return undefined;
  const registry = options.mirrorTo?.split('/')[0] ?? 'harbor.example.com';
  const hubCache = modelId.includes('/');
  const size = template === 'sim' ? '1Gi' : template === 'infinity' ? '4Gi' : '40Gi';
  return [
    '        modelSource:',
    `          harborRef: ${registry}/ai-models/${options.slug}:1.0   # push the weights there first (docs/model-storage.md)`,
    ...(hubCache ? [`          modelUri: hub/${modelId}`] : ['          layout: directory', `          modelUri: models/${modelId}`]),
    `          storageSize: ${size}`,
  ];
}

/**
 * The set a stack deploys its models with (its `upstream`, else the default), read from a stack
 * that may have no model yet (the one being made is its first): only that key is looked at.
 */
function setOfStack(file: string): Upstream {
  const shown = displayPath(file);
  const read = readTextFile(file, MAX_STACK_FILE_BYTES);
  if ('problem' in read) throw new UsageError(`--stack ${shown}: the stack file ${read.problem}`);
  let config: unknown;
  try {
    config = (parse(read.text) as { config?: unknown } | null)?.config;
  } catch {
    throw new UsageError(`--stack ${shown}: not valid YAML (app-serving validate --stack ${shown} says where)`);
  }
  const keys = typeof config === 'object' && config !== null ? (config as Record<string, unknown>) : {};
  const set = keys[`${CONFIG_NAMESPACE}:upstream`] ?? keys.upstream;
  if (set === undefined) return DEFAULT_UPSTREAM;
  if (!(UPSTREAMS as readonly unknown[]).includes(set)) throw new UsageError(`--stack ${shown}: upstream is ${JSON.stringify(set)}; the sets are ${UPSTREAMS.join(' and ')}`);
  return set as Upstream;
}

function stackSnippet(category: Category, folder: string, template: TemplateName, modelId: string, modelSource?: string[], upstream?: Upstream, adapters: readonly ModelAdapter[] = [], set: Upstream = CURRENT_UPSTREAM): string {
  const lines = ['  app-serving:models:', `    ${category}:`, `      - name: ${folder}`, '        enabled: true'];
  if (upstream !== undefined) {
    lines.push(`        # the set its folders are for; drop it when the stack says app-serving:upstream: ${upstream}${upstream === DEFAULT_UPSTREAM ? ' (or nothing)' : ''}`, `        upstream: ${upstream}`);
  }
  if (template === 'kserve-vllm') {
    lines.push('        platform: kserve', '        modelSource:', '          huggingFace:', `            repo: ${modelId}`, '          storageSize: 40Gi');
  } else if (template !== 'sim') {
    lines.push('        nodeSelector:', `          workload: ${template === 'vllm' ? 'gpu' : 'cpu'}`);
  }
  if (modelSource) lines.push(...modelSource);
  if (adapters.length > 0) {
    lines.push('        adapters:                # LoRA adapters, each answering under its own name (docs/configuration.md#adapters)');
    for (const a of adapters) {
      lines.push(`          - name: ${a.name}`);
      if (a.harborRef !== undefined) lines.push(`            harborRef: ${a.harborRef}   # pulled into adapters/${a.name}/ on the volume (needs modelSource.harborRef)`);
      else if (a.path !== undefined) lines.push(`            path: ${a.path}   # already on the model's volume (needs a modelSource)`);
      else lines.push('            huggingFace:', `              repo: ${a.huggingFace!.repo}`, ...(a.huggingFace!.revision !== undefined ? [`              revision: ${a.huggingFace!.revision}`] : []));
    }
  }
  // The stack's endpoint (docs/endpoint.md): serves the model by its name when the stack has one.
  lines.push("        # endpoint: false      # keep it off the stack's endpoint (app-serving:endpoint serves every model by name; docs/endpoint.md)");
  if (category === 'generative' && template !== 'kserve-vllm' && set !== '2026-02') {
    lines.push("        # gateway: false       # no Gateway of its own: the llm-d Router's own proxy, reached through the stack's endpoint");
  }
  // Who may call it, said out loud (the default is open, which validate warns about).
  const llmdEmbedder = category === 'embedder' && template !== 'kserve-vllm';
  lines.push('        access:', `          open: true             # ${llmdEmbedder ? 'an llm-d embedder has no gateway to check credentials' : 'or apiKeys: [<key name>], or jwt'} (docs/access.md)`);
  return lines.join('\n');
}
