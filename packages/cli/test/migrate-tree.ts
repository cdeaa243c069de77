import { createHash } from 'node:crypto';
import { cpSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { expect } from 'vitest';
import { REPO_ROOT } from './run-cli.ts';

/** Trees for the fault-injection tests of `app-serving migrate`: the project as the review's `mk.sh … old` makes it, and a file-by-file snapshot. */

export const STACK = 'apps/app-serving/Pulumi.example.yaml';
/** The prefix of the folders migrate's commit protocol makes (src/transaction.ts). */
export const STAGE = '.app-serving-migrate-';

export type Variant = 'plain' | 'linked-stack' | 'linked-model';

/**
 * A `mk.sh … old` project in `dir`: the example stack files and every model folder without its
 * 2026-08 folders (`server-*`, `router-*`), so that migrate has something to convert. Variants: the
 * stack file a symbolic link into `config-repo/`, or a model folder a link into `shared-models/`.
 */
export function oldProject(dir: string, variant: Variant = 'plain'): void {
  mkdirSync(join(dir, 'apps/app-serving'), { recursive: true });
  for (const name of readdirSync(join(REPO_ROOT, 'apps/app-serving')).filter((n) => n.endsWith('.yaml'))) cpSync(join(REPO_ROOT, 'apps/app-serving', name), join(dir, 'apps/app-serving', name));
  cpSync(join(REPO_ROOT, 'models'), join(dir, 'models'), { recursive: true, filter: (src) => !/\/(server|router)-[^/]*$/.test(src) });
  if (variant === 'linked-stack') {
    mkdirSync(join(dir, 'config-repo'));
    renameSync(join(dir, STACK), join(dir, 'config-repo/Pulumi.example.yaml'));
    symlinkSync('../../config-repo/Pulumi.example.yaml', join(dir, STACK));
  }
  if (variant === 'linked-model') {
    mkdirSync(join(dir, 'shared-models'));
    renameSync(join(dir, 'models/generative/Qwen3-0.6B-rke2'), join(dir, 'shared-models/Qwen3-0.6B-rke2'));
    symlinkSync('../../shared-models/Qwen3-0.6B-rke2', join(dir, 'models/generative/Qwen3-0.6B-rke2'));
  }
}

/** A stack of `count` llm-d models on 2026-02 (`Sim0`…, each a copy of the Sim model's old folders), in `dir/Pulumi.big.yaml`: migrate has many folders to write. */
export function bigProject(dir: string, count: number): void {
  const entries: string[] = [];
  for (let i = 0; i < count; i++) {
    for (const kind of ['gaie', 'ms']) cpSync(join(REPO_ROOT, `models/generative/Sim/${kind}-sim`), join(dir, `models/generative/Sim${i}/${kind}-sim${i}`), { recursive: true });
    entries.push(`      - name: Sim${i}`, '        enabled: true');
  }
  writeFileSync(join(dir, 'Pulumi.big.yaml'), ['config:', '  app-serving:cloudProvider: cloud', '  app-serving:models:', '    generative:', ...entries, ''].join('\n'));
}

/** Every entry under `root` (relative path → folder and mode, link and target, or file, mode and sha256). */
export function snapshot(root: string, skip: (rel: string) => boolean = () => false): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const rel = relative(root, path);
      if (skip(rel)) continue;
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) out.set(rel, `link ${readlinkSync(path)}`);
      else if (stat.isDirectory()) {
        out.set(rel, `dir ${(stat.mode & 0o7777).toString(8)}`);
        walk(path);
      } else out.set(rel, `file ${(stat.mode & 0o7777).toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`);
    }
  };
  walk(root);
  return out;
}

/** The entries outside the commit protocol's stage folders. */
export function visible(tree: ReadonlyMap<string, string>): Map<string, string> {
  return new Map([...tree].filter(([path]) => !path.split('/').some((part) => part.startsWith(STAGE))));
}

export function hasStage(tree: ReadonlyMap<string, string>): boolean {
  return [...tree.keys()].some((path) => path.split('/').some((part) => part.startsWith(STAGE)));
}

export const asObject = (tree: ReadonlyMap<string, string>): Record<string, string> => Object.fromEntries(tree);

/**
 * What a stop may leave, checked against the old tree and the clean result: the replaced file old
 * or new, whole; with the new one, exactly the new tree (stage folders aside); with the old one,
 * every old entry as it was and, besides them, only whole new folders — which happens only past the
 * commit point (the journal's `committed` marker is there). Returns which of the three it was.
 */
export function classify(tree: ReadonlyMap<string, string>, before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>, replaced: string, where: string): 'old' | 'new' | 'between' {
  const seen = visible(tree);
  expect([before.get(replaced), after.get(replaced)], `${where}: ${replaced} is the old file or the new one, whole`).toContain(seen.get(replaced));
  if (replaced !== STACK) expect(seen.get(STACK), `${where}: the link is kept`).toBe(before.get(STACK));
  if (seen.get(replaced) === after.get(replaced) && before.get(replaced) !== after.get(replaced)) {
    expect(asObject(seen), `${where}: the new stack file, so the new tree`).toEqual(asObject(after));
    return 'new';
  }
  for (const [path, entry] of before) expect(seen.get(path), `${where}: ${path} as it was`).toBe(entry);
  const extra = [...seen.keys()].filter((p) => !before.has(p));
  for (const path of extra) expect(seen.get(path), `${where}: ${path} is the new one`).toBe(after.get(path));
  const newFolders = [...after.keys()].filter((p) => !before.has(p) && after.get(p)!.startsWith('dir') && seen.has(p));
  for (const folder of newFolders) {
    for (const path of [...after.keys()].filter((p) => p.startsWith(`${folder}/`))) expect(seen.get(path), `${where}: ${path} (its folder is there, so whole)`).toBe(after.get(path));
  }
  if (extra.length === 0) return 'old';
  expect(tree.has(join(dirname(replaced), `${STAGE}${basename(replaced)}`, 'committed')), `${where}: new folders beside the old stack only past the commit point`).toBe(true);
  return 'between';
}
