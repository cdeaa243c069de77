import pc from 'picocolors';

/** Colours that are on only on a TTY, never with NO_COLOR or --no-color. */
export type Colors = ReturnType<typeof pc.createColors>;

/** Where a command writes, and whether it may use colour. */
export interface Output {
  readonly color: Colors;
  /** True when stdout is a terminal (progress displays only then). */
  readonly tty: boolean;
  out(line?: string): void;
  err(line?: string): void;
  json(value: unknown): void;
}

export interface OutputOptions {
  /** `--no-color` sets this to false. */
  readonly color?: boolean;
  readonly stdout?: NodeJS.WriteStream;
  readonly stderr?: NodeJS.WriteStream;
  readonly env?: NodeJS.ProcessEnv;
}

/** The output of one run: colour only on a TTY, never when NO_COLOR is set or --no-color given. */
export function createOutput(options: OutputOptions = {}): Output {
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const env = options.env ?? process.env;
  const tty = Boolean(stdout.isTTY);
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  const enabled = tty && !noColor && options.color !== false && env.TERM !== 'dumb';
  return {
    color: pc.createColors(enabled),
    tty,
    out: (line = '') => void stdout.write(`${line}\n`),
    err: (line = '') => void stderr.write(`${line}\n`),
    json: (value) => void stdout.write(`${JSON.stringify(value, null, 2)}\n`),
  };
}
