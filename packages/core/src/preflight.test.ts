import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readUpstream } from '@app-serving/test-cluster';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadStackFile } from './stack.ts';
import { planDeployment } from './plan.ts';
import { KSERVE_CRDS, LLMD_CRDS, preflightChecks, type CrdRequirement } from './preflight.ts';
import { accessResources } from './features/access/manifests.ts';

const APP = join(import.meta.dirname, '..', '..', '..', 'apps', 'app-serving');
const MODELS = join(APP, '..', '..', 'models');
const planOf = (file: string) => planDeployment(loadStackFile(join(APP, file), file, { checkRules: false }), MODELS);

describe('preflightChecks', () => {
  it('llm-d on the cloud: CRDs, the istio class, placement per model, no storage, permissions; no registry check without Harbor', () => {
    const checks = preflightChecks(planOf('Pulumi.cloud.yaml'));
    const ids = checks.map((c) => c.id);
    expect(ids[0]).toBe('kubernetes-version');
    expect(ids.filter((id) => id.startsWith('crd:')).sort()).toEqual([
      'crd:destinationrules.networking.istio.io',
      'crd:gateways.gateway.networking.k8s.io',
      'crd:httproutes.gateway.networking.k8s.io',
      'crd:inferenceobjectives.inference.networking.x-k8s.io',
      'crd:inferencepools.inference.networking.k8s.io',
      'crd:podmonitors.monitoring.coreos.com',
      'crd:scaledobjects.keda.sh',
      'crd:telemetries.telemetry.istio.io',
    ]);
    // Qwen3-0.6B is autoscaled: KEDA's and the Prometheus Operator's CRDs (above), its Prometheus (a warning), and the right to create its objects.
    expect(checks.find((c) => c.id === 'crd:scaledobjects.keda.sh')?.models).toEqual(['Qwen3-0.6B']);
    expect(checks.find((c) => c.id === 'prometheus:http://prometheus-operated.monitoring.svc:9090')).toMatchObject({ type: 'prometheus', severity: 'warning', models: ['Qwen3-0.6B'] });
    expect(ids).toEqual(expect.arrayContaining(['permission:create:scaledobjects.keda.sh:llm-d-qwen3-06b', 'permission:create:podmonitors.monitoring.coreos.com:llm-d-qwen3-06b']));
    expect(ids).toContain('gateway-class:istio');
    expect(ids.filter((id) => id.startsWith('placement:')).sort()).toEqual(['placement:bge-small', 'placement:qwen3-06b']);
    expect(ids.some((id) => id.startsWith('registry-dns:') || id.startsWith('storage-class:') || id.startsWith('kserve-config:'))).toBe(false);
    // A shared check names every model that needs it, once.
    const crd = checks.find((c) => c.id === 'crd:gateways.gateway.networking.k8s.io')!;
    expect([...crd.models].sort()).toEqual(['Qwen3-0.6B', 'bge-small-en-v1.5']);
    expect(new Set(ids).size).toBe(ids.length);
    const placement = checks.find((c) => c.id === 'placement:qwen3-06b');
    expect(placement).toMatchObject({ type: 'placement', nodeSelector: { 'cloud.google.com/gke-accelerator': 'nvidia-l4' }, tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] });
  });

  it('on-prem: the hostPath node, the Harbor host (a warning), PV creation cluster-wide', () => {
    const checks = preflightChecks(planOf('Pulumi.example.yaml'));
    expect(checks.find((c) => c.id === 'node:gpu-node-1')).toMatchObject({ type: 'node', name: 'gpu-node-1', severity: 'error' });
    expect(checks.find((c) => c.id === 'registry-dns:harbor.example.com')).toMatchObject({ severity: 'warning' });
    expect(checks.find((c) => c.id === 'permission:create:persistentvolumes:')).toMatchObject({ namespace: null, resource: 'persistentvolumes' });
  });

  it('kserve: its CRDs with the scaling field, the well-known configs, the Envoy pool extension, GPUs from the spec, the storage class default', () => {
    const checks = preflightChecks(planOf('Pulumi.kserve.yaml'));
    const ids = checks.map((c) => c.id);
    expect(ids).toContain('crd:llminferenceservices.serving.kserve.io');
    expect(ids.filter((id) => id.startsWith('kserve-config:')).sort()).toEqual([
      'kserve-config:kserve-config-llm-router-route',
      'kserve-config:kserve-config-llm-scheduler',
      'kserve-config:kserve-config-llm-template',
    ]);
    expect(ids).toContain('envoy-inference-pool');
    // The example creates its own GatewayClass: no class to find, but the right to create it.
    expect(ids).not.toContain('gateway-class:envoy');
    expect(ids).toContain('permission:create:gatewayclasses.gateway.networking.k8s.io:');
    expect(checks.find((c) => c.type === 'placement')).toMatchObject({ gpusPerPod: 1, replicas: 1 });
  });

  it('access: the right to create the objects that enforce it (EnvoyFilter, RequestAuthentication, AuthorizationPolicy; SecurityPolicy, BackendTrafficPolicy and the hashes\' Secret)', () => {
    const plan = planOf('Pulumi.cloud.yaml');
    const kserve = planOf('Pulumi.kserve.yaml');
    const withAccess = (p: typeof plan, access: object) => ({ ...p, models: p.models.map((m) => ({ ...m, access: { mode: 'open', explicit: true, apiKeys: [], jwt: null, requestsPerMinute: null, ...access } })) }) as typeof plan;
    // The permission checks the access adds to those of the stack as it is (open).
    const created = (p: typeof plan) => {
      const before = new Set(preflightChecks(p.models[0]!.platform === 'kserve' ? kserve : plan).map((c) => c.id));
      return preflightChecks(p).filter((c) => c.type === 'permission' && !before.has(c.id)).map((c) => c.id).sort();
    };
    const keys = { mode: 'apiKeys', apiKeys: ['ci'], requestsPerMinute: 600 };
    const jwt = { mode: 'jwt', jwt: { issuer: 'https://id.example.com', audiences: [], jwksUri: 'https://id.example.com/jwks', jwks: null } };
    expect(created(withAccess(plan, keys))).toEqual(['permission:create:envoyfilters.networking.istio.io:llm-d-bge-small', 'permission:create:envoyfilters.networking.istio.io:llm-d-qwen3-06b']);
    expect(created(withAccess(plan, jwt))).toEqual([
      'permission:create:authorizationpolicies.security.istio.io:llm-d-bge-small',
      'permission:create:authorizationpolicies.security.istio.io:llm-d-qwen3-06b',
      'permission:create:requestauthentications.security.istio.io:llm-d-bge-small',
      'permission:create:requestauthentications.security.istio.io:llm-d-qwen3-06b',
    ]);
    // (The KServe example creates a Secret already, its Hugging Face token: the hashes' Secret adds no check.)
    expect(created(withAccess(kserve, keys))).toEqual([
      'permission:create:backendtrafficpolicies.gateway.envoyproxy.io:llm-d-qwen25-05b',
      'permission:create:securitypolicies.gateway.envoyproxy.io:llm-d-qwen25-05b',
    ]);
    expect(accessResources('envoy-gateway', { mode: 'apiKeys', explicit: true, apiKeys: ['ci'], jwt: null, requestsPerMinute: null })).toEqual([
      { group: '', resource: 'secrets' },
      { group: 'gateway.envoyproxy.io', resource: 'securitypolicies' },
    ]);
    // Open without a limit: nothing is created, nothing more to check.
    expect(created(withAccess(plan, {}))).toEqual([]);
  });

  it('a stack without models checks nothing', () => {
    const plan = planOf('Pulumi.cloud.yaml');
    expect(preflightChecks({ ...plan, models: [] })).toEqual([]);
  });
});

