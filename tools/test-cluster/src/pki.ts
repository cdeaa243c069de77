/**
 * Small certificates for the test control plane, made by `openssl` (the OpenSSL command-line tool):
 * a CA, and leaf certificates it signs. Used for the API server's aggregation layer (the front-proxy
 * CA and the proxy client certificate) and for extension servers (KEDA's metrics server and its
 * gRPC link to the operator). Valid for one day; nothing here is a secret worth keeping.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A CA: its certificate and key files. */
export interface CertificateAuthority {
  readonly cert: string;
  readonly key: string;
}

/** A leaf certificate: `tls.crt`, `tls.key` and the CA's `ca.crt`, in one folder (the layout KEDA reads). */
export interface IssuedCertificate {
  readonly dir: string;
  readonly cert: string;
  readonly key: string;
  readonly ca: string;
}

function openssl(args: string[], cwd: string): void {
  const result = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (result.error) throw new Error(`openssl is needed for the test cluster's certificates (apt-get install openssl): ${result.error.message}`);
  if (result.status !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr}`);
}

/** Creates a CA in `dir` (`<name>.crt`, `<name>.key`). */
export function createCa(dir: string, name: string): CertificateAuthority {
  mkdirSync(dir, { recursive: true });
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.crt`], dir);
  return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
}

/**
 * Issues a certificate signed by `ca` into `<dir>/<name>/` (`tls.crt`, `tls.key`, `ca.crt`), for
 * both server and client use, with the DNS names and IP addresses given.
 */
export function issueCertificate(ca: CertificateAuthority, dir: string, name: string, sans: { dns?: readonly string[]; ips?: readonly string[] } = {}): IssuedCertificate {
  const out = join(dir, name);
  mkdirSync(out, { recursive: true });
  const alt = [...(sans.dns ?? []).map((d) => `DNS:${d}`), ...(sans.ips ?? []).map((ip) => `IP:${ip}`)];
  writeFileSync(
    join(out, 'ext.cnf'),
    [`basicConstraints=CA:FALSE`, `keyUsage=digitalSignature,keyEncipherment`, `extendedKeyUsage=serverAuth,clientAuth`, ...(alt.length ? [`subjectAltName=${alt.join(',')}`] : [])].join('\n') + '\n',
  );
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-keyout', 'tls.key', '-out', 'tls.csr'], out);
  openssl(['x509', '-req', '-in', 'tls.csr', '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-days', '1', '-extfile', 'ext.cnf', '-out', 'tls.crt'], out);
  copyFileSync(ca.cert, join(out, 'ca.crt'));
  return { dir: out, cert: join(out, 'tls.crt'), key: join(out, 'tls.key'), ca: join(out, 'ca.crt') };
}
