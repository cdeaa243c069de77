/**
 * Credentials in URLs: `scheme://user:password@host` and query values such as `?token=…`. Found
 * in any text (an error message, a chart repository, a `--base-url`), they are replaced by
 * `[redacted]` before the text is printed.
 */
const REDACTED = '[redacted]';

/** Query parameters whose values are credentials. */
const SECRET_QUERY = /^(?:access[_-]?token|token|auth|authorization|api[_-]?key|apikey|key|password|passwd|pass|pwd|secret|client[_-]?secret|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token|sas|code)$/i;

const USERINFO = /\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^\s/?#@"'<>]+)@/g;
const QUERY_VALUE = /([?&;])([^=&#\s"'<>]+)=([^&#\s"'<>]*)/g;

/** `text` with the user information of every URL, and credential query values, replaced by `[redacted]`. */
export function redactUrlCredentials(text: string): string {
  if (!text.includes('://') && !text.includes('=')) return text;
  return text
    .replace(USERINFO, (_m, scheme: string) => `${scheme}${REDACTED}@`)
    .replace(QUERY_VALUE, (m, sep: string, name: string, value: string) => (value && SECRET_QUERY.test(safeDecode(name)) ? `${sep}${name}=${REDACTED}` : m));
}

/** True when `url` carries a user name, a password or a credential query value. */
export function hasUrlCredentials(url: string): boolean {
  return redactUrlCredentials(url) !== url;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
