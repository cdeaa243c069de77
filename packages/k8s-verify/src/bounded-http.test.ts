import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { accessPlan, loadStackFile, planDeployment, type DeploymentPlan } from '@app-serving/core';
import { afterEach, describe, expect, it } from 'vitest';
import { planOf } from '../test/plans.ts';
import { getJson, readBody } from './bounded.ts';
import { formatJson, formatJunit, formatSummary } from './format.ts';
import { runPreflight, type PreflightReader } from './preflight.ts';
import { verifyPlan } from './verify.ts';
import { join } from 'node:path';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

/**
 * The one bounded reader of HTTP answers, and the checks the third hostile round broke through
 * it: preflight's Prometheus check (M5: a gzip bomb inflated to 2.2 GB, an endless body read past
 * the deadline, both blamed on the API server), verify's refuses-anonymous (M6: the body cut before
 * it was redacted; m15: a base URL's credentials sent by the "anonymous" request).
 */

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

async function serve(handler: http.RequestListener): Promise<string> {
  const server = http.createServer((req, res) => {
    res.on('error', () => undefined);
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Writes `piece()` for as long as the client reads. */
function endless(res: http.ServerResponse, piece: () => string): void {
  let open = true;
  res.on('close', () => (open = false));
  const go = () => {
    while (open && res.write(piece()));
    if (open) res.once('drain', go);
  };
  go();
}

const BOMB = gzipSync(Buffer.alloc(256 * 1024 * 1024), { level: 9 });

describe('readBody and getJson: bounded, never inflated, never redirected, under the signal', () => {
  it('an endless answer stops at the limit; a gzip answer is not read; a redirect is not followed', async () => {
    const url = await serve((req, res) => {
      if (req.url === '/endless') return res.writeHead(200, { 'content-type': 'application/json' }), endless(res, () => 'x'.repeat(65536));
      if (req.url === '/gzip') return res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }), res.end(BOMB);
      if (req.url === '/redirect') return res.writeHead(302, { location: 'http://169.254.169.254/' }), res.end();
      if (req.url === '/deep') return res.writeHead(200, { 'content-type': 'application/json' }), res.end('['.repeat(100_000));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"success"}');
    });
    const signal = AbortSignal.timeout(60_000);
    await expect(getJson(`${url}/ok`, { limit: 1024, signal })).resolves.toEqual({ status: 'success' });
    await expect(getJson(`${url}/endless`, { limit: 1024 * 1024, signal })).rejects.toThrow('answered more than 1 MiB: not read on (an endless or oversized answer)');
    await expect(getJson(`${url}/gzip`, { limit: 1024 * 1024, signal })).rejects.toThrow('answered in content-encoding gzip though none was asked for: not read');
    await expect(getJson(`${url}/redirect`, { limit: 1024, signal })).rejects.toThrow('answered HTTP 302, a redirect: not followed');
    await expect(getJson(`${url}/deep`, { limit: 1024 * 1024, signal })).rejects.toThrow('answered JSON nested deeper than 256 levels');
  });

  it('gives up when the signal aborts, and the socket closes (nothing keeps the process alive)', async () => {
    let closed!: Promise<void>;
    const url = await serve((_req, res) => {
      closed = new Promise((resolve) => res.on('close', () => resolve()));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"a":');
    });
    const controller = new AbortController();
    const pending = getJson(url, { limit: 1024, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('the run\'s deadline (1 s) passed')), 200);
    await expect(pending).rejects.toThrow("the run's deadline (1 s) passed");
    await closed;
  });

  it('readBody refuses an encoded answer before reading a byte of it', async () => {
    let sent = 0;
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'br' });
      endless(res, () => ((sent += 65536), 'y'.repeat(65536)));
    });
    const response = await new Promise<http.IncomingMessage>((resolve) => http.get(url, resolve));
    await expect(readBody(response, { limit: 1024, signal: AbortSignal.timeout(60_000) })).rejects.toMatchObject({ kind: 'encoded' });
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });
});

