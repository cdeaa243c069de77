/**
 * The 2026-08 set's facts held against upstream's own files in ../shared/upstream/current/: the llm-d
 * Router chart packages v0.10.0 as published, KServe v0.20.0's CRDs and well-known configs. A drift
 * between core and these files fails here, before any user meets it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { parseTar } from 'nanotar';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { readUpstream, readUpstreamYaml, upstreamPath } from '@app-serving/test-cluster';
import { readLocalChart } from '../../charts.ts';
import { KSERVE_V0_18, KSERVE_V0_20 } from '../../kserve/releases.ts';
import { KSERVE_STRICT_V1ALPHA2 } from '../../kserve/plan.ts';
import { isValuesMap, type Values } from '../../values/merge.ts';
import type { KeyTree } from '../../values/chart-facts.ts';
import { EXT_PROC_MESSAGE_TIMEOUT, ROUTER_CHARTS, ROUTER_DEFAULTS, ROUTER_EPP_IMAGE, ROUTER_EPP_SECURE_SERVING_FLAG, ROUTER_KEYS, ROUTER_POOL_CRD_FIELDS, ROUTER_PROXY_IMAGE, ROUTER_PROXY_PORT } from './facts.ts';

/** A file of a chart package, as text (`<chart>/<path>`). */
function chartFile(pkg: string, path: string): string {
  const [entry] = parseTar(gunzipSync(readFileSync(upstreamPath(pkg))), { filter: (f) => f.name === path });
  if (!entry?.data) throw new Error(`${pkg} has no ${path}`);
  return new TextDecoder().decode(entry.data);
}

const GATEWAY = 'current/charts/llm-d-router-gateway-v0.10.0.tgz';
const STANDALONE = 'current/charts/llm-d-router-standalone-v0.10.0.tgz';
const gatewayValues = parse(chartFile(GATEWAY, 'llm-d-router-gateway/values.yaml')) as Values;
const standaloneValues = parse(chartFile(STANDALONE, 'llm-d-router-standalone/values.yaml')) as Values;
const routerlib = parse(chartFile(GATEWAY, 'llm-d-router-gateway/charts/router/values.yaml')) as Values;

