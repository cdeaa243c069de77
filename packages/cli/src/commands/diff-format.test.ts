import { describe, expect, it } from 'vitest';
import { showValue } from './diff-format.ts';

describe('showValue: redacted whole, then cut (issue 34)', () => {
  it('a credential the 80-character cut would go through is redacted, not half shown', () => {
    const shown = showValue(`${'x'.repeat(40)} https://robot:HARBOR-PASSWORD-CANARY@harbor.example.com/x`);
    expect(shown).not.toContain('HARBOR-PASS');
    expect(shown).toContain('https://[redacted]@');
    expect(showValue('https://charts.example.com/?token=TOKEN-CANARY-0123456789')).toBe('"https://charts.example.com/?token=[redacted]"');
  });
});
