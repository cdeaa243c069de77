/**
 * The one order of texts in output (issues, image lists, diffs): letters without regard to case
 * first (`models/…` before `Pulumi.yaml`, as people sort), then by UTF-16 code unit, so the order
 * is the same on every machine. `localeCompare` depended on the machine's locale, and its first
 * call loaded ICU's collation data (7 ms of every cold start).
 */
export function compareText(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x !== y) return x < y ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
