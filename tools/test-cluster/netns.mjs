#!/usr/bin/env node
// Runs a command inside a network and mount namespace of its own, made for it and gone with it: the
// data-path tier's cluster, its pods (real processes with their own addresses) and the test itself
// live there, so that nothing they send can leave the machine, pod addresses need no route on the
// host, and the mounts made for pods (their file systems, /run/netns) vanish with the command.
//
//   node tools/test-cluster/netns.mjs -- <command> [args…]
//
// Inside: loopback up, the node address NODE_IP (10.0.255.1/32) on it for what the cluster serves
// to pods (the API server, the DNS server of cluster.local), a private tmpfs on /run/netns for the
// pods' own namespaces (ip netns add), APP_SERVING_NETNS=1 in the environment. Needs root and
// unshare(1) (util-linux); says so and exits 2 otherwise. Already inside (APP_SERVING_NETNS=1): runs
// the command as it is.
import { spawnSync } from 'node:child_process';

/** The address the node (the test's own network namespace) has: pods reach the cluster there. */
export const NODE_IP = '10.0.255.1';

/** The shell run by unshare before the command: the namespace's network and mounts. */
export function setupScript() {
  return [
    'set -e',
    'ip link set lo up',
    'sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0',
    `ip addr add ${NODE_IP}/32 dev lo`,
    'mkdir -p /run/netns',
    'mount -t tmpfs -o mode=755 app-serving-netns /run/netns',
    'exec "$@"',
  ].join('\n');
}

/** Why the namespace cannot be made here, or null. */
export function netnsProblem() {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'the data-path tier makes network namespaces and mounts: it runs as root (CI does)';
  if (spawnSync('unshare', ['--version']).status !== 0) return 'unshare(1) is missing: install util-linux';
  if (spawnSync('ip', ['-V']).status !== 0) return 'ip(8) is missing: install iproute2';
  return null;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const at = process.argv.indexOf('--');
  const command = at >= 0 ? process.argv.slice(at + 1) : process.argv.slice(2);
  if (command.length === 0) {
    console.error('usage: netns.mjs -- <command> [args…]');
    process.exit(2);
  }
  if (process.env.APP_SERVING_NETNS === '1') {
    const run = spawnSync(command[0], command.slice(1), { stdio: 'inherit' });
    process.exit(run.status ?? 1);
  }
  const problem = netnsProblem();
  if (problem) {
    console.error(`netns.mjs: ${problem}`);
    process.exit(2);
  }
  const run = spawnSync('unshare', ['--net', '--mount', '--propagation', 'private', '--fork', '--kill-child', '--', 'sh', '-c', setupScript(), 'sh', ...command], {
    stdio: 'inherit',
    env: { ...process.env, APP_SERVING_NETNS: '1' },
  });
  process.exit(run.status ?? (run.signal ? 128 : 1));
}
