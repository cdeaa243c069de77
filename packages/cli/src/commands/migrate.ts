import { lstatSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  CURRENT_UPSTREAM,
  IssueList,
  MAX_STACK_FILE_BYTES,
  StackError,
  UPSTREAMS,
  collectModels,
  didYouMean,
  displayPath,
  isStackError,
  migratedDifferences,
  parseStackFile,
  planDeployment,
  planStackMigration,
  readTextFile,
  readValuesFile,
  stackNameFromFile,
  summarizeNames,
  type DeploymentPlan,
  type InlineValues,
  type Issue,
  type LlmdModelPlan,
  type LlmdRouterModelPlan,
  type StackMigration,
  type Values,
} from '@app-serving/core';
import { loadAndPlan, resolveStackFile, type StackOptions } from '../context.ts';
import { EXIT, UsageError } from '../errors.ts';
import { issueJson } from '../main.ts';
import type { Output } from '../output.ts';
import { checkWritableDir, checkWritableFile } from '../paths.ts';
import { STAGE_PREFIX, TransactionError, commitTransaction, recoverTransaction, strayStages, type NewFolder, type Recovery, type Staged } from '../transaction.ts';
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
 * anything is written, and nothing is written when it would not validate. The stack file is read
 * once; what it writes goes in as one transaction (../transaction.ts): a stop at any instant leaves
 * the old stack and folders or the new ones, and the next run finishes or undoes a stopped one.
 */
export default async function migrate({ options, output }: { options: MigrateOptions; output: Output }): Promise<number> {
  if (options.to === undefined) throw new UsageError(`give the set to move to: --to ${CURRENT_UPSTREAM}`);
  if (!(UPSTREAMS as readonly string[]).includes(options.to)) throw new UsageError(`--to ${options.to}: the sets are ${UPSTREAMS.join(' and ')}`);
  if (options.to !== CURRENT_UPSTREAM) {
    throw new UsageError(`--to ${options.to}: migrate moves a stack to the current set (${CURRENT_UPSTREAM}); to go back, restore the stack file from git (the old model folders are still there)`);
  }

  const file = resolveStackFile(options);
  const shown = displayPath(file);
  // The file replaced: a link's target (the link stays), in the target's folder.
  const target = realpathSync(file);
  const link = lstatSync(file).isSymbolicLink();

  // What a stopped run left, before anything is read: finished, or undone.
  const recovered = recover(target, options.dryRun === true, output);
  if (options.dryRun && recovered.some((r) => r.kind === 'completed')) {
    output.out(`${shown}: an interrupted app-serving migrate put part of its result in place; run migrate without --dry-run to finish it (a dry run writes nothing)`);
    return EXIT.problems;
  }

  // Read once: planned from, and written back from, these bytes.
  const { bytes, text, bom } = readStack(file, shown);
  if (!options.dryRun) checkReplaceable(file, target, shown);
  const { config, plan, modelsDir } = loadAndPlan(options, { file, text });

  const names = [...new Set(['generative', 'embedder'].flatMap((c) => config.models[c as 'generative'].filter((e) => e.enabled).map((e) => e.name)))];
  for (const name of options.model ?? []) {
    if (!names.includes(name)) throw new UsageError(`--model ${name}: no enabled model of ${shown} has that name${didYouMean(name, names)}`);
  }

  const models = modelsDir === null ? [] : collectModels(config, modelsDir, new IssueList());
  const existing = new Map(models.map((m) => [`${m.category}/${m.entry.name}`, existingFolders(join(modelsDir!, m.category, m.entry.name))] as const));
  let migration: StackMigration;
  try {
    migration = planStackMigration({ config, text, plan, models, existing, only: options.model });
  } catch (error) {
    // The stack is on the set: because the interrupted run this one finished put it there.
    if (isStackError(error) && error.issues[0]?.code === 'migrate.nothing-to-do' && recovered.some((r) => r.kind !== 'rolled-back')) {
      if (options.json) output.json({ stack: shown, to: CURRENT_UPSTREAM, dryRun: false, recovered: recovered.map(recoveryJson), files: [] });
      else output.out(`${shown}: on ${CURRENT_UPSTREAM} ${recovered.some((r) => r.kind === 'completed') ? '(the interrupted migrate is finished)' : '(what an interrupted migrate left is removed: nothing else to do)'}`);
      return EXIT.ok;
    }
    throw error;
  }
  for (const m of migration.models) {
    for (const stray of strayStages(join(modelsDir!, m.category, m.name), target)) {
      output.err(`${output.color.yellow('warning:')} ${displayPath(stray)}: a stage folder of an app-serving migrate that is not this stack's (another stack's run, or one whose ${STAGE_PREFIX}* folder beside its stack file was removed); remove it when no migrate runs`);
    }
  }

  // The result is planned before anything is written: the new files given inline, the edited stack.
  const after = planResult(migration, file, modelsDir, plan, output);
  const differences = migration.models.flatMap((m) => {
    const old = plan.models.find((p) => p.name === m.name) as LlmdModelPlan;
    const now = after.models.find((p) => p.name === m.name) as LlmdRouterModelPlan | undefined;
    return now ? migratedDifferences(old, now).map((d) => ({ model: m.name, difference: d })) : [];
  });

  const files: Written[] = migration.models.flatMap((m) => m.files.map((f) => ({ path: join(modelsDir!, m.category, m.name, f.folder, 'values.yaml'), text: f.text })));
  const newBytes = Buffer.concat([bom ? BOM : Buffer.alloc(0), Buffer.from(migration.stackText, 'utf8')]);
  const moving = plan.models.filter((m) => m.upstream !== CURRENT_UPSTREAM && moves(m.name, options)).map((m) => m.name);
  const commitWarnings = options.dryRun ? [] : write({ file, target, before: bytes, after: newBytes, migration, modelsDir, moving });

  const warnings = migration.models.flatMap((m) => m.warnings);
  if (options.json) {
    output.json({
      stack: shown,
      to: CURRENT_UPSTREAM,
      dryRun: options.dryRun === true,
      ...(link && { replaced: displayPath(target) }),
      ...(recovered.length > 0 && { recovered: recovered.map(recoveryJson) }),
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
      ...(commitWarnings.length > 0 && { writeWarnings: commitWarnings }),
    });
    return EXIT.ok;
  }
  report(migration, { shown, target: link ? displayPath(target) : undefined, files, differences, after, dryRun: options.dryRun === true, output, warnings });
  for (const w of commitWarnings) output.err(`${output.color.yellow('warning:')} ${w}`);
  return EXIT.ok;
}

