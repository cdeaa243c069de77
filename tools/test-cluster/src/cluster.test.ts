import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_SERVER_GC, TEST_GOGC, startCluster, type TestCluster } from './cluster.ts';
import { OUTCOME_ANNOTATION } from './kwok.ts';
import { applyObjects, createNodes, waitFor } from './objects.ts';

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startCluster({ log: (line) => console.log(`test-cluster: ${line}`) });
}, 600_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('the test control plane', () => {
  it('serves the upstream CRDs at the versions we write', async () => {
    const groups = (await cluster.request('GET', '/apis')).body as { groups: Array<{ name: string; versions: Array<{ version: string }> }> };
    const served = new Set(groups.groups.flatMap((g) => g.versions.map((v) => `${g.name}/${v.version}`)));
    for (const gv of ['gateway.networking.k8s.io/v1', 'inference.networking.k8s.io/v1', 'inference.networking.x-k8s.io/v1alpha2', 'networking.istio.io/v1', 'telemetry.istio.io/v1', 'serving.kserve.io/v1alpha2', 'kwok.x-k8s.io/v1alpha1']) {
      expect(served, gv).toContain(gv);
    }
  });

  it('runs pods on kwok nodes through the real scheduler, and leaves unschedulable ones Pending with its reason', async () => {
    await createNodes(cluster, [{ name: 'gpu-a', labels: { pool: 'gpu' }, taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }], gpus: 2 }]);
    await applyObjects(cluster, [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'smoke' } },
      pod('tolerates', { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] }),
      pod('intolerant', {}),
      pod('unmatched', { nodeSelector: { pool: 'tpu' }, tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] }),
      pod('failing', { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] }, { [OUTCOME_ANNOTATION]: 'fail' }),
    ]);
    const ready = await waitFor(cluster, '/api/v1/namespaces/smoke/pods/tolerates', (p) => p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'));
    expect(ready.spec.nodeName).toBe('gpu-a');
    const pending = await waitFor(cluster, '/api/v1/namespaces/smoke/pods/intolerant', (p) => p.status?.conditions?.some((c: any) => c.type === 'PodScheduled' && c.reason === 'Unschedulable'));
    expect(pending.status.phase).toBe('Pending');
    expect(pending.status.conditions.find((c: any) => c.type === 'PodScheduled').message).toMatch(/untolerated taint/);
    const unmatched = await waitFor(cluster, '/api/v1/namespaces/smoke/pods/unmatched', (p) => p.status?.conditions?.some((c: any) => c.type === 'PodScheduled' && c.reason === 'Unschedulable'));
    expect(unmatched.status.conditions.find((c: any) => c.type === 'PodScheduled').message).toMatch(/didn't match Pod's node affinity\/selector/);
    const failed = await waitFor(cluster, '/api/v1/namespaces/smoke/pods/failing', (p) => p.status?.phase === 'Failed');
    expect(failed.status.containerStatuses[0].state.terminated.exitCode).toBe(1);
  }, 120_000);

  it('enforces RBAC for token users and records every mutating request', async () => {
    const denied = await cluster.request('POST', '/api/v1/namespaces/smoke/configmaps', { metadata: { name: 'x' } }, { user: 'viewer' });
    expect(denied.status).toBe(403);
    const read = await cluster.request('GET', '/api/v1/namespaces/smoke/pods', undefined, { user: 'viewer' });
    expect(read.status).toBe(200);
    expect((await cluster.request('GET', '/api/v1/namespaces/smoke/pods', undefined, { user: 'nobody' })).status).toBe(403);
    const mine = cluster.mutations().filter((e) => e.user === 'admin' && e.namespace === 'smoke');
    expect(mine.map((e) => `${e.verb} ${e.resource}/${e.name}`)).toContain('patch pods/tolerates');
  });
});

