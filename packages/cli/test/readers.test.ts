/**
 * Every reader goes through one bounded reader per side, and docs/cli.md's Limits table says what
 * each bounds: core's `text-file.ts` reads every file, k8s-verify's `bounded.ts` every HTTP answer,
 * fetch-upstream its own `readCapped`. A new `readFileSync`, `fetch` or `res.text()` in a published
 * package's source fails here, before it can forget a bound (issue 34, round 3 of the hostile review:
 * the same classes came back in new code because the bounds lived in the callers).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { formatLimit, LOCAL_CHART_LIMITS, MAX_STACK_FILE_BYTES, MAX_VALUES_FILE_BYTES } from '@app-serving/core';
import {
  MAX_API_BODY_BYTES,
  MAX_BODY_BYTES,
  MAX_CREDENTIAL_FILE_BYTES,
  MAX_KUBECONFIG_BYTES,
  MAX_KUBECONFIG_FILES,
  MAX_OUTSIDE_ANSWER_BYTES,
  MAX_PLUGIN_OUTPUT_BYTES,
  MAX_SSE_EVENTS,
  MAX_SSE_LINE_BYTES,
} from '@app-serving/k8s-verify';
import { describe, expect, it } from 'vitest';
import { MAX_DOWNLOAD_BYTES, MAX_REDIRECTS } from '../../../tools/test-cluster/upstream.mjs';
import { MAX_TREE_BYTES } from '../src/git.ts';
import { REPO_ROOT } from './run-cli.ts';

/** Reading from outside: a file, an HTTP answer, a stream of either, a subprocess's output. */
const READER = /\breadFileSync\(|\breadFile\(|createReadStream\(|\bfetch\(|\.arrayBuffer\(\)|\b(?:res|response)\.(?:text|json)\(\)|\bfor await \(const \w+ of (?:res|response)\b|\breadSync\(|\.on\('data'/;

/** Where a reader may be, and why. */
const ALLOWED: Record<string, string> = {
  'packages/core/src/text-file.ts': 'the one bounded file reader',
  'packages/k8s-verify/src/bounded.ts': 'the one bounded reader of HTTP answers',
  'packages/cli/src/main.ts': "the CLI's own package.json, for --version",
  'packages/cli/src/git.ts': "git cat-file's output, one object at a time, each sized by git before it is read (the stack's or values' limit, MAX_TREE_BYTES), under a timeout",
  'packages/k8s-verify/src/credentials.ts': "a credential plugin's output: at most MAX_PLUGIN_OUTPUT_BYTES, under the run's deadline; its files through core's reader",
  'packages/cli/src/transaction.ts': "migrate's /proc/<pid>/stat of the process a journal names (a kernel file of a few hundred bytes); the stack and values files through readTextFile",
  'packages/cli/src/code-cache.ts': 'its own private cache files, opened without following links, size-capped (MAX_CACHE_FILE_BYTES) and checksummed',
  'tools/test-cluster/upstream.mjs': 'fetch-upstream: its downloads through readCapped (32 MiB, never inflated, redirects to named hosts only); its own manifest',
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' || entry.name === 'templates' ? [] : sources(path);
    return /\.(ts|mjs)$/.test(entry.name) && !/\.test\.ts$|\.d\.m?ts$/.test(entry.name) ? [path] : [];
  });
}

describe('every reader is bounded, in one place', () => {
  it('no published source reads a file or an HTTP answer but through the bounded readers', () => {
    const packages = readdirSync(join(REPO_ROOT, 'packages')).map((p) => join(REPO_ROOT, 'packages', p, 'src'));
    const files = [...packages.flatMap((dir) => { try { return sources(dir); } catch { return []; } }), join(REPO_ROOT, 'tools', 'test-cluster', 'upstream.mjs')];
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((file) => {
      const path = relative(REPO_ROOT, file);
      if (ALLOWED[path]) return [];
      return readFileSync(file, 'utf8')
        .split('\n')
        .map((line, i) => [line, i + 1] as const)
        .filter(([line]) => READER.test(line) && !/^\s*(\/\/|\*)/.test(line))
        .map(([line, n]) => `${path}:${n}: ${line.trim().slice(0, 120)}`);
    });
    expect(found).toEqual([]);
  });

  it("docs/cli.md's Limits table holds each reader's limit, as the code has it", () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs', 'cli.md'), 'utf8');
    const table = doc.slice(doc.indexOf('## Limits'), doc.indexOf('Measured ('));
    const row = (start: string) => {
      const found = table.split('\n').find((l) => l.startsWith(`| ${start}`));
      expect(found, `a row "| ${start}…" in docs/cli.md's Limits table`).toBeDefined();
      return found!;
    };
    const mib = (bytes: number) => formatLimit(bytes);
    expect(row('every file read')).toMatch(/regular file .*FIFO.*device.*folder.*\/proc/);
    expect(row('stack file')).toContain(mib(MAX_STACK_FILE_BYTES));
    expect(row('values file')).toContain(mib(MAX_VALUES_FILE_BYTES));
    expect(row('local chart')).toContain(`\`Chart.yaml\` ${mib(LOCAL_CHART_LIMITS.chartYamlBytes)}`);
    expect(row('local chart')).toContain(`a package ${mib(LOCAL_CHART_LIMITS.packageBytes)}`);
    expect(row('local chart')).toContain(`64 MiB`);
    expect(LOCAL_CHART_LIMITS.unpackedBytes).toBe(64 * 1024 * 1024);
    expect(row('one response body (verify)')).toContain(mib(MAX_BODY_BYTES));
    expect(row('one SSE stream')).toContain(`${mib(MAX_BODY_BYTES)} / ${mib(MAX_SSE_LINE_BYTES)} / ${MAX_SSE_EVENTS.toLocaleString('en-US')}`);
    expect(row('**API server** (preflight, verify): one answer')).toContain(mib(MAX_API_BODY_BYTES));
    expect(row('**Prometheus**')).toContain(`one answer ${mib(MAX_OUTSIDE_ANSWER_BYTES)}`);
    expect(row('**kubeconfig** (')).toContain(`at most ${mib(MAX_KUBECONFIG_BYTES)}`);
    expect(row('**kubeconfig** (')).toContain(`at most ${MAX_KUBECONFIG_FILES} files`);
    expect(row('**kubeconfig**: files it names')).toContain(`at most ${mib(MAX_CREDENTIAL_FILE_BYTES)} each`);
    expect(row('**credential plugins**')).toContain(`stdout at most ${mib(MAX_PLUGIN_OUTPUT_BYTES)}`);
    expect(row('**git**: folders and links')).toContain(`at most ${mib(MAX_TREE_BYTES)}`);
    expect(row('`npm run fetch-upstream`')).toContain(`| ${mib(MAX_DOWNLOAD_BYTES)};`);
    expect(row('`npm run fetch-upstream`')).toContain(`at most ${MAX_REDIRECTS} redirects`);
  });
});
