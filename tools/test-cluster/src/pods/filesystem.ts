/**
 * A real pod's file system in the data-path tier, made as a kubelet and a container runtime make it,
 * from the pod spec: a root of its own (an overlay over the machine's `/`, so the tools installed on
 * it — vLLM's venv, Envoy, the endpoint picker — are there, and writes stay the pod's), and each
 * volume mounted at its `mountPath`: Secrets and ConfigMaps as files (their `items` mapping kept),
 * `emptyDir`, the projected ServiceAccount token with the cluster's CA and the namespace (so a pod
 * talks to the API server as its ServiceAccount, under the RBAC its chart wrote), a claim as the
 * folder the test gives for it, `hostPath`. `/etc/resolv.conf` names the tier's DNS server for
 * `cluster.local`. Mounts are made in the test's own mount namespace (netns.mjs), so they vanish
 * with it whatever happens; {@link PodRoot.remove} undoes them in order.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import type { TestCluster } from '../cluster.ts';
import { NODE_IP } from './network.ts';

type Values = Record<string, any>;

function run(command: string, args: readonly string[]): void {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${(result.stderr || result.error?.message || '').trim()}`);
}

/**
 * A volume's Secret or ConfigMap is not in the API server (yet): the kubelet keeps such a pod in
 * ContainerCreating and tries again, where another error is a failure to create the container.
 */
export class VolumeNotReady extends Error {}

/** A pod's root file system and its mounts. */
export interface PodRoot {
  /** The root (`chroot` into it); `<root>/abs/path` is `/abs/path` in the pod. */
  readonly root: string;
  /** Undoes every mount (the deepest first) and removes the pod's folder. */
  remove(): void;
}

/** What a pod's volumes are made of, beyond what the API server holds. */
export interface VolumeSources {
  /** The folder a PersistentVolumeClaim's volume holds here (the model's weights), or undefined for an empty one. */
  readonly claim?: (namespace: string, claim: string) => string | undefined;
}

const within = (root: string, path: string) => join(root, normalize(`/${path}`));

/**
 * Where `path` of the pod is on this machine: each component looked up inside `root`, links followed
 * as the pod sees them (an absolute target from the pod's root: Debian's `/var/run` is a link to
 * `/run`, and the ServiceAccount's folder is under it). Components that do not exist yet are kept.
 */
export function resolveInRoot(root: string, path: string): string {
  const rest = normalize(`/${path}`).split('/').filter(Boolean);
  const done: string[] = [];
  for (let hops = 0; rest.length > 0; ) {
    const part = rest.shift()!;
    if (part === '..') {
      done.pop();
      continue;
    }
    const here = join(root, ...done, part);
    let link: string | null = null;
    try {
      if (lstatSync(here).isSymbolicLink()) link = readlinkSync(here);
    } catch {}
    if (link === null) {
      done.push(part);
      continue;
    }
    if ((hops += 1) > 40) throw new Error(`${path}: too many links inside the pod's root`);
    if (link.startsWith('/')) done.length = 0;
    rest.unshift(...link.split('/').filter(Boolean));
  }
  return join(root, ...done);
}

/**
 * Makes the root file system of a pod under `dir`, with the volumes of every container in
 * `containers` mounted where they ask. `apiPort` is the API server's port (its address is the node's).
 */
