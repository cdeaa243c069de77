// One build at a time per cache folder, across processes: the build scripts (helm.mjs and keda.mjs
// here, tools/pulumi/build.mjs) run side by side in `npm test` and from test files that need what
// they build, and each must wait for a build under way, not repeat it.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Runs `make` under `<target>.lock` unless `done()`. The lock folder holds the builder's pid: a lock
 * whose process is gone is a crashed builder's and is taken over (a build may take half an hour on
 * a loaded machine, so its age says nothing).
 */
export function once(target, done, make) {
  if (done()) return;
  mkdirSync(dirname(target), { recursive: true });
  const lock = `${target}.lock`;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch {
      if (done()) return;
      if (!lockAlive(lock)) rmSync(lock, { recursive: true, force: true });
      sleep(1000);
    }
  }
  try {
    if (!done()) make();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Whether the process that holds a lock folder still runs (a lock without a pid yet is young: alive). */
function lockAlive(lock) {
  let pid;
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    try {
      return Date.now() - statSync(lock).mtimeMs < 60_000;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}
