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
import {
  EXT_PROC_MESSAGE_TIMEOUT,
  ROUTER_CHARTS,
  ROUTER_DEFAULTS,
  ROUTER_EPP_IMAGE,
  ROUTER_EPP_METRICS,
  ROUTER_EPP_METRICS_PORT,
  ROUTER_EPP_SECURE_SERVING_FLAG,
  ROUTER_EPP_SELECTOR_KEY,
  ROUTER_FLOW_CONTROL,
  ROUTER_KEYS,
  ROUTER_POOL_CRD_FIELDS,
  ROUTER_PROXY_IMAGE,
  ROUTER_PROXY_PORT,
  routerEppPodLabels,
} from './facts.ts';

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
  it("label the EPP pods by whether the chart creates the pool (not by chart): both of our modes create it", () => {
    const helpers = chartFile(GATEWAY, 'llm-d-router-gateway/charts/router/templates/_helpers.tpl');
    expect(helpers).toMatch(
      new RegExp(`if eq \\.Values\\.router\\.inferencePool\\.create false -\\}\\}[^]*?${ROUTER_EPP_SELECTOR_KEY.withoutPool}: [^]*?\\{\\{- else -\\}\\}[^]*?${ROUTER_EPP_SELECTOR_KEY.withPool}: `),
    );
    expect(routerEppPodLabels('r-epp', ROUTER_DEFAULTS)).toEqual({ [ROUTER_EPP_SELECTOR_KEY.withPool]: 'r-epp' });
    expect(routerEppPodLabels('r-epp', { router: { inferencePool: { create: false } } })).toEqual({ [ROUTER_EPP_SELECTOR_KEY.withoutPool]: 'r-epp' });
    for (const values of [gatewayValues, standaloneValues]) expect(((values.router as Values | undefined)?.inferencePool as Values | undefined)?.create).not.toBe(false);
  });

  it("serve the EPP's metrics on the container port core scrapes, with a token unless auth is turned off (the PodMonitor's condition)", () => {
    const deployment = chartFile(GATEWAY, 'llm-d-router-gateway/charts/router/templates/_deployment.yaml');
    expect(deployment).toContain(`- name: ${ROUTER_EPP_METRICS_PORT}\n              containerPort: 9090`);
    expect(deployment).toMatch(/\{\{- if not \.Values\.router\.monitoring\.prometheus\.auth\.enabled \}\}\n\s+- --metrics-endpoint-auth=false/);
    // The defaults core reasons about are the library chart's.
    const defaults = (ROUTER_DEFAULTS.router as Values);
    const lib = routerlib as Values;
    expect((lib.monitoring as Values).prometheus).toMatchObject((defaults.monitoring as Values).prometheus as Values);
    expect((lib.epp as Values).metricsDataSource).toEqual((defaults.epp as Values).metricsDataSource);
    expect((lib.epp as Values).pluginsConfigFile).toBe((defaults.epp as Values).pluginsConfigFile);
    expect((lib.epp as Values).parsers).toEqual((defaults.epp as Values).parsers);
    expect((lib.latencyPredictor as Values).enabled).toBe(false);
  });

  it('take the EPP config file core writes: pluginsCustomConfig entries beside the default ones, chosen by pluginsConfigFile', () => {
    const config = chartFile(GATEWAY, 'llm-d-router-gateway/charts/router/templates/_config.yaml');
    expect(config).toContain('{{- .Values.router.epp.pluginsCustomConfig | toYaml | nindent 2 }}');
    expect(config).toContain(`apiVersion: ${ROUTER_FLOW_CONTROL.configApiVersion}\n    kind: ${ROUTER_FLOW_CONTROL.configKind}`);
    expect(chartFile(GATEWAY, 'llm-d-router-gateway/charts/router/templates/_deployment.yaml')).toContain('"/config/{{ .Values.router.epp.pluginsConfigFile }}"');
  });
});

/**
 * The llm-d Router's EPP metrics, read from its source at v0.10.0 (llm-d/llm-d-router, tag v0.10.0 =
 * commit 71f4f0999f95b96c49a9d0c4afbd18dfdb943c26): each fact is a line of a file at the tag, with its
 * line number. v0.11 removed the legacy twins (`inference_pool_*`: #2675; `inference_extension_*`
 * except the flow-control queue gauges and scheduler attempts: #2826), so core names only these.
 *
 * TODO(shared/upstream): the lead adds the two files, unchanged, as
 * `current/router/llm-d-router-v0.10.0/pkg/epp/metrics/{llm_d_router_metrics.go,metrics.go}` (pinned in
 * tools/test-cluster/upstream.json); until then this fixture is the source, and once they are there
 * each line below is held against them.
 */
