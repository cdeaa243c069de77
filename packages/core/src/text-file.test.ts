import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempRepo } from '../test/helpers.ts';
import { isStackError } from './errors.ts';
import { loadStackFile } from './stack.ts';
import { readValuesFile } from './discovery.ts';
import { IssueList } from './errors.ts';
import { decodeText, FileLimitError, MAX_STACK_FILE_BYTES, MAX_VALUES_FILE_BYTES, readBoundedFile, readBoundedFileSync, readTextFile } from './text-file.ts';


describe('huge and binary files are refused before they are parsed', () => {
  it('a stack file over 1 MiB: one issue, no parse', () => {
    const dir = tempRepo({ 'Pulumi.big.yaml': `config:\n  x: "${'a'.repeat(MAX_STACK_FILE_BYTES)}"\n` });
    const error = (() => {
      try {
        loadStackFile(join(dir, 'Pulumi.big.yaml'), 'Pulumi.big.yaml');
      } catch (e) {
        return e;
      }
    })();
    expect(isStackError(error)).toBe(true);
    const issues = (error as { issues: { code: string; message: string }[] }).issues;
    expect(issues).toHaveLength(1);
    expect(issues[0]!.code).toBe('file.too-large');
    expect(issues[0]!.message).toMatch(/^the stack file is larger than 1 MiB \(\d+ bytes\)/);
  });

  it('a binary stack file: one issue', () => {
    const dir = tempRepo({ 'Pulumi.bin.yaml': 'config:\n\u0000\u0001\u0002' });
    expect(() => loadStackFile(join(dir, 'Pulumi.bin.yaml'))).toThrow(/is a binary file, not YAML text/);
  });

  it('a values file over 4 MiB: one issue naming the file', () => {
    const dir = tempRepo({ 'values.yaml': `a: "${'b'.repeat(MAX_VALUES_FILE_BYTES)}"\n` });
    const list = new IssueList();
    expect(readValuesFile(join(dir, 'values.yaml'), list)).toBeUndefined();
    expect(list.items).toHaveLength(1);
    expect(list.items[0]).toMatchObject({ code: 'file.too-large' });
    expect(list.items[0]!.message).toMatch(/^the values file is larger than 4 MiB/);
  });

  it('reads small text files whole', () => {
    const dir = tempRepo({ 'a.yaml': 'a: 1\n' });
    expect(readTextFile(join(dir, 'a.yaml'), 10)).toEqual({ text: 'a: 1\n', bytes: Buffer.from('a: 1\n') });
    expect(readTextFile(join(dir, 'a.yaml'), 4)).toEqual({ problem: expect.stringMatching(/larger than/) });
  });
});

describe('text as YAML reads it (decodeText)', () => {
  const text = 'config:\n  a: "é ✓"\n';
  it('UTF-16 with its byte order mark, a UTF-8 byte order mark, lone CRs as line feeds', () => {
    expect(decodeText(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]))).toEqual({ text });
    expect(decodeText(Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]))).toEqual({ text });
    expect(decodeText(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]))).toEqual({ text });
    expect(decodeText(Buffer.from(text.replace(/\n/g, '\r')))).toEqual({ text });
    // CR LF stays as it is (the YAML parser reads it).
    expect(decodeText(Buffer.from(text.replace(/\n/g, '\r\n')))).toEqual({ text: text.replace(/\n/g, '\r\n') });
  });

  it('UTF-32, NUL bytes without a byte order mark, and NUL inside UTF-16: refused', () => {
    expect(decodeText(Buffer.from([0xff, 0xfe, 0, 0, 0x61, 0, 0, 0]))).toEqual({ problem: 'is UTF-32 text: save it as UTF-8' });
    expect(decodeText(Buffer.from([0x61, 0, 0x62]))).toEqual({ problem: 'is a binary file, not YAML text' });
    expect(decodeText(Buffer.from([0xff, 0xfe, 0x61, 0, 0, 0]))).toEqual({ problem: 'is a binary file, not YAML text' });
  });

  it('bytes that are not UTF-8: refused at their line (Pulumi and Helm refuse them too), never read as U+FFFD', () => {
    const latin1 = Buffer.concat([Buffer.from('config:\n  # caf'), Buffer.from([0xe9]), Buffer.from(' na\u00efve\n  a: b\n')]);
    expect(decodeText(latin1)).toEqual({ problem: 'is not UTF-8 text: line 2 holds the byte 0xe9, which UTF-8 does not allow there (Latin-1 or Windows-1252 text?): save it as UTF-8' });
    // A truncated sequence at the very end, an overlong encoding, a UTF-16 surrogate written as UTF-8.
    expect(decodeText(Buffer.from([0x61, 0x0a, 0x62, 0xe2, 0x82]))).toMatchObject({ problem: expect.stringContaining('line 2 holds the byte 0xe2') });
    expect(decodeText(Buffer.from([0x0a, 0x0a, 0xc0, 0xaf]))).toMatchObject({ problem: expect.stringContaining('line 3 holds the byte 0xc0') });
    expect(decodeText(Buffer.from([0xed, 0xa0, 0x80]))).toMatchObject({ problem: expect.stringContaining('line 1 holds the byte 0xed') });
    // U+FFFD written as UTF-8 is text like any other.
    expect(decodeText(Buffer.from('a: "\ufffd"\n'))).toEqual({ text: 'a: "\ufffd"\n' });
    const dir = tempRepo({});
    writeFileSync(join(dir, 'Pulumi.l.yaml'), latin1);
    expect(() => loadStackFile(join(dir, 'Pulumi.l.yaml'), 'Pulumi.l.yaml')).toThrow(/the stack file is not UTF-8 text: line 2 holds the byte 0xe9/);
  });
});

