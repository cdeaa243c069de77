/**
 * Envoy Gateway facts held against upstream: the name of a Gateway's proxy Service against Envoy
 * Gateway's own test cases (v1.8.1), and the CRD fields core writes against the v1.8.1 CRDs of
 * ../shared/upstream/current/crds (the 2026-08 set's pin).
 */
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { readUpstream } from '@app-serving/test-cluster';
import { ENVOY_CRD_FACTS, ENVOY_GATEWAY_API, envoyGatewayClassOf, envoyHashedName, envoyProxyServiceName } from './envoy-gateway.ts';

describe("Envoy Gateway's name for a Gateway's proxy Service", () => {
  it('is GetHashedName as Envoy Gateway tests it (v1.8.1 internal/utils/misc_test.go)', () => {
    expect(envoyHashedName('http', 6)).toBe('http-e0603c49');
    expect(envoyHashedName('namespace/name', 10)).toBe('namespace-18a6500f');
    // The cut ends on "-": it is dropped, as Go's strings.TrimSuffix does.
    expect(envoyHashedName('envoy-gateway-system/eg/http', 6)).toBe('envoy-2ecf157b');
  });

  it('is `envoy-` + the name hashed at 48, never over 63 characters (v1.8.1 proxy_serviceaccount_test.go, testdata/services)', () => {
    expect(`envoy-${envoyHashedName('very-long-name-that-will-be-hashed-and-cut-off-because-its-too-long', 48)}`).toBe('envoy-very-long-name-that-will-be-hashed-and-cut-off-b-5bacc75e');
    expect(`envoy-${envoyHashedName('default', 48)}`).toBe('envoy-default-37a8eec1');
    const longest = envoyProxyServiceName('n'.repeat(63), `${'g'.repeat(53)}-gateway`);
    expect(longest).toMatch(/^envoy-n{48}-[0-9a-f]{8}$/);
    expect(longest.length).toBe(63);
    expect(envoyProxyServiceName('llm-d-sim', 'router-sim-gateway')).toMatch(/^envoy-llm-d-sim-router-sim-gateway-[0-9a-f]{8}$/);
  });
});

describe('the Envoy Gateway CRD fields core writes, in the v1.8.1 CRDs (drift test)', () => {
  const crds = parseAllDocuments(readUpstream('current/crds/envoy-gateway-v1.8.1.yaml'))
    .map((d) => d.toJS() as any)
    .filter((d) => d?.kind === 'CustomResourceDefinition');
  const schemaOf = (kind: string) => crds.find((c) => c.spec.names.kind === kind)?.spec.versions.find((v: any) => v.name === ENVOY_GATEWAY_API.version)?.schema.openAPIV3Schema;
  const at = (schema: any, field: readonly string[]) => field.reduce((node, key) => (key === '[]' ? node?.items : node?.properties?.[key]), schema);
  const kindOf: Record<keyof typeof ENVOY_CRD_FACTS, string> = {
    endpointOverride: 'BackendTrafficPolicy',
    fullDuplexStreamed: 'EnvoyExtensionPolicy',
    forwardUsernameHeader: 'SecurityPolicy',
    localJWKS: 'SecurityPolicy',
    apiKeyForwardClientId: 'SecurityPolicy',
    apiKeySanitize: 'SecurityPolicy',
    authorizationHeaders: 'SecurityPolicy',
    mergeType: 'EnvoyProxy',
  };

  it.each(Object.entries(ENVOY_CRD_FACTS))('%s', (name, fact) => {
    const node = at(schemaOf(kindOf[name as keyof typeof ENVOY_CRD_FACTS]), fact.field);
    expect(node, `${name}: ${fact.field.join('.')}`).toBeDefined();
    if ('value' in fact) expect(node.enum).toContain(fact.value);
  });

  it('the EnvoyExtensionPolicy CRD refuses failOpen with FullDuplexStreamed, as core says (its CEL rule)', () => {
    const rules = JSON.stringify(at(schemaOf('EnvoyExtensionPolicy'), ['spec', 'extProc', '[]'])['x-kubernetes-validations']);
    expect(rules).toContain('If FullDuplexStreamed body processing mode is used, FailOpen must be false');
  });
});

describe("the stack's Envoy GatewayClass: one rule for KServe and llm-d", () => {
  it('is kserve.gateway.className (default envoy), created unless kserve.gateway.create is false', () => {
    expect(envoyGatewayClassOf({ kserve: undefined })).toEqual({ name: 'envoy', controllerName: 'gateway.envoyproxy.io/gatewayclass-controller', create: true });
    expect(envoyGatewayClassOf({ kserve: { gateway: { name: 'g', namespace: 'n', className: 'eg', create: false } } as never })).toEqual({
      name: 'eg',
      controllerName: 'gateway.envoyproxy.io/gatewayclass-controller',
      create: false,
    });
  });
});
