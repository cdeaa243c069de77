/**
 * Makes text safe for a terminal: every control character (C0, DEL, C1, and the Unicode line and
 * paragraph separators) except the line feed and the tab is shown as a visible escape (`\x1b`,
 * `\r`, `\x07`), so that a model id, a server answer or a folder name cannot clear the screen, move
 * the cursor, rewrite a line or ring the bell. So are the invisible format characters that change
 * what a line appears to say: bidirectional controls (U+202E turns `txt.exe` around; Trojan Source,
 * CVE-2021-42574) and zero-width characters (U+200B, U+FEFF, …), as `\u202e`. For human output
 * only: JSON stays exact (JSON output writes the same characters as `\u` escapes).
 */
export function escapeControlChars(text: string): string {
  return text.replace(CONTROL, (c) => NAMED[c] ?? hex(c.charCodeAt(0)));
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/** The invisible format characters of {@link escapeControlChars} (bidirectional and zero-width), for outputs that escape in their own syntax (JSON, XML). */
export const INVISIBLE_FORMAT_CHARS = /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
const NAMED: Readonly<Record<string, string>> = { '\r': '\\r', '\u000b': '\\v', '\f': '\\f', '\b': '\\b', '\u0000': '\\0' };

function hex(code: number): string {
  return code > 0xff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\x${code.toString(16).padStart(2, '0')}`;
}
