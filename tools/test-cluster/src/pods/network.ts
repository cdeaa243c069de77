/**
 * Pod networks of the data-path tier: each real pod gets a network namespace of its own, joined to
 * the node's (the test's own namespace, made by `netns.mjs`) by a veth pair — the pod's address on
 * its end (`eth0`), a /32 route to it on the node's end, and the pod's default route through the
 * node's address — as a CNI plugin's point-to-point mode does; the node forwards between pods
 * (`netns.mjs` turns forwarding on). Nothing here reaches any address outside the test's namespace.
 */
import { spawnSync } from 'node:child_process';
import { NODE_IP } from '../../netns.mjs';

export { NODE_IP };

/** Whether this process runs inside the namespace `netns.mjs` makes (the data-path tier). */
export function insideTestNetns(): boolean {
  return process.env.APP_SERVING_NETNS === '1';
}

function ip(args: readonly string[]): void {
  const run = spawnSync('ip', args, { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`ip ${args.join(' ')}: ${(run.stderr || run.error?.message || '').trim()}`);
}

/** A pod's network namespace: `ip netns exec <name> …` runs a command in it. */
export interface PodNetwork {
  readonly name: string;
  readonly address: string;
  /** Removes the namespace and its veth pair. */
  remove(): void;
}

let counter = 0;

/** Makes the network namespace of a pod at `address` (an IPv4 address kwok gave the pod). */
export function podNetwork(address: string): PodNetwork {
  if (!insideTestNetns()) throw new Error('pod networks are made inside the data-path tier\'s own network namespace (run the test under tools/test-cluster/netns.mjs)');
  counter += 1;
  const id = `${process.pid % 10000}x${counter}`;
  const name = `pod-${id}`;
  const host = `vh${id}`.slice(0, 15);
  ip(['netns', 'add', name]);
  try {
    ip(['link', 'add', host, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', name]);
    ip(['link', 'set', host, 'up']);
    // `replace`: kwok gives a new pod the address of one just deleted, whose namespace may still be going.
    ip(['route', 'replace', `${address}/32`, 'dev', host]);
    ip(['-n', name, 'link', 'set', 'lo', 'up']);
    ip(['-n', name, 'addr', 'add', `${address}/32`, 'dev', 'eth0']);
    ip(['-n', name, 'link', 'set', 'eth0', 'up']);
    ip(['-n', name, 'route', 'add', `${NODE_IP}/32`, 'dev', 'eth0', 'scope', 'link']);
    ip(['-n', name, 'route', 'add', 'default', 'via', NODE_IP, 'dev', 'eth0', 'onlink']);
  } catch (error) {
    spawnSync('ip', ['netns', 'del', name]);
    throw error;
  }
  return {
    name,
    address,
    remove: () => {
      // Deleting the namespace deletes its end of the pair, and with it the node's end and route.
      spawnSync('ip', ['netns', 'del', name]);
      spawnSync('ip', ['link', 'del', host]);
    },
  };
}
