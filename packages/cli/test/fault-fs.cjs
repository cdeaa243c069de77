'use strict';
// A file system that fails on purpose, for the fault-injection tests of `app-serving migrate`
// (src/migrate-faults.test.ts, test/hostile/migrate-kill.test.ts).
//
// Every call that changes the disk under `control.root` is one step: mkdir, a file opened for
// writing, write, fsync, rename, unlink, rmdir, fchmod, fchown — and `rm -r` as the unlinks and
// rmdirs it is made of, so that a stop can fall between any two of them. Step `control.at`:
//   mode 'kill':   runs, then the process dies (`control.onKill`: SIGKILL in a real process; in the
//                  test's own process, every later step throws and does nothing — the disk is frozen
//                  as a killed process leaves it);
//   mode 'enospc': fails with ENOSPC (a write writes half of its bytes first); the disk stays full:
//                  later mkdirs, new files and writes fail too, removals and renames still work.
// Mode 'count' runs everything and lists the steps in `control.steps`.
//
// As a preload (`node --require fault-fs.cjs`), it reads APP_SERVING_TEST_FAULT=<mode>:<at>:<root>
// and patches node:fs before the CLI loads (the bundle calls fs.<name>(…) at call time).

const { join } = require('node:path');

class KilledError extends Error {
  constructor() {
    super('killed (fault injection)');
    this.name = 'KilledError';
  }
}

function enospc(syscall, path) {
  const error = new Error(`ENOSPC: no space left on device, ${syscall} '${path}'`);
  error.code = 'ENOSPC';
  error.errno = -28;
  error.syscall = syscall;
  error.path = path;
  return error;
}

/**
 * The wrapped functions of `fs` (spread them over fs). `control`: { mode, at, root, steps: [],
 * dead: false, full: false, onKill?, onStep? (called before each step with its number and name) }.
 */
function faultFs(fs, control) {
  const fds = new Map();
  const under = (path) => typeof path === 'string' && control.root !== '' && (path === control.root || path.startsWith(`${control.root}/`));
  const writing = (flags) => (typeof flags === 'number' ? (flags & 3) !== 0 || (flags & fs.constants.O_CREAT) !== 0 : typeof flags === 'string' && /[wax+]/.test(flags));
  const allocates = new Set(['mkdir', 'open', 'write']);

  /** Runs `op` as one step named `name` (about `path`); `partial` does what a failing write leaves. */
  function step(name, path, op, partial) {
    if (control.mode === 'off' || !under(path)) return op();
    if (control.dead) throw new KilledError();
    const n = control.steps.length + 1;
    control.steps.push(`${name} ${path.slice(control.root.length + 1) || '.'}`);
    if (control.onStep) control.onStep(n, name, path);
    if (control.mode === 'enospc' && (n === control.at || (control.full && allocates.has(name)))) {
      control.full = true;
      if (partial) partial();
      throw enospc(name, path);
    }
    const result = op();
    if (control.mode === 'kill' && n === control.at) {
      control.dead = true;
      if (control.onKill) control.onKill();
      throw new KilledError();
    }
    return result;
  }
  const fdPath = (fd) => fds.get(fd) ?? '';

  function removeTree(path) {
    let stat;
    try {
      stat = fs.lstatSync(path);
    } catch (error) {
      if (error.code === 'ENOENT') return;
      throw error;
    }
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(path)) removeTree(join(path, name));
      step('rmdir', path, () => fs.rmdirSync(path));
    } else step('unlink', path, () => fs.unlinkSync(path));
  }

  return {
    mkdirSync: (path, options) => step('mkdir', String(path), () => fs.mkdirSync(path, options)),
    openSync: (path, flags, mode) => {
      const open = () => {
        const fd = fs.openSync(path, flags, mode);
        if (under(String(path))) fds.set(fd, String(path));
        return fd;
      };
      return writing(flags) ? step('open', String(path), open) : open();
    },
    closeSync: (fd) => {
      fds.delete(fd);
      return fs.closeSync(fd);
    },
    writeSync: (fd, buffer, ...rest) =>
      step(
        'write',
        fdPath(fd),
        () => fs.writeSync(fd, buffer, ...rest),
        () => {
          if (typeof buffer === 'string') return;
          const [offset = 0, length = buffer.length - offset] = rest;
          fs.writeSync(fd, buffer, offset, Math.floor(length / 2));
        },
      ),
    writeFileSync: (path, data, options) =>
      step(
        'write',
        String(path),
        () => fs.writeFileSync(path, data, options),
        () => fs.writeFileSync(path, typeof data === 'string' ? data.slice(0, data.length / 2) : data.subarray(0, data.length / 2), options),
      ),
    fsyncSync: (fd) => step('fsync', fdPath(fd), () => fs.fsyncSync(fd)),
    fchmodSync: (fd, mode) => step('fchmod', fdPath(fd), () => fs.fchmodSync(fd, mode)),
    fchownSync: (fd, uid, gid) => step('fchown', fdPath(fd), () => fs.fchownSync(fd, uid, gid)),
    chmodSync: (path, mode) => step('chmod', String(path), () => fs.chmodSync(path, mode)),
    renameSync: (from, to) => step('rename', String(to), () => fs.renameSync(from, to)),
    unlinkSync: (path) => step('unlink', String(path), () => fs.unlinkSync(path)),
    rmdirSync: (path, options) => step('rmdir', String(path), () => fs.rmdirSync(path, options)),
    rmSync: (path, options) => {
      if (control.mode === 'off' || !under(String(path))) return fs.rmSync(path, options);
      if (!options || !options.recursive) return step('unlink', String(path), () => fs.rmSync(path, options));
      return removeTree(String(path));
    },
  };
}

module.exports = { faultFs, KilledError };

// As a preload: patch node:fs for the whole process.
const spec = process.env.APP_SERVING_TEST_FAULT;
if (spec) {
  const [mode, at, ...root] = spec.split(':');
  const fs = require('node:fs');
  const control = { mode, at: Number(at), root: root.join(':'), steps: [], dead: false, full: false, onKill: () => process.kill(process.pid, 'SIGKILL') };
  Object.assign(fs, faultFs({ ...fs, constants: fs.constants }, control));
  require('node:module').syncBuiltinESMExports();
  if (mode === 'count') {
    process.on('exit', () => {
      if (process.env.APP_SERVING_TEST_FAULT_LOG) fs.writeFileSync(process.env.APP_SERVING_TEST_FAULT_LOG, control.steps.join('\n'));
    });
  }
}