describe('the one bounded file reader (readBoundedFileSync, readBoundedFile)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-bounded-'));
  writeFileSync(join(dir, 'ok'), 'abc');
  execFileSync('mkfifo', [join(dir, 'fifo')]);
  symlinkSync('/dev/zero', join(dir, 'zero'));
  symlinkSync('/proc/self/status', join(dir, 'proc'));

  it('reads a regular file up to its limit, refuses one byte more', async () => {
    expect(readBoundedFileSync(join(dir, 'ok'), 3).toString()).toBe('abc');
    expect(() => readBoundedFileSync(join(dir, 'ok'), 2)).toThrow('is larger than 2 bytes (3 bytes)');
    expect((await readBoundedFile(join(dir, 'ok'), 3)).toString()).toBe('abc');
    await expect(readBoundedFile(join(dir, 'ok'), 2)).rejects.toThrow('is larger than 2 bytes (3 bytes)');
  });

  it.each([
    ['fifo', 'is not a regular file (a FIFO): give the path of a file'],
    ['zero', 'is not a regular file (a device): give the path of a file'],
    ['.', 'is not a regular file (a folder): give the path of a file'],
    ['proc', 'is a file of /proc, not a file on disk (its size says nothing of what reading it returns): give the path of a file'],
    ['missing', 'cannot be read (ENOENT: no such file)'],
  ])('refuses %s before reading a byte, with a plain sentence', async (name, message) => {
    expect(() => readBoundedFileSync(join(dir, name), 1024)).toThrow(FileLimitError);
    expect(() => readBoundedFileSync(join(dir, name), 1024)).toThrow(message);
    await expect(readBoundedFile(join(dir, name), 1024)).rejects.toThrow(message);
  });

  it('judges each file by its own file system, also after files of another were read (the answer is kept per device)', () => {
    const at = (name: string) => (name.startsWith('/') ? name : join(dir, name));
    const order = ['ok', 'proc', 'ok', '/sys/kernel/mm/transparent_hugepage/enabled', 'proc', 'ok'].filter((name) => existsSync(at(name)));
    const outcomes = order.map((name) => {
      try {
        return readBoundedFileSync(at(name), 1 << 20).toString();
      } catch (error) {
        return (error as Error).message.replace(/ \(.*/, '');
      }
    });
    expect(outcomes).toEqual(order.map((name) => (name === 'ok' ? 'abc' : name === 'proc' ? 'is a file of /proc, not a file on disk' : 'is a file of /sys, not a file on disk')));
  });

  it('readTextFile: a FIFO or a device is a problem, not a hang; a missing file throws its code', () => {
    expect(readTextFile(join(dir, 'fifo'), MAX_STACK_FILE_BYTES)).toEqual({ problem: 'is not a regular file (a FIFO): give the path of a file', notAFile: true });
    expect(readTextFile(join(dir, 'zero'), MAX_STACK_FILE_BYTES)).toEqual({ problem: 'is not a regular file (a device): give the path of a file', notAFile: true });
    expect(() => readTextFile(join(dir, 'missing'), MAX_STACK_FILE_BYTES)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

  it('the asynchronous reader gives up when the signal aborts', async () => {
    const controller = new AbortController();
    controller.abort(new Error('the run\'s deadline passed'));
    await expect(readBoundedFile(join(dir, 'ok'), 3, controller.signal)).rejects.toThrow('the run\'s deadline passed');
  });
});

describe('a values file or stack file that is not a file on disk: one plain problem, file.unreadable', () => {
  it('a values.yaml linked to /proc/self/status, or to a FIFO: refused unread with its reason', () => {
    const dir = mkdtempSync(join(tmpdir(), 'app-serving-values-'));
    symlinkSync('/proc/self/status', join(dir, 'proc.yaml'));
    const list = new IssueList();
    expect(readValuesFile(join(dir, 'proc.yaml'), list)).toBeUndefined();
    expect(list.items).toEqual([expect.objectContaining({ code: 'file.unreadable', message: expect.stringMatching(/^the values file is a file of \/proc, not a file on disk/) })]);
    execFileSync('mkfifo', [join(dir, 'Pulumi.fifo.yaml')]);
    expect(() => loadStackFile(join(dir, 'Pulumi.fifo.yaml'), 'Pulumi.fifo.yaml')).toThrow(expect.objectContaining({ issues: [expect.objectContaining({ code: 'file.unreadable', message: 'the stack file is not a regular file (a FIFO): give the path of a file' })] }));
  });
});
