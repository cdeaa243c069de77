import { describe, expect, it } from 'vitest';
import { formatMs } from './clock.ts';
import { parseDuration } from './duration.ts';
import { joinUrl, SseParser, snippet } from './http.ts';
import { displayUrl, headerSecrets, Redactor, urlSecrets } from './redact.ts';

describe('parseDuration', () => {
  it('reads the forms the CLI flags take', () => {
    expect([parseDuration('500ms'), parseDuration('30s'), parseDuration('5m'), parseDuration('1h'), parseDuration('1m30s'), parseDuration('90'), parseDuration('1.5s')]).toEqual([
      500, 30_000, 300_000, 3_600_000, 90_000, 90_000, 1500,
    ]);
  });

  it('rejects anything else, naming the forms', () => {
    for (const bad of ['', '5 m', '5x', 'm', '-1s', '1s2']) expect(() => parseDuration(bad)).toThrow(/is not a duration: use e\.g\. 500ms, 30s, 5m, 1h or 1m30s/);
  });

  it('rejects durations a timer cannot hold (longer than 2^31 − 1 ms)', () => {
    expect(parseDuration('596h')).toBe(596 * 3_600_000);
    for (const bad of ['600h', '1200h', '99999999999999999999', '1e400']) expect(() => parseDuration(bad)).toThrow(/too long|is not a duration/);
    expect(() => parseDuration('600h')).toThrow('"600h" is too long: at most 24 days (596h) can be timed');
  });
});

describe('formatMs', () => {
  it('prints durations for people', () => {
    expect([formatMs(0), formatMs(999.6), formatMs(1000), formatMs(1530), formatMs(12_345), formatMs(60_000), formatMs(125_000)]).toEqual(['0 ms', '1000 ms', '1 s', '1.5 s', '12 s', '1 min', '2 min 5 s']);
  });
});

describe('redaction', () => {
  it('removes header values and the credential after an auth scheme', () => {
    const r = new Redactor(headerSecrets({ Authorization: 'Bearer abc123xyz', 'X-Api-Key': 'k3y-value', Host: 'example.com' }));
    expect(r.text('got Bearer abc123xyz and abc123xyz and k3y-value at example.com')).toBe('got [redacted] and [redacted] and [redacted] at example.com');
    expect(r.deep({ a: ['abc123xyz', 1, null], b: { c: 'x k3y-value' } })).toEqual({ a: ['[redacted]', 1, null], b: { c: 'x [redacted]' } });
  });

  it('removes URL credentials and query values', () => {
    expect(urlSecrets('https://user:p%40ss@h/x?key=s3cret&v=1')).toEqual(['p@ss', 'user:p@ss', 's3cret', '1']);
    expect(displayUrl('https://user:pass@h:8443/base/?key=s3cret#x')).toBe('https://h:8443/base');
    expect(displayUrl('::')).toBe('[invalid URL]');
  });
});

describe('redaction of every encoding of a secret', () => {
  it('JSON-escaped (also twice), percent-encoded, base64 (the Basic credential of a URL)', () => {
    const token = 'tok"en\\x1234';
    const r = new Redactor([...headerSecrets({ Authorization: `Bearer ${token}` }), ...urlSecrets('http://user:PASSWORD1@h/')]);
    const echoed = JSON.stringify({ error: JSON.stringify({ headers: { authorization: `Bearer ${token}`, basic: `Basic ${Buffer.from('user:PASSWORD1').toString('base64')}` } }) });
    const out = r.text(`${echoed} ${encodeURIComponent(token)} http://user:PASSWORD1@h/`);
    expect(out).not.toMatch(/tok|PASSWORD1|dXNlcjpQQVNTV09SRDE/);
    expect(out).toContain('http://[redacted]@h/');
  });
});

describe('HTTP helpers', () => {
  it('appends paths to a base URL, keeping its query', () => {
    expect(joinUrl('http://h:1', '/v1/models').toString()).toBe('http://h:1/v1/models');
    expect(joinUrl('http://h:1/ns/name/', '/v1/models').toString()).toBe('http://h:1/ns/name/v1/models');
    expect(joinUrl('http://h:1/?api-version=2', '/v1/models').toString()).toBe('http://h:1/v1/models?api-version=2');
  });

  it('cuts a body to 200 bytes on one line', () => {
    expect(snippet('a\nb\tc')).toBe('a b c');
    expect(snippet('é'.repeat(150))).toBe(`${'é'.repeat(100)}…`);
  });

  it('parses server-sent events across chunk boundaries', () => {
    const p = new SseParser();
    expect(p.feed('data: {"a"')).toEqual([]);
    expect(p.feed(':1}\r')).toEqual([]);
    expect(p.feed('\n\r\nevent: x\ndata: line1\ndata:line2\n\n')).toEqual(['{"a":1}', 'line1\nline2']);
    expect(p.feed('data: [DONE]\n')).toEqual([]);
    expect(p.pending).toBe('[DONE]\n');
  });
});
