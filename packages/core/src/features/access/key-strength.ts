/**
 * How hard an API key is to guess, estimated as zxcvbn estimates a password (Wheeler, "zxcvbn:
 * Low-Budget Password Strength Estimation", USENIX Security 2016) but for machine keys: the key is
 * cut into the cheapest sequence of pieces — a repeated character or block, a run of the alphabet
 * or of digits, a walk on the keyboard, a common word — and every other character costs what a
 * random character of the key's alphabet costs. The sum, in bits, is how many guesses an attacker
 * who tries such patterns first needs (log2). Small and dependency-free: the keys it judges are
 * meant to be random (`openssl rand -base64 32`), so it only has to find what is not.
 */

/** Why a piece of a key is cheap to guess. */
export type WeakPattern = 'repeat' | 'sequence' | 'keyboard' | 'word';

/** A key's estimate: bits, and the pattern that saved the most bits (null when none did). */
export interface KeyStrength {
  readonly bits: number;
  readonly weakest: WeakPattern | null;
}

// Common words and password roots an attacker tries first (four letters or more; compared in lower
// case, after undoing the usual substitutions: 0→o, 1→l/i, 3→e, 4→a, 5→s, 7→t, @→a, $→s).
const WORDS = [
  'password', 'passwd', 'passphrase', 'secret', 'admin', 'administrator', 'root', 'letmein', 'welcome', 'qwerty', 'monkey', 'dragon', 'master', 'login',
  'default', 'changeme', 'change', 'test', 'testing', 'guest', 'user', 'apikey', 'token', 'access', 'private', 'public', 'shadow', 'sunshine', 'princess',
  'football', 'baseball', 'iloveyou', 'trustno', 'superman', 'batman', 'hello', 'freedom', 'whatever', 'starwars', 'michael', 'jennifer', 'jordan',
  'hunter', 'ranger', 'buster', 'soccer', 'hockey', 'killer', 'pepper', 'ginger', 'cookie', 'summer', 'winter', 'spring', 'autumn', 'orange', 'banana',
  'chocolate', 'computer', 'internet', 'server', 'serving', 'service', 'cluster', 'kubernetes', 'deploy', 'model', 'prod', 'production', 'staging',
  'develop', 'developer', 'company', 'example', 'sample', 'demo', 'temp', 'backup', 'system', 'manager', 'office', 'secure', 'security',
  'gateway', 'istio', 'envoy', 'openai', 'vllm', 'harbor', 'pulumi', 'client', 'customer', 'account', 'mypass', 'love', 'angel', 'baby', 'blue',
  'black', 'white', 'green', 'purple', 'silver', 'golden', 'flower', 'tiger', 'lucky', 'happy', 'magic', 'matrix', 'mustang', 'thunder', 'cheese',
  'coffee', 'pizza', 'money', 'google', 'apple', 'microsoft', 'amazon', 'github', 'gitlab', 'docker', 'linux', 'ubuntu', 'windows', 'keyboard',
  'nothing', 'anything', 'something', 'please', 'open', 'sesame', 'enter', 'alpha', 'beta', 'gamma', 'delta', 'omega', 'charlie', 'foxtrot',
  'hotel', 'india', 'juliet', 'kilo', 'lima', 'mike', 'november', 'oscar', 'papa', 'quebec', 'romeo', 'sierra', 'tango', 'uniform', 'victor',
  'whiskey', 'xray', 'yankee', 'zulu', 'january', 'february', 'march', 'april', 'june', 'july', 'august', 'september', 'october', 'december',
  'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'spider', 'qazwsx', 'asdf', 'zxcv', 'hjkl',
];
const WORD_BITS = Math.log2(WORDS.length);

