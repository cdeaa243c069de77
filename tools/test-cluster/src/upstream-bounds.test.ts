/**
 * `npm run fetch-upstream` against a hostile mirror (m16 of the third hostile round): an endless
 * body, a gzip body that fetch would inflate, redirects to a host upstream.json does not name and
 * redirects without end. Each download stops at its limit, nothing is inflated, no redirect leaves
 * the named hosts, and nothing is written to the cache.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowedHosts, fetchEntry, MAX_DOWNLOAD_BYTES, readManifest } from '../upstream.mjs';

let server: Server;
let mirror: string;
let mode = 'endless';
let sent = 0;
const GZIP = gzipSync(Buffer.alloc(256 * 1024 * 1024), { level: 9 });

beforeAll(async () => {
  server = createServer((req, res) => {
    res.on('error', () => undefined);
    if (mode === 'endless') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      let open = true;
      res.on('close', () => (open = false));
      const go = () => {
        while (open && res.write(Buffer.alloc(65536, 0x61))) sent += 65536;
        if (open) res.once('drain', go);
      };
      go();
    } else if (mode === 'gzip') {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(GZIP);
    } else if (mode === 'elsewhere') {
      res.writeHead(302, { location: `http://localhost:${(server.address() as AddressInfo).port}${req.url}` });
      res.end();
    } else {
      res.writeHead(302, { location: `${req.url}x` });
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  mirror = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));

describe('fetch-upstream downloads are bounded (m16)', () => {
  const entry = readManifest().files.find((f) => !f.chart && !f.render)!;
  // The mirror's address is known once the server listens (beforeAll).
  const env = () => ({ ...process.env, APP_SERVING_UPSTREAM_MIRROR: mirror });

  it('an endless body stops at the limit', async () => {
    mode = 'endless';
    sent = 0;
    await expect(fetchEntry(entry, { env: env() })).rejects.toThrow(`more than the ${MAX_DOWNLOAD_BYTES / 1024 / 1024} MiB a pinned file can be: not read on`);
    // What the server managed to push into socket buffers besides: far from the 745 MB of before.
    expect(sent).toBeLessThan(4 * MAX_DOWNLOAD_BYTES);
  });

  it('a compressed body is refused, never inflated', async () => {
    mode = 'gzip';
    await expect(fetchEntry(entry, { env: env() })).rejects.toThrow('answered in content-encoding gzip though none was asked for: not inflated');
  });

  it('a redirect to a host upstream.json does not name is not followed; nor are redirects without end', async () => {
    mode = 'elsewhere';
    await expect(fetchEntry(entry, { env: env() })).rejects.toThrow(/localhost:\d+ is not a host upstream\.json names \(nor one its hosts serve files from\): not fetched/);
    mode = 'loop';
    await expect(fetchEntry(entry, { env: env() })).rejects.toThrow('more than 5 redirects');
  });

  it('without a mirror: the hosts the manifest names and where they serve files from, nothing else', () => {
    const { hosts } = allowedHosts(readManifest(), {});
    expect([...hosts].sort()).toEqual(expect.arrayContaining(['github.com', 'raw.githubusercontent.com', 'ghcr.io', 'registry.k8s.io', 'registry-1.docker.io', 'objects.githubusercontent.com']));
    expect(hosts.has('169.254.169.254')).toBe(false);
    expect([...allowedHosts(readManifest(), { APP_SERVING_UPSTREAM_MIRROR: mirror }).hosts]).toEqual([new URL(mirror).host]);
  });
});
