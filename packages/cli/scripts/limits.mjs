#!/usr/bin/env node
// Measures what the hostile inputs of docs/cli.md's Limits table cost the built command: wall time
// and peak memory (max RSS, from GNU time) of `preflight`, `verify` and `diff` against a hostile
// HTTPS API server, hostile kubeconfigs and a crafted git repository, and the cost of checking the
// code cache. Run after `npm run build`:
//
//   node packages/cli/scripts/limits.mjs
//
// Every scenario runs the real binary once (the code cache off, so that each run is a cold one).
// Names of groups after the script run only those: `node packages/cli/scripts/limits.mjs charts prometheus`
// (groups: api, kubeconfig, git, cache, charts, prometheus, fetch-upstream).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { crc32, gzipSync } from 'node:zlib';

const CLI = join(import.meta.dirname, '..');
const REPO = join(CLI, '..', '..');
const BIN = join(CLI, 'bin', 'app-serving.js');
const TLS = join(CLI, 'test', 'hostile', 'tls');
const CERT = readFileSync(join(TLS, 'cert.pem'));
const KEY = readFileSync(join(TLS, 'key.pem'));
const KIND = join(REPO, 'apps/app-serving/Pulumi.kind.yaml');
const TIME = spawnSync('/usr/bin/time', ['-f', '%M', 'true']).status === 0 ? '/usr/bin/time' : null;
const work = mkdtempSync(join(tmpdir(), 'app-serving-limits-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

const groups = process.argv.slice(2);
/** Whether a group of scenarios runs (all of them when none is named). */
const wanted = (group) => groups.length === 0 || groups.includes(group);

/** Runs the command; resolves {code, seconds, peakMiB, stdout, stderr}. */
function run(args, { cwd = REPO, env = {}, script = BIN } = {}) {
  return new Promise((resolve) => {
    const started = performance.now();
    const argv = [process.execPath, script, ...args];
    const child = TIME ? spawn(TIME, ['-f', '%M', '-o', join(work, 'time.out'), ...argv], { cwd, env: { ...process.env, APP_SERVING_CODE_CACHE: 'off', ...env } }) : spawn(argv[0], argv.slice(1), { cwd, env: { ...process.env, APP_SERVING_CODE_CACHE: 'off', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => {
      const seconds = (performance.now() - started) / 1000;
      const peakMiB = TIME ? Number(readFileSync(join(work, 'time.out'), 'utf8').trim().split('\n').at(-1)) / 1024 : null;
      resolve({ code, seconds, peakMiB, stdout, stderr });
    });
  });
}

async function serve(handler) {
  const server = createServer({ cert: CERT, key: KEY }, (req, res) => {
    res.on('error', () => undefined);
    req.resume();
    req.on('end', () => handler(req, res));
  });
  server.on('tlsClientError', () => undefined);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${server.address().port}`;
  return { url, close: () => (server.closeAllConnections(), server.close()) };
}

function kubeconfig(url, user = 'token: t0k3n-value') {
  const file = join(mkdtempSync(join(work, 'kc-')), 'kubeconfig');
  writeFileSync(file, `apiVersion: v1\nclusters:\n- name: h\n  cluster:\n    server: ${url}\n    certificate-authority-data: ${CERT.toString('base64')}\ncontexts:\n- name: h\n  context: {cluster: h, user: u}\ncurrent-context: h\nusers:\n- name: u\n  user:\n${user.replace(/^/gm, '    ')}\n`);
  return file;
}

function pump(res, piece) {
  let open = true;
  res.on('close', () => (open = false));
  const go = () => {
    while (open && res.write(piece()));
    if (open) res.once('drain', go);
  };
  go();
}

const rows = [];
async function measure(what, args, options) {
  const r = await run(args, options);
  const said = (r.stdout + r.stderr).split('\n').find((l) => /exceeded|encoding|nested|alias|not a regular|deadline|regular file|ENOSPC|plugin|answered more|a file of \/proc|MiB a pinned file/.test(l)) ?? '';
  rows.push({ what, exit: r.code, seconds: r.seconds.toFixed(2), peakMiB: r.peakMiB === null ? '-' : r.peakMiB.toFixed(0), said: said.trim().slice(0, 110) });
  return r;
}

const SLOW = ['--timeout', '60s', '--deadline', '120s'];

// The API server.
if (wanted('api')) {
  const bomb = gzipSync(Buffer.alloc(1024 * 1024 * 1024), { level: 9 });
  const s = await serve((_req, res) => (res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }), res.end(bomb)));
  await measure(`preflight: every answer a gzip bomb (${(bomb.length / 1024 / 1024).toFixed(1)} MB → 1 GiB)`, ['preflight', '--stack', KIND, '--kubeconfig', kubeconfig(s.url), ...SLOW]);
  s.close();
}
if (wanted('api')) {
  const s = await serve((_req, res) => (res.writeHead(200, { 'content-type': 'application/json' }), res.write('{"gitVersion":"'), pump(res, () => 'v'.repeat(65536))));
  await measure('preflight: an endless /version', ['preflight', '--stack', KIND, '--kubeconfig', kubeconfig(s.url), ...SLOW]);
  s.close();
}
if (wanted('api')) {
  const nested = '['.repeat(8 * 1024 * 1024);
  const s = await serve((_req, res) => (res.writeHead(200, { 'content-type': 'application/json' }), res.end(nested)));
  await measure('preflight: 8 MiB of nested [[[ as /version', ['preflight', '--stack', KIND, '--kubeconfig', kubeconfig(s.url), ...SLOW]);
  s.close();
}
if (wanted('api')) {
  const s = await serve((req, res) => {
    if (!req.url.includes('/pods')) return res.writeHead(404, { 'content-type': 'application/json' }), res.end('{"code":404}');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"items":[');
    pump(res, () => `${JSON.stringify({ metadata: { name: 'p'.repeat(1000) } })},`.repeat(50));
  });
  await measure('verify --kubeconfig: an endless pod list', ['verify', '--stack', KIND, '--kubeconfig', kubeconfig(s.url), ...SLOW]);
  s.close();
}

// Kubeconfigs and credential plugins.
if (wanted('kubeconfig')) {
  await measure('preflight --kubeconfig /dev/zero', ['preflight', '--stack', KIND, '--kubeconfig', '/dev/zero']);
  const fifo = join(work, 'fifo');
  execFileSync('mkfifo', [fifo]);
  await measure('preflight --kubeconfig <a FIFO nobody writes>', ['preflight', '--stack', KIND, '--kubeconfig', fifo]);
  const rows9 = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 9; i += 1) rows9.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
  const bomb = join(work, 'alias-bomb');
  writeFileSync(bomb, `${rows9.join('\n')}\napiVersion: v1\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {exec: {command: /bin/true, args: *a8}}}]\n`);
  await measure('preflight: an alias bomb (10^9 nodes) in exec.args', ['preflight', '--stack', KIND, '--kubeconfig', bomb, '--deadline', '10s']);
  const s = await serve((req, res) => {
    const path = req.url.split('?')[0];
    res.writeHead(path === '/version' ? 200 : path.endsWith('selfsubjectaccessreviews') ? 201 : 404, { 'content-type': 'application/json' });
    res.end(path === '/version' ? '{"gitVersion":"v1.31.2"}' : path.endsWith('selfsubjectaccessreviews') ? '{"status":{"allowed":true}}' : path === '/api/v1/nodes' ? '{"items":[]}' : '{"code":404}');
  });
  const dir = mkdtempSync(join(work, 'plugin-'));
  const script = (name, body) => (writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`), chmodSync(join(dir, name), 0o755), join(dir, name));
  await measure('preflight: an exec plugin that sleeps 600 s, --timeout 3s --deadline 10s', ['preflight', '--stack', KIND, '--kubeconfig', kubeconfig(s.url, `exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: ${script('slow', 'exec sleep 600')}`), '--timeout', '3s', '--deadline', '10s']);
  const count = join(dir, 'count');
  const once = script('once', `echo run >> ${count}; echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}'`);
  await measure('preflight: an exec plugin that answers at once', ['preflight', '--stack', KIND, '--kubeconfig', kubeconfig(s.url, `exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: ${once}`)]);
  rows.at(-1).said = `the plugin ran ${readFileSync(count, 'utf8').split('\n').filter(Boolean).length} time(s) for the whole run`;
  await measure('preflight: an exec plugin that prints without end (yes)', ['preflight', '--stack', KIND, '--kubeconfig', kubeconfig(s.url, `exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: ${script('yes', 'exec yes')}`)]);
  s.close();
}

