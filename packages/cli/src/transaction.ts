import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fchownSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { MAX_VALUES_FILE_BYTES, displayPath, readTextFile } from '@app-serving/core';

/**
 * Puts new folders and one replaced file in place together, so that a stop at any instant — an
 * error, Ctrl-C, `kill -9`, the OOM killer, a full disk, a power cut — leaves the old state or the
 * new one, and the next run says which and tidies up. `app-serving migrate` uses it for the stack
 * file (replaced) and the model folders' new `server-<slug>/` and `router-<slug>/` (created).
 *
 * The protocol, for a file F (a link's target: the link stays) and its home H, the folder
 * `.app-serving-migrate-<name of F>/` beside F:
 *
 * 1. Lock and journal. `prepared.json` — the run (pid, host, process start), the hashes of F's
 *    bytes before and after, every stage folder, every folder to create and the hash of each of its
 *    files — is written and fsynced in a fresh folder `H.<pid>.<id>.tmp`, which is then renamed to H.
 *    Renaming a folder onto a non-empty one fails: that is the lock (a second run stops, or
 *    recovers H when its run is gone). H never exists without its whole journal.
 * 2. Stage. Beside each destination, in the same folder (so on the same file system, where
 *    rename(2) is atomic), a stage folder S = `.app-serving-migrate-<id>/` gets the new folders
 *    whole; H gets F's new text, with F's mode, owner and group. Every file and folder is fsynced.
 * 3. Check. Every staged file is read back and compared byte for byte, then the caller's check
 *    runs on the staged files (migrate: the values parse, the staged stack plans on the new set).
 *    No destination exists yet, and F still holds the bytes the result was made from.
 * 4. Commit point: the empty file `H/committed` is created and H fsynced. Before it, nothing
 *    outside S and H has changed. After it, a stopped run is finished by the next one.
 * 5. Move. Each new folder is renamed from S into place, its parent fsynced; F is then checked
 *    once more (a concurrent edit is never overwritten) and H's copy renamed over it; F's folder
 *    fsynced. F goes last: a reader of F sees the old F, which reads none of the new folders (the
 *    old set reads other folders), or the new F with every new folder already in place. rename(2)
 *    replaces F in one step: F is never missing, cut or mixed.
 * 6. Clean. The (now empty) stage folders are removed, then `committed`; H is renamed to
 *    `H.<pid>.<id>.tmp` (gone in one step, with its journal) and removed.
 *
 * Recovery (the next run, before it reads anything): for each H (a journal names a run still at
 * work: it stops, saying so): no `committed` → roll back (remove S and H: the destinations
 * were never touched) unless F already holds the new bytes (step 6 was stopped: tidy up);
 * `committed` and F holds the old bytes → roll forward (move what is still staged, checked against
 * the journal's hashes, then F); F holds the new bytes → tidy up; F holds other bytes (edited
 * since) → roll back, moving the new folders out again (only when they still hash as written).
 * A `H.<pid>.<id>.tmp` left by a run stopped in step 1 (nothing else was made) or 6 (everything was in
 * place) is removed, unless its run is at work. Every step is idempotent, so a recovery stopped
 * part-way is finished by the next run.
 *
 * Why this holds through a crash or a power cut: every rename is within one folder's file system,
 * which makes it atomic; what a step relies on is on disk before the step (the staged files, their
 * folders and the journal are fsynced before the marker; the marker before the first rename; each
 * new folder's parent after its rename and before F's), so the disk never holds the marker without
 * the whole stage, nor the new F without every new folder; and recovery decides only from what is
 * on disk — the marker, which staged copies and destinations exist, and the hashes of F and of the
 * staged files against the journal's.
 *
 * An error seen by the running process before F's rename undoes the moves and removes `committed`
 * before anything else (an unlink needs no space on a full disk), then rolls back; after F's
 * rename the new state is in place, and a failed tidy-up is left to the next run (said).
 *
 * What is not kept: extended attributes, ACLs and SELinux labels of F (Node has no API for them;
 * the new F gets its folder's defaults); other hard links to F keep the old text (the caller
 * refuses such a file). Between steps 5's first rename and F's rename, the new folders are in
 * place beside the old F: the old set does not read them, and the next run finishes the move.
 */