describe("preflight's Prometheus check (M5)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-verify-prometheus-'));
  const repo = join(import.meta.dirname, '..', '..', '..');
  // The cloud example (Qwen3-0.6B autoscaled by KEDA), its Prometheus here.
  const planWith = (address: string): DeploymentPlan => {
    const file = join(dir, 'Pulumi.cloud.yaml');
    writeFileSync(file, readFileSync(join(repo, 'apps', 'app-serving', 'Pulumi.cloud.yaml'), 'utf8').replace('http://prometheus-operated.monitoring.svc:9090', address));
    return planDeployment(loadStackFile(file, file, { checkRules: false }), join(repo, 'models'));
  };
  const reader: PreflightReader = {
    version: async () => 'v1.34.4',
    get: async (ref) => (ref.plural === 'namespaces' ? null : { spec: { versions: [{ name: ref.name.includes('keda') ? 'v1alpha1' : 'v1', served: true, schema: { openAPIV3Schema: {} } }] }, metadata: { name: ref.name } }),
    listNodes: async () => [],
    canI: async () => ({ allowed: true, reason: null }),
  };
  const prometheusCheck = async (address: string, options: { timeoutMs?: number; deadlineMs?: number } = {}) => {
    const result = await runPreflight(planWith(address), { reader, timeoutMs: options.timeoutMs ?? 30_000, deadlineMs: options.deadlineMs ?? 120_000 });
    return result.checks.find((c) => c.type === 'prometheus')!;
  };

  it('a gzip bomb: refused unread, said to be the answer of Prometheus (not a timeout of the API server)', async () => {
    const url = await serve((_req, res) => (res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }), res.end(BOMB)));
    const check = await prometheusCheck(url);
    expect(check.message).toBe(`${url} answered in content-encoding gzip though none was asked for: not read: not Prometheus's build info (at /api/v1/status/buildinfo)`);
  });

  it('an endless body: cut at 1 MiB', async () => {
    const url = await serve((_req, res) => (res.writeHead(200, { 'content-type': 'application/json' }), endless(res, () => 'z'.repeat(65536))));
    const check = await prometheusCheck(url);
    expect(check.message).toBe(`${url} answered more than 1 MiB: not read on (an endless or oversized answer): not Prometheus's build info (at /api/v1/status/buildinfo)`);
  });

  it('a Prometheus that never answers: its timeout names Prometheus, not the API server', async () => {
    const url = await serve(() => undefined);
    const check = await prometheusCheck(url, { timeoutMs: 500 });
    expect(check.message).toBe(`no answer within 500 ms (per-check timeout): the Prometheus at ${url} is slow or unreachable`);
    expect(check.fix).toBe(`make sure the Prometheus at ${url} answers from here, or allow each check longer with --timeout (it was 500 ms)`);
  });

  it('a proper answer passes', async () => {
    const url = await serve((_req, res) => (res.writeHead(200, { 'content-type': 'application/json' }), res.end('{"status":"success","data":{"version":"3.5.0"}}')));
    expect((await prometheusCheck(url)).message).toBe(`${url} answers (Prometheus 3.5.0)`);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('refuses-anonymous: redacted whole, then cut (M6); no credentials from the base URL (m15)', () => {
  const gen = () => {
    const p = planOf([{ category: 'generative', name: 'Gen', slug: 'gen' }]);
    return { ...p, models: p.models.map((m) => ({ ...m, access: accessPlan({ apiKeys: ['ci'] }) })) };
  };
  const TOKEN = 'ci:VTOKEN-SECRET-0123456789abcdefXYZ';
  const BASIC = Buffer.from(TOKEN).toString('base64');

  it.each([300, 340, 350, 360, 370, 380])('an echo of the last caller after %i characters: no part of the credential in --json, JUnit or the summary', async (pad) => {
    let last = '';
    const url = await serve((req, res) => {
      const body = `${'E'.repeat(pad)} last caller: ${last}`;
      last = String(req.headers.authorization ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url === '/v1/models' && !req.headers.authorization ? body : JSON.stringify({ object: 'list', data: [{ id: 'org/gen' }] }));
    });
    const result = await verifyPlan(gen(), { baseUrl: url, token: TOKEN, timeoutMs: 5000 });
    const refusal = result.models[0]!.checks.find((c) => c.name === 'refuses-anonymous')!;
    expect(refusal.status).toBe('fail');
    for (const text of [formatJson(result), formatJunit(result), formatSummary(result)]) {
      for (let i = 0; i + 8 <= BASIC.length; i += 1) expect(text, `${BASIC.slice(i, i + 8)} leaks`).not.toContain(BASIC.slice(i, i + 8));
      expect(text).not.toContain('VTOKEN');
    }
  });

  it('a base URL with user:password@: the anonymous request carries no credentials, and they are never printed', async () => {
    const requests: { path: string; authorization: string | undefined }[] = [];
    const url = await serve((req, res) => {
      requests.push({ path: req.url ?? '', authorization: req.headers.authorization });
      if (!req.headers.authorization) return res.writeHead(401, { 'content-type': 'text/plain' }), res.end('no credentials');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'org/gen' }] }));
    });
    const withCredentials = url.replace('http://', 'http://u:URLPASS-CANARY-123@');
    const result = await verifyPlan(gen(), { baseUrl: withCredentials, token: TOKEN, timeoutMs: 5000 });
    const refusal = result.models[0]!.checks.find((c) => c.name === 'refuses-anonymous')!;
    expect(refusal).toMatchObject({ status: 'pass', message: 'refused without credentials (HTTP 401)' });
    expect(requests.filter((r) => r.authorization === undefined).map((r) => r.path)).toEqual(['/v1/models']);
    for (const text of [formatJson(result), formatJunit(result), formatSummary(result)]) {
      expect(text).not.toContain('URLPASS-CANARY-123');
      expect(text).not.toContain(Buffer.from('u:URLPASS-CANARY-123').toString('base64'));
    }
  });
});
