import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Secret, isSecret } from './secret.ts';

describe('Secret', () => {
  const secret = Secret.plain('hunter2');

  it('never shows its value when printed', () => {
    expect(String(secret)).toBe('[secret]');
    expect(`${secret}`).toBe('[secret]');
    expect(JSON.stringify({ token: secret })).toBe('{"token":"[secret]"}');
    expect(inspect({ token: secret })).not.toContain('hunter2');
    expect(inspect(secret, { showHidden: true, depth: 5 })).not.toContain('hunter2');
  });

  it('reveals its value on request', () => {
    expect(secret.reveal()).toBe('hunter2');
    expect(secret.encrypted).toBe(false);
  });

  it('cannot reveal a value that is still encrypted', () => {
    const encrypted = Secret.encrypted();
    expect(encrypted.encrypted).toBe(true);
    expect(() => encrypted.reveal()).toThrow(/still encrypted/);
  });

  it('is recognised by isSecret', () => {
    expect(isSecret(secret)).toBe(true);
    expect(isSecret('hunter2')).toBe(false);
    expect(isSecret({ reveal: () => 'x' })).toBe(false);
  });
});
