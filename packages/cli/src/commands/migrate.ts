import { chmodSync, lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  CURRENT_UPSTREAM,
  IssueList,
  UPSTREAMS,
  collectModels,
  didYouMean,
  displayPath,
  isStackError,
  migratedDifferences,
  parseStackFile,
  planDeployment,
  planStackMigration,
  readValuesFile,
  stackNameFromFile,
  type DeploymentPlan,
  type InlineValues,
  type Issue,
  type LlmdModelPlan,
  type LlmdRouterModelPlan,
  type StackMigration,
} from '@app-serving/core';
import { loadAndPlan, type StackOptions } from '../context.ts';
import { EXIT, UsageError } from '../errors.ts';
import { issueJson } from '../main.ts';
import type { Output } from '../output.ts';
import { checkWritableDir, checkWritableFile } from '../paths.ts';
import { printWarnings } from './validate.ts';

interface MigrateOptions extends StackOptions {
  readonly to?: string;
  readonly dryRun?: boolean;
  readonly model?: string[];
  readonly json?: boolean;
}

/** One file migrate writes (or, with --dry-run, would write). */
interface Written {
  readonly path: string;
  readonly text: string;
}

/**
 * `app-serving migrate --stack <file> --to 2026-08`: moves a stack to the current set of upstream
 * versions — `app-serving:upstream` in the stack file (edited in place), and for every llm-d model
 * that moves and has none yet, `server-<slug>/values.yaml` (and `router-<slug>/values.yaml`)
 * converted from its 2026-02 values by core. Never overwrites a file; the result is planned before
 * anything is written, and nothing is written when it would not validate.
 */
export default async function migrate({ options, output }: { options: MigrateOptions; output: Output }): Promise<number> {
  if (options.to === undefined) throw new UsageError(`give the set to move to: --to ${CURRENT_UPSTREAM}`);
  if (!(UPSTREAMS as readonly string[]).includes(options.to)) throw new UsageError(`--to ${options.to}: the sets are ${UPSTREAMS.join(' and ')}`);
  if (options.to !== CURRENT_UPSTREAM) {
    throw new UsageError(`--to ${options.to}: migrate moves a stack to the current set (${CURRENT_UPSTREAM}); to go back, restore the stack file from git (the old model folders are still there)`);
  }

  const { file, config, plan, modelsDir } = loadAndPlan(options);
  const shown = displayPath(file);
  const bytes = readFileSync(file);
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) throw new UsageError(`${shown} is UTF-16 text: migrate edits UTF-8 files; save it as UTF-8 and run it again`);
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  const text = bytes.toString('utf8').slice(bom ? 1 : 0);
  if (/\r(?!\n)/.test(text)) throw new UsageError(`${shown} has old Mac line endings (CR only): save it with LF or CR LF line endings and run it again`);

  const names = [...new Set(['generative', 'embedder'].flatMap((c) => config.models[c as 'generative'].filter((e) => e.enabled).map((e) => e.name)))];
  for (const name of options.model ?? []) {
    if (!names.includes(name)) throw new UsageError(`--model ${name}: no enabled model of ${shown} has that name${didYouMean(name, names)}`);
  }

  const models = modelsDir === null ? [] : collectModels(config, modelsDir, new IssueList());
  const existing = new Map(
    models.map((m) => {
      const folders = folderNames(join(modelsDir!, m.category, m.entry.name));
      return [`${m.category}/${m.entry.name}`, { server: folders.some((f) => f.startsWith('server-')), router: folders.some((f) => f.startsWith('router-')) }] as const;
    }),
  );
  const migration = planStackMigration({ config, text, plan, models, existing, only: options.model });

  // The result is planned before anything is written: the new files given inline, the edited stack.
  const after = planResult(migration, file, modelsDir, plan, output);
  const differences = migration.models.flatMap((m) => {
    const old = plan.models.find((p) => p.name === m.name) as LlmdModelPlan;
    const now = after.models.find((p) => p.name === m.name) as LlmdRouterModelPlan | undefined;
    return now ? migratedDifferences(old, now).map((d) => ({ model: m.name, difference: d })) : [];
  });

  const files: Written[] = migration.models.flatMap((m) => m.files.map((f) => ({ path: join(modelsDir!, m.category, m.name, f.folder, 'values.yaml'), text: f.text })));
  if (!options.dryRun) write(file, `${bom ? '\ufeff' : ''}${migration.stackText}`, files);

  const warnings = migration.models.flatMap((m) => m.warnings);
  if (options.json) {
    output.json({
      stack: shown,
      to: CURRENT_UPSTREAM,
      dryRun: options.dryRun === true,
      stackChanges: migration.changes,
      rewritten: migration.rewritten,
      files: files.map((f) => ({ path: displayPath(f.path), ...(options.dryRun && { text: f.text }) })),
      models: [
        ...migration.models.map((m) => ({ name: m.name, category: m.category, platform: 'llm-d', files: m.files.map((f) => f.folder), notes: m.notes })),
        ...plan.models.filter((m) => m.platform === 'kserve' && m.upstream !== CURRENT_UPSTREAM && moves(m.name, options)).map((m) => ({ name: m.name, category: m.category, platform: 'kserve', files: [], notes: [] })),
      ],
      kept: migration.kept,
      notes: migration.notes,
      differences,
      warnings: warnings.map(issueJson),
      validateWarnings: after.warnings.map(issueJson),
    });
    return EXIT.ok;
  }
  report(migration, { shown, files, differences, after, dryRun: options.dryRun === true, output, warnings });
  return EXIT.ok;
}

