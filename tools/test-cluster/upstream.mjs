#!/usr/bin/env node
// The upstream files the tests read (CRDs, chart packages, values schemas, KServe's configs), pinned in
// upstream.json beside this script: each with its path, where it comes from at the pinned tag, and
// its sha256. This script fetches them into the user's cache and checks every checksum:
//
//   npm run fetch-upstream          (node tools/test-cluster/upstream.mjs)
//
// Tests read `../shared/upstream/` when it is there (the project's workspace lays it beside the
// clone), else this cache (tools/test-cluster/src/upstream.ts). Three kinds of entry:
//   - a file at a tag (`url`): downloaded, its sha256 must match;
//   - a chart package (`chart`): the pinned one was made with `helm package` from the tag, and
//     `helm package` writes the time into the archive, so the published package is not
//     byte-identical to it. The published package (Helm repository or OCI registry) is accepted when
//     its sha256 matches, or when its content does (`contentSha256`: every file's path and bytes);
//     otherwise it is refused, naming the files that differ;
//   - a `helm template` output (`render`): made from the chart's templates at the tag when they are
//     plain YAML behind an `if` (no Helm needed), else with Helm on the PATH; accepted when its
//     sha256 or its YAML documents (`documentsSha256`: comments and key and document order aside)
//     match.
// Nothing that fails its check is written to the cache. `APP_SERVING_UPSTREAM_MIRROR=<base URL>`
// fetches `https://<host>/<path>` from `<base URL>/<host>/<path>` instead (a mirror; the tests use
// it to serve the files from 127.0.0.1).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Parser } from 'tar';
import { parseAllDocuments, parse as parseYaml } from 'yaml';

const here = dirname(fileURLToPath(import.meta.url));

/** The manifest: tools/test-cluster/upstream.json. */
export const MANIFEST_PATH = join(here, 'upstream.json');

/** The command that fills the cache, as a user types it. */
export const FETCH_COMMAND = 'npm run fetch-upstream';

/**
 * The upstream folder that needs no fetch: `APP_SERVING_UPSTREAM` when set, else
 * `<project>/../shared/upstream` when it is there (a checkout of shared/ beside the clone); else null.
 */
export function localUpstream(env = process.env, projectRoot = join(here, '..', '..')) {
  if (env.APP_SERVING_UPSTREAM) return { dir: env.APP_SERVING_UPSTREAM, source: 'APP_SERVING_UPSTREAM' };
  const shared = join(projectRoot, '..', 'shared', 'upstream');
  return existsSync(join(shared, 'README.md')) ? { dir: shared, source: 'shared' } : null;
}

/** @returns {{ files: Array<Record<string, any>> }} */
export function readManifest(path = MANIFEST_PATH) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** `$APP_SERVING_UPSTREAM_CACHE`, else `$XDG_CACHE_HOME/app-serving/upstream`, else `~/.cache/app-serving/upstream`. */
export function cacheRoot(env = process.env) {
  if (env.APP_SERVING_UPSTREAM_CACHE) return env.APP_SERVING_UPSTREAM_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'app-serving', 'upstream');
}

/** The cache folder of this exact manifest: `<cache>/<first 12 hex of the manifest's sha256>`. */
export function cacheDir(env = process.env, manifestPath = MANIFEST_PATH) {
  return join(cacheRoot(env), sha256(readFileSync(manifestPath)).slice(0, 12));
}

export function sha256(data) {
  return createHash('sha256').update(data).digest('hex');
}

/** A chart package's content, independent of how it was packed: every file's path and sha256, sorted. */
export async function contentSha256(tgz) {
  const files = [];
  const parser = new Parser({
    onReadEntry(entry) {
      if (entry.type !== 'File') return entry.resume();
      const chunks = [];
      entry.on('data', (c) => chunks.push(c));
      entry.on('end', () => files.push(`${entry.path}\0${sha256(Buffer.concat(chunks))}`));
    },
  });
  await new Promise((resolve, reject) => {
    parser.on('end', resolve);
    parser.on('error', reject);
    parser.on('warn', (code, message) => reject(new Error(`${code}: ${message}`)));
    parser.end(tgz);
  });
  if (files.length === 0) throw new Error('not a chart package (no file in it)');
  return sha256(files.sort().join('\n'));
}

