import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LIMITS } from './constants.ts';
import { checkLlmdNames, kserveNames, llmdNames, slugProblem, SLUG_PATTERN } from './names.ts';
import { slugProblemOn } from './upstream/select.ts';

/** Every valid slug: a letter, then letters/digits/dashes, not ending with a dash, ≤ 33. */
const slugArb = fc
  .tuple(
    fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'),
    fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-'), maxLength: 31 }),
    fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'),
  )
  .map(([head, middle, tail]) => `${head}${middle}${tail}`.slice(0, LIMITS.slug))
  .filter((slug) => !slug.endsWith('-'));

describe('llmdNames', () => {
  it('derives every name of DESIGN §5', () => {
    expect(llmdNames('qwen3-06b')).toEqual({
      slug: 'qwen3-06b',
      namespace: 'llm-d-qwen3-06b',
      releases: { infra: 'infra-qwen3-06b', gaie: 'gaie-qwen3-06b', modelService: 'ms-qwen3-06b' },
      gateway: 'infra-qwen3-06b-inference-gateway',
      gatewayService: 'infra-qwen3-06b-inference-gateway-istio',
      gatewayParameters: 'infra-qwen3-06b-inference-gateway',
      gatewayHost: 'infra-qwen3-06b-inference-gateway-istio.llm-d-qwen3-06b.svc.cluster.local',
      gatewayAlias: 'llmd-gateway-qwen3-06b',
      httpRoute: 'llm-d-qwen3-06b',
      inferencePool: 'gaie-qwen3-06b',
      epp: 'gaie-qwen3-06b-epp',
      eppHost: 'gaie-qwen3-06b-epp.llm-d-qwen3-06b.svc.cluster.local',
      modelServiceFullname: 'ms-qwen3-06b-llm-d-modelservice',
      decodeDeployment: 'ms-qwen3-06b-llm-d-modelservice-decode',
      prefillDeployment: 'ms-qwen3-06b-llm-d-modelservice-prefill',
      embeddingsService: 'ms-qwen3-06b-embeddings',
      storage: { pvc: 'qwen3-06b-model', pv: 'qwen3-06b-model-pv', job: 'qwen3-06b-model-pull' },
      pullSecret: 'harbor-creds',
    });
  });

  it('applies the namespace and infra release overrides', () => {
    const names = llmdNames('m', { nameSpace: 'team-a', releaseName: 'gw' });
    expect(names.namespace).toBe('team-a');
    expect(names.releases.infra).toBe('gw');
    expect(names.gateway).toBe('gw-inference-gateway');
    expect(names.gatewayService).toBe('gw-inference-gateway-istio');
    expect(names.eppHost).toBe('gaie-m-epp.team-a.svc.cluster.local');
    expect(names.releases.gaie).toBe('gaie-m');
  });

  it('truncates like the charts do', () => {
    const long = llmdNames('a'.repeat(40));
    expect(long.epp).toBe(`gaie-${'a'.repeat(35)}-epp`);
    expect(long.modelServiceFullname).toHaveLength(55);
  });

  it('every derived name of every valid slug fits its limit (property)', () => {
    fc.assert(
      fc.property(slugArb, (slug) => {
        expect(slugProblem(slug)).toBeUndefined();
        const names = llmdNames(slug);
        expect(checkLlmdNames(names, {}, true)).toEqual([]);
        expect(names.gatewayService.length).toBeLessThanOrEqual(63);
        expect(names.namespace.length).toBeLessThanOrEqual(63);
        expect(names.embeddingsService.length).toBeLessThanOrEqual(63);
        expect(names.storage.job.length).toBeLessThanOrEqual(63);
        expect(names.epp).toBe(`gaie-${slug}-epp`);
        expect(names.decodeDeployment).toBe(`ms-${slug}-llm-d-modelservice-decode`);
        expect(kserveNames(slug).namespace.length).toBeLessThanOrEqual(63);
      }),
      { numRuns: 500 },
    );
  });
});