/** Whether a model moves with this run (all of them, or those named by --model). */
function moves(name: string, options: MigrateOptions): boolean {
  return options.model === undefined || options.model.includes(name);
}

/** Plans the migrated stack without writing: the new values inline. Throws the StackError of a result that would not validate. */
function planResult(migration: StackMigration, file: string, modelsDir: string | null, before: DeploymentPlan, output: Output): DeploymentPlan {
  const inline = new Map<string, InlineValues>();
  for (const m of migration.models) {
    const server = m.files.find((f) => f.folder.startsWith('server-'))!.values;
    let router = m.files.find((f) => f.folder.startsWith('router-'))?.values;
    const dir = join(modelsDir!, m.category, m.name);
    const own = folderNames(dir).find((f) => f.startsWith('router-'));
    if (router === undefined && own !== undefined) router = readValuesFile(join(dir, own, 'values.yaml'), new IssueList())?.values;
    inline.set(`${m.category}/${m.name}`, { slug: m.slug, server, ...(router !== undefined && { router }), label: `${displayPath(dir)} (migrated)` });
  }
  try {
    const config = parseStackFile(migration.stackText, before.file, stackNameFromFile(file), { checkRules: false });
    return planDeployment(config, modelsDir ?? dirname(file), { inline });
  } catch (error) {
    if (isStackError(error)) {
      // Said first, then main prints every problem (exit 1).
      output.err(`${output.color.red('error:')} the migrated stack would not validate, so nothing was written; its problems:`);
    }
    throw error;
  }
}

/**
 * Writes the model files, then the stack file: never over an existing file (a values folder that
 * appeared meanwhile fails the run), and what this run created is removed when a write fails.
 */
function write(stackFile: string, stackText: string, files: readonly Written[]): void {
  checkWritableFile('--stack', stackFile);
  for (const f of files) checkWritableDir('--models-dir', dirname(dirname(f.path)));
  const created: string[] = [];
  try {
    for (const f of files) {
      mkdirSync(dirname(f.path));
      created.push(dirname(f.path));
      writeFileSync(f.path, f.text, { flag: 'wx' });
    }
    writeStack(stackFile, stackText);
  } catch (error) {
    for (const dir of created.reverse()) rmSync(dir, { recursive: true, force: true });
    const code = (error as NodeJS.ErrnoException).code;
    const path = (error as NodeJS.ErrnoException).path;
    throw new UsageError(`cannot write ${path ? displayPath(path) : 'the migration'} (${code ?? String(error)}); nothing was left behind${code === 'EEXIST' ? ' — migrate never overwrites a file' : ''}`);
  }
}

