import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onTestFinished } from 'vitest';

/** Writes `files` (relative path → content) into a fresh temporary directory, removed after the test. */
export function tempRepo(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-core-'));
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A minimal valid llm-d model folder. */
export function llmdModel(category: 'generative' | 'embedder', name: string, slug: string, ms = '', gaie = ''): Record<string, string> {
  return {
    [`models/${category}/${name}/gaie-${slug}/values.yaml`]: gaie || 'inferenceExtension:\n  replicas: 1\n',
    [`models/${category}/${name}/ms-${slug}/values.yaml`]: ms || 'modelArtifacts:\n  name: org/model\n  uri: hf://org/model\n',
  };
}

/** A stack file body: `config:` with the given `app-serving:` keys as YAML text (indented by the caller). */
export function stackFile(body: string): string {
  return `config:\n${body
    .split('\n')
    .map((line) => (line.trim() ? `  ${line}` : line))
    .join('\n')}\n`;
}

/** The repository root (for the real models/ folder and example stacks). */
export const REPO_ROOT = join(import.meta.dirname, '..', '..', '..');

import type { ValuesFile } from '../src/discovery.ts';
import { isStackError, type Issue } from '../src/errors.ts';
import { parseYaml } from '../src/yaml-source.ts';

/** A values file parsed from text, as discovery would produce it. */
export function valuesFile(file: string, text: string): ValuesFile {
  const { source, issues } = parseYaml(file, text);
  if (issues.length) throw new Error(`bad test YAML: ${issues.map((i) => i.message).join(', ')}`);
  return { file, values: (source.value ?? {}) as Record<string, unknown>, source };
}

/** The issues of the StackError `run` throws; none when it throws nothing (any other error is rethrown). */
export function issuesOf(run: () => unknown): Issue[] {
  try {
    run();
  } catch (error) {
    if (isStackError(error)) return [...error.issues];
    throw error;
  }
  return [];
}