export async function podRoot(cluster: TestCluster, pod: Values, containers: readonly Values[], dir: string, sources: VolumeSources = {}): Promise<PodRoot> {
  const mounts: string[] = [];
  const mount = (args: readonly string[], target: string) => {
    run('mount', [...args, target]);
    mounts.push(target);
  };
  const upper = join(dir, 'upper');
  const work = join(dir, 'work');
  const root = join(dir, 'root');
  for (const d of [upper, work, root]) mkdirSync(d, { recursive: true });
  const remove = () => {
    for (const target of [...mounts].reverse()) spawnSync('umount', ['-l', target]);
    mounts.length = 0;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    mount(['-t', 'overlay', 'overlay', '-o', `lowerdir=/,upperdir=${upper},workdir=${work}`], root);
    for (const sys of ['dev', 'proc', 'sys']) mount(['--rbind', `/${sys}`], join(root, sys));
    const namespace: string = pod.metadata.namespace;
    // Replaced, not written through: either may be a link to a file outside the pod's root.
    for (const file of ['resolv.conf', 'hosts']) rmSync(join(root, 'etc', file), { force: true });
    writeFileSync(join(root, 'etc', 'resolv.conf'), `nameserver ${NODE_IP}\nsearch ${namespace}.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n`);
    writeFileSync(join(root, 'etc', 'hosts'), `127.0.0.1 localhost\n${pod.status?.podIP ?? ''} ${pod.metadata.name}\n`);
    const volumes = new Map<string, Values>((pod.spec.volumes ?? []).map((v: Values) => [v.name, v]));
    const made = new Map<string, string>();
    for (const container of containers) {
      for (const volumeMount of (container.volumeMounts ?? []) as Values[]) {
        const volume = volumes.get(volumeMount.name);
        if (!volume) throw new Error(`pod ${namespace}/${pod.metadata.name}: container ${container.name} mounts volume ${volumeMount.name}, which the pod does not have`);
        let source = made.get(volume.name);
        if (source === undefined) {
          source = await volumeFolder(cluster, pod, volume, join(dir, 'volumes', volume.name), sources);
          made.set(volume.name, source);
        }
        const from = volumeMount.subPath ? within(source, volumeMount.subPath) : source;
        const target = resolveInRoot(root, volumeMount.mountPath);
        if (existsSync(from) && statSync(from).isDirectory()) mkdirSync(target, { recursive: true });
        else {
          mkdirSync(dirname(target), { recursive: true });
          if (!existsSync(target)) writeFileSync(target, '');
        }
        mount(['--bind', from], target);
        if (volumeMount.readOnly) run('mount', ['-o', 'remount,bind,ro', target]);
      }
    }
    return { root, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

/** The folder that holds one volume's content. */
async function volumeFolder(cluster: TestCluster, pod: Values, volume: Values, folder: string, sources: VolumeSources): Promise<string> {
  const namespace: string = pod.metadata.namespace;
  mkdirSync(folder, { recursive: true });
  /** The Secret or ConfigMap a volume is made of; an optional one that is not there is empty. */
  const get = async (kind: 'secret' | 'configmap', name: string, optional: boolean | undefined): Promise<Values> => {
    const res = await cluster.request('GET', `/api/v1/namespaces/${namespace}/${kind}s/${name}`);
    if (res.status === 200) return res.body as Values;
    if (res.status === 404 && optional) return {};
    const what = res.status === 404 ? `${kind} "${name}" not found` : `${kind} "${name}": ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
    throw new VolumeNotReady(`MountVolume.SetUp failed for volume "${volume.name}": ${what}`);
  };
  const write = (items: Values[] | undefined, data: Record<string, Buffer>, mode?: number) => {
    const entries = items ? items.map((item) => [item.path as string, data[item.key]] as const) : Object.entries(data);
    for (const [path, content] of entries) {
      if (content === undefined) continue;
      const file = within(folder, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
      chmodSync(file, mode ?? 0o644);
    }
  };
  const decoded = (object: Values): Record<string, Buffer> => ({
    ...Object.fromEntries(Object.entries(object.data ?? {}).map(([k, v]) => [k, object.kind === 'Secret' ? Buffer.from(String(v), 'base64') : Buffer.from(String(v))])),
    ...Object.fromEntries(Object.entries(object.binaryData ?? {}).map(([k, v]) => [k, Buffer.from(String(v), 'base64')])),
  });
  if (volume.secret) write(volume.secret.items, decoded(await get('secret', volume.secret.secretName, volume.secret.optional)), volume.secret.defaultMode);
  else if (volume.configMap) write(volume.configMap.items, decoded(await get('configmap', volume.configMap.name, volume.configMap.optional)), volume.configMap.defaultMode);
  else if (volume.emptyDir) chmodSync(folder, 0o777);
  else if (volume.persistentVolumeClaim) return sources.claim?.(namespace, volume.persistentVolumeClaim.claimName) ?? folder;
  else if (volume.hostPath) {
    if (!existsSync(volume.hostPath.path)) mkdirSync(volume.hostPath.path, { recursive: true });
    return volume.hostPath.path;
  } else if (volume.projected) {
    for (const source of volume.projected.sources as Values[]) {
      if (source.serviceAccountToken) {
        const token = await cluster.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${pod.spec.serviceAccountName ?? 'default'}/token`, {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: {
            ...(source.serviceAccountToken.audience && { audiences: [source.serviceAccountToken.audience] }),
            expirationSeconds: source.serviceAccountToken.expirationSeconds ?? 3607,
            boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid },
          },
        });
        if (token.status >= 300) throw new Error(`pod ${namespace}/${pod.metadata.name}: token of ServiceAccount ${pod.spec.serviceAccountName}: ${token.status} ${JSON.stringify(token.body).slice(0, 300)}`);
        write(undefined, { [source.serviceAccountToken.path]: Buffer.from((token.body as Values).status.token) });
      } else if (source.configMap) write(source.configMap.items, decoded(await get('configmap', source.configMap.name, source.configMap.optional)));
      else if (source.secret) write(source.secret.items, decoded(await get('secret', source.secret.name, source.secret.optional)));
      else if (source.downwardAPI) {
        for (const item of source.downwardAPI.items as Values[]) {
          const value = item.fieldRef ? fieldValue(pod, item.fieldRef.fieldPath) : '';
          write(undefined, { [item.path]: Buffer.from(value) });
        }
      }
    }
  }
  return folder;
}

/** A pod field as the downward API gives it (`metadata.namespace`, `status.podIP`, …). */
export function fieldValue(pod: Values, path: string): string {
  const label = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (label) return String(pod.metadata[label[1]!]?.[label[2]!] ?? '');
  const value = path.split('.').reduce<unknown>((at, key) => (at && typeof at === 'object' ? (at as Values)[key] : undefined), pod);
  return value === undefined || value === null ? '' : String(value);
}