/** Our CRD facts held against the upstream CRDs: each kind is served at the version we write, with the fields we set. */
describe('the CRDs preflight asks for exist upstream as we ask for them', () => {
  const files: Record<string, string> = {
    'gateway.networking.k8s.io': 'crds/gateway-api-v1.4.1-experimental.yaml',
    'inference.networking.k8s.io': 'crds/gaie-v1.2.0-inference.networking.k8s.io_inferencepools.yaml',
    'inference.networking.x-k8s.io': 'crds/gaie-v1.2.0-inference.networking.x-k8s.io_inferenceobjectives.yaml',
    'networking.istio.io': 'crds/istio-1.28.5-crd-all.gen.yaml',
    'telemetry.istio.io': 'crds/istio-1.28.5-crd-all.gen.yaml',
  };
  const fileOf = (crd: CrdRequirement) => files[crd.group] ?? `crds/kserve-v0.18.1-serving.kserve.io_${crd.plural}.yaml`;
  it.each([...LLMD_CRDS, ...KSERVE_CRDS].map((c) => [`${c.plural}.${c.group}`, c] as const))('%s', (_name, crd) => {
    const docs = parseAllDocuments(readUpstream(fileOf(crd))).map((d) => d.toJS() as any).filter(Boolean);
    const found = docs.find((d) => d.kind === 'CustomResourceDefinition' && d.metadata.name === `${crd.plural}.${crd.group}`);
    expect(found, `${crd.plural}.${crd.group}`).toBeDefined();
    expect(found.spec.names.kind).toBe(crd.kind);
    const version = found.spec.versions.find((v: any) => v.name === crd.version);
    expect(version?.served, `${crd.kind} ${crd.version} served`).toBe(true);
    for (const field of crd.fields ?? []) {
      let schema = version.schema.openAPIV3Schema;
      for (const key of field) schema = key === '[]' ? schema?.items : schema?.properties?.[key];
      expect(schema, `${crd.kind} ${field.join('.')}`).toBeDefined();
    }
  });
});

