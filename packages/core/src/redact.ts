/**
 * The one finder of credentials in URLs: `scheme://user:password@host`, and query or fragment
 * values such as `?token=…` or `#access_token=…`. Found in any text (an error message, a chart
 * repository, a `--base-url`, a whole `plan --json`), they are replaced by `[redacted]` before the
 * text is printed; validate refuses a stack URL that holds one ({@link hasUrlCredentials}); verify's
 * anonymous request drops them ({@link withoutUrlCredentials}).
 *
 * URLs are read as WHATWG URL (what Node's `fetch`/`http` and browsers parse) and curl read them:
 * - the authority ends at the first `/`, `?` or `#` (and `\` for the special schemes `http`,
 *   `https`, `ws`, `wss`, `ftp`), and the LAST `@` inside it ends the user information: in
 *   `http://admin:P@SS@prom:9090` the password is `P@SS`;
 * - a special scheme takes any number of `/` or `\` after its colon, none included:
 *   `http:\\admin:pw@prom` and `http:admin:pw@prom` are `http://admin:pw@prom/`;
 * - a password with a raw `/` makes the URL unparseable (`http://admin:pa/ss@prom`): what looks like
 *   `user:<not a port>` before the last `@` of the same word is redacted all the same.
 */
const REDACTED = '[redacted]';

/**
 * Query and fragment parameters whose values are credentials, as real services name them
 * (compared in lower case, `-` read as `_`):
 * - OAuth 2.0: `access_token` (RFC 6750 §2.3, and the implicit flow's `#access_token=`),
 *   `id_token`, `refresh_token`, `code` (the authorization code), `client_secret` (RFC 6749);
 * - GitLab: `private_token`, `job_token` (docs.gitlab.com, REST API authentication);
 * - Google Cloud Storage signed URLs: `X-Goog-Signature`, `X-Goog-Credential`; the V2 `Signature`,
 *   `GoogleAccessId`; Google APIs' `key`;
 * - AWS SigV4 presigned URLs: `X-Amz-Signature`, `X-Amz-Credential`, `X-Amz-Security-Token`; SigV2
 *   `Signature`, `AWSAccessKeyId`;
 * - Azure Storage SAS: `sig`;
 * - common API conventions: `token`, `auth`, `authorization`, `api_key`, `apikey`, `key`,
 *   `password`, `passwd`, `pass`, `pwd`, `secret`, `signature`, `sas`, `jwt`, `session_token`,
 *   `access_key`, `secret_key`;
 * and any name ending in `_token`, `_secret`, `_password`, `_signature`, `_apikey` or `_api_key`.
 */
const SECRET_PARAMETERS = new Set([
  'access_token',
  'id_token',
  'refresh_token',
  'code',
  'client_secret',
  'private_token',
  'job_token',
  'x_goog_signature',
  'x_goog_credential',
  'signature',
  'googleaccessid',
  'key',
  'x_amz_signature',
  'x_amz_credential',
  'x_amz_security_token',
  'awsaccesskeyid',
  'sig',
  'token',
  'auth',
  'authorization',
  'api_key',
  'apikey',
  'password',
  'passwd',
  'pass',
  'pwd',
  'secret',
  'sas',
  'jwt',
  'session_token',
  'access_key',
  'secret_key',
]);
const SECRET_SUFFIX = /_(token|secret|password|signature|apikey|api_key)$/;

/** Whether a query or fragment parameter's name is one of a credential. */
export function isSecretParameter(name: string): boolean {
  const normal = safeDecode(name).trim().toLowerCase().replace(/-/g, '_');
  return SECRET_PARAMETERS.has(normal) || SECRET_SUFFIX.test(normal);
}

const SPECIAL_SCHEMES = new Set(['http', 'https', 'ws', 'wss', 'ftp', 'file']);

