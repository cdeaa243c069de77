/**
 * Quotes one argument for a POSIX shell (sh, bash, zsh): returned as is when it holds only
 * characters no shell treats specially, else in single quotes, where nothing is special; a single
 * quote inside is written `'\''`. What the user pastes runs exactly the command printed: no `;`,
 * `$(…)`, `${IFS}`, glob or newline in a value can start another command.
 *
 * Hand-written rather than a dependency: single-quoting is the whole rule, and libraries such as
 * `shell-quote` escape with backslashes, which newlines and some shells do not survive.
 */
export function shellQuote(arg: string): string {
  // "=" is plain except first (zsh expands "=cmd"); "~" is never in the plain set (tilde expansion).
  if (/^[A-Za-z0-9_\/.:@%+,-][A-Za-z0-9_\/.:@%+=,-]*$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** A command line for people to paste: every argument quoted with {@link shellQuote}. */
export function shellCommand(args: readonly string[]): string {
  return args.map(shellQuote).join(' ');
}