describe('preflight of an llm-d model behind Envoy Gateway (router.gatewayClass: envoy)', () => {
  const planEnvoy = (extra: string, entry = '') => {
    const dir = mkdtempSync(join(tmpdir(), 'app-serving-preflight-'));
    const text = readFileSync(join(APP, 'Pulumi.example.yaml'), 'utf8')
      .replace('config:\n', `config:\n  app-serving:upstream: 2026-08\n  app-serving:router:\n    gatewayClass: envoy\n  app-serving:apiKeys:\n    team:\n      secure: v1:AAAA:BBBB\n${extra}`)
      .replace(/(- name: Qwen3-0\.6B-rke2\n        enabled: true\n)        access:\n          open: true[^\n]*\n/, (_, head: string) => `${head}${entry || '        access:\n          open: true\n'}`);
    if (entry && !text.includes(entry)) throw new Error('the example stack changed: this test no longer sets the access it means to');
    writeFileSync(join(dir, 'Pulumi.example.yaml'), text);
    return planDeployment(loadStackFile(join(dir, 'Pulumi.example.yaml'), 'Pulumi.example.yaml', { checkRules: false }), MODELS);
  };

  it("asks Envoy Gateway's CRDs for the fields it writes, each with the release that has them; no Istio kind", () => {
    const checks = preflightChecks(planEnvoy('', '        access:\n          apiKeys: [team]\n'));
    const crds = checks.filter((c) => c.type === 'crd').map((c) => c.id).sort();
    expect(crds).toEqual([
      'crd:backendtrafficpolicies.gateway.envoyproxy.io:spec.loadBalancer.endpointOverride',
      'crd:envoyextensionpolicies.gateway.envoyproxy.io:spec.extProc[].processingMode.request.body=FullDuplexStreamed',
      'crd:envoyproxies.gateway.envoyproxy.io:spec.mergeType',
      'crd:gatewayclasses.gateway.networking.k8s.io',
      'crd:gateways.gateway.networking.k8s.io',
      'crd:httproutes.gateway.networking.k8s.io',
      'crd:inferenceobjectives.llm-d.ai',
      'crd:inferencepools.inference.networking.k8s.io',
      'crd:securitypolicies.gateway.envoyproxy.io:spec.basicAuth.forwardUsernameHeader',
    ]);
    const btp = checks.find((c) => c.id.startsWith('crd:backendtrafficpolicies'))!;
    expect(btp.fix).toMatch(/install Envoy Gateway ≥ v1\.5\.0 \(the 2026-08 set is written for v1\.8\.1; .*\): older releases lack spec\.loadBalancer\.endpointOverride/);
    expect(checks.find((c) => c.id.startsWith('crd:envoyextensionpolicies'))!.fix).toMatch(/≥ v1\.4\.0 .*older releases lack spec\.extProc\[\]\.processingMode\.request\.body: FullDuplexStreamed/);
    expect(checks.find((c) => c.id.startsWith('crd:envoyproxies'))!.fix).toMatch(/≥ v1\.8\.0/);
    // The embedder has no route: only the model behind the gateway needs Envoy Gateway's kinds.
    expect(btp.models).toEqual(['Qwen3-0.6B-rke2']);
    const ids = checks.map((c) => c.id);
    expect(ids.some((id) => id.includes('istio'))).toBe(false);
    expect(ids).toEqual(
      expect.arrayContaining([
        'permission:create:envoyextensionpolicies.gateway.envoyproxy.io:llm-d-qwen3-06b-rke2',
        'permission:create:backendtrafficpolicies.gateway.envoyproxy.io:llm-d-qwen3-06b-rke2',
        'permission:create:securitypolicies.gateway.envoyproxy.io:llm-d-qwen3-06b-rke2',
        'permission:create:envoyproxies.gateway.envoyproxy.io:llm-d-qwen3-06b-rke2',
        'permission:create:gatewayclasses.gateway.networking.k8s.io:',
      ]),
    );
    // app-serving creates the class: nothing to find before up.
    expect(ids.some((id) => id.startsWith('gateway-class:'))).toBe(false);
  });

  it('a class the cluster has (kserve.gateway.create: false) must be Envoy Gateway\'s and Accepted', () => {
    const checks = preflightChecks(planEnvoy('  app-serving:kserve:\n    gateway:\n      className: eg\n      create: false\n'));
    expect(checks.find((c) => c.id === 'gateway-class:eg')).toMatchObject({
      type: 'gateway-class',
      name: 'eg',
      controllerName: 'gateway.envoyproxy.io/gatewayclass-controller',
      accepted: true,
      fix: expect.stringMatching(/install Envoy Gateway \(≥ v1\.5\.0; .*\) and create the GatewayClass eg/),
    });
    expect(checks.map((c) => c.id)).not.toContain('permission:create:gatewayclasses.gateway.networking.k8s.io:');
  });

  it('a JWT model with inline keys needs localJWKS (v1.4.0); one with a JWKS URI no newer field', () => {
    const inline = preflightChecks(planEnvoy('', `        access:\n          jwt:\n            issuer: https://id.example.com\n            jwks: '{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}'\n`));
    expect(inline.map((c) => c.id)).toContain('crd:securitypolicies.gateway.envoyproxy.io:spec.jwt.providers[].localJWKS');
    const uri = preflightChecks(planEnvoy('', '        access:\n          jwt:\n            issuer: https://id.example.com\n            jwksUri: https://id.example.com/jwks\n'));
    expect(uri.map((c) => c.id)).toContain('crd:securitypolicies.gateway.envoyproxy.io');
  });
});

