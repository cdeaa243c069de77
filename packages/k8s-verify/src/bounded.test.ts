import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bounded, clip, jsonTooDeep, parseJson, readBoundedFile } from './bounded.ts';
import { SseParser } from './http.ts';
import { Redactor } from './redact.ts';

const dir = mkdtempSync(join(tmpdir(), 'k8s-verify-bounded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('reading what others wrote, bounded', () => {
  it('readBoundedFile: a regular file up to its limit; a device, a FIFO, a folder or a larger file refused', async () => {
    writeFileSync(join(dir, 'ok'), 'abc');
    expect((await readBoundedFile(join(dir, 'ok'), 3)).toString()).toBe('abc');
    await expect(readBoundedFile(join(dir, 'ok'), 2)).rejects.toThrow(/larger than 2 bytes/);
    await expect(readBoundedFile('/dev/zero', 1024)).rejects.toThrow(/not a regular file \(a device\)/);
    expect(spawnSync('mkfifo', [join(dir, 'fifo')]).status).toBe(0);
    await expect(readBoundedFile(join(dir, 'fifo'), 1024)).rejects.toThrow(/a FIFO/);
    await expect(readBoundedFile(dir, 1024)).rejects.toThrow(/a folder/);
  });

  it('JSON deeper than the limit is refused before it is parsed; strings do not count', () => {
    expect(jsonTooDeep('['.repeat(300))).toBe(true);
    expect(jsonTooDeep(`["${'['.repeat(300)}"]`)).toBe(false);
    expect(jsonTooDeep(`{"a":"\\"[[["}`)).toBe(false);
    expect(() => parseJson('['.repeat(8 * 1024 * 1024))).toThrow(/nested deeper than 256/);
    expect(parseJson('{"a":[1,[2]]}')).toEqual({ a: [1, [2]] });
  });

  it('clip and bounded: long strings cut with a count, long lists cut', () => {
    expect(clip('abcdef', 4)).toBe('abc… (3 more characters)');
    expect(clip('abc', 4)).toBe('abc');
    const value = bounded({ s: 'x'.repeat(5000), list: Array.from({ length: 500 }, (_, i) => i) });
    expect(value.s.length).toBeLessThan(2100);
    expect(value.list).toHaveLength(100);
  });
});

describe('SSE line endings', () => {
  it('CR-only lines end as they arrive, also when a CR ends a chunk; a CR LF split across chunks is one line end', () => {
    const parser = new SseParser();
    const text = 'data: a\r\rdata: b\r\n\r\ndata: [DONE]\r\r';
    const events = [...text].flatMap((c) => parser.feed(c));
    expect(events).toEqual(['a', 'b', '[DONE]']);
  });
});

describe('redaction of a text cut through a secret', () => {
  it('the start of a secret before an ellipsis is redacted', () => {
    const redactor = new Redactor(['vtok-SECRET-abcdef']);
    expect(redactor.text('got Bearer vtok-SEC…')).toBe('got Bearer [redacted]…');
    expect(redactor.text('a plain word…')).toBe('a plain word…');
  });
});