/**
 * A YAML stream's documents as a set, comments, key order and document order aside (`helm template`
 * orders documents by kind): the sha256 of their canonical JSON, sorted.
 */
export function documentsSha256(text) {
  const canonical = (value) =>
    Array.isArray(value)
      ? value.map(canonical)
      : value && typeof value === 'object'
        ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical(value[k])]))
        : value;
  const docs = parseAllDocuments(String(text)).map((d) => d.toJS({ maxAliasCount: -1 })).filter((d) => d !== null && d !== undefined);
  return sha256(JSON.stringify(docs.map((d) => JSON.stringify(canonical(d))).sort()));
}

/**
 * What `helm template` makes of a chart whose templates are plain YAML inside `{{- if … }}` …
 * `{{- end }}` (the CRD charts of Envoy Gateway and Envoy AI Gateway): the templates without those
 * lines. Null when a template holds any other template action (then only Helm can render it).
 */
export function renderPlainTemplates(texts) {
  const out = [];
  for (const text of texts) {
    const lines = String(text).split('\n').filter((line) => !/^\s*\{\{-?\s*(if\b.*|end)\s*-?\}\}\s*$/.test(line));
    if (lines.some((line) => line.includes('{{'))) return null;
    out.push(lines.join('\n'));
  }
  return out.join('\n---\n');
}

/** `https://host/path` through the mirror, if one is set. */
function mirrored(url, env) {
  const mirror = env.APP_SERVING_UPSTREAM_MIRROR;
  if (!mirror) return url;
  return `${mirror.replace(/\/$/, '')}/${url.replace(/^https?:\/\//, '')}`;
}

/** Most bytes of one download: the largest pinned file is 2.3 MiB (a CRD); an index.yaml, a manifest or a token far less. */
export const MAX_DOWNLOAD_BYTES = 16 * 1024 * 1024;
/** Redirects followed for one download. */
export const MAX_REDIRECTS = 5;
/** How long one download may take, redirects and all. */
const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;

/**
 * Where a download may go, redirects and token services included: the hosts upstream.json names
 * (its files' URLs, chart repositories, OCI registries), the token services those registries name,
 * and the hosts GitHub, ghcr.io, registry.k8s.io and Docker Hub serve their files from. Through a
 * mirror, only the mirror.
 */
export function allowedHosts(manifest, env = process.env) {
  const mirror = env.APP_SERVING_UPSTREAM_MIRROR;
  if (mirror) return { hosts: new Set([new URL(mirror).host]), patterns: [] };
  const hosts = new Set([
    'objects.githubusercontent.com',
    'release-assets.githubusercontent.com',
    'pkg-containers.githubusercontent.com',
    'codeload.github.com',
    'auth.docker.io',
    'registry-1.docker.io',
    'production.cloudflare.docker.com',
  ]);
  for (const entry of manifest.files) {
    for (const url of [entry.url, entry.chart?.repo, ...(entry.render?.templates ?? [])]) if (url) hosts.add(new URL(url).host);
    const oci = /^oci:\/\/([^/]+)\//.exec(entry.chart?.oci ?? entry.render?.chart ?? '');
    if (oci) hosts.add(oci[1] === 'docker.io' ? 'registry-1.docker.io' : oci[1]);
  }
  // registry.k8s.io sends blob downloads on to Artifact Registry or S3 near the caller.
  return { hosts, patterns: [/^[a-z0-9-]+-docker\.pkg\.dev$/, /^prod-registry-k8s-io-[a-z0-9-]+\.s3\.dualstack\.[a-z0-9-]+\.amazonaws\.com$/] };
}

function checkHost(url, allowed) {
  const host = new URL(url).host;
  if (allowed.hosts.has(host) || allowed.patterns.some((p) => p.test(host))) return;
  throw new Error(`GET ${url}: ${host} is not a host upstream.json names (nor one its hosts serve files from): not fetched`);
}

/**
 * GET through the mirror (if one is set), following at most {@link MAX_REDIRECTS} redirects and
 * only to allowed hosts, asking for no compression. Resolves the response, its body unread.
 */