/** Whether a model moves with this run (all of them, or those named by --model). */
function moves(name: string, options: MigrateOptions): boolean {
  return options.model === undefined || options.model.includes(name);
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The stack file's bytes and text, read once through the tools' bounded reader. migrate writes
 * the file back with every line it does not change byte for byte, so it refuses what it could not
 * write back as it was: UTF-16 (it would become UTF-8), old Mac line endings (read as line feeds),
 * bytes that are not UTF-8 (refused by the reader, at their line).
 */
function readStack(file: string, shown: string): { bytes: Buffer; text: string; bom: boolean } {
  let read: ReturnType<typeof readTextFile>;
  try {
    read = readTextFile(file, MAX_STACK_FILE_BYTES);
  } catch (error) {
    throw new UsageError(`cannot read ${shown} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  if ('problem' in read) throw new StackError([{ code: 'file.too-large', path: '', message: `the stack file ${read.problem}`, file: shown }]);
  const { bytes, text } = read;
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) throw new UsageError(`${shown} is UTF-16 text: migrate edits UTF-8 files; save it as UTF-8 and run it again`);
  const cr = bytes.findIndex((b, i) => b === 0x0d && bytes[i + 1] !== 0x0a);
  if (cr >= 0) throw new UsageError(`${shown}:${lineOf(bytes, cr)} has an old Mac line ending (CR only): save it with LF or CR LF line endings and run it again`);
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  // The text is the bytes exactly (less the byte order mark), or migrate could not keep them.
  if (!Buffer.concat([bom ? BOM : Buffer.alloc(0), Buffer.from(text, 'utf8')]).equals(bytes)) throw new UsageError(`${shown}: migrate cannot keep its bytes as they are: save it as UTF-8 and run it again`);
  return { bytes, text, bom };
}

function lineOf(bytes: Buffer, offset: number): number {
  return bytes.subarray(0, offset).reduce((n, b) => (b === 0x0a ? n + 1 : n), 1);
}

/**
 * Before anything is written: the stack file can be replaced as it is. migrate replaces it by a
 * rename (never cut, whatever stops the run), which makes a new file: another hard link to the old
 * one would keep the old text, and only root can give the new file another user's ownership.
 */
function checkReplaceable(file: string, target: string, shown: string): void {
  checkWritableFile('--stack', target);
  const stat = statSync(target);
  if (stat.nlink > 1) {
    throw new UsageError(
      `${shown} has ${stat.nlink} hard links: migrate replaces the file (the new text renamed over it, so that a stop never leaves it cut), and the other names would keep the old text; remove the other links (or make them symbolic links) and run it again`,
    );
  }
  const uid = process.getuid?.();
  if (uid === undefined || uid === 0) return;
  if (stat.uid !== uid) throw new UsageError(`${shown} belongs to user ${stat.uid}: migrate replaces the file, and the new one would be yours; run it as that user (or as root, which keeps the owner)`);
  if (stat.gid !== process.getgid?.() && !(process.getgroups?.() ?? []).includes(stat.gid)) {
    throw new UsageError(`${shown} belongs to group ${stat.gid}, which you are not in: migrate replaces the file, and the new one would have your group; run it as a member of that group (or as root)`);
  }
}

/** The values folders of the current set a model folder has, with its server values' text; an empty one (debris of an earlier version) is refused. */
function existingFolders(dir: string): { server: boolean; router: boolean; serverText?: string } {
  const folders = folderNames(dir);
  const server = folders.find((f) => f.startsWith('server-'));
  const router = folders.find((f) => f.startsWith('router-'));
  for (const folder of [server, router]) {
    if (folder === undefined) continue;
    const values = join(dir, folder, 'values.yaml');
    if (!isFile(values)) {
      throw new StackError([
        {
          code: 'model.values-missing',
          path: '',
          message: `${displayPath(join(dir, folder))} has no values.yaml${folderNames(join(dir, folder)).length === 0 && readdirOrEmpty(join(dir, folder)).length === 0 ? ' (an empty folder: an interrupted migrate of an earlier version left such folders)' : ''}: remove it, or write its values, and run migrate again`,
          file: displayPath(join(dir, folder)),
        },
      ]);
    }
  }
  let serverText: string | undefined;
  if (server !== undefined) {
    try {
      const read = readTextFile(join(dir, server, 'values.yaml'), MAX_STACK_FILE_BYTES);
      if ('text' in read) serverText = read.text;
    } catch {
      serverText = undefined;
    }
  }
  return { server: server !== undefined, router: router !== undefined, ...(serverText !== undefined && { serverText }) };
}

/** The values of each migrated model's new folders: what it writes (`written`), else what its folder has. */
function inlineValues(migration: StackMigration, modelsDir: string | null, written: (m: StackMigration['models'][number], folder: string) => Values | undefined): Map<string, InlineValues> {
  const inline = new Map<string, InlineValues>();
  for (const m of migration.models) {
    const dir = join(modelsDir!, m.category, m.name);
    const own = (prefix: string) => {
      const folder = m.files.find((f) => f.folder.startsWith(prefix))?.folder;
      if (folder !== undefined) return written(m, folder);
      const there = folderNames(dir).find((f) => f.startsWith(prefix));
      return there === undefined ? undefined : readValuesFile(join(dir, there, 'values.yaml'), new IssueList())?.values;
    };
    const server = own('server-');
    const router = own('router-');
    inline.set(`${m.category}/${m.name}`, { slug: m.slug, ...(server !== undefined && { server }), ...(router !== undefined && { router }), label: `${displayPath(dir)} (migrated)` });
  }
  return inline;
}

/** Plans the migrated stack without writing: the new values inline. Throws the StackError of a result that would not validate. */
function planResult(migration: StackMigration, file: string, modelsDir: string | null, before: DeploymentPlan, output: Output): DeploymentPlan {
  const inline = inlineValues(migration, modelsDir, (m, folder) => m.files.find((f) => f.folder === folder)!.values);
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
 * Writes the migration as one transaction: the new model folders and the stack file's new bytes
 * (in place of the link's target when it is a link, with its mode, owner and group). Checked
 * before its commit point on the staged files as read back from disk: every values file parses,
 * and the staged stack, with them, plans every model that moves (`moving`) on the current set.
 * Returns the warnings of a tidy-up that failed once everything was in place.
 */
function write(run: { file: string; target: string; before: Buffer; after: Buffer; migration: StackMigration; modelsDir: string | null; moving: readonly string[] }): string[] {
  const { file, target, migration, modelsDir } = run;
  const folders: NewFolder[] = migration.models.flatMap((m) => {
    const dir = join(modelsDir!, m.category, m.name);
    checkWritableDir('--models-dir', dir);
    const parent = realpathSync(dir);
    const stat = statSync(parent);
    // A root run in another user's model folder: the new folders are that user's, as the folder is.
    const owner = process.getuid?.() === 0 && (stat.uid !== 0 || stat.gid !== process.getgid?.()) ? { uid: stat.uid, gid: stat.gid } : undefined;
    return m.files.map((f) => ({ parent, name: f.folder, files: [{ name: 'values.yaml', bytes: Buffer.from(f.text, 'utf8') }], owner }));
  });
  const stat = statSync(target);
  const check = (staged: Staged) => {
    const list = new IssueList();
    const read = (m: StackMigration['models'][number], folder: string) => {
      const path = staged.folders.get(join(realpathSync(join(modelsDir!, m.category, m.name)), folder))!;
      return readValuesFile(join(path, 'values.yaml'), list)?.values;
    };
    const inline = inlineValues(migration, modelsDir, read);
    if (list.size > 0) throw new StackError(list.items);
    const stack = readTextFile(staged.file, MAX_STACK_FILE_BYTES);
    if ('problem' in stack) throw new TransactionError(`the staged stack file ${stack.problem}: nothing was written`, 'old', 'EIO');
    const config = parseStackFile(stack.text, displayPath(file), stackNameFromFile(file), { checkRules: false });
    const planned = planDeployment(config, modelsDir ?? dirname(file), { inline });
    const off = planned.models.filter((m) => run.moving.includes(m.name) && m.upstream !== CURRENT_UPSTREAM);
    if (off.length > 0) throw new TransactionError(`the staged stack plans ${off.map((m) => m.name).join(', ')} on ${off[0]!.upstream}, not ${CURRENT_UPSTREAM}: nothing was written`, 'old', 'EIO');
  };
  try {
    return commitTransaction({ file: { path: target, before: run.before, after: run.after, mode: stat.mode & 0o7777, uid: stat.uid, gid: stat.gid }, folders, check }).warnings;
  } catch (error) {
    if (error instanceof TransactionError) throw new UsageError(`cannot write the migration: ${error.message}`);
    throw error;
  }
}

/** Finishes or undoes what an interrupted run left (said on stderr); leftovers of an earlier version's temporary file removed. */
function recover(target: string, dryRun: boolean, output: Output): Recovery[] {
  let recovered: Recovery[];
  try {
    recovered = recoverTransaction(target, { dryRun });
  } catch (error) {
    if (error instanceof TransactionError) throw new UsageError(error.message);
    throw error;
  }
  const note = (text: string) => output.err(`${output.color.yellow('note:')} ${text}`);
  const folders = (paths: readonly string[]) => summarizeNames(paths.map((f) => displayPath(f)));
  for (const r of recovered) {
    const run = r.run ? ` (pid ${r.run.pid}, started ${r.run.started})` : '';
    const will = (done: string, todo: string) => (r.dryRun ? `${todo} by the next run without --dry-run` : done);
    if (r.kind === 'rolled-back') {
      note(
        `an interrupted app-serving migrate${run} left ${displayPath(r.home)}: ${r.reason ?? 'it had not reached its commit point'}; ${will('undone', 'to be undone')}${r.folders.length > 0 ? ` (${folders(r.folders)} moved out again)` : ''} — the stack file and model folders are as they were before it`,
      );
    } else if (r.kind === 'completed') {
      note(`an interrupted app-serving migrate${run} had passed its commit point: ${will('finished', 'to be finished')}${r.folders.length > 0 ? ` (${folders(r.folders)} in place)` : ''}`);
    } else if (r.kind === 'tidied') {
      note(`an app-serving migrate${run} was stopped while it tidied up, its result in place: ${will(`${displayPath(r.home)} removed`, `${displayPath(r.home)} to be removed`)}`);
    } else {
      note(`${displayPath(r.home)}, an empty folder an interrupted app-serving migrate left (nothing of it was half done), ${r.dryRun ? 'is removed by the next run without --dry-run' : 'was removed'}`);
    }
  }
  // An earlier version's temporary stack file (never renamed into place: its run failed or was stopped).
  const old = join(dirname(target), `.${basename(target)}.app-serving-migrate`);
  if (isFile(old)) {
    if (!dryRun) rmSync(old, { force: true });
    note(`${displayPath(old)}, the temporary file of an earlier version's interrupted migrate (never put in place), ${dryRun ? 'is removed by the next run without --dry-run' : 'was removed'}`);
  }
  return recovered;
}

function recoveryJson(r: Recovery): Record<string, unknown> {
  return { kind: r.kind, stage: displayPath(r.home), ...(r.run && { pid: r.run.pid, started: r.run.started }), ...(r.reason && { reason: r.reason }), folders: r.folders.map((f) => displayPath(f)), dryRun: r.dryRun };
}

function report(
  migration: StackMigration,
  run: {
    shown: string;
    target: string | undefined;
    files: readonly Written[];
    differences: readonly { model: string; difference: string }[];
    after: DeploymentPlan;
    dryRun: boolean;
    output: Output;
    warnings: readonly Issue[];
  },
): void {
  const { output, dryRun } = run;
  const { color } = output;
  const verb = dryRun ? 'would write' : 'wrote';
  output.out(color.bold(`app-serving migrate: ${run.shown} → ${CURRENT_UPSTREAM}${dryRun ? ' (dry run: nothing is written)' : ''}`));
  output.out('');
  output.out(`${run.shown}${run.target !== undefined ? ` (a link: its target ${run.target} is ${dryRun ? 'what would be replaced' : 'replaced'})` : ''}${migration.rewritten ? ' (written out by the YAML library: a flow mapping or a key sharing its line could not be edited in place; comments are kept, check the layout)' : ''}:`);
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

function readdirOrEmpty(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