describe('the llm-d Router charts v0.10.0 (drift test)', () => {
  it('are the published packages of the pinned version, under the pinned names', () => {
    expect(readLocalChart(upstreamPath(GATEWAY))).toMatchObject({ name: 'llm-d-router-gateway', version: ROUTER_CHARTS.routerGateway.version });
    expect(readLocalChart(upstreamPath(STANDALONE))).toMatchObject({ name: 'llm-d-router-standalone', version: ROUTER_CHARTS.routerStandalone.version });
    expect(ROUTER_CHARTS.routerGateway.chart.endsWith('/llm-d-router-gateway')).toBe(true);
    expect(ROUTER_CHARTS.routerStandalone.chart.endsWith('/llm-d-router-standalone')).toBe(true);
  });

  it('pin the EPP image core lists for the air gap', () => {
    const image = (gatewayValues.router as Values).epp as Values;
    const { registry, repository, tag } = image.image as Values;
    expect(`${String(registry)}/${String(repository)}:${String(tag)}`).toBe(ROUTER_EPP_IMAGE);
    expect(((ROUTER_DEFAULTS.router as Values).epp as Values).image).toEqual({ registry, repository, tag });
    expect(((standaloneValues.router as Values).epp as Values).image).toMatchObject({ registry, repository, tag });
  });

  it("run the standalone proxy core lists, with the HTTP port core points clients at", () => {
    expect(chartFile(STANDALONE, 'llm-d-router-standalone/values.yaml')).toContain(`image: ${ROUTER_PROXY_IMAGE}`);
    expect(((standaloneValues.router as Values).extraServicePorts as Values[]).find((p) => p.name === 'http')).toMatchObject({ port: ROUTER_PROXY_PORT });
  });

  it('read every key core knows of, and core knows every top-level key of the library chart', () => {
    const known = (ROUTER_KEYS.router as KeyTree) ?? {};
    // Every block of the library chart's values (under router.*) is known, and every EPP key.
    expect(Object.keys(routerlib).filter((k) => !(k in known))).toEqual([]);
    const epp = known.epp as KeyTree;
    expect(Object.keys(routerlib.epp as Values).filter((k) => !(k in epp))).toEqual([]);
    // The parent charts' own top-level keys.
    for (const values of [gatewayValues, standaloneValues]) expect(Object.keys(values).filter((k) => !(k in ROUTER_KEYS))).toEqual([]);
  });

  it("fail on GAIE's top-level keys, as core says", () => {
    const helpers = chartFile(GATEWAY, 'llm-d-router-gateway/charts/router/templates/_helpers.tpl') + chartFile(GATEWAY, 'llm-d-router-gateway/templates/_validations.tpl');
    expect(helpers).toMatch(/inferenceExtension|experimentalHttpRoute|matchLabels is required/);
  });

  it('default what class envoy reads (ext_proc port, route timeout, pool failure mode) and render the EPP flags it sets', () => {
    expect(((routerlib.epp as Values).extProcPort)).toBe(((ROUTER_DEFAULTS.router as Values).epp as Values).extProcPort);
    expect((gatewayValues.httpRoute as Values).requestTimeout).toBe((ROUTER_DEFAULTS.httpRoute as Values).requestTimeout);
    expect(((routerlib.inferencePool as Values).failureMode)).toBe(((ROUTER_DEFAULTS.router as Values).inferencePool as Values).failureMode);
    // router.epp.flags.<name>: <value> becomes --<name>=<value> on the EPP (so secure-serving: false is --secure-serving=false).
    const deployment = chartFile(GATEWAY, 'llm-d-router-gateway/charts/router/templates/_deployment.yaml');
    expect(deployment).toContain('{{- range $key, $value := $eppFlags }}');
    expect(deployment).toContain('- {{ printf "--%s=%v" $key $value | quote }}');
    expect(chartFile(GATEWAY, 'llm-d-router-gateway/charts/router/templates/_helpers.tpl')).toContain(`index $flags "${ROUTER_EPP_SECURE_SERVING_FLAG}"`);
    // The EPP Service's ext_proc port speaks plain HTTP/2 when secure serving is off.
    expect(chartFile(GATEWAY, 'llm-d-router-gateway/charts/router/templates/_service.yaml')).toContain('appProtocol: kubernetes.io/h2c');
    // The chart's own route goes to the InferencePool, which plain Envoy Gateway refuses: class envoy writes its own.
    expect(chartFile(GATEWAY, 'llm-d-router-gateway/templates/httproute.yaml')).toMatch(/kind: InferencePool/);
    // The Router's own Envoy (standalone chart) waits as long for each ext_proc message.
    expect(chartFile(STANDALONE, 'llm-d-router-standalone/values.yaml')).toContain(`message_timeout: ${EXT_PROC_MESSAGE_TIMEOUT}`);
  });

  it('name the EPP `<trunc40(release)>-epp` and label its pods by mode (the names core derives)', () => {
    const helpers = chartFile(GATEWAY, 'llm-d-router-gateway/charts/router/templates/_helpers.tpl');
    expect(helpers).toMatch(/trunc 40 -\}\}\n\{\{ \$base \}\}-epp/);
    expect(helpers).toContain('llm-d-router-standalone: {{ include "llm-d-router.name" . }}');
    expect(helpers).toContain('llm-d-router-gateway: {{ include "llm-d-router.name" . }}');
  });
});

const V020 = 'current/kserve/v0.20.0-llmisvcconfig';
const configs = readdirSync(upstreamPath(V020))
  .filter((f) => f.startsWith('config-'))
  .map((file) => readUpstreamYaml(`${V020}/${file}`)[0] as { metadata: { name: string }; spec: Values });

