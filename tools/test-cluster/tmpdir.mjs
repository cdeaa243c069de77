/**
 * Vitest's global setup for every project (vitest.shared.ts; a plain script, so that no project's
 * TypeScript build has to hold it): the project's test run gets a temporary
 * folder of its own, `TMPDIR`, which its workers and everything they start inherit (Node's
 * `os.tmpdir()`, Python's `tempfile`, Go's `os.TempDir` all read it), and which is removed when the
 * run ends. Tests make folders with `mkdtemp` and do not all remove them (a stack's folder, a failed
 * test's, a cluster's, vLLM's IPC sockets and `vllm_dist*`): before this, a whole `npm test` left
 * 101 entries (4.2 MB) in /tmp, run after run (the fresh CI run of ddead6c, /tmp listed before and
 * after).
 *
 * A run with a failed test file keeps it, and says where on stderr: the control planes' logs are
 * there to read (the `logs` folder of each `app-serving-cluster-…`, and the data-path tier's pods'
 * logs under its `pods`: a control plane that stops inside this folder, APP_SERVING_TEST_RUN_DIR,
 * removes all of itself but them); so does any run with APP_SERVING_KEEP_TMPDIR=1.
 *
 * The folder is not removed while something is still mounted under it — the data-path tier's pod
 * runtime mounts a pod's root, /dev, /proc, /sys and its volumes with bind mounts, and removing
 * through one would delete what it binds: that is said on stderr, and the folder is left for a
 * person to look at.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The mount points under `dir`, from /proc/self/mountinfo (its fifth field, with octal escapes). */
export function mountsUnder(dir, mountinfo) {
  return mountinfo
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point) => point !== undefined)
    .map((point) => point.replace(/\\([0-7]{3})/g, (_, octal) => String.fromCharCode(parseInt(octal, 8))))
    .filter((point) => point === dir || point.startsWith(`${dir}/`));
}

/** Whether a test file of the run failed (a test, or a hook), from vitest's state; false when it cannot tell. */
function anyFailed(project) {
  try {
    return project?.vitest?.state?.getFiles?.().some((file) => file.result?.state === 'fail') === true;
  } catch {
    return false;
  }
}

/**
 * Sets TMPDIR to a new folder; returns the teardown that restores it and removes the folder.
 * `project` is vitest's TestProject (what it hands a global setup), read only at teardown.
 */
export default function setup(project) {
  const previous = process.env.TMPDIR;
  const previousRun = process.env.APP_SERVING_TEST_RUN_DIR;
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-test-'));
  // mkdtemp makes it 0700. Tests run as root also run the CLI as `nobody` on folders they open to
  // it (packages/cli's RUNS_AS_NOBODY tests): /tmp lets anyone through, so must this, or `nobody`
  // cannot reach them ("no such file"). 0711, not 0755: through, but not listed.
  chmodSync(dir, 0o711);
  process.env.TMPDIR = dir;
  // What a control plane keeps of itself when it stops inside this folder: its logs (cluster.ts).
  process.env.APP_SERVING_TEST_RUN_DIR = dir;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    if (previousRun === undefined) delete process.env.APP_SERVING_TEST_RUN_DIR;
    else process.env.APP_SERVING_TEST_RUN_DIR = previousRun;
    let mounted = [];
    try {
      mounted = mountsUnder(dir, readFileSync('/proc/self/mountinfo', 'utf8'));
    } catch {
      // no /proc: nothing can be mounted there that this process would see either
    }
    if (mounted.length > 0) {
      process.stderr.write(`the tests' temporary folder ${dir} is kept: ${mounted.join(', ')} still mounted under it\n`);
      return;
    }
    if (process.env.APP_SERVING_KEEP_TMPDIR === '1' || anyFailed(project)) {
      process.stderr.write(`the tests' temporary folder ${dir} is kept (${process.env.APP_SERVING_KEEP_TMPDIR === '1' ? 'APP_SERVING_KEEP_TMPDIR=1' : 'a test failed'}): the control planes' folders and logs are in it\n`);
      return;
    }
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
}