// A scheme (a letter, then letters, digits, "+", "-", "."), its colon, and what may follow it: "//"
// for any scheme, any run of "/" and "\" (or none) for a special one.
// (Tried only where a run of scheme characters starts, and at most 32 long: linear in the text.)
const SCHEME = /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{0,31}):(\/\/|[\\/]*)/g;
// Where a word of text ends (white space, quotes, angle brackets, a backtick).
const WORD_END = /[\s"'<>`]/;
// A parameter and its value after "?", "&", ";" or "#" (a fragment's parameters too).
const PARAMETER = /([?&;#])([^=?&;#\s"'<>`]+)=([^&#\s"'<>`]*)/g;

/** `text` with the user information of every URL, and credential query and fragment values, replaced by `[redacted]`. */
export function redactUrlCredentials(text: string): string {
  if (!text.includes(':') && !text.includes('=')) return text;
  return redactParameters(redactUserInfo(text));
}

/**
 * The first index at or after `from` whose character `stop` accepts (or the text's length), for
 * `from`s that never decrease: a scan is reused while `from` stays inside it, so that a text of
 * "http:http:http:…" costs one pass, not one per scheme.
 */
function forwardScanner(text: string, stop: (c: string) => boolean): (from: number) => number {
  let scannedFrom = Infinity;
  let found = -1;
  return (from) => {
    if (from >= scannedFrom && from <= found) return found;
    let i = from;
    while (i < text.length && !stop(text[i]!)) i += 1;
    scannedFrom = from;
    found = i;
    return i;
  };
}

/** The last `@` in [from, end), or -1, for ranges whose ends never decrease (each range scanned once). */
function lastAtScanner(text: string): (from: number, end: number) => number {
  let cachedEnd = -1;
  let scannedFrom = Infinity;
  let found = -1;
  return (from, end) => {
    if (end === cachedEnd && from >= scannedFrom) return found >= from ? found : -1;
    let i = end - 1;
    while (i >= from && text[i] !== '@') i -= 1;
    cachedEnd = end;
    scannedFrom = from;
    found = i >= from ? i : -1;
    return found;
  };
}

function redactUserInfo(text: string): string {
  if (!text.includes('@')) return text;
  const wordEnd = forwardScanner(text, (c) => WORD_END.test(c));
  const specialEnd = forwardScanner(text, (c) => c === '/' || c === '?' || c === '#' || c === '\\' || WORD_END.test(c));
  const otherEnd = forwardScanner(text, (c) => c === '/' || c === '?' || c === '#' || WORD_END.test(c));
  const atInAuthority = lastAtScanner(text);
  const atInPath = lastAtScanner(text);
  const colonAt = forwardScanner(text, (c) => c === ':');
  const nonDigitAt = forwardScanner(text, (c) => c < '0' || c > '9');
  let out = '';
  let last = 0;
  SCHEME.lastIndex = 0;
  for (let match = SCHEME.exec(text); match; match = SCHEME.exec(text)) {
    const special = SPECIAL_SCHEMES.has(match[1]!.toLowerCase());
    // A non-special scheme has an authority only after "//".
    if (!special && match[2] !== '//') continue;
    const start = match.index + match[0].length;
    if (start < last) continue;
    const authorityEnd = special ? specialEnd(start) : otherEnd(start);
    let userInfoEnd = atInAuthority(start, authorityEnd);
    if (userInfoEnd < 0 && authorityEnd < text.length && !WORD_END.test(text[authorityEnd]!)) {
      // "user:pa/ss@host", "user:pa?ss@host": a password with a raw "/", "?", "#" or "\" (no URL
      // parser reads it so, but it is a password): "user:" and no port before the last "@" of the word.
      const colon = colonAt(start);
      if (colon < authorityEnd && nonDigitAt(colon + 1) < authorityEnd) {
        const at = atInPath(authorityEnd, wordEnd(start));
        if (at > authorityEnd) userInfoEnd = at;
      }
    }
    if (userInfoEnd <= start) continue;
    out += `${text.slice(last, start)}${REDACTED}`;
    last = userInfoEnd;
  }
  return last === 0 ? text : out + text.slice(last);
}

function redactParameters(text: string): string {
  if (!text.includes('=')) return text;
  return text.replace(PARAMETER, (whole, separator: string, name: string, value: string) => (value && isSecretParameter(name) ? `${separator}${name}=${REDACTED}` : whole));
}

/**
 * True when `url` carries a user name, a password, or a credential in its query or fragment: as
 * the finder reads the text, or as a URL parser reads it (`http://u:p w@h` is a URL whose password
 * WHATWG percent-encodes).
 */
export function hasUrlCredentials(url: string): boolean {
  if (redactUrlCredentials(url) !== url) return true;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.username !== '' || parsed.password !== '') return true;
  if ([...parsed.searchParams.keys()].some(isSecretParameter)) return true;
  return parsed.hash.includes('=') && [...new URLSearchParams(parsed.hash.slice(1)).keys()].some(isSecretParameter);
}

/**
 * `url` without credentials: no user information, no credential parameter in the query or the
 * fragment (what Node's `http` and `fetch` would otherwise send: a URL's `user:password@` becomes
 * an `Authorization: Basic` header). A text that is no URL is returned as it is.
 */
export function withoutUrlCredentials(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  parsed.username = '';
  parsed.password = '';
  for (const name of [...parsed.searchParams.keys()]) if (isSecretParameter(name)) parsed.searchParams.delete(name);
  if (parsed.hash.includes('=')) {
    const fragment = new URLSearchParams(parsed.hash.slice(1));
    for (const name of [...fragment.keys()]) if (isSecretParameter(name)) fragment.delete(name);
    parsed.hash = fragment.toString();
  }
  return parsed.toString();
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