describe('preflight of the stack endpoint', () => {
  const endpointPlan = (lines: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'app-serving-preflight-endpoint-'));
    const text = `config:\n  app-serving:upstream: 2026-08\n  app-serving:cloudProvider: cloud\n${lines}`;
    writeFileSync(join(dir, 'Pulumi.ep.yaml'), text);
    return planDeployment(loadStackFile(join(dir, 'Pulumi.ep.yaml'), 'Pulumi.ep.yaml', { checkRules: false }), MODELS);
  };
  const models = '  app-serving:models:\n    generative:\n      - name: Sim\n        gateway: false\n        access: {open: true}\n';
  const keys = '  app-serving:apiKeys:\n    ci:\n      secure: v1:AAAA:BBBB\n';

  it("Envoy Gateway: the kinds it writes with the fields older releases lack, the namespace by the endpoint's label, the right to create each kind", () => {
    const plan = endpointPlan(`${keys}  app-serving:router: {mode: standalone}\n  app-serving:endpoint:\n    class: envoy\n    access: {keyFormat: bearer, apiKeys: {ci: ['*']}, rateLimit: {requestsPerMinute: 10}}\n${models}`);
    const checks = preflightChecks(plan);
    const ids = checks.map((c) => c.id);
    expect(ids.filter((id) => id.startsWith('crd:') && /referencegrants|gateway\.envoyproxy\.io/.test(id)).sort()).toEqual([
      'crd:backendtrafficpolicies.gateway.envoyproxy.io',
      'crd:clienttrafficpolicies.gateway.envoyproxy.io',
      'crd:envoyextensionpolicies.gateway.envoyproxy.io',
      'crd:httproutefilters.gateway.envoyproxy.io',
      'crd:referencegrants.gateway.networking.k8s.io',
      'crd:securitypolicies.gateway.envoyproxy.io:spec.apiKeyAuth.forwardClientIDHeader,spec.apiKeyAuth.sanitize,spec.authorization.rules[].principal.headers',
    ]);
    expect(checks.find((c) => c.id === 'namespace:app-serving')).toMatchObject({ type: 'namespace', label: 'app-serving.io/endpoint', models: [] });
    expect(ids).toEqual(expect.arrayContaining(['permission:create:referencegrants.gateway.networking.k8s.io:llm-d-sim', 'permission:create:httproutefilters.gateway.envoyproxy.io:app-serving', 'permission:create:secrets:app-serving']));
    // Every field asked for is in Envoy Gateway v1.8.1's CRDs.
    const docs = parseAllDocuments(readUpstream('current/crds/envoy-gateway-v1.8.1.yaml')).map((d) => d.toJS() as any).filter(Boolean);
    for (const check of checks) {
      if (check.type !== 'crd' || check.crd.group !== 'gateway.envoyproxy.io') continue;
      const found = docs.find((d) => d.metadata?.name === `${check.crd.plural}.${check.crd.group}`);
      const schema = found.spec.versions.find((v: any) => v.name === check.crd.version).schema.openAPIV3Schema;
      for (const field of check.crd.fields ?? []) {
        let at = schema;
        for (const key of field) at = key === '[]' ? at?.items : at?.properties?.[key];
        expect(at, `${check.crd.kind} ${field.join('.')}`).toBeDefined();
      }
    }
  });

  it('Istio: its EnvoyFilter and policies attached to the Gateway (targetRefs), the class istio', () => {
    const plan = endpointPlan(`${keys}  app-serving:router: {mode: standalone}\n  app-serving:endpoint:\n    class: istio\n    access: {apiKeys: {ci: ['*']}}\n${models}`);
    const checks = preflightChecks(plan);
    expect(checks.filter((c) => c.type === 'crd' && /istio/.test(c.id)).map((c) => [c.id, c.type === 'crd' ? c.crd.fields : null])).toEqual([
      ['crd:envoyfilters.networking.istio.io', [['spec', 'targetRefs']]],
      ['crd:destinationrules.networking.istio.io', undefined],
      ['crd:authorizationpolicies.security.istio.io', [['spec', 'targetRefs']]],
    ]);
    expect(checks.map((c) => c.id)).toContain('gateway-class:istio');
  });
});
