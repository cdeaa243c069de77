/**
 * Envoy Gateway, as app-serving uses it on both platforms: KServe's Gateway, and (2026-08 set,
 * `router.gatewayClass: envoy`) each llm-d model's Gateway. One rule for its GatewayClass, and the
 * Envoy Gateway facts the plan and preflight rely on, each read from the module
 * `github.com/envoyproxy/gateway` at the versions the Go module proxy serves (v1.2.4, v1.2.8,
 * v1.5.0, v1.7.0, v1.8.0, v1.8.1, v1.9.0, v1.9.1: `go mod download -json github.com/envoyproxy/gateway@<v>`)
 * and held against the v1.8.1 CRDs in shared/upstream/current/crds by tests.
 */
import { createHash } from 'node:crypto';
import type { StackConfig } from './config/load.ts';
import { ENVOY_GATEWAY_CONTROLLER } from './constants.ts';

/**
 * The Envoy Gateway release the 2026-08 set is written for: what KServe v0.20 installs
 * (kserve `kserve-deps.env`) and Envoy AI Gateway v1.0/v1.1 build against (shared/reference/upstream-2026-08.md).
 */
export const ENVOY_GATEWAY_VERSION = 'v1.8.1';

/**
 * The oldest Envoy Gateway an llm-d model of class `envoy` works with: `loadBalancer.endpointOverride`
 * of the BackendTrafficPolicy came in v1.5.0 (release-notes/v1.5.0.yaml: "Added support for endpoint
 * override policy based on Header"; absent from the v1.2.8 CRD, present in v1.5.0's).
 */
export const ENVOY_GATEWAY_MIN_FOR_POOLS = 'v1.5.0';

/** A field (or an enum value of one) of an Envoy Gateway CRD, and the release it came in. */
export interface EnvoyCrdFact {
  /** Path under the CRD version's `openAPIV3Schema`; `[]` steps into a list's items. */
  readonly field: readonly string[];
  /** An enum value the field must list (a field older releases had with fewer values). */
  readonly value?: string;
  /** The first release whose CRD has it. */
  readonly since: string;
  /** Where that is written (the module's release notes). */
  readonly source: string;
}

/**
 * The fields app-serving writes that older Envoy Gateway CRDs lack, by kind (every one absent from
 * v1.2.8's generated CRDs and present in v1.5.0's, except `mergeType`: absent in v1.7.0, present in v1.8.0).
 */
export const ENVOY_CRD_FACTS = {
  endpointOverride: {
    field: ['spec', 'loadBalancer', 'endpointOverride'],
    since: 'v1.5.0',
    source: 'release-notes/v1.5.0.yaml: "Added support for endpoint override policy based on Header"',
  },
  fullDuplexStreamed: {
    field: ['spec', 'extProc', '[]', 'processingMode', 'request', 'body'],
    value: 'FullDuplexStreamed',
    since: 'v1.4.0',
    source: 'release-notes/v1.4.0.yaml: "Added support for FullDuplexedStreamed mode in Ext Proc" (trailers fixed in v1.4.2)',
  },
  forwardUsernameHeader: {
    field: ['spec', 'basicAuth', 'forwardUsernameHeader'],
    since: 'v1.4.0',
    source: 'release-notes/v1.4.0.yaml: "forwarding the authenticated username to the backend via a configurable header in BasicAuth"',
  },
  localJWKS: {
    field: ['spec', 'jwt', 'providers', '[]', 'localJWKS'],
    since: 'v1.4.0',
    source: 'release-notes/v1.4.0.yaml: "using a local JWKS in an inline string or in a ConfigMap"',
  },
  apiKeyForwardClientId: {
    field: ['spec', 'apiKeyAuth', 'forwardClientIDHeader'],
    since: 'v1.5.0',
    source: 'release-notes/v1.5.0.yaml: "Added support for forwarding client ID header and sanitizing API keys for API Key authentication" (apiKeyAuth itself: v1.3.0)',
  },
  apiKeySanitize: {
    field: ['spec', 'apiKeyAuth', 'sanitize'],
    since: 'v1.5.0',
    source: 'release-notes/v1.5.0.yaml (as apiKeyAuth.forwardClientIDHeader)',
  },
  authorizationHeaders: {
    field: ['spec', 'authorization', 'rules', '[]', 'principal', 'headers'],
    since: 'v1.4.0',
    source: 'api/v1alpha1/authorization_types.go: Principal.Headers absent at v1.3.0, present at v1.4.0',
  },
  mergeType: {
    field: ['spec', 'mergeType'],
    since: 'v1.8.0',
    source: 'release-notes/v1.8.0.yaml: "A new MergeType field allows choosing between Replace (default), StrategicMerge, or JSONMerge"',
  },
} as const satisfies Record<string, EnvoyCrdFact>;

/** The Envoy Gateway CRDs app-serving writes (group `gateway.envoyproxy.io`, version `v1alpha1`). */
export const ENVOY_GATEWAY_API = { group: 'gateway.envoyproxy.io', version: 'v1alpha1' } as const;

/**
 * The stack's Envoy GatewayClass: one object for every Gateway of Envoy Gateway the stack has —
 * KServe's, and each llm-d model's of class `envoy`. Named by `kserve.gateway.className` (default
 * `envoy`); app-serving creates it once per stack unless `kserve.gateway.create` is false (the
 * cluster has it), the same rule for both platforms.
 */
export interface EnvoyGatewayClassPlan {
  readonly name: string;
  readonly controllerName: string;
  /** Whether app-serving creates it (false: the cluster has it, and preflight checks it). */
  readonly create: boolean;
}

/** The stack's Envoy GatewayClass (see {@link EnvoyGatewayClassPlan}). */
export function envoyGatewayClassOf(config: Pick<StackConfig, 'kserve'>): EnvoyGatewayClassPlan {
  const gateway = config.kserve?.gateway;
  return { name: gateway?.className ?? 'envoy', controllerName: ENVOY_GATEWAY_CONTROLLER, create: gateway?.create ?? true };
}

/**
 * The name Envoy Gateway gives the proxy Deployment and Service of a Gateway in its default mode
 * (in its own namespace, `envoy-gateway-system`): `envoy-` + the first 48 characters of
 * `<namespace>-<gateway>` (a trailing `-` dropped) + `-` + the first 8 hex digits of the SHA-256 of
 * `<namespace>/<gateway>` (v1.8.1 `internal/infrastructure/kubernetes/proxy/resource.go`
 * ExpectedResourceHashedName, `internal/utils/misc.go` GetHashedName). At most 63 characters, so no
 * limit binds. In Gateway namespace mode, or with an EnvoyProxy naming the Service, it differs:
 * verify finds the Service by Envoy Gateway's owning-gateway labels.
 */
export function envoyProxyServiceName(namespace: string, gateway: string): string {
  return `envoy-${envoyHashedName(`${namespace}/${gateway}`, 48)}`;
}

/** Envoy Gateway's GetHashedName: the name (`/` as `-`) cut at `length` without a trailing `-`, then the hash. */
export function envoyHashedName(name: string, length: number): string {
  const hash = sha256Hex(name);
  const plain = name.replaceAll('/', '-');
  const cut = length > 0 && plain.length > length ? plain.slice(0, length).replace(/-$/, '') : plain;
  return `${cut}-${hash.slice(0, 8)}`;
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
