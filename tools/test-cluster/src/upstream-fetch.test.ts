/**
 * `npm run fetch-upstream` (tools/test-cluster/upstream.mjs) against a simulated upstream: a server on
 * 127.0.0.1 plays GitHub's raw files, the Helm repositories (index.yaml, then the package), the OCI
 * registries (a 401 with a token challenge, the manifest, the chart layer), and a stub `helm` on the
 * PATH renders, all from the files of ../shared/upstream. The checksums are what is tested: every
 * file lands in the cache with the pinned checksum (or, for a repacked chart or a re-rendered file,
 * the pinned content), and a file that does not match is refused and never written.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheDir, contentSha256, documentsSha256, readManifest, sha256, type UpstreamEntry } from '../upstream.mjs';
import { locateUpstream, upstreamDir } from './upstream.ts';

const SCRIPT = join(import.meta.dirname, '..', 'upstream.mjs');
const { files } = readManifest();
const scratch = mkdtempSync(join(tmpdir(), 'app-serving-fetch-'));
let server: Server;
let mirror: string;
/** Paths the simulated upstream serves wrong: a tampered file, a chart whose content differs. */
let broken = new Set<string>();
const requests: string[] = [];

const pinnedBytes = (entry: UpstreamEntry) => readFileSync(join(upstreamDir(), entry.path));
/** The same tar, gzipped anew: other bytes, same content (as a package made at another time). */
const repacked = (tgz: Buffer) => gzipSync(gunzipSync(tgz), { level: 1 });
/** A chart package with one more file: other content. */
function altered(tgz: Buffer): Buffer {
  const tar = gunzipSync(tgz);
  let at = 0;
  // Walk the headers to the end-of-archive blocks, and put one more file before them.
  while (at + 512 <= tar.length && tar.subarray(at, at + 512).some((b) => b !== 0)) {
    const size = parseInt(tar.subarray(at + 124, at + 136).toString('latin1').replace(/\0.*$/s, '').trim(), 8);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return Buffer.concat([tar.subarray(0, at), tarFile('extra/NOTES.txt', 'changed\n'), Buffer.alloc(1024)]);
}

function tarFile(name: string, text: string): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0);
  header.write('0000644\0', 100);
  header.write('0000000\0', 108);
  header.write('0000000\0', 116);
  header.write(`${Buffer.byteLength(text).toString(8).padStart(11, '0')}\0`, 124);
  header.write('00000000000\0', 136);
  header.write('        ', 148);
  header.write('0', 156);
  header.write('ustar\0', 257);
  header.write('00', 263);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  const body = Buffer.alloc(Math.ceil(Buffer.byteLength(text) / 512) * 512);
  body.write(text);
  return Buffer.concat([header, body]);
}

/** What the simulated upstream serves, by URL path (`/<host>/<path>`). */
function routes(): Map<string, () => { status?: number; headers?: Record<string, string>; body: Buffer | string }> {
  const map = new Map<string, () => { status?: number; headers?: Record<string, string>; body: Buffer | string }>();
  for (const entry of files) {
    if (entry.url && !entry.chart && !entry.render) {
      map.set(`/${entry.url.replace('https://', '')}`, () => ({ body: broken.has(entry.path) ? Buffer.concat([pinnedBytes(entry), Buffer.from('# tampered\n')]) : pinnedBytes(entry) }));
    } else if (entry.chart?.repo) {
      // A Helm repository: index.yaml points at a release asset; the asset is the chart packed anew.
      const { repo, name, version } = entry.chart;
      const asset = `https://github.com/example/${name}/releases/download/${name}-${version}/${name}-${version}.tgz`;
      const bytes = () => (broken.has(entry.path) ? gzipSync(altered(pinnedBytes(entry))) : repacked(pinnedBytes(entry)));
      map.set(`/${repo!.replace('https://', '')}/index.yaml`, () => ({ body: stringify({ apiVersion: 'v1', entries: { [name!]: [{ name, version: 'v0.0.1', urls: ['nope.tgz'] }, { name, version, urls: [asset], digest: sha256(bytes()) }] } }) }));
      map.set(`/${asset.replace('https://', '')}`, () => ({ body: bytes() }));
    } else if (entry.chart?.oci) {
      // An OCI registry: anonymous pulls need a token from the realm the 401 names.
      const [, host, repository, tag] = /^oci:\/\/([^/]+)\/(.+):([^:/]+)$/.exec(entry.chart.oci)!;
      const blob = () => (broken.has(entry.path) ? gzipSync(altered(pinnedBytes(entry))) : pinnedBytes(entry));
      const digest = () => `sha256:${sha256(blob())}`;
      const challenge = { status: 401, headers: { 'www-authenticate': `Bearer realm="https://${host}/token",service="${host}",scope="repository:${repository}:pull"` }, body: '' };
      map.set(`/${host}/v2/${repository}/manifests/${tag}`, () => ({
        body: JSON.stringify({ schemaVersion: 2, layers: [{ mediaType: 'application/vnd.cncf.helm.chart.provenance.v1.prov', digest: 'sha256:00' }, { mediaType: 'application/vnd.cncf.helm.chart.content.v1.tar+gzip', digest: digest() }] }),
        challenge,
      }));
      map.set(`/${host}/v2/${repository}/blobs/`, () => ({ body: blob(), challenge }));
    } else if (entry.render?.templates && !entry.path.includes('ai-gateway')) {
      // The chart's templates at the tag: plain YAML behind an `if` (here the pinned rendering in the
      // first, the others empty). The AI Gateway's are not served: Helm renders that one.
      entry.render.templates.forEach((url, i) => {
        const body = () => `{{- if .Values.crds.enabled }}\n${i === 0 ? readFileSync(join(upstreamDir(), entry.path), 'utf8') : ''}\n{{- end }}\n`;
        map.set(`/${url.replace('https://', '')}`, () => ({ body: body() }));
      });
    }
  }
  return map;
}

