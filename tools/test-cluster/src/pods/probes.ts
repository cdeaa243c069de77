/**
 * A container's probes as the kubelet runs them (`httpGet`, `tcpSocket`, `grpc`; an `exec` probe is
 * taken as passing: the tier runs no command inside a pod for it), against the pod's own address.
 * Each returns whether the probe passed, within its `timeoutSeconds`.
 */
import { request as httpRequest } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import { connect as netConnect } from 'node:net';

type Values = Record<string, any>;

/** The container port a probe's `port` names (a number, or a port's name). */
export function probePort(container: Values, port: unknown): number | null {
  if (typeof port === 'number') return port;
  if (typeof port === 'string' && /^\d+$/.test(port)) return Number(port);
  const named = ((container.ports ?? []) as Values[]).find((p) => p.name === port);
  return named ? Number(named.containerPort) : null;
}

/** Runs one probe once against `address`. */
export function runProbe(probe: Values, container: Values, address: string): Promise<boolean> {
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  if (probe.httpGet) {
    const port = probePort(container, probe.httpGet.port);
    if (port === null) return Promise.resolve(false);
    return new Promise((resolve) => {
      const req = httpRequest({ host: address, port, path: probe.httpGet.path ?? '/', method: 'GET', timeout: timeoutMs, headers: Object.fromEntries(((probe.httpGet.httpHeaders ?? []) as Values[]).map((h) => [h.name, h.value])) }, (res) => {
        res.resume();
        resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 400);
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => resolve(false));
      req.end();
    });
  }
  if (probe.tcpSocket) {
    const port = probePort(container, probe.tcpSocket.port);
    if (port === null) return Promise.resolve(false);
    return new Promise((resolve) => {
      const socket = netConnect({ host: address, port, timeout: timeoutMs }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('timeout', () => socket.destroy(new Error('timeout')));
      socket.on('error', () => resolve(false));
    });
  }
  if (probe.grpc) return grpcHealth(address, Number(probe.grpc.port), probe.grpc.service ?? '', timeoutMs);
  return Promise.resolve(true);
}

/**
 * The gRPC health check (`grpc.health.v1.Health/Check`) over plain HTTP/2, as the kubelet's `grpc`
 * probe sends it: a `HealthCheckRequest{service}`; passes on `HealthCheckResponse{status: SERVING}`.
 */
export function grpcHealth(address: string, port: number, service: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const name = Buffer.from(service, 'utf8');
    const message = service ? Buffer.concat([Buffer.from([0x0a, name.length]), name]) : Buffer.alloc(0);
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, message.length]), message]);
    const session = http2Connect(`http://${address}:${port}`);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      session.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    session.on('error', () => done(false));
    const stream = session.request({ ':method': 'POST', ':path': '/grpc.health.v1.Health/Check', 'content-type': 'application/grpc', te: 'trailers' });
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', () => done(false));
    stream.on('end', () => {
      const body = Buffer.concat(chunks);
      // A 5-byte frame header, then field 1 (status) = 1 (SERVING): 0x08 0x01.
      done(body.length >= 7 && body[5] === 0x08 && body[6] === 0x01);
    });
    stream.end(frame);
  });
}