describe('what the control plane costs (CPU is what a test run on 2 cores is short of)', () => {
  /** The processes that run in the cluster's folder (its control plane), by command name. */
  const controlPlane = () =>
    readdirSync('/proc')
      .filter((pid) => /^\d+$/.test(pid))
      .flatMap((pid) => {
        try {
          if (readlinkSync(`/proc/${pid}/cwd`) !== cluster.dir) return [];
          const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
          return [{ name: readFileSync(`/proc/${pid}/comm`, 'utf8').trim(), gogc: environ.find((e) => e.startsWith('GOGC='))?.slice(5) }];
        } catch {
          return []; // gone, or not ours to read
        }
      });

  it(`its Go programs collect garbage at GOGC=${TEST_GOGC}, the API server at its memory limit (API_SERVER_GC), as the API server's own Go runtime reports`, async () => {
    const processes = controlPlane().filter((p) => p.name !== 'setpriv');
    expect(processes.map((p) => p.name).sort()).toEqual(expect.arrayContaining(['etcd', 'kube-apiserver', 'kube-controller', 'kube-scheduler', 'kwok']));
    if (process.env.GOGC || process.env.GOMEMLIMIT) return; // a person measuring: their setting, kept as it is
    expect(processes.filter((p) => p.gogc !== (p.name === 'kube-apiserver' ? API_SERVER_GC.GOGC : TEST_GOGC))).toEqual([]);
    // The runtime's own account (runtime/metrics, as the API server serves it): GOGC off is -1, which
    // this API server serves as an unsigned 64-bit number (2^64 as a float).
    const metrics = String((await cluster.request('GET', '/metrics')).body);
    expect(Number(/^go_gc_gogc_percent (\S+)$/m.exec(metrics)?.[1])).toBe(2 ** 64);
    expect(Number(/^go_gc_gomemlimit_bytes (\S+)$/m.exec(metrics)?.[1])).toBe(1600 * 1024 * 1024);
  });
});

function pod(name: string, spec: object, annotations: Record<string, string> = {}): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'smoke', annotations },
    spec: { containers: [{ name: 'c', image: 'registry.example/c:1' }], ...spec },
  };
}

describe('the simulated storage (a local-path-like provisioner beside the real PV controller and scheduler)', () => {
  const claim = (name: string, storageClassName?: string) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'storage' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '3Gi' } }, ...(storageClassName && { storageClassName }) },
  });
  const user = (name: string, claimName: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'storage' },
    spec: { nodeSelector: { disk: 'local' }, containers: [{ name: 'c', image: 'x' }], volumes: [{ name: 'v', persistentVolumeClaim: { claimName } }] },
  });

  it('gives a claim of the default class a volume on the node its first pod lands on, and deletes it with the claim', async () => {
    await createNodes(cluster, [{ name: 'disk-a', labels: { disk: 'local' } }]);
    await applyObjects(cluster, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'storage' } }, claim('data')]);
    // WaitForFirstConsumer: no volume before a pod uses the claim.
    const pending = await waitFor(cluster, '/api/v1/namespaces/storage/persistentvolumeclaims/data', (c) => c.status?.phase === 'Pending');
    expect(pending.spec.storageClassName).toBe('standard');
    await applyObjects(cluster, [user('app', 'data')]);
    const bound = await waitFor(cluster, '/api/v1/namespaces/storage/persistentvolumeclaims/data', (c) => c.status?.phase === 'Bound');
    const volume = (await cluster.request('GET', `/api/v1/persistentvolumes/${bound.spec.volumeName}`)).body as any;
    expect(volume.spec.capacity.storage).toBe('3Gi');
    expect(volume.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values).toEqual(['disk-a']);
    await waitFor(cluster, '/api/v1/namespaces/storage/pods/app', (p) => p.status?.phase === 'Running');
    await cluster.request('DELETE', '/api/v1/namespaces/storage/pods/app?gracePeriodSeconds=0');
    await waitFor(cluster, '/api/v1/namespaces/storage/pods', (l) => l.items.length === 0);
    await cluster.request('DELETE', '/api/v1/namespaces/storage/persistentvolumeclaims/data');
    await waitFor(cluster, '/api/v1/persistentvolumes', (l) => !l.items.some((v: any) => v.metadata.name === bound.spec.volumeName));
  });

  it('serves the on-prem class `hostpath` the same way; a claim of a class nobody serves stays Pending', async () => {
    await applyObjects(cluster, [claim('weights', 'hostpath'), claim('orphan', 'no-such-class'), user('reader', 'weights')]);
    await waitFor(cluster, '/api/v1/namespaces/storage/persistentvolumeclaims/weights', (c) => c.status?.phase === 'Bound');
    const orphan = await waitFor(cluster, '/api/v1/namespaces/storage/persistentvolumeclaims/orphan', (c) => c.status?.phase === 'Pending');
    expect(orphan.spec.volumeName ?? null).toBeNull();
  });

  it('watches claims, volumes and classes, as a controller does, instead of listing them over and over', async () => {
    /** The API server's own count of the lists of every claim it answered (apiserver_request_total). */
    const lists = async () =>
      String((await cluster.request('GET', '/metrics')).body)
        .split('\n')
        .filter((line) => line.startsWith('apiserver_request_total{') && line.includes('resource="persistentvolumeclaims"') && line.includes('verb="LIST"') && line.includes('scope="cluster"'))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    const before = await lists();
    // Five quiet seconds: at most the resync's one round (every 10 s); listing every 300 ms made 16.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    expect((await lists()) - before).toBeLessThanOrEqual(1);
  });
});