/** The journal's name in H. */
const JOURNAL = 'prepared.json';
/** The commit marker's name in H. */
const COMMITTED = 'committed';
/** The prefix of every folder the protocol makes. */
export const STAGE_PREFIX = '.app-serving-migrate-';

/** A folder the transaction creates: `name` in `parent` (an existing folder, by its real path), with its files. */
export interface NewFolder {
  readonly parent: string;
  readonly name: string;
  readonly files: readonly { readonly name: string; readonly bytes: Buffer }[];
  /** Owner and group of the folder and its files (a run as root in another user's folder gives them that user's); else the run's. */
  readonly owner?: { readonly uid: number; readonly gid: number } | undefined;
}

/** The file the transaction replaces, by its real path. */
export interface ReplacedFile {
  readonly path: string;
  /** What it holds now: checked before it is replaced. */
  readonly before: Buffer;
  readonly after: Buffer;
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
}

/** Where the staged copies are, for the caller's check. */
export interface Staged {
  readonly file: string;
  /** Destination folder → its staged copy. */
  readonly folders: ReadonlyMap<string, string>;
}

/** A transaction that did not complete: `state` says what is in place. */
export class TransactionError extends Error {
  constructor(
    message: string,
    /** `old`: nothing changed; `new`: everything is in place; `stopped`: the next run finishes it. */
    readonly state: 'old' | 'new' | 'stopped',
    readonly code?: string,
  ) {
    super(message);
    this.name = 'TransactionError';
  }
}

interface Journal {
  readonly tool: 'app-serving migrate';
  readonly version: 1;
  readonly id: string;
  readonly pid: number;
  readonly host: string;
  readonly processStart: string | null;
  readonly started: string;
  readonly file: { readonly path: string; readonly before: string; readonly after: string };
  readonly folders: readonly { readonly parent: string; readonly name: string; readonly files: Readonly<Record<string, string>> }[];
}

/** H of a file. */
export function homeOf(file: string): string {
  return join(dirname(file), `${STAGE_PREFIX}${basename(file)}`);
}

