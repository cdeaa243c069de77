/**
 * Makes text safe for a terminal: every control character (C0, DEL, C1, and the Unicode line and
 * paragraph separators) except the line feed and the tab is shown as a visible escape (`\x1b`,
 * `\r`, `\x07`), so that a model id, a server answer or a folder name cannot clear the screen, move
 * the cursor, rewrite a line or ring the bell. For human output only: JSON stays exact (JSON
 * escapes control characters itself).
 */
export function escapeControlChars(text: string): string {
  return text.replace(CONTROL, (c) => NAMED[c] ?? hex(c.charCodeAt(0)));
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;
const NAMED: Readonly<Record<string, string>> = { '\r': '\\r', '\u000b': '\\v', '\f': '\\f', '\b': '\\b', '\u0000': '\\0' };

function hex(code: number): string {
  return code > 0xff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\x${code.toString(16).padStart(2, '0')}`;
}
