import { afterEach, describe, expect, it, vi } from 'vitest';

// A command whose body has a bug: the CLI must say so, ask for a report, and exit 70.
vi.mock('./commands/plan.ts', () => ({
  default: async () => {
    throw new TypeError("Cannot read properties of undefined (reading 'slug')");
  },
}));

const { run } = await import('./main.ts');

function capture() {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  return { out: () => stdout, err: () => stderr };
}

afterEach(() => vi.restoreAllMocks());

describe('internal errors', () => {
  it('exit 70 with a request to report, no stack trace', async () => {
    const io = capture();
    expect(await run(['node', 'app-serving', 'plan'], {})).toBe(70);
    expect(io.err()).toContain("internal error: Cannot read properties of undefined (reading 'slug')");
    expect(io.err()).toMatch(/This is a bug in app-serving \S+; please report it at https:\/\/github\.com\/app-serving\/app-serving\/issues with the command you ran \(add --debug for the stack trace\)\./);
    expect(io.err()).not.toContain('    at ');
  });

  it('shows the stack trace with --debug', async () => {
    const io = capture();
    expect(await run(['node', 'app-serving', '--debug', 'plan'], {})).toBe(70);
    expect(io.err()).toContain('    at ');
  });
});

describe('colour', () => {
  it('is used on a terminal unless NO_COLOR is set or --no-color is given', async () => {
    const tty = process.stdout.isTTY;
    Object.defineProperty(process.stdout, 'isTTY', { value: true, configurable: true });
    try {
      for (const [args, env, coloured] of [
        [['validate'], {}, true],
        [['validate'], { NO_COLOR: '1' }, false],
        [['--no-color', 'validate'], {}, false],
      ] as const) {
        const io = capture();
        await run(['node', 'app-serving', ...args, '--stack', '../../apps/app-serving/Pulumi.example.yaml', '--models-dir', '../../models'], env);
        expect(/\u001b\[/.test(io.out()), JSON.stringify({ args, env })).toBe(coloured);
        vi.restoreAllMocks();
      }
    } finally {
      Object.defineProperty(process.stdout, 'isTTY', { value: tty, configurable: true });
    }
  });
});