function stageOf(parent: string, id: string): string {
  return join(parent, `${STAGE_PREFIX}${id}`);
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Runs the protocol (see the module comment). Returns warnings about a tidy-up that failed once
 * everything is in place; throws a {@link TransactionError} saying what is in place otherwise.
 */
export function commitTransaction(plan: { readonly file: ReplacedFile; readonly folders: readonly NewFolder[]; readonly check: (staged: Staged) => void }): { warnings: string[] } {
  const { file, folders } = plan;
  const id = randomBytes(6).toString('hex');
  const home = homeOf(file.path);
  const stagedFile = join(home, basename(file.path));
  const journal: Journal = {
    tool: 'app-serving migrate',
    version: 1,
    id,
    pid: process.pid,
    host: hostname(),
    processStart: processStart(process.pid),
    started: new Date().toISOString(),
    file: { path: file.path, before: sha256(file.before), after: sha256(file.after) },
    folders: folders.map((f) => ({ parent: f.parent, name: f.name, files: Object.fromEntries(f.files.map((x) => [x.name, sha256(x.bytes)])) })),
  };
  const stages = [...new Set(folders.map((f) => f.parent))].map((parent) => stageOf(parent, id));

  // 1–4: lock, stage, check, commit. A failure removes what was made: nothing else was touched.
  // The pid in the name: a run that finds this folder before its journal is written can tell it is another run's, at work.
  const tmp = `${home}.${process.pid}.${id}.tmp`;
  let locked = false;
  try {
    mkdirSync(tmp, { mode: 0o700 });
    writeNewFile(join(tmp, JOURNAL), Buffer.from(`${JSON.stringify(journal, null, 2)}\n`));
    fsyncDir(tmp);
    try {
      renameSync(tmp, home);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' || code === 'ENOTEMPTY') throw new TransactionError(`another app-serving migrate of ${displayPath(file.path)} started meanwhile (${displayPath(home)} is there): nothing was written`, 'old', code);
      throw error;
    }
    locked = true;
    fsyncDir(dirname(home));

    for (const stage of stages) mkdirSync(stage, { mode: 0o700 });
    for (const folder of folders) {
      const dir = join(stageOf(folder.parent, id), folder.name);
      mkdirSync(dir);
      if (folder.owner) chownPath(dir, folder.owner);
      for (const f of folder.files) writeNewFile(join(dir, f.name), f.bytes, { owner: folder.owner });
      fsyncDir(dir);
    }
    for (const stage of stages) {
      fsyncDir(stage);
      fsyncDir(dirname(stage));
    }
    writeNewFile(stagedFile, file.after, { mode: file.mode, owner: { uid: file.uid, gid: file.gid } });
    fsyncDir(home);

    for (const folder of folders) {
      for (const f of folder.files) expectBytes(join(stageOf(folder.parent, id), folder.name, f.name), f.bytes);
    }
    expectBytes(stagedFile, file.after);
    plan.check({ file: stagedFile, folders: new Map(folders.map((f) => [join(f.parent, f.name), join(stageOf(f.parent, id), f.name)])) });
    expectUnchanged(file);
    for (const folder of folders) {
      if (exists(join(folder.parent, folder.name))) throw new TransactionError(`${displayPath(join(folder.parent, folder.name))} appeared while migrate ran (migrate never overwrites): nothing was written`, 'old', 'EEXIST');
    }

    writeNewFile(join(home, COMMITTED), Buffer.alloc(0));
    fsyncDir(home);
  } catch (error) {
    const left = removeAll(locked ? [...stages, home] : [tmp]);
    throw failure(error, 'old', left);
  }

  // 5: move. Undone on an error before the file's rename.
  const moved: NewFolder[] = [];
  try {
    for (const folder of folders) {
      renameSync(join(stageOf(folder.parent, id), folder.name), join(folder.parent, folder.name));
      moved.push(folder);
      fsyncDir(folder.parent);
    }
    expectUnchanged(file);
    renameSync(stagedFile, file.path);
  } catch (error) {
    try {
      for (const folder of moved.reverse()) {
        renameSync(join(folder.parent, folder.name), join(stageOf(folder.parent, id), folder.name));
        fsyncDir(folder.parent);
      }
      unlinkSync(join(home, COMMITTED));
      fsyncDir(home);
    } catch (undo) {
      throw new TransactionError(
        `${describe(error)}, and undoing the moves failed (${describe(undo)}): run app-serving migrate again to finish the migration (${displayPath(home)} says what is left to do)`,
        'stopped',
        (undo as NodeJS.ErrnoException).code,
      );
    }
    throw failure(error, 'old', removeAll([...stages, home]));
  }

  // 6: durable, then tidy. The new state is in place whatever fails here.
  const warnings: string[] = [];
  try {
    fsyncDir(dirname(file.path));
  } catch (error) {
    warnings.push(`the migration is in place, but syncing ${displayPath(dirname(file.path))} to disk failed (${describe(error)})`);
  }
  const left = tidy(stages, home, id);
  if (left.length > 0) warnings.push(`the migration is in place, but ${left.join(', ')} could not be removed: the next app-serving migrate of this stack removes ${left.length === 1 ? 'it' : 'them'}`);
  return { warnings };
}

/** What {@link recoverTransaction} found and did. */
export interface Recovery {
  /**
   * `rolled-back`: the old state is kept; `completed`: the interrupted run's result was put in
   * place; `tidied`: it was in place, its leftovers removed; `removed`: an empty folder of step 1
   * or 6 removed (nothing of it was half done).
   */
  readonly kind: 'rolled-back' | 'completed' | 'tidied' | 'removed';
  /** The folder it was about (H, or a `H.<pid>.<id>.tmp`). */
  readonly home: string;
  /** The interrupted run, when its journal says. */
  readonly run?: { readonly pid: number; readonly started: string } | undefined;
  /** Why it was rolled back, when not because it had not reached its commit point. */
  readonly reason?: string | undefined;
  /** The folders it put in place (completed) or removed (rolled back after its commit point). */
  readonly folders: readonly string[];
  /** With `dryRun`: nothing was done; this is what a run will do. */
  readonly dryRun: boolean;
}

/**
 * Finds what an interrupted transaction on `file` (by its real path) left, and finishes or undoes
 * it (see the module comment); with `dryRun`, says what it would do. Throws a TransactionError
 * when another run is at work, or when the leftovers cannot be read or no longer fit the journal
 * (then nothing is touched and the message says what to look at).
 */
export function recoverTransaction(file: string, options: { readonly dryRun?: boolean } = {}): Recovery[] {
  const dryRun = options.dryRun === true;
  const home = homeOf(file);
  const out: Recovery[] = [];
  // Step 1's leftovers: a journal in a folder that never became H; nothing else was made.
  for (const name of entries(dirname(file))) {
    if (!name.startsWith(`${basename(home)}.`) || !name.endsWith('.tmp')) continue;
    const tmp = join(dirname(file), name);
    const journal = readJournal(tmp, file, false);
    if (journal && running(journal)) continue;
    // Made a moment ago by a run still at work, its journal not written yet (a folder is made, then filled):
    // not a leftover. (A pid reused since only keeps a leftover until that process ends.)
    const maker = /\.(\d+)\.[0-9a-f]+\.tmp$/.exec(name);
    if (journal === null && maker && pidAlive(Number(maker[1]))) continue;
    // Nothing else was made (step 1), or everything was in place (step 6); without its journal,
    // which of the two cannot be told, and does not matter.
    const kind = journal === null ? 'removed' : currentHash(file) === journal.file.after ? 'tidied' : 'rolled-back';
    if (!dryRun) removeOrFail(tmp);
    out.push({ kind, home: tmp, run: journal ? { pid: journal.pid, started: journal.started } : undefined, folders: [], dryRun });
  }
  if (!exists(home)) return out;

  const journal = readJournal(home, file, true);
  if (journal === null) {
    // H is made with its journal and goes in one rename: not one of this protocol's. Never guessed at.
    throw unfit(home, `it has no ${JOURNAL}`);
  }
  if (running(journal)) {
    throw new TransactionError(
      `another app-serving migrate of ${displayPath(file)} is running (pid ${journal.pid}${journal.host !== hostname() ? ` on ${journal.host}` : ''}, started ${journal.started}): wait for it${journal.host !== hostname() ? `, or if none runs there, remove ${displayPath(home)} and the ${STAGE_PREFIX}${journal.id} folders it names` : ''}`,
      'old',
      'EBUSY',
    );
  }
  const run = { pid: journal.pid, started: journal.started };
  const stages = [...new Set(journal.folders.map((f) => f.parent))].map((parent) => stageOf(parent, journal.id));
  const now = currentHash(file);
  const committed = exists(join(home, COMMITTED));
  const stagedFile = join(home, basename(file));

  if (now === journal.file.after) {
    // Everything was in place (F goes last): only the tidy-up was stopped.
    if (!dryRun) {
      const left = tidy(stages, home, journal.id);
      if (left.length > 0) throw new TransactionError(`could not remove ${left.join(', ')}, left by an interrupted app-serving migrate`, 'new');
    }
    return [...out, { kind: committed ? 'completed' : 'tidied', home, run, folders: [], dryRun }];
  }
  if (committed && now === journal.file.before) {
    // Roll forward: what is still staged must be what was written.
    const pending = journal.folders.filter((f) => exists(join(stageOf(f.parent, journal.id), f.name)));
    for (const f of journal.folders) {
      const staged = join(stageOf(f.parent, journal.id), f.name);
      const dest = join(f.parent, f.name);
      if (pending.includes(f)) {
        if (exists(dest)) throw unfit(home, `${displayPath(dest)} is there and so is its staged copy`);
        const problem = folderProblem(staged, f.files);
        if (problem) throw unfit(home, `${displayPath(staged)}: ${problem}`);
      } else if (!exists(dest)) throw unfit(home, `${displayPath(dest)} is neither in place nor staged`);
    }
    if (!exists(stagedFile) || currentHash(stagedFile) !== journal.file.after) throw unfit(home, `${displayPath(stagedFile)} is not the staged stack file it wrote`);
    if (!dryRun) {
      for (const f of pending) {
        renameSync(join(stageOf(f.parent, journal.id), f.name), join(f.parent, f.name));
        fsyncDir(f.parent);
      }
      if (currentHash(file) !== journal.file.before) throw new TransactionError(`${displayPath(file)} changed while its interrupted migrate was being finished: run app-serving migrate again`, 'stopped');
      renameSync(stagedFile, file);
      fsyncDir(dirname(file));
      const left = tidy(stages, home, journal.id);
      if (left.length > 0) throw new TransactionError(`the interrupted migrate is finished, but ${left.join(', ')} could not be removed`, 'new');
    }
    return [...out, { kind: 'completed', home, run, folders: journal.folders.map((f) => join(f.parent, f.name)), dryRun }];
  }

  // Roll back: not committed (nothing outside S and H was touched), or committed but F was edited
  // since: then the folders it moved in are moved out again, when they are still as written.
  const movedIn = committed ? journal.folders.filter((f) => !exists(join(stageOf(f.parent, journal.id), f.name)) && exists(join(f.parent, f.name))) : [];
  for (const f of movedIn) {
    const problem = folderProblem(join(f.parent, f.name), f.files);
    if (problem) throw unfit(home, `${displayPath(file)} was edited since, and ${displayPath(join(f.parent, f.name))} too (${problem})`);
  }
  if (!dryRun) {
    for (const f of movedIn) {
      renameSync(join(f.parent, f.name), join(stageOf(f.parent, journal.id), f.name));
      fsyncDir(f.parent);
    }
    if (committed) {
      unlinkSync(join(home, COMMITTED));
      fsyncDir(home);
    }
    const left = removeAll([...stages, home]);
    if (left.length > 0) throw new TransactionError(`could not remove ${left.join(', ')}, left by an interrupted app-serving migrate`, 'old');
  }
  return [
    ...out,
    {
      kind: 'rolled-back',
      home,
      run,
      reason: committed ? `${displayPath(file)} was edited after it stopped, so its result no longer applies` : undefined,
      folders: movedIn.map((f) => join(f.parent, f.name)),
      dryRun,
    },
  ];
}

/** Stage folders (`.app-serving-migrate-<id>`) in `dir` that no journal of `file` names: left by a run whose H is gone, or by another stack's run. */
export function strayStages(dir: string, file: string): string[] {
  const home = homeOf(file);
  let id: string | undefined;
  try {
    id = readJournal(home, file, false)?.id;
  } catch {
    id = undefined;
  }
  return entries(dir)
    .filter((name) => name.startsWith(STAGE_PREFIX) && name !== `${STAGE_PREFIX}${id}`)
    .map((name) => join(dir, name));
}

// Steps -----------------------------------------------------------------------------------------

/** Writes a new file (never over one), all of it, with its mode and owner, and syncs it to disk. */
function writeNewFile(path: string, bytes: Buffer, options: { mode?: number; owner?: { uid: number; gid: number } | undefined } = {}): void {
  const fd = openSync(path, 'wx', options.mode ?? 0o666);
  try {
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
    if (options.owner && needsChown(options.owner)) fchownSync(fd, options.owner.uid, options.owner.gid);
    // After chown, which clears set-id bits; and whatever the umask took away.
    if (options.mode !== undefined) fchmodSync(fd, options.mode);
    fsyncSync(fd);
  } catch (error) {
    // Errors on a descriptor name no file: this one's.
    (error as NodeJS.ErrnoException).path ??= path;
    throw error;
  } finally {
    closeSync(fd);
  }
}

function chownPath(path: string, owner: { uid: number; gid: number }): void {
  if (!needsChown(owner)) return;
  const fd = openSync(path, 'r');
  try {
    fchownSync(fd, owner.uid, owner.gid);
  } finally {
    closeSync(fd);
  }
}

function needsChown(owner: { uid: number; gid: number }): boolean {
  return process.getuid?.() !== owner.uid || process.getgid?.() !== owner.gid;
}

/**
 * fsync of a folder: makes the names created, renamed or removed in it durable. File systems that
 * cannot sync a folder (EINVAL, EISDIR; Windows) are passed over: there rename is what they offer.
 */
function fsyncDir(path: string): void {
  const passed = (error: unknown) => ['EINVAL', 'EISDIR', 'EPERM', 'ENOTSUP'].includes((error as NodeJS.ErrnoException).code ?? '');
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if (passed(error)) return;
    throw error;
  }
  try {
    fsyncSync(fd);
  } catch (error) {
    if (passed(error)) return;
    (error as NodeJS.ErrnoException).path ??= path;
    throw error;
  } finally {
    closeSync(fd);
  }
}

