/**
 * The entries of a chart package's tar archive, named as Helm names them (helm.sh/helm/v4
 * `pkg/chart/loader/archive`, over Go's `archive/tar`): the raw entry name (a PAX `path`, a GNU long
 * name or the ustar `prefix` joined with the name), `\` read as `/`, its first segment (the chart's
 * folder) dropped, then cleaned. Helm refuses an archive holding an absolute path, an entry that
 * is the chart's folder itself, or one that climbs out of it; so does {@link chartArchiveEntries}.
 * Nothing is extracted: the caller takes the bytes of the entries it wants.
 */

/** One entry of a chart package. */
export interface ChartArchiveEntry {
  /** The raw name in the archive (`llm-d-router-gateway/Chart.yaml`). */
  readonly raw: string;
  /** The path inside the chart, as Helm keys it (`Chart.yaml`, `templates/x.yaml`). */
  readonly path: string;
  readonly type: 'file' | 'link' | 'other';
  readonly data: Uint8Array;
}

/** An archive Helm would not load, or a malformed one; the message completes "the package …". */
export class ChartArchiveError extends Error {
  override readonly name = 'ChartArchiveError';
}

const BLOCK = 512;

function text(bytes: Uint8Array): string {
  const end = bytes.indexOf(0);
  return new TextDecoder().decode(end < 0 ? bytes : bytes.subarray(0, end));
}

function octal(bytes: Uint8Array, what: string): number {
  if (bytes[0]! & 0x80) throw new ChartArchiveError(`is not a valid tar archive: a base-256 ${what} field (an entry of gigabytes?)`);
  const digits = text(bytes).trim();
  if (digits === '') return 0;
  if (!/^[0-7]+$/.test(digits)) throw new ChartArchiveError(`is not a valid tar archive: a corrupt ${what} field`);
  return parseInt(digits, 8);
}

/** Go's `path.Clean` of a relative path: "." for an empty one, ".." kept where it climbs out. */
function clean(path: string): string {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..' && out.length > 0 && out.at(-1) !== '..') out.pop();
    else out.push(part);
  }
  return out.length === 0 ? '.' : out.join('/');
}

/** The `key=value` records of a PAX extended header. */
function paxRecords(data: Uint8Array): Map<string, string> {
  const out = new Map<string, string>();
  const all = new TextDecoder().decode(data);
  let at = 0;
  while (at < all.length) {
    const space = all.indexOf(' ', at);
    const length = Number(all.slice(at, space));
    if (space < 0 || !Number.isInteger(length) || length <= 0) throw new ChartArchiveError('is not a valid tar archive: a corrupt PAX header');
    const record = all.slice(space + 1, at + length - 1);
    const eq = record.indexOf('=');
    if (eq > 0) out.set(record.slice(0, eq), record.slice(eq + 1));
    at += length;
  }
  return out;
}

/**
 * Every file, link and other entry of an uncompressed tar archive (folders and extended headers
 * are not entries), named as Helm names them. Throws a {@link ChartArchiveError} for an archive
 * Helm refuses, or one that is not a tar archive.
 */
export function chartArchiveEntries(tar: Uint8Array): ChartArchiveEntry[] {
  const entries: ChartArchiveEntry[] = [];
  let offset = 0;
  let longName: string | null = null;
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((b) => b === 0)) break;
    const stored = octal(header.subarray(148, 156), 'checksum');
    let sum = 0;
    for (let i = 0; i < BLOCK; i += 1) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
    if (sum !== stored) throw new ChartArchiveError(entries.length === 0 ? 'is not a tar archive' : 'is not a valid tar archive: a header checksum does not match (a damaged package)');
    const size = octal(header.subarray(124, 136), 'size');
    const type = String.fromCharCode(header[156]!);
    const start = offset + BLOCK;
    if (start + size > tar.length) throw new ChartArchiveError('is not a valid tar archive: an entry runs past its end (a cut or damaged package)');
    const data = tar.subarray(start, start + size);
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'x') {
      longName = paxRecords(data).get('path') ?? longName;
      continue;
    }
    if (type === 'L') {
      longName = text(data);
      continue;
    }
    if (type === 'g' || type === 'K') continue;
    const ustar = text(header.subarray(257, 263)) === 'ustar' && header[262] === 0;
    const raw = longName ?? (ustar && header[345] !== 0 ? `${text(header.subarray(345, 500))}/${text(header.subarray(0, 100))}` : text(header.subarray(0, 100)));
    longName = null;
    if (type === '5') continue;
    const inChart = raw.replace(/\\/g, '/').split('/').slice(1).join('/');
    if (inChart.startsWith('/')) throw new ChartArchiveError(`holds an absolute path (${JSON.stringify(raw)}): Helm refuses such a package ("chart illegally contains absolute paths")`);
    const path = clean(inChart);
    if (path === '.') throw new ChartArchiveError(`holds ${JSON.stringify(raw)} outside a chart folder: Helm refuses such a package (a chart package holds one folder, the chart's)`);
    if (path === '..' || path.startsWith('../')) throw new ChartArchiveError(`holds ${JSON.stringify(raw)}, which climbs out of the chart's folder: Helm refuses such a package ("chart illegally references parent directory")`);
    entries.push({ raw, path, type: type === '0' || type === '\0' || type === '7' ? 'file' : type === '1' || type === '2' ? 'link' : 'other', data });
  }
  return entries;
}
