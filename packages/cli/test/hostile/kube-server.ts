import { readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { OnFinished } from './harness.ts';

/**
 * A hostile Kubernetes API server on 127.0.0.1, over HTTPS as a real one is, for `preflight` and
 * `verify --kubeconfig`. By default it answers like an empty cluster that lets you do anything;
 * a test overrides the answer of any request.
 *
 * `tls/cert.pem` and `tls/key.pem` are a self-signed certificate for 127.0.0.1 made for these
 * tests only, valid for 100 years:
 * `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500
 * -subj "/CN=app-serving hostile test API server" -addext "subjectAltName=IP:127.0.0.1" -keyout key.pem -out cert.pem`
 */
const TLS = join(import.meta.dirname, 'tls');
const CERT = readFileSync(join(TLS, 'cert.pem'));
const KEY = readFileSync(join(TLS, 'key.pem'));

/** Answers a request, or returns false to leave it to the empty cluster. */
export type KubeBehaviour = (req: IncomingMessage, res: ServerResponse, body: string) => boolean | void;

export interface HostileKube {
  readonly url: string;
  /** Every request, `GET /version`. */
  readonly requests: string[];
  /** Writes a kubeconfig for this server with the given `user:` block (YAML, indented 4) and returns its path. */
  kubeconfig(dir: string, user: string): string;
}

export const json = (res: ServerResponse, status: number, value: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
};

const notFound = (res: ServerResponse, what: string) => json(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `${what} not found` });

/** What an empty cluster that allows everything answers. */
function emptyCluster(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '').split('?')[0]!;
  if (path === '/version') return json(res, 200, { major: '1', minor: '31', gitVersion: 'v1.31.2' });
  if (path.endsWith('/selfsubjectaccessreviews')) return json(res, 201, { kind: 'SelfSubjectAccessReview', status: { allowed: true } });
  if (/^\/api\/v1\/nodes$|\/pods$|\/services$/.test(path)) return json(res, 200, { kind: 'List', metadata: {}, items: [] });
  notFound(res, path);
}

export async function serveKube(behaviour: KubeBehaviour, onFinished: OnFinished): Promise<HostileKube> {
  const requests: string[] = [];
  const server: Server = createServer({ cert: CERT, key: KEY }, (req, res) => {
    res.on('error', () => undefined);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push(`${req.method} ${req.url}`);
      if (behaviour(req, res, Buffer.concat(chunks).toString('utf8')) === false) emptyCluster(req, res);
    });
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    kubeconfig(dir, user) {
      const file = join(dir, 'kubeconfig');
      writeFileSync(
        file,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters:',
          '- name: hostile',
          '  cluster:',
          `    server: ${url}`,
          `    certificate-authority-data: ${CERT.toString('base64')}`,
          'contexts:',
          '- name: hostile',
          '  context:',
          '    cluster: hostile',
          '    user: u',
          'current-context: hostile',
          'users:',
          '- name: u',
          '  user:',
          user.replace(/^/gm, '    '),
          '',
        ].join('\n'),
      );
      return file;
    },
  };
}

/** Writes `value` to the response whenever the socket drains, until the client goes away. */
export function pump(res: ServerResponse, piece: () => string | Buffer): void {
  let open = true;
  res.on('close', () => (open = false));
  const go = () => {
    while (open && res.write(piece()));
    if (open) res.once('drain', go);
  };
  go();
}