describe('the InferencePool CRD the Router chart needs (drift test)', () => {
  /** Whether a CRD's v1 schema declares a field path. */
  const declares = (file: string, path: readonly string[]) => {
    const crd = readUpstreamYaml(file)[0] as Values;
    const version = (crd.spec as { versions: Array<{ name: string; schema: { openAPIV3Schema: Values } }> }).versions.find((v) => v.name === 'v1')!;
    let node: Values | undefined = version.schema.openAPIV3Schema;
    for (const key of path) node = (node?.properties as Values | undefined)?.[key] as Values | undefined;
    return node !== undefined;
  };

  it('the chart renders the fields preflight asks of the CRD; GAIE v1.6.0 declares them, v1.2.0 does not', () => {
    const template = chartFile(GATEWAY, 'llm-d-router-gateway/charts/router/templates/_inferencepool.yaml');
    for (const path of ROUTER_POOL_CRD_FIELDS) {
      expect(template).toContain(`${path.at(-1)}:`);
      expect(declares('current/crds/gaie-v1.6.0-inference.networking.k8s.io_inferencepools.yaml', path)).toBe(true);
      expect(declares('crds/gaie-v1.2.0-inference.networking.k8s.io_inferencepools.yaml', path)).toBe(false);
    }
  });
});

describe('KServe v0.20.0 (drift test)', () => {
  it('lists every image of the well-known configs, by config, pod section and container', () => {
    const upstream = configs.flatMap(({ metadata, spec }) =>
      ['template', 'worker', 'prefill.template', 'prefill.worker', 'router.scheduler.template'].flatMap((section) => {
        const pod = section.split('.').reduce<unknown>((v, k) => (isValuesMap(v) ? v[k] : undefined), spec);
        return (['containers', 'initContainers'] as const).flatMap((list) =>
          // A container without an image (the latency predictor's patch of the scheduler's `main`) pulls nothing.
          ((isValuesMap(pod) ? (pod[list] as Values[] | undefined) : undefined) ?? []).filter((c) => c.image !== undefined).map((c) => `${metadata.name} ${section}.${list}[${String(c.name)}] ${String(c.image)}`),
        );
      }),
    );
    expect(KSERVE_V0_20.wellKnownImages.map((i) => `${i.config} ${i.section}.${i.list}[${i.container}] ${i.image}`).sort()).toEqual(upstream.sort());
  });

  it('stores LLMInferenceService as v1alpha2, whose spec has exactly the keys core lets an overlay set', () => {
    const [crd] = readUpstreamYaml('current/crds/kserve-v0.20.0-serving.kserve.io_llminferenceservices.yaml') as Array<{ spec: { versions: Array<{ name: string; storage: boolean; schema: { openAPIV3Schema: Values } }> } }>;
    const v1alpha2 = crd!.spec.versions.find((v) => v.name === KSERVE_V0_20.api.version)!;
    expect(v1alpha2.storage).toBe(true);
    const spec = ((v1alpha2.schema.openAPIV3Schema.properties as Values).spec as Values).properties as Values;
    const top = KSERVE_STRICT_V1ALPHA2.find((b) => b.path.length === 0)!;
    expect(Object.keys(spec).sort()).toEqual([...top.keys].sort());
    expect(Object.keys((spec.model as Values).properties as Values).sort()).toEqual([...KSERVE_STRICT_V1ALPHA2.find((b) => b.path[0] === 'model')!.keys].sort());
  });

  it('has the CRD field preflight tells v0.20 by, which v0.18.1 lacks', () => {
    const field = KSERVE_V0_20.crdFields[0]!.at(-1)!;
    expect(readUpstream('current/crds/kserve-v0.20.0-serving.kserve.io_llminferenceservices.yaml')).toContain(`${field}:`);
    expect(readUpstream('crds/kserve-v0.18.1-serving.kserve.io_llminferenceservices.yaml')).not.toContain(`${field}:`);
    expect(KSERVE_V0_18.crdFields.length).toBeGreaterThan(0);
  });
});
