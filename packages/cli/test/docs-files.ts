import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './run-cli.ts';

/** Every Markdown file a user reads: the README, RELEASING.md, docs/, and each package's and app's README. */
export function userDocs(): string[] {
  const under = (dir: string) => readdirSync(join(REPO_ROOT, dir)).map((name) => `${dir}/${name}`);
  return [
    'README.md',
    'RELEASING.md',
    ...under('docs').filter((f) => f.endsWith('.md')),
    ...under('packages').map((p) => `${p}/README.md`),
    ...under('apps').map((a) => `${a}/README.md`),
  ].filter((f) => existsSync(join(REPO_ROOT, f)));
}
