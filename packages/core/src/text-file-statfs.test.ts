import * as fs from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { readBoundedFileSync } from './text-file.ts';

// statfs fails once, as a transient error would; node's own statfsSync otherwise. A file of its own:
// the mock holds for the whole file, and text-file.ts keeps its answers per device for the process.
let failNext = false;
vi.mock('node:fs', async (original) => {
  const real = await original<typeof fs>();
  return {
    ...real,
    statfsSync: (...args: Parameters<typeof real.statfsSync>) => {
      if (failNext) {
        failNext = false;
        throw Object.assign(new Error('EIO: i/o error, statfs'), { code: 'EIO' });
      }
      return real.statfsSync(...args);
    },
  };
});

describe('the file system type of a device', () => {
  it('is asked again after a statfs that failed: one failure does not let every later file of /proc pass as a file on disk', () => {
    failNext = true;
    // Unknown type: read as any file (bounded all the same).
    expect(readBoundedFileSync('/proc/self/status', 1 << 20).length).toBeGreaterThan(0);
    expect(() => readBoundedFileSync('/proc/version', 1 << 20)).toThrow('is a file of /proc, not a file on disk');
  });
});
