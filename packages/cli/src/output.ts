import pc from 'picocolors';
import { escapeControlChars, INVISIBLE_FORMAT_CHARS, redactUrlCredentials } from '@app-serving/core';

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
  /** Writes `text` to stdout as it is, after the same redaction (JSON or XML a command formatted itself). */
  raw(text: string): void;
}

export interface OutputOptions {
  /** `--no-color` sets this to false. */
  readonly color?: boolean;
  readonly stdout?: NodeJS.WriteStream;
  readonly stderr?: NodeJS.WriteStream;
  readonly env?: NodeJS.ProcessEnv;
}

/** Credentials in URLs redacted: for text that is cut before it is printed (redact whole, then cut). */
export const redactCredentials = (text: string): string => redactUrlCredentials(text);

/** The SGR colour sequences picocolors writes: the only escape sequences human output may hold. */
// eslint-disable-next-line no-control-regex
const SGR = /(\u001b\[[0-9;]*m)/;

/**
 * Human text fit for a terminal: credentials in URLs redacted, and every control character a
 * server, a file or a folder name brought in shown as an escape (`\x1b`, `\r`), keeping only our
 * own colour codes when colour is on.
 */
export function safeText(text: string, colour: boolean): string {
  const redacted = redactUrlCredentials(text);
  if (!colour) return escapeControlChars(redacted);
  return redacted
    .split(SGR)
    .map((part, i) => (i % 2 === 1 ? part : escapeControlChars(part)))
    .join('');
}

/**
 * JSON text fit for a terminal and for machines: credentials in URLs redacted, and the control
 * characters JSON.stringify leaves raw (DEL, C1, U+2028/9, bidirectional and zero-width
 * characters) written as `\u` escapes, which parse back to the very same strings.
 */
export function safeJson(text: string): string {
  return redactUrlCredentials(text).replace(JSON_ESCAPED, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** What JSON.stringify leaves raw and a terminal would act on: DEL, C1, U+2028/9, bidirectional and zero-width characters. */
const JSON_ESCAPED = new RegExp(`[\\u007f-\\u009f\\u2028\\u2029]|${INVISIBLE_FORMAT_CHARS.source}`, 'g');

/**
 * The output of one run: colour only on a TTY, never when NO_COLOR is set or --no-color given.
 * Every line passes through {@link safeText} (JSON through the URL-credential redaction only: it
 * escapes control characters itself and must stay exact).
 */
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
    out: (line = '') => void stdout.write(`${safeText(line, enabled)}\n`),
    err: (line = '') => void stderr.write(`${safeText(line, enabled && Boolean(stderr.isTTY))}\n`),
    json: (value) => void stdout.write(`${safeJson(JSON.stringify(value, null, 2))}\n`),
    raw: (text) => void stdout.write(safeJson(text)),
  };
}

/** The exit code after the reader of stdout closed it: 128 + SIGPIPE, as a shell reports git's. */
export const EXIT_CLOSED_PIPE = 141;

/** The exit code when stdout cannot be written (a full disk, `> /dev/full`): as for a report file that cannot be written. */
export const EXIT_OUTPUT_UNWRITABLE = 2;

/**
 * When the reader of stdout goes away (`app-serving plan | head`, quitting `less`), stop at once
 * and quietly, as git and kubectl do: exit 141 (128 + SIGPIPE), no stack trace. Any other error
 * writing stdout (`ENOSPC` on a full disk, `> /dev/full`) is one line on stderr and exit 2, never
 * a stack trace. An error writing stderr is ignored (there is nowhere left to say it). Called once
 * by the `app-serving` binary.
 */
export function exitQuietlyOnClosedPipe(stdout: NodeJS.WriteStream = process.stdout, stderr: NodeJS.WriteStream = process.stderr, exit: (code: number) => void = process.exit): void {
  let failed = false;
  stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return exit(EXIT_CLOSED_PIPE);
    if (failed) return;
    failed = true;
    try {
      stderr.write(`error: cannot write the output (${error.code ?? 'error'}${error.code === 'ENOSPC' ? ': no space left on the device' : ''})\n`);
    } catch {
      // stderr is gone too
    }
    exit(EXIT_OUTPUT_UNWRITABLE);
  });
  stderr.on('error', () => undefined);
}
