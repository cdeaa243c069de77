import { describe, expect, it } from 'vitest';
import { compareText } from './text-order.ts';

describe('compareText', () => {
  it('orders without regard to case first, then by code unit, whatever the locale', () => {
    expect(['Pulumi.yaml', 'models/a.yaml', 'b', 'B', 'a'].sort(compareText)).toEqual(['a', 'B', 'b', 'models/a.yaml', 'Pulumi.yaml']);
    expect(compareText('x', 'x')).toBe(0);
  });
});
