import { ENVOY_GATEWAY_API } from '../../envoy-gateway.ts';
import { commonLabels } from '../../manifests/common.ts';
import { EPP_DESTINATION_HEADER, EXT_PROC_MESSAGE_TIMEOUT } from './facts.ts';
import type { RouterNames } from './names.ts';

/**
 * The route of a generative 2026-08 model behind a Gateway of Envoy Gateway (`router.gatewayClass:
 * envoy`). Envoy Gateway does not take an InferencePool as an HTTPRoute backend (v1.8.1:
 * `ResolvedRefs=False InvalidKind`, "only the core API group, multicluster.x-k8s.io and
 * gateway.envoyproxy.io are supported"; routing to a pool is Envoy AI Gateway's extension), so the
 * Router chart's HTTPRoute is not rendered and app-serving writes Envoy Gateway's own form of it,
 * seen end to end with EG v1.8.1 and the GAIE EPP v1.5.0 (shared/reference/real-data-path.md):
 *
 * - a ClusterIP Service whose selector is the pool's and whose port is the pool's target port (the
 *   model server's), so that Envoy's cluster holds exactly the pool's endpoints;
 * - the HTTPRoute `<release>-route` (not the chart's name: see RouterNames) from the model's Gateway
 *   to that Service, with the request timeout the chart's route would have had
 *   (`httpRoute.requestTimeout`; without one Envoy cuts a request at 15 s);
 * - an EnvoyExtensionPolicy on the route whose `extProc` calls the EPP's Service on its ext_proc port,
 *   bodies `FullDuplexStreamed` both ways (the EPP reads the request body to pick; with `Buffered` it
 *   never answers: ext_proc message timeouts, 504), `failOpen: false` (EG's CRD refuses failOpen with
 *   FullDuplexStreamed; a request the EPP did not place is refused, not sent anywhere);
 * - a BackendTrafficPolicy on the route whose `loadBalancer.endpointOverride` sends each request to
 *   the pod the EPP named in `x-gateway-destination-endpoint` (Envoy's override_host policy), falling
 *   back to least-request when the header names no endpoint of the Service. Envoy Gateway attaches
 *   one BackendTrafficPolicy per route (v1.8.1 `internal/gatewayapi/backendtrafficpolicy.go`: a
 *   second one is `Conflicted`, "another BackendTrafficPolicy has already attached to it"), so the
 *   model's rate limit (access) goes into this one.
 *
 * The EPP serves ext_proc in plain gRPC on this class (router.ts sets `--secure-serving=false`):
 * Envoy Gateway verifies a TLS backend only against a CA (BackendTLSPolicy), and the EPP's own
 * certificate is self-signed at start, with no CA to give; the EPP Service names the port
 * `appProtocol: kubernetes.io/h2c` (the chart's `_service.yaml`), and EG's ext_proc cluster is HTTP/2.
 */
export interface EnvoyRouteInput {
  readonly names: RouterNames;
  readonly slug: string;
  /** The labels the InferencePool selects, and its target port (the model server's). */
  readonly poolSelector: Readonly<Record<string, string>>;
  readonly targetPort: number;
  /** The EPP Service's ext_proc port (`router.epp.extProcPort`). */
  readonly extProcPort: number;
  /** The route's request timeout (`httpRoute.requestTimeout` of the Router values). */
  readonly requestTimeout: string;
  /** The model's rate limit, as access writes it into a BackendTrafficPolicy (`rateLimit`), or null. */
  readonly rateLimit: Record<string, unknown> | null;
}

/** The objects of {@link EnvoyRouteInput}'s route, in the order they are applied. */
export interface EnvoyRouteManifests {
  readonly service: Record<string, unknown>;
  readonly extensionPolicy: Record<string, unknown>;
  readonly backendTrafficPolicy: Record<string, unknown>;
  readonly httpRoute: Record<string, unknown>;
}

/** The load-balancing fallback when the EPP's header names no endpoint: Envoy Gateway's default. */
const FALLBACK_LOAD_BALANCER = 'LeastRequest';

/** Envoy Gateway's form of the pool's route (see {@link EnvoyRouteInput}). */
export function envoyRouteManifests(input: EnvoyRouteInput): EnvoyRouteManifests {
  const { names } = input;
  const meta = (name: string) => ({ name, namespace: names.namespace, labels: commonLabels(input.slug) });
  const targetRefs = [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: names.envoyHttpRoute }];
  const policy = `${ENVOY_GATEWAY_API.group}/${ENVOY_GATEWAY_API.version}`;
  return {
    service: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(names.poolService),
      spec: { type: 'ClusterIP', selector: { ...input.poolSelector }, ports: [{ name: 'http', protocol: 'TCP', port: input.targetPort, targetPort: input.targetPort }] },
    },
    extensionPolicy: {
      apiVersion: policy,
      kind: 'EnvoyExtensionPolicy',
      metadata: meta(names.extProcPolicy),
      spec: {
        targetRefs,
        extProc: [
          {
            backendRefs: [{ group: '', kind: 'Service', name: names.epp, port: input.extProcPort }],
            processingMode: { request: { body: 'FullDuplexStreamed' }, response: { body: 'FullDuplexStreamed' } },
            failOpen: false,
            messageTimeout: EXT_PROC_MESSAGE_TIMEOUT,
          },
        ],
      },
    },
    backendTrafficPolicy: {
      apiVersion: policy,
      kind: 'BackendTrafficPolicy',
      metadata: meta(names.backendTrafficPolicy),
      spec: {
        targetRefs,
        loadBalancer: { type: FALLBACK_LOAD_BALANCER, endpointOverride: { extractFrom: [{ header: EPP_DESTINATION_HEADER }] } },
        ...(input.rateLimit && { rateLimit: input.rateLimit }),
      },
    },
    httpRoute: {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: meta(names.envoyHttpRoute),
      spec: {
        parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: names.gateway }],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/' } }],
            backendRefs: [{ group: '', kind: 'Service', name: names.poolService, port: input.targetPort }],
            timeouts: { request: input.requestTimeout },
          },
        ],
      },
    },
  };
}
