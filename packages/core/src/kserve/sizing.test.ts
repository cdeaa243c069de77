import { describe, expect, it } from 'vitest';
import { kserveSizing, parseModelSize } from './sizing.ts';

describe('kserveSizing', () => {
  it.each([
    [0.5, 1, '16Gi', '32Gi'],
    [7, 1, '16Gi', '32Gi'],
    [8, 1, '16Gi', '32Gi'],
    [13, 2, '64Gi', '64Gi'],
    [34, 2, '64Gi', '64Gi'],
    [70, 4, '128Gi', '128Gi'],
    [405, 4, '128Gi', '128Gi'],
  ])('%sB → %i GPUs', (billions, gpus, memoryRequest, memoryLimit) => {
    expect(kserveSizing(billions)).toEqual({ gpus, memoryRequest, memoryLimit });
  });
});

describe('parseModelSize', () => {
  it('reads billions of parameters', () => {
    expect(parseModelSize('7B')).toBe(7);
    expect(parseModelSize('0.5b')).toBe(0.5);
    expect(parseModelSize('70')).toBe(70);
    expect(parseModelSize('7M')).toBeUndefined();
    expect(parseModelSize('0B')).toBeUndefined();
    expect(parseModelSize('big')).toBeUndefined();
  });
});