async function download(url, env, headers = {}, allowed = allowedHosts(readManifest(), env)) {
  const signal = AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS);
  let target = mirrored(url, env);
  for (let hop = 0; ; hop += 1) {
    checkHost(target, allowed);
    const get = () => fetch(target, { headers: { ...headers, 'accept-encoding': 'identity' }, redirect: 'manual', signal });
    // A kept-alive connection the server closed as it was reused ("other side closed"): once more, on a new one.
    const response = await get().catch((error) => (error?.cause?.code === 'UND_ERR_SOCKET' && !signal.aborted ? get() : Promise.reject(error)));
    if (response.status < 300 || response.status >= 400 || !response.headers.get('location')) return response;
    await response.body?.cancel();
    if (hop >= MAX_REDIRECTS) throw new Error(`GET ${url}: more than ${MAX_REDIRECTS} redirects`);
    target = new URL(response.headers.get('location'), target).toString();
  }
}

/**
 * A response's body, at most {@link MAX_DOWNLOAD_BYTES}: never inflated (an answer in a
 * Content-Encoding is refused before its body is read: fetch would inflate a small gzip body into
 * gigabytes), cut off at the first byte past the limit (an endless answer costs the limit, no more).
 */
export async function readCapped(response, url, limit = MAX_DOWNLOAD_BYTES) {
  const encoding = (response.headers.get('content-encoding') ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity' && encoding !== '') {
    await response.body?.cancel();
    throw new Error(`GET ${url}: answered in content-encoding ${encoding.slice(0, 40)} though none was asked for: not inflated`);
  }
  const declared = Number(response.headers.get('content-length'));
  if (declared > limit) {
    await response.body?.cancel();
    throw new Error(`GET ${url}: ${declared} bytes, more than the ${limit / 1024 / 1024} MiB a pinned file can be`);
  }
  const chunks = [];
  let size = 0;
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks);
    size += value.length;
    if (size > limit) {
      await reader.cancel();
      throw new Error(`GET ${url}: more than the ${limit / 1024 / 1024} MiB a pinned file can be: not read on`);
    }
    chunks.push(Buffer.from(value));
  }
}

async function downloadOk(url, env, headers) {
  const response = await download(url, env, headers);
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`GET ${url}: HTTP ${response.status}`);
  }
  return readCapped(response, url);
}

/** A chart from a Helm repository: its index.yaml names the package's URL (and its digest). */
async function helmRepoChart({ repo, name, version }, env) {
  const index = parseYaml((await downloadOk(`${repo.replace(/\/$/, '')}/index.yaml`, env)).toString('utf8'));
  const entry = (index?.entries?.[name] ?? []).find((e) => e.version === version);
  if (!entry) throw new Error(`${repo}/index.yaml lists no ${name} ${version}`);
  const url = new URL(entry.urls[0], `${repo.replace(/\/$/, '')}/`).toString();
  const data = await downloadOk(url, env);
  if (entry.digest && sha256(data) !== entry.digest) throw new Error(`${url}: sha256 ${sha256(data)}, but ${repo}/index.yaml says ${entry.digest}`);
  return data;
}