function expectBytes(path: string, bytes: Buffer): void {
  const read = readTextFile(path, Math.max(bytes.length, 1) * 2 + 1024);
  if ('problem' in read || !read.bytes.equals(bytes)) throw new TransactionError(`${displayPath(path)} does not read back as written (the disk or file system lost it): nothing was written`, 'old', 'EIO');
}

/** F must still hold what the result was made from: an edit since is never overwritten. */
function expectUnchanged(file: ReplacedFile): void {
  if (currentHash(file.path) !== sha256(file.before)) {
    throw new TransactionError(`${displayPath(file.path)} changed while migrate ran (saved by an editor, or another run): nothing was written; run app-serving migrate again`, 'old', 'ECHANGED');
  }
}

function currentHash(path: string): string | null {
  try {
    const read = readTextFile(path, MAX_VALUES_FILE_BYTES);
    return 'problem' in read ? null : sha256(read.bytes);
  } catch {
    return null;
  }
}

/**
 * Removes the stage folders (empty once moved: what is left, if anything, goes too), then H: its
 * commit marker, then H renamed to `H.<pid>.<id>.tmp` — gone in one step, its journal (and so the run's
 * pid) kept until then, so that another run never mistakes a run at its tidy-up for a stopped one —
 * and removed. Returns what could not be removed.
 */