const ROUTER_SOURCE = {
  repo: 'llm-d/llm-d-router',
  tag: 'v0.10.0',
  shared: 'current/router/llm-d-router-v0.10.0/pkg/epp/metrics',
  subsystem: { file: 'llm_d_router_metrics.go', line: 28, text: '\tLLMDRouterEndpointPickerSubsystem = "llm_d_epp"', value: 'llm_d_epp' },
  labelSets: {
    poolLabels: { file: 'metrics.go', line: 54, text: '\tpoolLabels              = []string{"name"}', labels: ['name'] },
    modelLabels: { file: 'metrics.go', line: 52, text: '\tmodelLabels             = []string{"model_name", "target_model_name"}', labels: ['model_name', 'target_model_name'] },
  },
  metrics: [
    { name: 'average_queue_size', file: 'llm_d_router_metrics.go', line: 196, labelsLine: 199, labelsText: '\t\tpoolLabels,', labels: ['name'] },
    { name: 'average_kv_cache_utilization', file: 'llm_d_router_metrics.go', line: 187, labelsLine: 190, labelsText: '\t\tpoolLabels,', labels: ['name'] },
    {
      name: 'flow_control_queue_size',
      file: 'llm_d_router_metrics.go',
      line: 359,
      labelsLine: 362,
      labelsText: '\t\tappend([]string{"fairness_id", "priority", "inference_pool"}, modelLabels...),',
      labels: ['fairness_id', 'priority', 'inference_pool', 'model_name', 'target_model_name'],
    },
    // modelLabelsWithFairnessPriority (line 34): modelLabels + fairness_id, priority — no pool label.
    { name: 'request_running', file: 'llm_d_router_metrics.go', line: 125, labelsLine: 128, labelsText: '\t\tmodelLabelsWithFairnessPriority,', labels: ['model_name', 'target_model_name', 'fairness_id', 'priority'] },
  ],
} as const;

describe("the llm-d Router's EPP metric names (v0.10.0 source facts, names that v0.11 keeps)", () => {
  const full = (name: string) => `${ROUTER_SOURCE.subsystem.value}_${name}`;
  const metric = (name: string) => ROUTER_SOURCE.metrics.find((m) => full(m.name) === name);

  it('core reads the pool gauges and flow control under their llm_d_epp_* names, by labels they carry', () => {
    const queue = metric(ROUTER_EPP_METRICS.queue);
    const kv = metric(ROUTER_EPP_METRICS.kvCache);
    const flow = ROUTER_EPP_METRICS.flowControl!;
    expect(queue?.labels).toContain(ROUTER_EPP_METRICS.poolLabel);
    expect(kv?.labels).toContain(ROUTER_EPP_METRICS.poolLabel);
    expect(metric(flow.queue)?.labels).toContain(flow.poolLabel);
    // request_running has no pool label: core selects it by the EPP's pods.
    expect(metric(flow.running)?.labels.some((l) => l === 'name' || l === 'inference_pool')).toBe(false);
    for (const name of [ROUTER_EPP_METRICS.queue, ROUTER_EPP_METRICS.kvCache, flow.queue, flow.running]) {
      expect(name.startsWith('llm_d_epp_'), `${name} is a current name (the legacy prefixes are gone in v0.11)`).toBe(true);
      expect(metric(name), name).toBeDefined();
    }
  });

  it('each fact is the line at the tag (held against the files once shared/upstream has them)', () => {
    const dir = upstreamPath(ROUTER_SOURCE.shared, { optional: true });
    if (!dir) return; // TODO(shared/upstream): the fixture above stands for the files until they are added.
    const line = (file: string, n: number) => readFileSync(`${dir}/${file}`, 'utf8').split('\n')[n - 1];
    expect(line(ROUTER_SOURCE.subsystem.file, ROUTER_SOURCE.subsystem.line)).toBe(ROUTER_SOURCE.subsystem.text);
    for (const set of Object.values(ROUTER_SOURCE.labelSets)) expect(line(set.file, set.line)).toBe(set.text);
    for (const m of ROUTER_SOURCE.metrics) {
      expect(line(m.file, m.line)).toBe(`\t\t\tName:      "${m.name}",`);
      expect(line(m.file, m.labelsLine)).toBe(m.labelsText);
    }
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
