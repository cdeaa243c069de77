import { afterEach, describe, expect, it, vi } from 'vitest';

// A command whose body has a bug: the CLI must say so, ask for a report, and exit 70.
vi.mock('./commands/plan.ts', () => ({
  default: async () => {
    throw new TypeError("Cannot read properties of undefined (reading 'slug')");
  },
}));

const { run, printIssues, issueJson } = await import('./main.ts');
const { createOutput } = await import('./output.ts');

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

describe('issues are redacted whole, then cut (issue 34)', () => {
  it('a credential that the 500-character cut would go through is redacted, not half shown', () => {
    let out = '';
    const sink = { write: (text: string) => ((out += text), true), isTTY: false } as unknown as NodeJS.WriteStream;
    const output = createOutput({ stdout: sink, stderr: sink, env: {} });
    const message = `${'x'.repeat(470)} see http://admin:LONG-PASSWORD-CANARY-0123456789@prom:9090/ and more`;
    printIssues([{ code: 'config.invalid', path: 'prometheus.address', message }], output);
    expect(out).not.toContain('LONG-PASS');
    expect(out).toContain('http://[redacted]@');
    expect(JSON.stringify(issueJson({ code: 'config.invalid', path: 'a', message: `${'y'.repeat(1990)} http://u:SECOND-CANARY-PASSWORD@h` }))).not.toContain('SECOND-CAN');
  });
});
