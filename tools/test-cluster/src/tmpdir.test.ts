/**
 * The temporary folder every project's test run gets (../tmpdir.mjs, vitest's global setup in
 * vitest.shared.ts): this worker, and what it starts, see it as TMPDIR; its teardown removes it,
 * unless something is still mounted under it.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import setup, { mountsUnder } from '../tmpdir.mjs';
import { removeAllButLogs } from './cluster.ts';

describe("the test run's temporary folder", () => {
  it('is this worker\'s TMPDIR, a folder of its own that exists, and what it starts inherits it', () => {
    expect(basename(tmpdir())).toMatch(/^app-serving-test-/);
    expect(existsSync(tmpdir())).toBe(true);
    const python = spawnSync('python3', ['-c', 'import tempfile; print(tempfile.gettempdir())'], { encoding: 'utf8' });
    expect(python.stdout.trim()).toBe(tmpdir());
  });

  it('lets another user through to a folder a test opens to them, as /tmp does, without listing it (0711)', () => {
    expect(statSync(tmpdir()).mode & 0o777).toBe(0o711);
    // As root, the CLI's tests run it as `nobody` on such a folder (packages/cli/test/run-cli.ts).
    const runuser = spawnSync('runuser', ['-u', 'nobody', '--', 'true']);
    if (process.getuid?.() !== 0 || runuser.status !== 0) return;
    const open = mkdtempSync(join(tmpdir(), 'open-'));
    chmodSync(open, 0o755);
    writeFileSync(join(open, 'stack.yaml'), 'x');
    try {
      expect(spawnSync('runuser', ['-u', 'nobody', '--', 'cat', join(open, 'stack.yaml')], { encoding: 'utf8' }).stdout).toBe('x');
      expect(spawnSync('runuser', ['-u', 'nobody', '--', 'ls', tmpdir()]).status).not.toBe(0);
    } finally {
      rmSync(open, { recursive: true });
    }
  });

  it('is removed by its teardown with what tests left in it, and TMPDIR is given back', () => {
    const before = process.env.TMPDIR;
    const teardown = setup();
    const dir = process.env.TMPDIR!;
    expect(dirname(dir)).toBe(before);
    mkdirSync(join(dir, 'left', 'behind'), { recursive: true });
    writeFileSync(join(dir, 'left', 'behind', 'file'), 'x');
    teardown();
    expect(process.env.TMPDIR).toBe(before);
    expect(existsSync(dir)).toBe(false);
  });

  it('is kept, and said to be, when a test file of the run failed', () => {
    const failedRun = { vitest: { state: { getFiles: () => [{ result: { state: 'pass' } }, { result: { state: 'fail' } }] } } };
    const teardown = setup(failedRun);
    const dir = process.env.TMPDIR!;
    const said: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((text: string) => said.push(text) > 0) as unknown as typeof process.stderr.write;
    try {
      teardown();
    } finally {
      process.stderr.write = write;
    }
    expect(existsSync(dir)).toBe(true);
    expect(said.join('')).toContain(`${dir} is kept (a test failed)`);
    rmSync(dir, { recursive: true });
  });

  it('finds what is mounted under a folder in /proc/self/mountinfo, escapes and all', () => {
    const info = [
      '22 1 0:21 / /tmp/app-serving-test-a rw - tmpfs tmpfs rw',
      '23 22 0:22 / /tmp/app-serving-test-a/pod/root/sys rw - sysfs sysfs rw',
      '24 1 0:23 / /tmp/app-serving-test-ab rw - tmpfs tmpfs rw',
      '25 1 0:24 / /tmp/app-serving-test-a/with\\040space rw - tmpfs tmpfs rw',
      '',
    ].join('\n');
    expect(mountsUnder('/tmp/app-serving-test-a', info)).toEqual(['/tmp/app-serving-test-a', '/tmp/app-serving-test-a/pod/root/sys', '/tmp/app-serving-test-a/with space']);
    // The real table: /proc is a mount point on any Linux this runs on.
    expect(mountsUnder('/proc', readFileSync('/proc/self/mountinfo', 'utf8'))).toContain('/proc');
  });

  it('is where a stopped control plane inside it leaves its logs and nothing else; outside it, nothing', () => {
    expect(process.env.APP_SERVING_TEST_RUN_DIR).toBe(tmpdir());
    const make = (root: string) => {
      for (const path of ['logs/kube-apiserver.log', 'logs/audit.log', 'etcd/member/wal', 'pki/ca.key', 'pods/ns/pod/modelserver.log', 'pods/ns/pod/root/etc/passwd', 'pods/ns/empty/root/bin/x']) {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), path);
      }
    };
    const inside = join(tmpdir(), 'app-serving-cluster-x');
    make(inside);
    removeAllButLogs(inside);
    const left = (readdirSync(inside, { recursive: true, encoding: 'utf8' }) as string[]).filter((p) => p.endsWith('.log')).sort();
    expect(left).toEqual(['logs/audit.log', 'logs/kube-apiserver.log', 'pods/ns/pod/modelserver.log']);
    expect(existsSync(join(inside, 'etcd'))).toBe(false);
    expect(existsSync(join(inside, 'pods/ns/pod/root'))).toBe(false);
    expect(existsSync(join(inside, 'pods/ns/empty'))).toBe(false);
    rmSync(inside, { recursive: true });
    const outside = mkdtempSync(join(dirname(tmpdir()), 'app-serving-cluster-'));
    make(outside);
    removeAllButLogs(outside);
    expect(existsSync(outside)).toBe(false);
  });
});