function tidy(stages: readonly string[], home: string, id: string): string[] {
  const left = removeAll(stages);
  if (left.length > 0) return left;
  try {
    try {
      unlinkSync(join(home, COMMITTED));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const trash = `${home}.${process.pid}.${id}.tmp`;
    renameSync(home, trash);
    rmSync(trash, { recursive: true, force: true });
    return [];
  } catch (error) {
    return [`${displayPath(home)} (${describe(error)})`];
  }
}

/** Removes folders (what is in them too); returns those it could not remove, with why. */
function removeAll(paths: readonly string[]): string[] {
  const left: string[] = [];
  for (const path of paths) {
    try {
      rmSync(path, { recursive: true, force: true });
    } catch (error) {
      left.push(`${displayPath(path)} (${describe(error)})`);
    }
  }
  return left;
}

function removeOrFail(path: string): void {
  const left = removeAll([path]);
  if (left.length > 0) throw new TransactionError(`could not remove ${left[0]}, left by an interrupted app-serving migrate`, 'old');
}

/** The error to throw once what was made is removed: the check's own error (a StackError) as it is, a file system error as a TransactionError. */
function failure(error: unknown, state: 'old', left: readonly string[]): unknown {
  const also = left.length > 0 ? ` (${left.join(', ')} could not be removed: the next app-serving migrate of this stack removes ${left.length === 1 ? 'it' : 'them'})` : '';
  if (error instanceof TransactionError) return new TransactionError(`${error.message}${also}`, error.state, error.code);
  const { code, syscall } = error as NodeJS.ErrnoException;
  if (syscall === undefined && left.length === 0) return error;
  return new TransactionError(`${describe(error)}: nothing was written${also}`, state, code);
}

/** What a file system error means for the user, at the folder it is about (a stage folder's: the folder it is in). */
function describe(error: unknown): string {
  if (error instanceof TransactionError) return error.message;
  const { code, path, dest } = error as NodeJS.ErrnoException & { dest?: string };
  const about = dest ?? path;
  if (!code || !about) return code ?? (error instanceof Error ? error.message : String(error));
  const parts = about.split('/');
  const stage = parts.findIndex((part) => part.startsWith(STAGE_PREFIX));
  const where = displayPath(stage >= 0 ? parts.slice(0, stage).join('/') || '/' : about);
  const why: Readonly<Record<string, string>> = {
    ENOSPC: `no space left in ${where}`,
    EDQUOT: `over the disk quota in ${where}`,
    EFBIG: `the file size limit reached in ${where}`,
    EACCES: `permission denied in ${where}`,
    EPERM: `not permitted in ${where}`,
    EROFS: `${where} is on a read-only file system`,
    EIO: `an I/O error in ${where}`,
  };
  return `${why[code] ?? `cannot write ${where}`} (${code})`;
}

// Recovery --------------------------------------------------------------------------------------

/**
 * The journal in `dir`, checked to describe a transaction on `file` (every path where the protocol
 * puts it); null when there is none. Throws when it is there but cannot be used (`strict`).
 */
function readJournal(dir: string, file: string, strict: boolean): Journal | null {
  const path = join(dir, JOURNAL);
  if (!exists(path)) return null;
  let journal: Journal;
  try {
    const read = readTextFile(path, MAX_VALUES_FILE_BYTES);
    if ('problem' in read) throw new Error(read.problem);
    journal = JSON.parse(read.text) as Journal;
  } catch (error) {
    if (!strict) return null;
    throw unfit(dir, `its journal cannot be read (${error instanceof Error ? error.message : String(error)})`);
  }
  const name = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
  const ok =
    journal?.tool === 'app-serving migrate' &&
    journal.version === 1 &&
    /^[0-9a-f]{12}$/.test(journal.id) &&
    Number.isSafeInteger(journal.pid) &&
    typeof journal.host === 'string' &&
    typeof journal.started === 'string' &&
    journal.file?.path === file &&
    /^[0-9a-f]{64}$/.test(journal.file.before) &&
    /^[0-9a-f]{64}$/.test(journal.file.after) &&
    Array.isArray(journal.folders) &&
    journal.folders.every(
      (f) => typeof f?.parent === 'string' && isAbsolute(f.parent) && name.test(f.name) && !f.name.startsWith(STAGE_PREFIX) && typeof f.files === 'object' && f.files !== null && Object.entries(f.files as Record<string, unknown>).every(([n, h]) => name.test(n) && typeof h === 'string' && /^[0-9a-f]{64}$/.test(h)),
    );
  if (!ok) {
    if (!strict) return null;
    throw unfit(dir, journal?.file?.path !== undefined && journal.file.path !== file ? `its journal is about ${String(journal.file.path)} (was the folder moved?)` : 'its journal is not one app-serving migrate wrote');
  }
  return journal;
}

function unfit(home: string, why: string): TransactionError {
  return new TransactionError(
    `${displayPath(home)}, left by an interrupted app-serving migrate, no longer fits what it says: ${why}. Nothing was changed: look at it (${JOURNAL} lists the folders it made), keep what you need, remove it and the ${STAGE_PREFIX}* folders it names, then run migrate again`,
    'stopped',
    'EUNFIT',
  );
}

/** The hash of each file of a folder against the journal's: a problem, or null when they match. */
function folderProblem(dir: string, files: Readonly<Record<string, string>>): string | null {
  for (const [name, hash] of Object.entries(files)) {
    const now = currentHash(join(dir, name));
    if (now !== hash) return `${name} ${now === null ? 'is missing' : 'is not what it wrote'}`;
  }
  const extra = entries(dir).filter((n) => !(n in files));
  return extra.length > 0 ? `it holds ${extra.join(', ')}, which it did not write` : null;
}

/** Whether another process `pid` runs on this host (this process's own pid is not another run's). */
function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Whether the run of a journal may still be at work: same host, its pid alive, and (on Linux) the same process. */
function running(journal: Journal): boolean {
  if (journal.host !== hostname()) return true;
  if (!pidAlive(journal.pid)) return false;
  const start = processStart(journal.pid);
  return start === null || journal.processStart === null || start === journal.processStart;
}

/**
 * When process `pid` started (clock ticks since boot, field 22 of /proc/<pid>/stat), to tell it
 * from a later process that got its pid; null where there is no /proc. A kernel file of a few
 * hundred bytes, read directly (not a file of the user's).
 */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}