/** A chart from an OCI registry (anonymous pull; a 401 is answered with the registry's token). */
async function ociChart(reference, env) {
  const match = /^oci:\/\/([^/]+)\/(.+):([^:/]+)$/.exec(reference);
  if (!match) throw new Error(`${reference}: not an oci://<host>/<repository>:<tag> reference`);
  const [, host, repository, tag] = match;
  const base = `https://${host === 'docker.io' ? 'registry-1.docker.io' : host}/v2/${repository}`;
  let token;
  const get = async (url, accept) => {
    const headers = { accept, ...(token ? { authorization: `Bearer ${token}` } : {}) };
    let response = await download(url, env, headers);
    if (response.status === 401 && !token) {
      await response.body?.cancel();
      const challenge = response.headers.get('www-authenticate') ?? '';
      const params = Object.fromEntries([...challenge.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
      if (!params.realm) throw new Error(`GET ${url}: HTTP 401 without a Bearer challenge`);
      const tokenUrl = new URL(params.realm);
      if (params.service) tokenUrl.searchParams.set('service', params.service);
      tokenUrl.searchParams.set('scope', params.scope ?? `repository:${repository}:pull`);
      const answer = JSON.parse((await downloadOk(tokenUrl.toString(), env)).toString('utf8'));
      token = answer.token ?? answer.access_token;
      response = await download(url, env, { accept, authorization: `Bearer ${token}` });
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`GET ${url}: HTTP ${response.status}`);
    }
    return readCapped(response, url);
  };
  const manifest = JSON.parse((await get(`${base}/manifests/${tag}`, 'application/vnd.oci.image.manifest.v1+json')).toString('utf8'));
  const layer = (manifest.layers ?? []).find((l) => l.mediaType === 'application/vnd.cncf.helm.chart.content.v1.tar+gzip');
  if (!layer) throw new Error(`${reference}: the manifest has no Helm chart layer`);
  const data = await get(`${base}/blobs/${layer.digest}`, '*/*');
  if (`sha256:${sha256(data)}` !== layer.digest) throw new Error(`${reference}: the chart layer's sha256 is not its digest ${layer.digest}`);
  return data;
}

/**
 * Fetches one entry and checks it. Resolves to `{ data, how }` (how it was accepted) or throws with
 * what was expected and what came.
 */
export async function fetchEntry(entry, { env = process.env } = {}) {
  if (entry.chart) {
    const data = entry.chart.oci ? await ociChart(entry.chart.oci, env) : await helmRepoChart(entry.chart, env);
    if (sha256(data) === entry.sha256) return { data, how: 'sha256' };
    // The same chart packed at another time (the archive holds the time): accepted by its content.
    if ((await contentSha256(data).catch(() => '')) === entry.contentSha256) return { data, how: 'content' };
    throw new Error(
      `the published chart (${entry.chart.oci ?? `${entry.chart.repo} ${entry.chart.name} ${entry.chart.version}`}) differs in content from the pinned package, which was made with \`helm package\` from ${entry.url}. ` +
        'Tests hold facts about the pinned package, so the published one is not used in its place: copy the pinned file from a checkout of shared/upstream, or set APP_SERVING_UPSTREAM to one',
    );
  }
  if (entry.render) {
    const { chart, version, args = [], templates = [] } = entry.render;
    // Without Helm first: the chart's templates at the tag, when they are plain YAML behind an `if`.
    // Only the checksum of the documents decides; Helm is the way when this does not match.
    let withoutHelm = '';
    if (templates.length > 0) {
      try {
        const rendered = renderPlainTemplates(await Promise.all(templates.map(async (url) => (await downloadOk(url, env)).toString('utf8'))));
        if (rendered !== null && documentsSha256(rendered) === entry.documentsSha256) return { data: Buffer.from(rendered), how: 'documents' };
        withoutHelm = rendered === null ? 'its templates hold more than an if' : 'its templates render other documents than the pinned file';
      } catch (error) {
        withoutHelm = error.message;
      }
    }
    const helm = spawnSync('helm', ['template', 'crds', chart, '--version', version, ...args], { encoding: 'buffer', env, maxBuffer: 256 * 1024 * 1024 });
    if (helm.error) {
      throw new Error(
        `made with \`helm template\` (${chart} ${version})${withoutHelm ? ` and not from its templates (${withoutHelm})` : ''}, and Helm is not on the PATH: install Helm 3.8 or newer and run ${FETCH_COMMAND} again`,
      );
    }
    if (helm.status !== 0) throw new Error(`helm template ${chart} --version ${version} ${args.join(' ')} exited with ${helm.status}: ${helm.stderr.toString().trim().split('\n').slice(-3).join(' ')}`);
    const data = helm.stdout;
    if (sha256(data) === entry.sha256) return { data, how: 'sha256' };
    if (documentsSha256(data) === entry.documentsSha256) return { data, how: 'documents' };
    throw new Error(`helm template ${chart} --version ${version} ${args.join(' ')} rendered other documents than the pinned file (sha256 ${sha256(data)}, expected ${entry.sha256})`);
  }
  const data = await downloadOk(entry.url, env);
  if (sha256(data) !== entry.sha256) throw new Error(`${entry.url}: sha256 ${sha256(data)}, expected ${entry.sha256}`);
  return { data, how: 'sha256' };
}

/**
 * Fills the cache: every entry not there yet is fetched and checked, four at a time. Returns what
 * failed (empty when the cache is complete). A file that fails its check is not written.
 */
export async function fetchUpstream({ env = process.env, manifestPath = MANIFEST_PATH, log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  const { files } = readManifest(manifestPath);
  const dir = cacheDir(env, manifestPath);
  mkdirSync(dir, { recursive: true });
  const accepted = join(dir, '.accepted.json');
  const record = existsSync(accepted) ? JSON.parse(readFileSync(accepted, 'utf8')) : {};
  const queue = files.filter((f) => !(existsSync(join(dir, f.path)) && record[f.path]));
  const failures = [];
  let done = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let entry = queue.shift(); entry; entry = queue.shift()) {
        try {
          const { data, how } = await fetchEntry(entry, { env });
          const target = join(dir, entry.path);
          mkdirSync(dirname(target), { recursive: true });
          writeFileSync(`${target}.partial`, data);
          renameSync(`${target}.partial`, target);
          record[entry.path] = how;
          done += 1;
        } catch (error) {
          const message = error?.cause ? `${error.message} (${error.cause.message ?? error.cause})` : error.message;
          failures.push({ path: entry.path, message });
          rmSync(join(dir, `${entry.path}.partial`), { force: true });
        }
      }
    }),
  );
  // The cache serves the tests from its first checked file on (a missing one is named when read).
  if (Object.keys(record).length > 0) writeFileSync(accepted, `${JSON.stringify(Object.fromEntries(Object.entries(record).sort()), null, 2)}\n`);
  log(`upstream: ${done} fetched, ${files.length - done - failures.length} already in ${dir}, ${failures.length} failed`);
  if (done === 0 && failures.length > 1 && failures.every((f) => f.message.includes('fetch failed'))) {
    // Nothing could be reached at all: one line, not one per file.
    log(`  no file could be downloaded (${failures.find((f) => f.message.startsWith('fetch failed'))?.message ?? failures[0].message}, …): no internet access here? Run ${FETCH_COMMAND} on a machine that has it, or put a checkout of shared/upstream beside the clone (../shared/upstream), or set APP_SERVING_UPSTREAM`);
  } else {
    for (const f of failures.sort((a, b) => (a.path < b.path ? -1 : 1))) log(`  ${f.path}: ${f.message}`);
  }
  return { dir, failures };
}

