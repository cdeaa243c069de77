import { lstatSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { displayPath, kserveSizing, mirrorTargetProblem, parseModelSize, slugProblem, type Category } from '@app-serving/core';
import { resolveModelsDir } from '../context.ts';
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
  readonly json?: boolean;
}

/**
 * `app-serving new-model <name>`: scaffolds `models/<category>/<name>[-<target>]/` from a
 * template whose values validate, refuses to overwrite anything, and prints the stack snippet.
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
  const problem = slugProblem(slug);
  if (problem) throw new UsageError(`--slug${target ? ' (with --target)' : ''}: ${problem}`);
  const template: TemplateName = options.template ?? (options.category === 'embedder' ? 'infinity' : 'vllm');
  if (template === 'infinity' && options.category !== 'embedder') throw new UsageError('--template infinity serves embedding models: use --category embedder');
  if (options.size !== undefined && template !== 'kserve-vllm') throw new UsageError('--size is for --template kserve-vllm');
  const billions = options.size === undefined ? undefined : parseModelSize(options.size);
  if (options.size !== undefined && billions === undefined) throw new UsageError(`--size ${options.size}: give the number of parameters in billions, e.g. 7B or 0.5B`);
  if (options.modelId !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)?$/.test(options.modelId)) {
    throw new UsageError(`--model-id ${options.modelId}: give a Hugging Face id such as Qwen/Qwen3-8B`);
  }

  const modelsDir = resolveModelsDir({ ...(options.modelsDir !== undefined && { modelsDir: options.modelsDir }) }, process.cwd());
  const folderName = target ? `${name}-${target}` : name;
  const folder = join(modelsDir, options.category, folderName);
  // lstat, not exists: a dangling symlink "does not exist" but is the user's, and must be left alone.
  if (lexists(folder)) throw new UsageError(`${displayPath(folder)} already exists; new-model never overwrites a model (pick another name or remove it)`);
  checkWritableDir('--models-dir', join(modelsDir, options.category));

  const modelId = options.modelId ?? name;
  const files = renderTemplate(template, {
    slug,
    category: options.category,
    modelId,
    mirror: options.mirrorTo,
    pvcWeights: target !== undefined && template !== 'kserve-vllm',
    ...(billions !== undefined && { sizing: kserveSizing(billions) }),
  });
  try {
    // The folder itself is created without `recursive`, so that it fails (EEXIST) rather than
    // writing into something that appeared meanwhile; only what this run created is removed.
    mkdirSync(join(modelsDir, options.category), { recursive: true });
    mkdirSync(folder);
  } catch (error) {
    throw new UsageError(`cannot create ${displayPath(folder)} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  try {
    for (const [dir, text] of Object.entries(files)) {
      mkdirSync(join(folder, dir), { recursive: true });
      writeFileSync(join(folder, dir, 'values.yaml'), text, { flag: 'wx' });
    }
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw new UsageError(`cannot write into ${displayPath(folder)} (${(error as NodeJS.ErrnoException).code ?? String(error)}); nothing was left behind`);
  }

  const snippet = stackSnippet(options.category, folderName, template, modelId, target === undefined ? undefined : weightsSource(options, template, modelId));
  const written = Object.keys(files).map((dir) => displayPath(join(folder, dir, 'values.yaml')));
  if (options.json) {
    output.json({ folder: displayPath(folder), slug, template, files: written, stackSnippet: snippet });
    return EXIT.ok;
  }
  output.out(`${output.color.green('created')} ${displayPath(folder)} (template ${template}, slug ${slug})`);
  for (const file of written) output.out(`  ${file}`);
  output.out('');
  output.out('Enable it in your stack file (Pulumi.<stack>.yaml), then run `app-serving validate`:');
  output.out('');
  output.out(snippet);
  return EXIT.ok;
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

function stackSnippet(category: Category, folder: string, template: TemplateName, modelId: string, modelSource?: string[]): string {
  const lines = ['  app-serving:models:', `    ${category}:`, `      - name: ${folder}`, '        enabled: true'];
  if (template === 'kserve-vllm') {
    lines.push('        platform: kserve', '        modelSource:', '          huggingFace:', `            repo: ${modelId}`, '          storageSize: 40Gi');
  } else if (template !== 'sim') {
    lines.push('        nodeSelector:', `          workload: ${template === 'vllm' ? 'gpu' : 'cpu'}`);
  }
  if (modelSource) lines.push(...modelSource);
  // Who may call it, said out loud (the default is open, which validate warns about).
  const llmdEmbedder = category === 'embedder' && template !== 'kserve-vllm';
  lines.push('        access:', `          open: true             # ${llmdEmbedder ? 'an llm-d embedder has no gateway to check credentials' : 'or apiKeys: [<key name>], or jwt'} (docs/access.md)`);
  return lines.join('\n');
}
