/**
 * @app-serving/test-cluster — test support, not published: the upstream data of
 * `../shared/upstream/`, and (see cluster.ts) a real Kubernetes control plane on 127.0.0.1.
 */
export { PROJECT_ROOT, upstreamDir, upstreamPath, readUpstream, readUpstreamYaml, readUpstreamJson } from './upstream.ts';