describe('slugProblem', () => {
  it('accepts 33 characters and explains why 34 is too long', () => {
    expect(slugProblem('a'.repeat(33))).toBeUndefined();
    expect(slugProblem('a'.repeat(34))).toBe(
      `"${'a'.repeat(34)}" is 34 characters; a slug may have at most 33, because the Istio gateway Service "infra-${'a'.repeat(34)}-inference-gateway-istio" would be 64 characters (limit 63) and the Gateway would never become Programmed`,
    );
  });

  it('on 2026-08: names that set\'s own Service, and why 33 holds there too (a model can move back)', () => {
    expect(slugProblemOn('a'.repeat(33), '2026-08')).toBeUndefined();
    expect(slugProblemOn('a'.repeat(34), '2026-02')).toBe(slugProblem('a'.repeat(34)));
    expect(slugProblemOn('a'.repeat(34), '2026-08')).toMatch(/on 2026-08 the Istio gateway Service "router-a{34}-gateway-istio" \(55 characters\) fits, but the model must be able to move back to 2026-02, where its Istio gateway Service "infra-a{34}-inference-gateway-istio" would be 64 characters/);
    // Too long on 2026-08 itself (hostile round 3, m18: a 70-character slug).
    expect(slugProblemOn('a'.repeat(70), '2026-08')).toBe(
      `"${'a'.repeat(70)}" is 70 characters; a slug may have at most 33, because the Istio gateway Service "router-${'a'.repeat(70)}-gateway-istio" would be 91 characters (limit 63) and the Gateway would never become Programmed`,
    );
    expect(slugProblemOn('Bad_Slug', '2026-08')).toMatch(/not a valid slug/);
  });

  it.each(['Qwen', '1abc', 'a_b', 'a-', '-a', 'a.b', 'a b', 'ä'])('rejects %j', (slug) => {
    expect(slugProblem(slug)).toMatch(/not a valid slug/);
  });

  it('rejects an empty slug', () => {
    expect(slugProblem('')).toBe('the slug is empty');
  });

  it('matches SLUG_PATTERN for every generated slug (property)', () => {
    fc.assert(fc.property(slugArb, (slug) => SLUG_PATTERN.test(slug)));
  });
});

describe('checkLlmdNames', () => {
  it('reports a too-long namespace override with its length and limit', () => {
    const nameSpace = 'n'.repeat(64);
    expect(checkLlmdNames(llmdNames('m', { nameSpace }), { nameSpace })).toEqual([
      { key: 'nameSpace', message: `the namespace "${nameSpace}" would be 64 characters; a DNS-1123 label may have at most 63` },
    ]);
  });

  it('reports a release override that breaks the Istio gateway Service', () => {
    const releaseName = 'r'.repeat(40);
    expect(checkLlmdNames(llmdNames('m', { releaseName }), { releaseName })).toEqual([
      {
        key: 'releaseName',
        message: `the Istio gateway Service "${releaseName}-inference-gateway-istio" would be 64 characters; a DNS-1035 label may have at most 63 (Istio names the gateway Service "<gateway>-istio" and does not shorten it: the Gateway would never become Programmed)`,
      },
    ]);
  });

  it('reports invalid characters in overrides', () => {
    const problems = checkLlmdNames(llmdNames('m', { nameSpace: 'Team_A' }), { nameSpace: 'Team_A' });
    expect(problems[0]).toEqual({ key: 'nameSpace', message: 'the namespace "Team_A" is not a valid DNS-1123 label: use lower-case letters, digits and "-"' });
  });

  it("reports GAIE's broken ClusterRole name only with Prometheus monitoring on", () => {
    const nameSpace = `ns-${'x'.repeat(45)}`;
    const names = llmdNames('a'.repeat(33), { nameSpace });
    expect(checkLlmdNames(names, { nameSpace }, false)).toEqual([]);
    expect(checkLlmdNames(names, { nameSpace }, true)).toEqual([
      expect.objectContaining({ key: 'nameSpace', message: expect.stringMatching(/^the GAIE metrics ClusterRole name .* is 85 characters with its quotes/) }),
    ]);
  });
});

describe('kserveNames', () => {
  it('derives the KServe names', () => {
    expect(kserveNames('qwen')).toEqual({
      slug: 'qwen',
      namespace: 'llm-d-qwen',
      service: 'qwen',
      config: 'qwen-config',
      serviceAccount: 'qwen-sa',
      hfTokenSecret: 'hf-token',
      workload: 'qwen-kserve',
      workloadService: 'qwen-kserve-workload-svc',
      route: 'qwen-kserve-route',
      inferencePool: 'qwen-inference-pool',
      pathPrefix: '/llm-d-qwen/qwen',
      storage: { pvc: 'qwen-model', pv: 'qwen-model-pv', job: 'qwen-model-pull' },
      pullSecret: 'harbor-creds',
    });
  });
});
