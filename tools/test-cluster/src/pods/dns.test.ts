import { createSocket } from 'node:dgram';
import { describe, expect, it } from 'vitest';
import { parseQuery, startClusterDns } from './dns.ts';

/** A DNS query for one A record. */
function query(name: string, id = 7): Buffer {
  const labels = name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0100, 2);
  header.writeUInt16BE(1, 4);
  return Buffer.concat([header, ...labels, Buffer.from([0, 0, 1, 0, 1])]);
}

describe('the cluster DNS server', () => {
  it('answers a Service by its ready endpoints', async () => {
    const cluster = {
      request: async (_method: string, path: string) =>
        path.includes('endpointslices')
          ? { status: 200, body: { items: [{ endpoints: [{ addresses: ['10.0.0.9'], conditions: { ready: true } }, { addresses: ['10.0.0.8'], conditions: { ready: false } }] }] } }
          : { status: 200, body: {} },
    } as never;
    const dns = await startClusterDns(cluster, {}, { address: '127.0.0.1', port: 0 });
    const client = createSocket('udp4');
    try {
      const reply = await new Promise<Buffer>((resolve) => {
        client.once('message', resolve);
        client.send(query('epp.llm-d-x.svc.cluster.local'), dns.port, '127.0.0.1');
      });
      expect(parseQuery(reply)?.name).toBe('epp.llm-d-x.svc.cluster.local');
      expect([...reply.subarray(reply.length - 4)]).toEqual([10, 0, 0, 9]);
    } finally {
      client.close();
      await dns.stop();
    }
  });

  it('drops the answer of a lookup still under way when it stops (the API server gone with the tier), with no error', async () => {
    let release: (error: Error) => void = () => {};
    let asked: () => void = () => {};
    const waiting = new Promise<void>((resolve) => (asked = resolve));
    const cluster = {
      request: () =>
        new Promise((_resolve, reject) => {
          release = reject;
          asked();
        }),
    } as never;
    const dns = await startClusterDns(cluster, {}, { address: '127.0.0.1', port: 0 });
    const client = createSocket('udp4');
    client.send(query('gone.app-serving.svc.cluster.local'), dns.port, '127.0.0.1');
    await waiting;
    await dns.stop();
    client.close();
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      release(new Error('connect ECONNREFUSED 10.0.255.1:6443'));
      await new Promise((r) => setTimeout(r, 200));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});