beforeAll(async () => {
  const map = routes();
  server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    requests.push(url.pathname);
    // A registry's token endpoint: a token for the repository the scope names.
    const scope = /^repository:(.+):pull$/.exec(url.searchParams.get('scope') ?? '')?.[1];
    if (url.pathname.endsWith('/token') && scope) return res.writeHead(200).end(JSON.stringify({ token: `token-for-${scope}` }));
    const route = map.get(url.pathname) ?? (url.pathname.includes('/blobs/sha256:') ? map.get(url.pathname.replace(/sha256:.*$/, '')) : undefined);
    if (!route) return res.writeHead(404).end('not found');
    const answer = route() as { status?: number; headers?: Record<string, string>; body: Buffer | string; challenge?: { status: number; headers: Record<string, string>; body: string } };
    const repository = /\/v2\/(.+)\/(manifests|blobs)\//.exec(url.pathname)?.[1];
    if (answer.challenge && req.headers.authorization !== `Bearer token-for-${repository}`) return res.writeHead(401, answer.challenge.headers).end();
    res.writeHead(answer.status ?? 200, answer.headers).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  mirror = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  // A stub helm: `helm template crds <chart> --version <v> <args>` prints the pinned rendering (with
  // one more comment line for the AI Gateway's: other bytes, the same documents).
  const bin = join(scratch, 'bin');
  mkdirSync(bin);
  const cases = files
    .filter((f) => f.render)
    .map((f) => {
      const comment = f.path.includes('ai-gateway') ? `echo '# rendered by another Helm'; ` : '';
      return `  "template crds ${f.render!.chart} --version ${f.render!.version}${f.render!.args?.length ? ` ${f.render!.args.join(' ')}` : ''}") ${comment}cat '${join(upstreamDir(), f.path)}' ;;`;
    });
  writeFileSync(join(bin, 'helm'), `#!/bin/sh\necho "$*" >> '${join(scratch, 'helm.log')}'\ncase "$*" in\n${cases.join('\n')}\n  *) echo "unexpected: helm $*" >&2; exit 1 ;;\nesac\n`);
  chmodSync(join(bin, 'helm'), 0o755);
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  rmSync(scratch, { recursive: true, force: true });
});

