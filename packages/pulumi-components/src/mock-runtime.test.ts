import * as pulumi from '@pulumi/pulumi';
import { describe, expect, it } from 'vitest';
import { recordUnderMocks, redactSecrets, revealSecrets, secretPaths, SECRET_SIG, SECRET_SIG_KEY } from './mock-runtime.ts';

describe('recordUnderMocks', () => {
  it('fails an invoke: nothing may reach a provider', async () => {
    await expect(recordUnderMocks(() => pulumi.runtime.invoke('kubernetes:helm:template', {}))).rejects.toThrow(/unexpected invoke kubernetes:helm:template/);
  });

  it('restores Error.stackTraceLimit, also after a failure', async () => {
    const before = Error.stackTraceLimit;
    let during = -1;
    await recordUnderMocks(() => {
      during = Error.stackTraceLimit;
    });
    await expect(
      recordUnderMocks(() => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(during).toBe(0);
    expect(Error.stackTraceLimit).toBe(before);
  });

  it('reads no call stack for source positions while the program runs (a fifth of render), and restores that after', async () => {
    const stacks: number[] = [];
    await recordUnderMocks(() => {
      new pulumi.ComponentResource('test:index:Component', 'c', {}, {});
      stacks.push((pulumi.Resource as unknown as { callsites: () => unknown[] }).callsites().length);
    });
    expect(stacks).toEqual([0]);
    expect((pulumi.Resource as unknown as { callsites: () => unknown[] }).callsites().length).toBeGreaterThan(0);
  });
});

describe('secret helpers', () => {
  const value = { a: 'plain', b: { [SECRET_SIG_KEY]: SECRET_SIG, value: { c: 'hidden' } }, d: [{ [SECRET_SIG_KEY]: SECRET_SIG, value: 'x' }] };
  it('redact, reveal and locate secrets', () => {
    expect(redactSecrets(value)).toEqual({ a: 'plain', b: '[secret]', d: ['[secret]'] });
    expect(revealSecrets(value)).toEqual({ a: 'plain', b: { c: 'hidden' }, d: ['x'] });
    expect(secretPaths(value)).toEqual(['b', 'd[0]']);
  });
});