const LEET: Readonly<Record<string, string>> = { '0': 'o', '1': 'l', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', $: 's', '!': 'i', '|': 'l', '+': 't' };

// US keyboard rows, unshifted and shifted; a row sits half a key to the right of the one above it.
const ROWS = ['`1234567890-=', 'qwertyuiop[]\\', "asdfghjkl;'", 'zxcvbnm,./'];
const SHIFTED = ['~!@#$%^&*()_+', 'QWERTYUIOP{}|', 'ASDFGHJKL:"', 'ZXCVBNM<>?'];
// Where each row starts under the row above it, in keys: "q" under "1"–"2", "a" under "q"–"w", "z" under "a"–"s".
const ROW_OFFSET = [0, 1, 0, 0];

/** The tables, built on first use (no module does work at import time). */
let tables: { readonly words: ReadonlySet<string>; readonly longest: number; readonly keys: ReadonlyMap<string, readonly [number, number]> } | undefined;
function lookup() {
  if (!tables) {
    const keys = new Map<string, readonly [number, number]>();
    for (const rows of [ROWS, SHIFTED]) rows.forEach((row, r) => [...row].forEach((c, i) => keys.set(c, [r, i])));
    tables = { words: new Set(WORDS), longest: Math.max(...WORDS.map((w) => w.length)), keys };
  }
  return tables;
}

/** Whether two characters are next to each other on a US keyboard (shift ignored). */
function adjacent(a: string, b: string): boolean {
  const { keys } = lookup();
  const p = keys.get(a);
  const q = keys.get(b);
  if (!p || !q) return false;
  const [r1, c1] = p;
  const [r2, c2] = q;
  if (r1 === r2) return Math.abs(c1 - c2) === 1;
  if (Math.abs(r1 - r2) !== 1) return false;
  // The lower row's key i touches the upper row's keys i + offset and i + offset + 1.
  const [upper, lower] = r1 < r2 ? [c1, c2] : [c2, c1];
  const offset = ROW_OFFSET[Math.max(r1, r2)]!;
  return upper === lower + offset || upper === lower + offset + 1;
}

/** Bits of one character drawn at random from the classes of characters the key uses. */
function characterBits(chars: readonly string[]): number {
  const hex = chars.every((c) => /[0-9a-f]/.test(c)) || chars.every((c) => /[0-9A-F]/.test(c));
  if (hex) return 4;
  let size = 0;
  if (chars.some((c) => /[0-9]/.test(c))) size += 10;
  if (chars.some((c) => /[a-z]/.test(c))) size += 26;
  if (chars.some((c) => /[A-Z]/.test(c))) size += 26;
  if (chars.some((c) => /[\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e]/.test(c))) size += 33;
  // Beyond ASCII: count what is there, generously (an emoji key draws from thousands, but people pick few).
  const other = new Set(chars.filter((c) => c.codePointAt(0)! > 0x7e)).size;
  if (other > 0) size += Math.max(100, other);
  return Math.log2(Math.max(size, 2));
}

interface Piece {
  readonly end: number;
  readonly bits: number;
  readonly pattern: WeakPattern;
}

/** Every cheap piece starting at `i`. */
function piecesAt(chars: readonly string[], lower: readonly string[], i: number, charBits: number): Piece[] {
  const out: Piece[] = [];
  const n = chars.length;
  // One character repeated (3 or more).
  let j = i + 1;
  while (j < n && chars[j] === chars[i]) j += 1;
  if (j - i >= 3) out.push({ end: j, bits: charBits + Math.log2(j - i), pattern: 'repeat' });
  // A block repeated: "abcabcabc", "ab12ab12".
  for (let size = 2; size <= 32 && i + 2 * size <= n; size += 1) {
    let k = 1;
    const same = (at: number) => {
      for (let t = 0; t < size; t += 1) if (chars[at + t] !== chars[i + t]) return false;
      return true;
    };
    while (i + (k + 1) * size <= n && same(i + k * size)) k += 1;
    if (k >= 2) out.push({ end: i + k * size, bits: size * charBits + Math.log2(k), pattern: 'repeat' });
  }
  // A run with a constant step of code points: "abcdef", "13579", "zyx".
  if (i + 2 < n) {
    const step = chars[i + 1]!.codePointAt(0)! - chars[i]!.codePointAt(0)!;
    if (step !== 0 && Math.abs(step) <= 3) {
      let k = i + 1;
      while (k + 1 < n && chars[k + 1]!.codePointAt(0)! - chars[k]!.codePointAt(0)! === step) k += 1;
      if (k - i + 1 >= 3) out.push({ end: k + 1, bits: Math.log2(62) + Math.log2(k - i + 1) + Math.log2(2 * Math.abs(step)), pattern: 'sequence' });
    }
  }
  // A walk on the keyboard (4 keys or more, each next to the last): "qwerty", "1qaz2wsx", "asdf;lkj".
  let walk = i + 1;
  while (walk < n && adjacent(chars[walk - 1]!, chars[walk]!)) walk += 1;
  if (walk - i >= 4) out.push({ end: walk, bits: Math.log2(94) + (walk - i - 1) * Math.log2(3), pattern: 'keyboard' });
  // A common word, in any case, with the usual substitutions.
  const { words, longest } = lookup();
  let word = '';
  for (let k = i; k < n && k - i < longest; k += 1) {
    word += lower[k];
    if (word.length >= 4 && words.has(word)) {
      const cased = chars.slice(i, k + 1);
      const caseBits = cased.some((c) => /[A-Z]/.test(c)) && cased.some((c) => /[a-z]/.test(c)) ? Math.log2(word.length + 1) : 0;
      const leetBits = cased.some((c) => LEET[c] !== undefined) ? 1 : 0;
      out.push({ end: k + 1, bits: WORD_BITS + caseBits + leetBits, pattern: 'word' });
    }
  }
  return out;
}

/**
 * Estimated bits of a key (code points, not UTF-16 units): the cheapest cut of the key into
 * random characters and weak pieces. Keys longer than 256 code points are judged on their first
 * 256 (more costs time and says nothing new: 256 random characters are far past any threshold).
 */
export function keyStrength(key: string, extraWords: readonly string[] = []): KeyStrength {
  const chars = [...key].slice(0, 256);
  const n = chars.length;
  if (n === 0) return { bits: 0, weakest: null };
  const charBits = characterBits(chars);
  const lower = chars.map((c) => LEET[c] ?? c.toLowerCase());
  const extra = extraWords.map((w) => w.toLowerCase()).filter((w) => w.length >= 3);
  // best[i]: the fewest bits of chars[0..i); how[i]: the pattern of the last piece.
  const best = new Array<number>(n + 1).fill(Infinity);
  const via = new Array<WeakPattern | null>(n + 1).fill(null);
  const from = new Array<number>(n + 1).fill(0);
  best[0] = 0;
  for (let i = 0; i < n; i += 1) {
    if (best[i]! + charBits < best[i + 1]!) {
      best[i + 1] = best[i]! + charBits;
      via[i + 1] = null;
      from[i + 1] = i;
    }
    const pieces = piecesAt(chars, lower, i, charBits);
    for (const w of extra) if (lower.slice(i, i + w.length).join('') === w) pieces.push({ end: i + w.length, bits: 1, pattern: 'word' });
    for (const piece of pieces) {
      if (best[i]! + piece.bits < best[piece.end]!) {
        best[piece.end] = best[i]! + piece.bits;
        via[piece.end] = piece.pattern;
        from[piece.end] = i;
      }
    }
  }
  // The pattern that saved the most bits against random characters.
  const saved = new Map<WeakPattern, number>();
  for (let end = n; end > 0; end = from[end]!) {
    const pattern = via[end];
    if (pattern) saved.set(pattern, (saved.get(pattern) ?? 0) + (end - from[end]!) * charBits - (best[end]! - best[from[end]!]!));
  }
  const weakest = [...saved.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  return { bits: best[n]!, weakest };
}
