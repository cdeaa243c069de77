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