function fetchUpstream(cache: string, from = mirror, withHelm = true): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SCRIPT], {
      // Without the stub, an empty PATH: no Helm at all, whatever this machine has installed.
      env: { PATH: withHelm ? `${join(scratch, 'bin')}:${process.env.PATH}` : join(scratch, 'empty'), HOME: scratch, APP_SERVING_UPSTREAM_CACHE: cache, APP_SERVING_UPSTREAM_MIRROR: from },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm run fetch-upstream', () => {
  it('with nothing reachable, says so in one line, not one per file, and writes no cache', { timeout: 300_000 }, async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const cache = join(scratch, 'cache-offline');
    const run = await fetchUpstream(cache, `http://127.0.0.1:${closed}`, false);
    const dir = cacheDir({ APP_SERVING_UPSTREAM_CACHE: cache });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe(`upstream: 0 fetched, 0 already in ${dir}, ${files.length} failed`);
    expect(lines[1]).toMatch(/^ {2}no file could be downloaded \(fetch failed \(.*ECONNREFUSED.*\), …\): no internet access here\? Run npm run fetch-upstream on a machine that has it, or put a checkout of shared\/upstream beside the clone \(\.\.\/shared\/upstream\), or set APP_SERVING_UPSTREAM$/);
    expect(existsSync(join(dir, '.accepted.json'))).toBe(false);
  });

  it('fetches every pinned file into the cache, checks each checksum, and the cache then serves the tests', { timeout: 300_000 }, async () => {
    broken = new Set();
    const cache = join(scratch, 'cache');
    const first = await fetchUpstream(cache);
    const dir = cacheDir({ APP_SERVING_UPSTREAM_CACHE: cache });
    expect(first.stderr).toBe(`upstream: ${files.length} fetched, 0 already in ${dir}, 0 failed\n`);
    expect(first.stdout).toBe(`${dir}\n`);
    expect(first.code).toBe(0);
    const accepted = JSON.parse(readFileSync(join(dir, '.accepted.json'), 'utf8')) as Record<string, string>;
    const expected = Object.fromEntries(files.map((f) => [f.path, f.chart?.repo ? 'content' : f.render ? 'documents' : 'sha256']));
    expect(accepted).toEqual(expected);
    for (const entry of files) {
      const data = readFileSync(join(dir, entry.path));
      if (accepted[entry.path] === 'sha256') expect(sha256(data), entry.path).toBe(entry.sha256);
      else if (accepted[entry.path] === 'content') expect(await contentSha256(data), entry.path).toBe(entry.contentSha256);
      else expect(documentsSha256(data), entry.path).toBe(entry.documentsSha256);
    }
    // The registries were asked for a token first.
    expect(requests).toContain('/registry.k8s.io/token');
    expect(requests).toContain('/ghcr.io/token');
    // Helm ran only for the chart whose templates could not be had; the others came from their templates.
    expect(readFileSync(join(scratch, 'helm.log'), 'utf8')).toBe('template crds oci://docker.io/envoyproxy/ai-gateway-crds-helm --version v1.1.0\n');
    // A clone with no ../shared beside it reads the cache.
    expect(locateUpstream({ env: { APP_SERVING_UPSTREAM_CACHE: cache }, projectRoot: join(scratch, 'no-shared', 'app-serving') })).toEqual({ dir, source: 'cache' });
    // A second run fetches nothing.
    const again = await fetchUpstream(cache);
    expect(again.stderr).toBe(`upstream: 0 fetched, ${files.length} already in ${dir}, 0 failed\n`);
  });

  it('refuses a file whose checksum differs and a published chart whose content differs, and writes neither', { timeout: 300_000 }, async () => {
    const tampered = files.find((f) => f.path === 'crds/istio-1.28.5-crd-all.gen.yaml')!;
    const helmRepoChart = files.find((f) => f.path === 'charts/llm-d-infra-v1.3.10.tgz')!;
    const ociChart = files.find((f) => f.path === 'current/charts/llm-d-router-gateway-v0.10.0.tgz')!;
    broken = new Set([tampered.path, helmRepoChart.path, ociChart.path]);
    const cache = join(scratch, 'cache-broken');
    const run = await fetchUpstream(cache);
    const dir = cacheDir({ APP_SERVING_UPSTREAM_CACHE: cache });
    const tamperedSha = sha256(Buffer.concat([pinnedBytes(tampered), Buffer.from('# tampered\n')]));
    expect(run.code).toBe(1);
    // What could be checked is in the cache (its folder on stdout); what could not is named.
    expect(run.stdout).toBe(`${dir}\n`);
    expect(run.stderr.split('\n')).toEqual([
      `upstream: ${files.length - 3} fetched, 0 already in ${dir}, 3 failed`,
      `  charts/llm-d-infra-v1.3.10.tgz: the published chart (https://llm-d-incubation.github.io/llm-d-infra llm-d-infra v1.3.10) differs in content from the pinned package, which was made with \`helm package\` from ${helmRepoChart.url}. Tests hold facts about the pinned package, so the published one is not used in its place: copy the pinned file from a checkout of shared/upstream, or set APP_SERVING_UPSTREAM to one`,
      `  crds/istio-1.28.5-crd-all.gen.yaml: ${tampered.url}: sha256 ${tamperedSha}, expected ${tampered.sha256}`,
      `  current/charts/llm-d-router-gateway-v0.10.0.tgz: the published chart (oci://ghcr.io/llm-d/charts/llm-d-router-gateway:v0.10.0) differs in content from the pinned package, which was made with \`helm package\` from ${ociChart.url}. Tests hold facts about the pinned package, so the published one is not used in its place: copy the pinned file from a checkout of shared/upstream, or set APP_SERVING_UPSTREAM to one`,
      'upstream: 3 of the pinned files could not be fetched and checked (above); the tests that read them will fail',
      '',
    ]);
    for (const path of broken) {
      expect(existsSync(join(dir, path)), path).toBe(false);
      expect(existsSync(join(dir, `${path}.partial`)), path).toBe(false);
    }
    // Once upstream serves them right, the next run fetches only those.
    broken = new Set();
    const again = await fetchUpstream(cache);
    expect(again.stderr).toBe(`upstream: 3 fetched, ${files.length - 3} already in ${dir}, 0 failed\n`);
    expect(again.code).toBe(0);
  });
});