/**
 * The stack file, replaced in one step (a temporary file renamed over it) with the mode it had (a
 * stack file kept private stays so), unless it is a link: then written through it.
 */
function writeStack(file: string, text: string): void {
  if (lstatSync(file).isSymbolicLink()) {
    writeFileSync(file, text);
    return;
  }
  const mode = statSync(file).mode & 0o7777;
  const temporary = join(dirname(file), `.${basename(file)}.app-serving-migrate`);
  writeFileSync(temporary, text, { flag: 'wx', mode });
  try {
    chmodSync(temporary, mode);
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

function report(
  migration: StackMigration,
  run: { shown: string; files: readonly Written[]; differences: readonly { model: string; difference: string }[]; after: DeploymentPlan; dryRun: boolean; output: Output; warnings: readonly Issue[] },
): void {
  const { output, dryRun } = run;
  const { color } = output;
  const verb = dryRun ? 'would write' : 'wrote';
  output.out(color.bold(`app-serving migrate: ${run.shown} → ${CURRENT_UPSTREAM}${dryRun ? ' (dry run: nothing is written)' : ''}`));
  output.out('');
  output.out(`${run.shown}${migration.rewritten ? ' (written out by the YAML library: a flow mapping or a key sharing its line could not be edited in place; comments are kept, check the layout)' : ''}:`);
  for (const change of migration.changes) output.out(`  ${color.green('~')} ${change}`);
  for (const model of migration.models) {
    output.out('');
    const now = run.after.models.find((m) => m.name === model.name);
    const serves =
      now?.platform === 'llm-d'
        ? `: serves ${now.modelServer.servedModelName} on port ${now.modelServer.servicePort}, ${now.modelServer.decodeReplicas} ${now.modelServer.decodeReplicas === 1 ? 'replica' : 'replicas'}${run.differences.some((d) => d.model === model.name) ? '' : ', as before'}`
        : '';
    output.out(`${color.bold(model.name)} (${model.category}, llm-d)${serves}`);
    for (const f of model.files) {
      const path = run.files.find((w) => w.path.endsWith(`/${f.folder}/values.yaml`) && w.path.includes(`/${model.name}/`))!.path;
      output.out(`  ${color.green('+')} ${verb} ${displayPath(path)}`);
      if (dryRun) for (const line of f.text.trimEnd().split('\n')) output.out(`      ${line}`);
    }
    for (const note of model.notes) output.out(`  note: ${note}`);
  }
  for (const kept of migration.kept) output.out(`${color.bold(kept.name)} (${kept.category}): ${kept.reason}`);
  if (migration.notes.length > 0) output.out('');
  for (const note of migration.notes) output.out(`note: ${note}`);
  printWarnings(run.warnings, output);
  // What validate will say of the migrated stack (an image not yet in Harbor, a key with no effect).
  printWarnings(run.after.warnings, output);
  for (const d of run.differences) output.err(`${color.yellow('warning:')} ${d.model}: served differently after the move — ${d.difference}`);
  output.out('');
  output.out(
    `Next (docs/upgrading.md): review with \`app-serving diff --base HEAD --stack ${run.shown}\` before you commit (\`--base main\` once it is committed on a branch), mirror the new images first (\`app-serving images\`), check the cluster (\`app-serving preflight\`), then \`pulumi up\` and \`app-serving verify\`.`,
  );
}

function folderNames(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory() || d.isSymbolicLink())
      .map((d) => d.name);
  } catch {
    return [];
  }
}