// git: diff --base of a repository whose models/ holds a 300 MB file and 30,000 small files it does not need.
if (wanted('git')) {
  const repo = join(work, 'repo');
  const write = (path, content) => (mkdirSync(dirname(join(repo, path)), { recursive: true }), writeFileSync(join(repo, path), content));
  write('Pulumi.t.yaml', 'config:\n  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:\n      - name: Gen\n');
  write('models/generative/Gen/gaie-gen/values.yaml', 'inferenceExtension:\n  replicas: 1\n');
  write('models/generative/Gen/ms-gen/values.yaml', 'modelArtifacts:\n  name: org/gen\n  uri: hf://org/gen\n');
  write('models/generative/Gen/weights.bin', Buffer.alloc(300 * 1024 * 1024));
  for (let i = 0; i < 30_000; i += 1) write(`models/generative/Other${Math.floor(i / 100)}/notes-${i}.txt`, `${i}\n`);
  const git = (...args) => execFileSync('git', ['-c', 'user.name=l', '-c', 'user.email=l@example.com', '-c', 'commit.gpgsign=false', '-c', 'gc.auto=0', ...args], { cwd: repo, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'x');
  await measure('diff --base HEAD: models/ with a 300 MB file and 30,000 other files, nothing changed', ['diff', '--base', 'HEAD', '--stack', 'Pulumi.t.yaml'], { cwd: repo });
  write('models/generative/Gen/gaie-gen/values.yaml', 'inferenceExtension:\n  replicas: 2\n');
  await measure('diff --base HEAD: the same, one values key changed (renders)', ['diff', '--base', 'HEAD', '--stack', 'Pulumi.t.yaml'], { cwd: repo });
}

// The code cache: what checking it costs (the CRC-32 of each bundle file the command loads and of its cache file).
if (wanted('cache')) {
  const cache = join(work, 'cache');
  await run(['validate'], { env: { APP_SERVING_CODE_CACHE: cache } });
  const files = [];
  const walk = (d) => readdirSync(d, { withFileTypes: true }).forEach((e) => (e.isDirectory() ? walk(join(d, e.name)) : files.push(join(d, e.name))));
  walk(cache);
  const bundle = readdirSync(join(CLI, 'dist', 'cli')).filter((f) => f.endsWith('.cjs')).map((f) => join(CLI, 'dist', 'cli', f));
  const bytes = [...files, ...bundle].reduce((n, f) => n + readFileSync(f).length, 0);
  const started = performance.now();
  for (let i = 0; i < 20; i += 1) for (const f of [...files, ...bundle]) crc32(readFileSync(f));
  rows.push({ what: `code cache: CRC-32 of every bundle file and validate's cache files (${(bytes / 1024).toFixed(0)} KiB)`, exit: '-', seconds: ((performance.now() - started) / 20 / 1000).toFixed(4), peakMiB: '-', said: 'per run, an upper bound: a run hashes only the files it loads' });
}

// Local charts (issue 34, M4): a folder whose Chart.yaml is a FIFO nobody writes, or a link to /dev/zero.
if (wanted('charts')) {
  const current = readFileSync(join(REPO, 'apps/app-serving/Pulumi.current.yaml'), 'utf8');
  for (const [what, make] of [
    ['a FIFO nobody writes', (file) => execFileSync('mkfifo', [file])],
    ['a link to /dev/zero', (file) => symlinkSync('/dev/zero', file)],
  ]) {
    const dir = mkdtempSync(join(work, 'chart-'));
    mkdirSync(join(dir, 'chart'));
    make(join(dir, 'chart', 'Chart.yaml'));
    writeFileSync(join(dir, 'Pulumi.c.yaml'), current.replace('config:\n', 'config:\n  app-serving:charts:\n    routerGateway:\n      chart: ./chart\n'));
    await measure(`validate: charts.routerGateway.chart a folder whose Chart.yaml is ${what}`, ['validate', '--stack', join(dir, 'Pulumi.c.yaml'), '--models-dir', join(REPO, 'models')]);
  }
}

// preflight's Prometheus check (issue 34, M5): an address outside the cluster answering a gzip bomb, or without end.
if (wanted('prometheus')) {
  const cloud = readFileSync(join(REPO, 'apps/app-serving/Pulumi.cloud.yaml'), 'utf8');
  const kube = await serve((req, res) => {
    const path = req.url.split('?')[0];
    res.writeHead(path === '/version' ? 200 : path.endsWith('selfsubjectaccessreviews') ? 201 : path === '/api/v1/nodes' ? 200 : 404, { 'content-type': 'application/json' });
    res.end(path === '/version' ? '{"gitVersion":"v1.31.2"}' : path.endsWith('selfsubjectaccessreviews') ? '{"status":{"allowed":true}}' : path === '/api/v1/nodes' ? '{"items":[]}' : '{"code":404}');
  });
  const bomb = gzipSync(Buffer.alloc(1024 * 1024 * 1024), { level: 9 });
  for (const [what, handler] of [
    [`a 1 GiB gzip bomb (${(bomb.length / 1024 / 1024).toFixed(1)} MB)`, (_req, res) => (res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }), res.end(bomb))],
    ['an endless body', (_req, res) => (res.writeHead(200, { 'content-type': 'application/json' }), pump(res, () => 'p'.repeat(65536)))],
  ]) {
    const prometheus = createHttpServer((req, res) => (res.on('error', () => undefined), req.resume(), req.on('end', () => handler(req, res))));
    await new Promise((resolve) => prometheus.listen(0, '127.0.0.1', resolve));
    const dir = mkdtempSync(join(work, 'prom-'));
    writeFileSync(join(dir, 'Pulumi.p.yaml'), cloud.replace('http://prometheus-operated.monitoring.svc:9090', `http://127.0.0.1:${prometheus.address().port}`));
    await measure(`preflight: the Prometheus answers ${what}, --timeout 8s --deadline 40s`, ['preflight', '--stack', join(dir, 'Pulumi.p.yaml'), '--models-dir', join(REPO, 'models'), '--kubeconfig', kubeconfig(kube.url), '--timeout', '8s', '--deadline', '40s']);
    prometheus.closeAllConnections();
    prometheus.close();
  }
  kube.close();
}

// fetch-upstream (issue 34, m16): a mirror that answers every file without end.
if (wanted('fetch-upstream')) {
  const mirror = createHttpServer((req, res) => (res.on('error', () => undefined), res.writeHead(200, { 'content-type': 'application/octet-stream' }), pump(res, () => 'u'.repeat(65536))));
  await new Promise((resolve) => mirror.listen(0, '127.0.0.1', resolve));
  await measure('npm run fetch-upstream: a mirror answering every file without end', [], {
    script: join(REPO, 'tools/test-cluster/upstream.mjs'),
    env: { APP_SERVING_UPSTREAM_CACHE: mkdtempSync(join(work, 'upcache-')), APP_SERVING_UPSTREAM_MIRROR: `http://127.0.0.1:${mirror.address().port}` },
  });
  mirror.closeAllConnections();
  mirror.close();
}

console.log(`node ${process.version}, ${TIME ? 'peak = max RSS (GNU time)' : 'no GNU time: no peak memory'}; load average ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
for (const r of rows) console.log(`${r.what}\n    exit ${r.exit}, ${r.seconds} s, peak ${r.peakMiB} MiB${r.said ? `: ${r.said}` : ''}`);