/**
 * Writes the checksums of upstream.json from a local copy of the files (a checkout of
 * shared/upstream), for a version bump: `node tools/test-cluster/upstream.mjs --pin <folder>`.
 */
export async function pinFrom(folder, manifestPath = MANIFEST_PATH) {
  const manifest = readManifest(manifestPath);
  for (const entry of manifest.files) {
    const data = readFileSync(join(folder, entry.path));
    entry.sha256 = sha256(data);
    if (entry.chart) entry.contentSha256 = await contentSha256(data);
    if (entry.render) entry.documentsSha256 = documentsSha256(data);
  }
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [flag, folder] = process.argv.slice(2);
  if (flag === '--pin' && folder) {
    await pinFrom(folder);
  } else if (flag !== undefined && flag !== '--if-missing') {
    console.error('usage: node tools/test-cluster/upstream.mjs [--if-missing | --pin <folder of upstream files>]');
    process.exit(2);
  } else {
    // --if-missing (npm test): nothing to do when ../shared/upstream (or APP_SERVING_UPSTREAM) is there.
    const local = flag === '--if-missing' ? localUpstream() : null;
    if (local) {
      console.log(local.dir);
    } else {
      const { dir, failures } = await fetchUpstream();
      const { files } = readManifest();
      if (failures.length > 0) console.error(`upstream: ${failures.length} of the pinned files could not be fetched and checked (above); the tests that read them will fail`);
      if (failures.length < files.length) console.log(dir);
      if (failures.length > 0) process.exit(1);
    }
  }
}
