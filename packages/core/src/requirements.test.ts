import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readUpstreamYaml } from '@app-serving/test-cluster';
import { describe, expect, it } from 'vitest';
import { CLUSTER_REQUIREMENTS } from './constants.ts';
import { routerCrds } from './preflight.ts';

/** The cluster prerequisites: held against the GAIE CRDs, and written where users look for them. */
describe('cluster requirements', () => {
  const ROOT = join(import.meta.dirname, '..', '..', '..');
  const docs = ['apps/app-serving/README.md', 'docs/deployment-flow.md'].map((file) => [file, readFileSync(join(ROOT, file), 'utf8')] as const);

  it('names CRDs that GAIE v1.2.0 ships, at the versions it serves', () => {
    for (const { group, version, kind } of CLUSTER_REQUIREMENTS.gaieCrds) {
      const file = `crds/gaie-v1.2.0-${group}_${kind.toLowerCase()}s.yaml`;
      const [crd] = readUpstreamYaml(file) as { spec: { group: string; names: { kind: string }; versions: { name: string; served: boolean }[] } }[];
      expect(crd!.spec.group, file).toBe(group);
      expect(crd!.spec.names.kind, file).toBe(kind);
      expect(crd!.spec.versions.filter((v) => v.served).map((v) => v.name), file).toContain(version);
    }
  });

  it.each(docs)('%s lists every prerequisite', (_file, text) => {
    expect(text).toContain(`Kubernetes ≥ ${CLUSTER_REQUIREMENTS.kubernetes}`);
    expect(text).toContain(`Istio ≥ ${CLUSTER_REQUIREMENTS.istio}`);
    expect(text).toContain('ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true');
    for (const { kind, group } of CLUSTER_REQUIREMENTS.gaieCrds) {
      expect(text).toContain(`\`${kind}\``);
      expect(text).toContain(group);
    }
    // And the 2026-08 set's, side by side (preflight's routerCrds): the Router's objectives, the pool's new field, Istio, Gateway API.
    const objectives = routerCrds({ router: { mode: 'gateway', gatewayClass: 'istio' } } as never).find((c) => c.kind === 'InferenceObjective')!;
    expect(text).toContain(`${objectives.group}/${objectives.version}`);
    expect(text).toContain('v1.5.1');
    expect(text).toContain('spec.appProtocol');
    expect(text).toContain('Istio ≥ 1.29');
  });
});
