/**
 * The DNS server of `cluster.local` in the data-path tier, on the node's address, port 53 (the
 * pods' `/etc/resolv.conf` names it; Envoy's resolver reads that file, not `/etc/hosts`):
 *
 * - `<service>.<namespace>.svc.cluster.local` → the addresses of the Service's ready endpoints,
 *   read from its EndpointSlices — what a headless Service answers. A cluster's DNS answers the
 *   Service's ClusterIP, which kube-proxy forwards to those endpoints; no kube-proxy runs here, so
 *   the tier answers where kube-proxy would have sent the connection.
 * - `<a-b-c-d>.<namespace>.pod.cluster.local` → `a.b.c.d`.
 * - every other name: NXDOMAIN at once (nothing outside the tier is reachable), AAAA: no answer.
 */
import { createSocket, type Socket } from 'node:dgram';
import type { TestCluster } from '../cluster.ts';
import { NODE_IP } from './network.ts';

const TYPE_A = 1;

export interface ClusterDns {
  /** The names asked for, in order (for a test to see what a component looked up). */
  readonly queries: string[];
  /** The UDP port it answers on (53 unless the caller asked for another). */
  readonly port: number;
  /** Closes the socket; an answer still being looked up then is dropped. */
  stop(): Promise<void>;
}

/** Parses the question of a DNS query: its id, the name (lower case, no final dot) and type. */
export function parseQuery(message: Buffer): { id: number; name: string; type: number; end: number } | null {
  if (message.length < 12) return null;
  const id = message.readUInt16BE(0);
  if (message.readUInt16BE(4) !== 1) return null;
  const labels: string[] = [];
  let at = 12;
  for (;;) {
    if (at >= message.length) return null;
    const length = message[at]!;
    at += 1;
    if (length === 0) break;
    if (length > 63 || at + length > message.length) return null;
    labels.push(message.subarray(at, at + length).toString('latin1').toLowerCase());
    at += length;
  }
  if (at + 4 > message.length) return null;
  return { id, name: labels.join('.'), type: message.readUInt16BE(at), end: at + 4 };
}

/** The answer to a query: the question echoed, an A record per address (`rcode` 3 is NXDOMAIN). */
export function answer(query: Buffer, parsed: { id: number; end: number }, addresses: readonly string[], rcode: 0 | 3, ttl = 5): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(parsed.id, 0);
  // QR, opcode 0, AA, RD copied, RA; the rcode.
  header.writeUInt16BE(0x8400 | (query.readUInt16BE(2) & 0x0100) | 0x0080 | rcode, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(addresses.length, 6);
  const question = query.subarray(12, parsed.end);
  const records = addresses.map((address) => {
    const record = Buffer.alloc(16);
    record.writeUInt16BE(0xc00c, 0);
    record.writeUInt16BE(TYPE_A, 2);
    record.writeUInt16BE(1, 4);
    record.writeUInt32BE(ttl, 6);
    record.writeUInt16BE(4, 10);
    address.split('.').forEach((octet, i) => record.writeUInt8(Number(octet), 12 + i));
    return record;
  });
  return Buffer.concat([header, question, ...records]);
}

/**
 * Starts the server on the node's address, port 53 (`listen` for another, e.g. a test's own); `extra`
 * answers names of the test's own (e.g. a controller outside the cluster).
 */
export async function startClusterDns(
  cluster: Pick<TestCluster, 'request'>,
  extra: Readonly<Record<string, string>> = {},
  listen: { readonly address: string; readonly port: number } = { address: NODE_IP, port: 53 },
): Promise<ClusterDns> {
  const queries: string[] = [];
  const socket: Socket = createSocket('udp4');
  let closed = false;
  const lookup = async (name: string): Promise<string[] | null> => {
    if (extra[name]) return [extra[name]!];
    const pod = /^(\d+)-(\d+)-(\d+)-(\d+)\.[a-z0-9-]+\.pod\.cluster\.local$/.exec(name);
    if (pod) return [pod.slice(1, 5).join('.')];
    const service = /^([a-z0-9-]+)\.([a-z0-9-]+)\.svc\.cluster\.local$/.exec(name);
    if (!service) return null;
    const [, svc, namespace] = service;
    const found = await cluster.request('GET', `/api/v1/namespaces/${namespace}/services/${svc}`);
    if (found.status !== 200) return null;
    const slices = await cluster.request('GET', `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices?labelSelector=${encodeURIComponent(`kubernetes.io/service-name=${svc}`)}`);
    const items = (slices.body as { items?: Array<{ endpoints?: Array<{ addresses: string[]; conditions?: { ready?: boolean } }> }> }).items ?? [];
    return [...new Set(items.flatMap((s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).flatMap((e) => e.addresses)))].sort();
  };
  socket.on('message', (message, remote) => {
    const parsed = parseQuery(message);
    if (!parsed) return;
    queries.push(parsed.name);
    void (async () => {
      let reply: Buffer;
      try {
        const addresses = await lookup(parsed.name);
        reply = answer(message, parsed, addresses && parsed.type === TYPE_A ? addresses : [], addresses === null ? 3 : 0);
      } catch {
        reply = answer(message, parsed, [], 0);
      }
      // A lookup still under way when the tier stops (its API server gone) has no one to answer.
      if (!closed) socket.send(reply, remote.port, remote.address);
    })();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(listen.port, listen.address, () => resolve());
  });
  return {
    queries,
    port: socket.address().port,
    stop: () => {
      closed = true;
      return new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}
