/** KServe facts in core held against KServe v0.18.1's own files in ../shared/upstream/. */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readUpstream, readUpstreamYaml, upstreamPath } from '@app-serving/test-cluster';
import { KSERVE_VERSION } from '../constants.ts';
import { isValuesMap, type Values } from '../values/merge.ts';
import { kserveNames } from '../names.ts';
import { KSERVE_POOL_PATHS, KSERVE_REPLICAS_SCALING_RULE, KSERVE_SUPPORTED_VERSIONS, KSERVE_WELL_KNOWN_IMAGES, kserveWellKnownConfigs } from './facts.ts';

const DIR = 'kserve/v0.18.1-llmisvcconfig';
const configs = readdirSync(upstreamPath(DIR)).map((file) => readUpstreamYaml(`${DIR}/${file}`)[0] as { metadata: { name: string }; spec: Values });

describe('KServe facts', () => {
  it('are read at the pinned version, which is supported', () => {
    expect(KSERVE_VERSION).toBe('v0.18.1');
    expect(KSERVE_SUPPORTED_VERSIONS).toContain(KSERVE_VERSION);
  });

  it("list every image of the well-known configs, by config, pod section and container (drift test)", () => {
    const upstream = configs.flatMap(({ metadata, spec }) =>
      ['template', 'worker', 'prefill.template', 'prefill.worker', 'router.scheduler.template'].flatMap((section) => {
        const pod = section.split('.').reduce<unknown>((v, k) => (isValuesMap(v) ? v[k] : undefined), spec);
        return (['containers', 'initContainers'] as const).flatMap((list) =>
          ((isValuesMap(pod) ? (pod[list] as Values[] | undefined) : undefined) ?? []).map((c) => `${metadata.name} ${section}.${list}[${String(c.name)}] ${String(c.image)}`),
        );
      }),
    );
    expect(KSERVE_WELL_KNOWN_IMAGES.map((i) => `${i.config} ${i.section}.${i.list}[${i.container}] ${i.image}`).sort()).toEqual(upstream.sort());
  });

  it('name only configs KServe ships when picking them for a spec', () => {
    const shipped = configs.map((c) => c.metadata.name);
    const specs: Values[] = [
      { router: { scheduler: {}, route: {} } },
      { prefill: { template: {} } },
      { worker: {}, parallelism: { data: 2 } },
      { worker: {}, parallelism: { dataLocal: 1 }, prefill: { worker: {}, parallelism: { data: 2 } } },
    ];
    for (const spec of specs) for (const name of kserveWellKnownConfigs(spec)) expect(shipped).toContain(name);
    expect(kserveWellKnownConfigs({ router: { scheduler: { pool: { ref: { name: 'p' } } }, route: { http: { refs: [{ name: 'r' }] } } } })).toEqual(['kserve-config-llm-template']);
  });

  it("send exactly completions, chat and responses through the InferencePool; the rest to the workload Service", () => {
    const route = configs.find((c) => c.metadata.name === 'kserve-config-llm-router-route')!.spec;
    const rules = (((route.router as Values).route as Values).http as { spec: { rules: { backendRefs: { kind: string; name: string }[]; matches: { path: { value: string } }[] }[] } }).spec.rules;
    const prefix = '/{{ .ObjectMeta.Namespace }}/{{ .ObjectMeta.Name }}';
    const pool = rules.filter((r) => r.backendRefs[0]!.kind === 'InferencePool').map((r) => r.matches[0]!.path.value.replace(prefix, ''));
    expect(pool).toEqual(KSERVE_POOL_PATHS);
    const rest = rules.filter((r) => r.backendRefs[0]!.kind === 'Service');
    expect(rest.map((r) => [r.matches[0]!.path.value, r.backendRefs[0]!.name])).toEqual([[prefix, "{{ ChildName .ObjectMeta.Name `-kserve-workload-svc` }}"]]);
    expect(kserveNames('m').workloadService).toBe('m-kserve-workload-svc');
  });

  it("hold the CRD's replicas/scaling rule", () => {
    expect(readUpstream('crds/kserve-v0.18.1-serving.kserve.io_llminferenceservices.yaml')).toContain(`rule: '${KSERVE_REPLICAS_SCALING_RULE}'`);
  });
});
