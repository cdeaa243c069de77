import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cacheDir, contentSha256, documentsSha256, readManifest, sha256 } from '../upstream.mjs';
import { PROJECT_ROOT, locateUpstream, readUpstreamJson, readUpstreamYaml, upstreamPath } from './upstream.ts';

const scratch = mkdtempSync(join(tmpdir(), 'app-serving-upstream-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path).map((f) => `${name}/${f}`) : [name];
  });
}

describe('upstream data', () => {
  it('reads the pinned CRDs and chart schemas', () => {
    const crds = readUpstreamYaml('crds/kserve-v0.18.1-serving.kserve.io_llminferenceservices.yaml') as Array<{ kind: string; spec: { names: { kind: string } } }>;
    expect(crds.map((c) => `${c.kind}/${c.spec.names.kind}`)).toEqual(['CustomResourceDefinition/LLMInferenceService']);
    const schema = readUpstreamJson('charts/llm-d-modelservice-v0.4.12/values.schema.json') as { $schema: string };
    expect(schema.$schema).toMatch(/draft-07/);
  });

  it('refuses a file that is not pinned (it would be missing on a fresh clone)', () => {
    expect(() => upstreamPath('crds/nope.yaml')).toThrow(
      'upstream file not pinned: crds/nope.yaml is not in ' + join(PROJECT_ROOT, 'tools/test-cluster/upstream.json') + '; add it there (path and url) and run node tools/test-cluster/upstream.mjs --pin ../shared/upstream to record its sha256',
    );
  });

  it('pins every upstream file with the checksum of the file the tests read', async () => {
    const { dir, source } = locateUpstream();
    const { files } = readManifest();
    // Every file of the folder is pinned (a new one that is not would be missing on a fresh clone).
    const present = filesUnder(dir).filter((f) => f !== 'README.md' && !f.startsWith('.')).sort();
    expect(present).toEqual(files.map((f) => f.path).sort());
    // From the cache, a chart or rendered file may have been accepted by its content (see upstream.mjs).
    const accepted: Record<string, string> = source === 'cache' ? JSON.parse(readFileSync(join(dir, '.accepted.json'), 'utf8')) : {};
    const mismatches: string[] = [];
    for (const entry of files) {
      const data = readFileSync(join(dir, entry.path));
      const how = accepted[entry.path] ?? 'sha256';
      const [want, got] =
        how === 'content' ? [entry.contentSha256, await contentSha256(data)] : how === 'documents' ? [entry.documentsSha256, documentsSha256(data)] : [entry.sha256, sha256(data)];
      if (want !== got) mismatches.push(`${entry.path}: ${how} ${got}, pinned ${want}`);
      if (entry.chart) expect(await contentSha256(data), entry.path).toBe(entry.contentSha256);
      if (entry.render) expect(documentsSha256(data), entry.path).toBe(entry.documentsSha256);
      expect(entry.url, entry.path).toMatch(/^https:\/\/(raw\.githubusercontent\.com|github\.com)\/[^/]+\/[^/]+\/(tree\/)?[^/]+\/./);
    }
    expect(mismatches).toEqual([]);
  });

  it('with neither ../shared/upstream nor the cache, says in one message what to run', () => {
    const project = join(scratch, 'clone', 'app-serving');
    mkdirSync(project, { recursive: true });
    const env = { APP_SERVING_UPSTREAM_CACHE: join(scratch, 'empty-cache') };
    const { files } = readManifest();
    expect(() => locateUpstream({ env, projectRoot: project })).toThrow(
      `upstream test data not found: neither ${join(scratch, 'clone', 'shared', 'upstream')} nor the cache ${cacheDir(env)} holds it. ` +
        `Run \`npm run fetch-upstream\` once on a machine with internet: it downloads the ${files.length} upstream files pinned in tools/test-cluster/upstream.json into that cache and checks each sha256 (or set APP_SERVING_UPSTREAM to a copy of shared/upstream)`,
    );
    // The command it names is the project's.
    const scripts = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['fetch-upstream']).toBe('node tools/test-cluster/upstream.mjs');
  });

  it('prefers ../shared/upstream, then the cache', () => {
    const project = join(scratch, 'clone2', 'app-serving');
    const cache = join(scratch, 'cache2');
    mkdirSync(project, { recursive: true });
    const env = { APP_SERVING_UPSTREAM_CACHE: cache };
    mkdirSync(cacheDir(env), { recursive: true });
    writeFileSync(join(cacheDir(env), '.accepted.json'), '{}\n');
    expect(locateUpstream({ env, projectRoot: project })).toEqual({ dir: cacheDir(env), source: 'cache' });
    mkdirSync(join(scratch, 'clone2', 'shared', 'upstream'), { recursive: true });
    writeFileSync(join(scratch, 'clone2', 'shared', 'upstream', 'README.md'), '');
    expect(locateUpstream({ env, projectRoot: project })).toEqual({ dir: join(scratch, 'clone2', 'shared', 'upstream'), source: 'shared' });
    expect(relative(scratch, cacheDir(env))).toMatch(/^cache2\/[0-9a-f]{12}$/);
  });
});
