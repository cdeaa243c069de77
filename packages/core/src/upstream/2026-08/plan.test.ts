import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { issuesOf, REPO_ROOT, tempRepo } from '../../../test/helpers.ts';
import { loadStackFile, parseStackFile } from '../../stack.ts';
import { planDeployment, type LlmdModelPlan, type LlmdRouterModelPlan, type ModelPlan } from '../../plan.ts';

const MODELS = join(REPO_ROOT, 'models');
const APP = join(REPO_ROOT, 'apps', 'app-serving');

const made: string[] = [];
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** An example stack file with keys added under `config:` (e.g. the upstream set), in a folder of its own. */
function exampleWith(stack: string, extra: string): string {
  const text = readFileSync(join(APP, `Pulumi.${stack}.yaml`), 'utf8').replace('config:\n', `config:\n${extra}`);
  const dir = mkdtempSync(join(tmpdir(), 'app-serving-upstream-'));
  made.push(dir);
  writeFileSync(join(dir, `Pulumi.${stack}.yaml`), text);
  return join(dir, `Pulumi.${stack}.yaml`);
}

const planOf = (file: string, modelsDir = MODELS) => planDeployment(loadStackFile(file), modelsDir);
const router = (m: ModelPlan | undefined) => m as LlmdRouterModelPlan;


describe('the example stack (on-prem RKE2, Harbor) on the 2026-08 set, gateway mode', () => {
  const plan = planOf(exampleWith('example', '  app-serving:upstream: 2026-08\n'));
  const qwen = router(plan.models.find((m) => m.slug === 'qwen3-06b-rke2'));
  const bge = router(plan.models.find((m) => m.slug === 'bge-small-rke2'));

  it('names every object from the slug: the Router release, its EPP and pool, the Gateway, the model server', () => {
    expect(qwen).toMatchObject({
      platform: 'llm-d',
      upstream: '2026-08',
      namespace: 'llm-d-qwen3-06b-rke2',
      gateway: {
        kind: 'gateway',
        name: 'router-qwen3-06b-rke2-gateway',
        service: 'router-qwen3-06b-rke2-gateway-istio',
        url: 'http://router-qwen3-06b-rke2-gateway-istio.llm-d-qwen3-06b-rke2.svc.cluster.local:80',
        parametersConfigMap: 'router-qwen3-06b-rke2-gateway',
        // Kept across sets: clients that use the alias see no change when a model moves.
        alias: 'llmd-gateway-qwen3-06b-rke2',
      },
      httpRoute: 'router-qwen3-06b-rke2',
      inferencePool: { name: 'router-qwen3-06b-rke2', epp: 'router-qwen3-06b-rke2-epp' },
      modelServer: {
        decodeDeployment: 'server-qwen3-06b-rke2',
        podLabels: { 'llm-d.ai/inference-serving': 'true', 'llm-d.ai/model': 'qwen3-06b-rke2', 'llm-d.ai/role': 'decode' },
        servedModelName: 'Qwen/Qwen3-0.6B',
        port: 8000,
        servicePort: 8000,
        decodeReplicas: 1,
      },
      router: { mode: 'gateway', gatewayClass: 'istio', release: 'router-qwen3-06b-rke2', chart: { chart: 'oci://ghcr.io/llm-d/charts/llm-d-router-gateway', version: 'v0.10.0' } },
    });
    // The embedder keeps its embeddings Service name: its clients see no change either.
    expect(bge.embeddingService).toMatchObject({ name: 'ms-bge-small-rke2-embeddings', port: 8200, targetPort: 8200 });
    expect(bge.httpRoute).toBeNull();
  });

  it('wires the Router chart to the model server and the Gateway, and places the EPP like the model', () => {
    expect(qwen.router.values).toMatchObject({
      router: {
        modelServers: { matchLabels: { 'llm-d.ai/inference-serving': 'true', 'llm-d.ai/model': 'qwen3-06b-rke2' }, targetPorts: [{ number: 8000 }] },
        epp: {
          image: { registry: 'harbor.example.com/images-llm-d/llm-d' },
          tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
          affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'workload', operator: 'In', values: ['gpu'] }] }] } } },
        },
      },
      provider: { name: 'istio' },
      httpRoute: { create: true, inferenceGatewayName: 'router-qwen3-06b-rke2-gateway' },
    });
    // An embedder gets no HTTPRoute: clients call its embeddings Service.
    expect(bge.router.values).toMatchObject({ httpRoute: { create: false } });
    expect(qwen.router.patches).toEqual([
      { kind: 'service-account-pull-secret', serviceAccount: 'router-qwen3-06b-rke2-epp', imagePullSecrets: [{ name: 'harbor-creds' }] },
      { kind: 'await-timeout', deployment: 'router-qwen3-06b-rke2-epp', seconds: 1800 },
    ]);
  });

  it('builds the model server as llm-d\'s recipe does, on the weights the pull Job wrote', () => {
    const d = qwen.manifests.modelServer as any;
    expect(d.metadata).toMatchObject({ name: 'server-qwen3-06b-rke2', namespace: 'llm-d-qwen3-06b-rke2', annotations: { 'pulumi.com/timeoutSeconds': '1800' } });
    const pod = d.spec.template.spec;
    const [container] = pod.containers;
    expect(container).toMatchObject({
      name: 'modelserver',
      image: 'harbor.example.com/images-llm-d/vllm/vllm-openai:v0.30.0',
      args: ['Qwen/Qwen3-0.6B', '--served-model-name', 'Qwen/Qwen3-0.6B', '--port', '8000', '--max-model-len', '8192', '--gpu-memory-utilization', '0.90'],
      ports: [{ name: 'modelserver', containerPort: 8000, protocol: 'TCP' }],
      readinessProbe: { httpGet: { path: '/v1/models', port: 'modelserver' } },
      livenessProbe: { httpGet: { path: '/health', port: 'modelserver' } },
      volumeMounts: [{ name: 'model-storage', mountPath: '/model-cache', readOnly: false }],
    });
    expect(container.env.slice(0, 2)).toEqual([
      { name: 'HF_HUB_CACHE', value: '/model-cache/hub' },
      { name: 'HF_HUB_OFFLINE', value: '1' },
    ]);
    expect(pod.volumes).toEqual([{ name: 'model-storage', persistentVolumeClaim: { claimName: 'qwen3-06b-rke2-model', readOnly: false } }]);
    expect(pod.imagePullSecrets).toEqual([{ name: 'harbor-creds' }]);
    expect(pod.tolerations).toEqual([{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }]);
    expect(d.spec.template.metadata.annotations['app-serving.io/model-ref']).toBe('harbor.example.com/ai-models/qwen3-0.6b:2025-05');
    expect(d.spec.selector.matchLabels).toEqual(qwen.modelServer.podLabels);
  });

  it('creates the Gateway with its pods placed through Istio\'s parameters ConfigMap', () => {
    expect(qwen.manifests.gateway).toMatchObject({
      kind: 'Gateway',
      metadata: { name: 'router-qwen3-06b-rke2-gateway', labels: { 'istio.io/enable-inference-extproc': 'true' } },
      spec: { gatewayClassName: 'istio', listeners: [{ name: 'default', port: 80, protocol: 'HTTP' }], infrastructure: { parametersRef: { kind: 'ConfigMap', name: 'router-qwen3-06b-rke2-gateway' } } },
    });
    const data = (qwen.manifests.gatewayParameters as any).data.deployment as string;
    expect(data).toContain('workload');
    expect(data).toContain('harbor-creds');
    expect(data).toContain('dedicated');
  });

  it('lists its images: the server\'s, the EPP from Harbor, the pull Job\'s; and no warning of a superseded set', () => {
    expect(qwen.images.map((i) => i.image)).toEqual([
      'harbor.example.com/images-llm-d/vllm/vllm-openai:v0.30.0',
      'harbor.example.com/images-llm-d/llm-d/llm-d-router-endpoint-picker:v0.10.0',
      'harbor.example.com/images-infra/oras-project/oras:v1.3.1',
    ]);
    expect(plan.warnings).toEqual([]);
  });
});

describe('the kind stack on the 2026-08 set', () => {
  it('standalone mode: no Gateway; clients call the Router\'s proxy on the EPP Service', () => {
    const plan = planOf(exampleWith('kind', '  app-serving:upstream: 2026-08\n  app-serving:router:\n    mode: standalone\n'));
    const sim = router(plan.models.find((m) => m.slug === 'sim'));
    expect(sim.gateway).toMatchObject({ kind: 'router-proxy', name: 'router-sim-epp', service: 'router-sim-epp', port: 8081, url: 'http://router-sim-epp.llm-d-sim.svc.cluster.local:8081', parametersConfigMap: null });
    expect(sim.httpRoute).toBeNull();
    expect(sim.manifests.gateway).toBeNull();
    expect(sim.router.chart).toEqual({ chart: 'oci://ghcr.io/llm-d/charts/llm-d-router-standalone', version: 'v0.10.0' });
    expect(sim.router.values).toMatchObject({ provider: { name: 'none' } });
    expect(sim.router.values).not.toHaveProperty('httpRoute');
    expect(sim.images.map((i) => i.image)).toContain('docker.io/envoyproxy/envoy:distroless-v1.33.2');
    // The simulator is launched as its image says, with the arguments written in its values.
    expect((sim.manifests.modelServer as any).spec.template.spec.containers[0].args.slice(0, 4)).toEqual(['--model', 'random', '--port', '8000']);
  });

  it('agentgateway: the Service is the Gateway\'s own name; no Istio parameters or DestinationRule', () => {
    const plan = planOf(exampleWith('kind', '  app-serving:upstream: 2026-08\n  app-serving:router:\n    gatewayClass: agentgateway\n'));
    const sim = router(plan.models.find((m) => m.slug === 'sim'));
    expect(sim.gateway).toMatchObject({ name: 'router-sim-gateway', service: 'router-sim-gateway', parametersConfigMap: null });
    expect(sim.manifests.gatewayParameters).toBeNull();
    expect((sim.manifests.gateway as any).spec.gatewayClassName).toBe('agentgateway');
    expect(sim.router.values).toMatchObject({ provider: { name: 'none' } });
  });
});

describe('one stack, both sets: a model moves at a time', () => {
  it('plans each model with its own set; KServe models must share one', () => {
    const file = exampleWith('kind', '');
    const text = readFileSync(file, 'utf8').replace('      - name: Sim\n        enabled: true\n', '      - name: Sim\n        enabled: true\n        upstream: 2026-08\n');
    const dir = tempRepo({ 'Pulumi.kind.yaml': text });
    const plan = planOf(join(dir, 'Pulumi.kind.yaml'));
    expect(plan.models.map((m) => [m.slug, m.upstream])).toEqual([
      ['sim', '2026-08'],
      ['sim-embed', '2026-02'],
    ]);
    expect((plan.models[1] as LlmdModelPlan).releases.gaie).toBe('gaie-sim-embed');
    // One warning: the embedder is still on the superseded set, with the way across.
    expect(plan.warnings.map((w) => [w.code, w.message])).toEqual([
      ['warning.upstream-superseded', expect.stringMatching(/^SimEmbeddings is deployed with the 2026-02 set .* superseded .*app-serving migrate --stack .*Pulumi\.kind\.yaml --to 2026-08/)],
    ]);
  });

  it('KServe: two models on two KServe releases are refused at the key', () => {
    const dir = tempRepo({
      'models/generative/A/kserve-a/values.yaml': 'model:\n  name: a\n  uri: hf://org/a\n',
      'models/generative/B/kserve-b/values.yaml': 'model:\n  name: b\n  uri: hf://org/b\n',
      'P.yaml': 'config:\n  app-serving:cloudProvider: cloud\n  app-serving:platform: kserve\n  app-serving:models:\n    generative:\n      - name: A\n      - name: B\n        upstream: 2026-08\n',
    });
    const issues = issuesOf(() => planDeployment(loadStackFile(join(dir, 'P.yaml')), join(dir, 'models')));
    expect(issues.map((i) => [i.path, i.message])).toEqual([['models.generative[1].upstream', expect.stringMatching(/KServe v0\.20\.0.* is on v0\.18\.1; a cluster runs one KServe/)]]);
  });

  it('KServe v0.20: LLMInferenceService v1alpha2 and v0.20\'s images', () => {
    const plan = planOf(exampleWith('kserve', '  app-serving:upstream: 2026-08\n'));
    const [model] = plan.models;
    expect(model).toMatchObject({ platform: 'kserve', upstream: '2026-08', apiVersion: 'serving.kserve.io/v1alpha2' });
    expect(model!.images.map((i) => i.image)).toContain('ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0');
    expect(model!.images.map((i) => i.image)).toContain('kserve/storage-initializer:v0.20.0');
  });
});

describe('the model folder on the 2026-08 set: every problem at its file, line and key', () => {
  const stack = (extra = '') => `config:\n  app-serving:cloudProvider: cloud\n  app-serving:upstream: 2026-08\n${extra}  app-serving:models:\n    generative:\n      - name: M\n`;
  const plan = (files: Record<string, string>, extra = '') => {
    const dir = tempRepo({ 'P.yaml': stack(extra), ...files });
    return () => planDeployment(loadStackFile(join(dir, 'P.yaml')), join(dir, 'models'));
  };

  it('needs a server-<slug>/values.yaml, and reads no gaie-/ms- folder (one of those alone: the folder is for the other set)', () => {
    const issues = issuesOf(plan({ 'models/generative/M/ms-m/values.yaml': 'modelArtifacts:\n  name: m\n' }));
    expect(issues.map((i) => i.message)).toEqual([expect.stringMatching(/holds ms-m\/, the folders of the 2026-02 set, but the model is on the 2026-08 set/)]);
    const empty = issuesOf(plan({ 'models/generative/M/README.md': '' }));
    expect(empty.map((i) => i.message)).toEqual([expect.stringMatching(/has no server-<slug>\/values\.yaml \(needed for the llm-d platform on the 2026-08 set\)/)]);
  });

  it('refuses unknown keys, missing ones, and options that do not go together', () => {
    const issues = issuesOf(
      plan({ 'models/generative/M/server-m/values.yaml': 'image: vllm/vllm-openai:v0.30.0\nreplica: 2\ncommand: [vllm]\nport: 70000\ncontainer:\n  image: other\n' }),
    );
    expect(issues.map((i) => [i.path, i.line, i.message])).toEqual([
      ['servedModelName', 1, expect.stringMatching(/^is required/)],
      ['replica', 2, expect.stringMatching(/is not a key of the model server's values \(did you mean "replicas"\?\)/)],
      ['command', 3, expect.stringMatching(/is only for launch: image/)],
      ['port', 4, 'must be a port number (1–65535)'],
      ['container.image', 6, expect.stringMatching(/is set by the server values/)],
    ]);
  });

  it("refuses GAIE's keys in the Router's values (the chart fails on them) and a selector the pods do not carry", () => {
    const issues = issuesOf(
      plan({
        'models/generative/M/server-m/values.yaml': 'image: vllm/vllm-openai:v0.30.0\nservedModelName: m\n',
        'models/generative/M/router-m/values.yaml': 'inferenceExtension:\n  replicas: 2\nrouter:\n  modelServers:\n    matchLabels:\n      app: other\n',
      }),
    );
    expect(issues.map((i) => [i.path, i.line])).toEqual([
      ['inferenceExtension', 1],
      ['router.modelServers.matchLabels.app', 6],
    ]);
    expect(issues[0]!.message).toMatch(/GAIE's name: the Router chart reads router\.epp\.\* and fails on this key/);
    expect(issues[1]!.message).toMatch(/the model-server pods do not carry app="other"; the InferencePool would select no pods/);
  });

  it('warns of a Router key the chart does not read', () => {
    const p = plan({
      'models/generative/M/server-m/values.yaml': 'image: vllm/vllm-openai:v0.30.0\nservedModelName: m\n',
      'models/generative/M/router-m/values.yaml': 'router:\n  epp:\n    replica: 2\n',
    })() as ReturnType<typeof planDeployment>;
    expect(p.warnings.map((w) => [w.code, w.path])).toEqual([['warning.unknown-key', 'router.epp.replica']]);
  });

  it('checks the names a releaseName override makes against their limits', () => {
    const long = 'r'.repeat(50);
    const dir = tempRepo({
      'P.yaml': stack().replace('      - name: M\n', `      - name: M\n        releaseName: ${long}\n`),
      'models/generative/M/server-m/values.yaml': 'image: vllm/vllm-openai:v0.30.0\nservedModelName: m\n',
    });
    const issues = issuesOf(() => planDeployment(loadStackFile(join(dir, 'P.yaml')), join(dir, 'models')));
    expect(issues.map((i) => [i.code, i.path])).toEqual([['name.too-long', 'models.generative[0].releaseName']]);
    expect(issues[0]!.message).toMatch(/the Service Istio creates for the Gateway "r{50}-gateway-istio" is 64 characters; .* at most 63: the Gateway would never be Programmed/);
  });

  it('warns that router settings do nothing on a stack with no model on 2026-08', () => {
    const dir = tempRepo({
      'P.yaml': 'config:\n  app-serving:cloudProvider: cloud\n  app-serving:router:\n    mode: standalone\n  app-serving:models:\n    generative:\n      - name: M\n',
      'models/generative/M/gaie-m/values.yaml': 'inferenceExtension:\n  replicas: 1\n',
      'models/generative/M/ms-m/values.yaml': 'modelArtifacts:\n  name: org/model\n  uri: hf://org/model\n',
    });
    const p = planDeployment(parseStackFile(readFileSync(join(dir, 'P.yaml'), 'utf8'), join(dir, 'P.yaml')), join(dir, 'models'));
    expect(p.warnings.filter((w) => w.code !== 'warning.image-unpinned').map((w) => [w.code, w.path])).toEqual([
      ['warning.upstream-superseded', 'models'],
      ['warning.no-effect', 'router'],
    ]);
  });
});

describe('modelGateway.accessLogging on the 2026-08 set (docs review W9): refused with a warning', () => {
  const files = {
    'models/generative/M/server-m/values.yaml': 'image: vllm/vllm-openai:v0.30.0\nservedModelName: m\n',
    'models/generative/Old/gaie-old/values.yaml': 'inferenceExtension:\n  replicas: 1\n',
    'models/generative/Old/ms-old/values.yaml': 'modelArtifacts:\n  name: org/model\n  uri: hf://org/model\n',
  };
  const warningsOf = (gateway: string, entries = '      - name: M\n') => {
    const dir = tempRepo({ 'P.yaml': `config:\n  app-serving:cloudProvider: cloud\n  app-serving:upstream: 2026-08\n${gateway}  app-serving:models:\n    generative:\n${entries}`, ...files });
    return planDeployment(loadStackFile(join(dir, 'P.yaml')), join(dir, 'models')).warnings.filter((w) => w.path.startsWith('modelGateway'));
  };

  it('set (true or false): it does nothing there, and validate says where the access logs are set instead', () => {
    for (const value of ['true', 'false']) {
      const [warning, ...rest] = warningsOf(`  app-serving:modelGateway:\n    accessLogging: ${value}\n`);
      expect(rest).toEqual([]);
      expect(warning).toMatchObject({ code: 'warning.no-effect', path: 'modelGateway.accessLogging', line: 5 });
      expect(warning!.message).toBe(
        "has no effect on M (the 2026-08 set), whose gateway access logs app-serving does not set: they are the gateway's own — with Istio its Telemetry API (a Telemetry with the envoy access-log provider, mesh-wide in istio-system or selecting the gateway's pods) or meshConfig.accessLogFile",
      );
    }
  });

  it('not set, or set only for routeNamespaces: no warning; beside a 2026-02 model: it still applies to that one', () => {
    expect(warningsOf('')).toEqual([]);
    expect(warningsOf('  app-serving:modelGateway:\n    routeNamespaces: All\n')).toEqual([]);
    const mixed = warningsOf('  app-serving:modelGateway:\n    accessLogging: false\n', '      - name: M\n      - name: Old\n        upstream: 2026-02\n');
    expect(mixed.map((w) => w.message)).toEqual([expect.stringMatching(/^has no effect on M \(the 2026-08 set\), .*; it still applies to the 2026-02 models$/)]);
  });
});

describe('autoscaling and access on the 2026-08 set', () => {
  const SERVER = { 'models/generative/M/server-m/values.yaml': 'image: vllm/vllm-openai:v0.30.0\nservedModelName: m\n' };
  const stack = (entry: string, extra = '') =>
    `config:\n  app-serving:cloudProvider: cloud\n  app-serving:upstream: 2026-08\n  app-serving:prometheus:\n    address: http://prom.monitoring.svc:9090\n${extra}  app-serving:apiKeys:\n    team:\n      secure: v1:AAAA:BBBB\n  app-serving:models:\n    generative:\n      - name: M\n${entry}`;
  const planWith = (entry: string, extra = '', files: Record<string, string> = SERVER) => {
    const dir = tempRepo({ 'P.yaml': stack(entry, extra), ...files });
    return () => planDeployment(loadStackFile(join(dir, 'P.yaml')), join(dir, 'models'));
  };

  it('KEDA scales the model-server Deployment on vLLM\'s queue; the Deployment starts at the first count; the EPP is scraped too', () => {
    const m = router(planWith('        autoscaling:\n          minReplicas: 2\n          maxReplicas: 6\n')().models[0]);
    expect(m.autoscaling?.targets.map((t) => [t.role, t.deployment, t.scaledObject])).toEqual([['decode', 'server-m', 'server-m']]);
    expect(m.autoscaling?.objects.map((o) => `${o.kind}/${o.metadata?.name}`)).toEqual(['PodMonitor/m-model-server', 'PodMonitor/m-epp', 'ScaledObject/server-m', 'ConfigMap/m-dashboard']);
    expect((m.manifests.modelServer as any).spec.replicas).toBe(2);
    expect(m.modelServer.decodeReplicas).toBe(2);
    // The EPP's pods (the chart creates the pool: label llm-d-router-gateway), port `metrics`; its
    // /metrics without a token for our PodMonitor (the chart turns --metrics-endpoint-auth=false on).
    expect((m.autoscaling?.objects.find((o) => o.metadata?.name === 'm-epp') as any).spec).toEqual({
      selector: { matchLabels: { 'llm-d-router-gateway': 'router-m-epp' } },
      podMetricsEndpoints: [{ port: 'metrics', path: '/metrics', interval: '15s' }],
    });
    expect(m.router.values).toMatchObject({ router: { monitoring: { prometheus: { auth: { enabled: false } } } } });
    // No flow control above zero: the chart's own EPP config.
    expect((m.router.values as any).router.epp?.pluginsConfigFile).toBeUndefined();
  });

  it("reads the EPP signals under the Router's llm_d_epp_* names (emitted by v0.10, kept by v0.11), and refuses a replica count in the server's values", () => {
    for (const [signal, query] of [
      ['epp-queue', 'max(llm_d_epp_average_queue_size{namespace="llm-d-m",name="router-m"})'],
      ['epp-kv-cache', 'max(llm_d_epp_average_kv_cache_utilization{namespace="llm-d-m",name="router-m"})'],
    ] as const) {
      const m = router(planWith(`        autoscaling:\n          maxReplicas: 4\n          signal: ${signal}\n`)().models[0]);
      expect(m.autoscaling?.targets[0]!.query).toEqual({ query, metricType: 'Value' });
      const dashboard = JSON.stringify(m.autoscaling?.objects.find((o) => o.kind === 'ConfigMap'));
      expect(dashboard).toContain('llm_d_epp_average_queue_size');
      expect(dashboard).not.toContain('inference_pool_');
    }
    const issues = issuesOf(
      planWith('        autoscaling:\n          maxReplicas: 4\n          signal: epp-queue\n', '', { 'models/generative/M/server-m/values.yaml': 'image: vllm/vllm-openai:v0.30.0\nservedModelName: m\nreplicas: 2\n' }),
    );
    expect(issues.map((i) => [i.path, i.message])).toEqual([['replicas', expect.stringMatching(/the autoscaler owns replicas/)]]);
  });

  it("the chart's own monitoring on: its ServiceMonitor scrapes the EPP with a token, no PodMonitor of ours; a file that keeps auth on without it is refused", () => {
    const own = router(
      planWith('        autoscaling:\n          maxReplicas: 4\n', '', { ...SERVER, 'models/generative/M/router-m/values.yaml': 'router:\n  monitoring:\n    prometheus:\n      enabled: true\n' })().models[0],
    );
    expect(own.autoscaling?.monitors).toEqual(['m-model-server']);
    expect((own.router.values as any).router.monitoring.prometheus.auth).toBeUndefined();
    const issues = issuesOf(planWith('        autoscaling:\n          maxReplicas: 4\n', '', { ...SERVER, 'models/generative/M/router-m/values.yaml': 'router:\n  monitoring:\n    prometheus:\n      auth:\n        enabled: true\n' }));
    expect(issues.map((i) => [i.path, i.message])).toEqual([['router.monitoring.prometheus.auth.enabled', expect.stringMatching(/PodMonitor app-serving creates .* without a token .*router\.monitoring\.prometheus\.enabled/)]]);
  });
});

describe('scale from zero on the 2026-08 set: the Router\'s flow control holds the requests', () => {
  const SERVER = { 'models/generative/M/server-m/values.yaml': 'image: vllm/vllm-openai:v0.30.0\nservedModelName: m\n' };
  const AT_ZERO = '        readyTimeout: 20m\n        autoscaling:\n          minReplicas: 0\n          maxReplicas: 3\n';
  const stack = (entry: string, extra = '', category = 'generative') =>
    `config:\n  app-serving:cloudProvider: cloud\n  app-serving:upstream: 2026-08\n  app-serving:prometheus:\n    address: http://prom.monitoring.svc:9090\n${extra}  app-serving:models:\n    ${category}:\n      - name: M\n${entry}`;
  const planWith = (entry: string, extra = '', files: Record<string, string> = SERVER, category = 'generative') => {
    const dir = tempRepo({ 'P.yaml': stack(entry, extra, category), ...files });
    return () => planDeployment(loadStackFile(join(dir, 'P.yaml')), join(dir, 'models'));
  };
  const eppConfig = (m: LlmdRouterModelPlan) => {
    const epp = (m.router.values as any).router.epp;
    return { file: epp.pluginsConfigFile, config: parse(epp.pluginsCustomConfig[epp.pluginsConfigFile]) };
  };

  for (const [mode, extra] of [
    ['gateway', ''],
    ['standalone', '  app-serving:router:\n    mode: standalone\n'],
  ] as const) {
    it(`${mode} mode: turns flow control on in the EPP's config, holds a request up to readyTimeout, wakes on the flow-control queue`, () => {
      const m = router(planWith(AT_ZERO, extra)().models[0]);
      const { file, config } = eppConfig(m);
      expect(file).toBe('app-serving-flow-control.yaml');
      expect(config).toMatchObject({ apiVersion: 'llm-d.ai/v1alpha1', kind: 'EndpointPickerConfig', featureGates: ['flowControl'], flowControl: { defaultRequestTTL: '1200s' } });
      expect(m.autoscaling).toMatchObject({ minReplicas: 0, initialReplicas: 1 });
      const scaled = m.autoscaling!.objects.find((o) => o.kind === 'ScaledObject') as any;
      expect(scaled.spec.minReplicaCount).toBe(0);
      expect(scaled.spec.triggers.map((t: any) => [t.name, t.metadata.query])).toEqual([
        ['queue-depth', 'sum(vllm:num_requests_waiting{namespace="llm-d-m",pod=~"server-m-[a-z0-9]+-[a-z0-9]+"})'],
        ['epp-flow-control', 'sum(llm_d_epp_flow_control_queue_size{namespace="llm-d-m",inference_pool="router-m"})'],
        ['epp-running', 'clamp_max(sum(llm_d_epp_request_running{namespace="llm-d-m",pod=~"router-m-epp-[a-z0-9]+-[a-z0-9]+"}), 1)'],
      ]);
    });
  }

  it('an EPP config of the model\'s own: taken when it turns flow control on, refused at the key when it does not', () => {
    const own = (text: string) => ({ ...SERVER, 'models/generative/M/router-m/values.yaml': `router:\n  epp:\n    pluginsConfigFile: mine.yaml\n    pluginsCustomConfig:\n      mine.yaml: |\n${text.replace(/^/gm, '        ')}\n` });
    const gated = router(planWith(AT_ZERO, '', own('apiVersion: llm-d.ai/v1alpha1\nkind: EndpointPickerConfig\nfeatureGates: ["flowControl=true"]\nplugins: []\nschedulingProfiles: []'))().models[0]);
    expect(eppConfig(gated).file).toBe('mine.yaml');
    const issues = issuesOf(planWith(AT_ZERO, '', own('apiVersion: llm-d.ai/v1alpha1\nkind: EndpointPickerConfig\nplugins: []\nschedulingProfiles: []')));
    expect(issues.map((i) => [i.path, i.message])).toEqual([['router.epp.pluginsConfigFile', expect.stringMatching(/does not turn on flow control.*add featureGates: \[flowControl\] to router\.epp\.pluginsCustomConfig\.mine\.yaml/)]]);
    // A key that changes the chart's default config, which app-serving would rewrite.
    const parsers = issuesOf(planWith(AT_ZERO, '', { ...SERVER, 'models/generative/M/router-m/values.yaml': 'router:\n  epp:\n    parsers: [openai-parser]\n' }));
    expect(parsers.map((i) => i.path)).toEqual(['router.epp.parsers']);
  });

  it("refuses zero with each set's own reason: an embedder on 2026-08 (its Service bypasses the EPP), GAIE v1.2 on 2026-02, KServe", () => {
    const embedder = issuesOf(planWith(AT_ZERO, '', { 'models/embedder/M/server-m/values.yaml': 'image: vllm/vllm-openai:v0.30.0\nservedModelName: m\n' }, 'embedder'));
    expect(embedder.map((i) => [i.path, i.message])).toEqual([
      ['models.embedder[0].autoscaling.minReplicas', expect.stringMatching(/^is 0, but an embedding model's requests go through its Service straight to the pods, not through the Router's EPP/)],
    ]);
    expect(embedder[0]!.message).not.toMatch(/GAIE/);
    const old = issuesOf(
      planWith(AT_ZERO.replace('readyTimeout: 20m\n', 'readyTimeout: 20m\n        upstream: 2026-02\n'), '', {
        'models/generative/M/gaie-m/values.yaml': 'inferenceExtension:\n  replicas: 1\n',
        'models/generative/M/ms-m/values.yaml': 'modelArtifacts:\n  name: org/model\n  uri: hf://org/model\n',
      }),
    );
    expect(old.map((i) => [i.path, i.message])).toEqual([['models.generative[0].autoscaling.minReplicas', expect.stringMatching(/GAIE v1\.2's EPP answers 503 .*app-serving migrate/)]]);
  });
});

describe('access on the 2026-08 set', () => {
  const SERVER = { 'models/generative/M/server-m/values.yaml': 'image: vllm/vllm-openai:v0.30.0\nservedModelName: m\n' };
  const stack = (entry: string, extra = '') =>
    `config:\n  app-serving:cloudProvider: cloud\n  app-serving:upstream: 2026-08\n  app-serving:prometheus:\n    address: http://prom.monitoring.svc:9090\n${extra}  app-serving:apiKeys:\n    team:\n      secure: v1:AAAA:BBBB\n  app-serving:models:\n    generative:\n      - name: M\n${entry}`;
  const planWith = (entry: string, extra = '', files: Record<string, string> = SERVER) => {
    const dir = tempRepo({ 'P.yaml': stack(entry, extra), ...files });
    return () => planDeployment(loadStackFile(join(dir, 'P.yaml')), join(dir, 'models'));
  };

  it('enforces access on the Istio gateway; refuses it in standalone mode and behind agentgateway, at the key', () => {
    const entry = '        access:\n          apiKeys: [team]\n';
    expect(router(planWith(entry)().models[0]).access).toMatchObject({ mode: 'apiKeys', apiKeys: ['team'] });
    for (const [router, why] of [
      ['  app-serving:router:\n    mode: standalone\n', /in standalone mode/],
      ['  app-serving:router:\n    gatewayClass: agentgateway\n', /behind an agentgateway Gateway/],
    ] as const) {
      const issues = issuesOf(planWith(entry, router));
      expect(issues.map((i) => [i.path, i.message])).toEqual([['models.generative[0].access', expect.stringMatching(why)]]);
    }
  });
});

describe('behind Envoy Gateway (router.gatewayClass: envoy)', () => {
  const ENVOY = '  app-serving:upstream: 2026-08\n  app-serving:router:\n    gatewayClass: envoy\n';

  it("routes through EG's own form: a Service of the pool's pods, the EPP over ext_proc, its pick honoured; the InferencePool stays", () => {
    const plan = planOf(exampleWith('kind', ENVOY));
    const sim = router(plan.models.find((m) => m.slug === 'sim'));
    // EG runs the proxy in its own namespace, under a hashed name (envoy-gateway.ts).
    expect(sim.gateway).toMatchObject({
      kind: 'gateway',
      name: 'router-sim-gateway',
      service: expect.stringMatching(/^envoy-llm-d-sim-router-sim-gateway-[0-9a-f]{8}$/),
      serviceNamespace: 'envoy-gateway-system',
      url: expect.stringMatching(/^http:\/\/envoy-llm-d-sim-router-sim-gateway-[0-9a-f]{8}\.envoy-gateway-system\.svc\.cluster\.local:80$/),
      parametersConfigMap: null,
    });
    expect(sim.router).toMatchObject({ mode: 'gateway', gatewayClass: 'envoy', chart: { chart: 'oci://ghcr.io/llm-d/charts/llm-d-router-gateway' } });
    // The chart keeps the pool and the EPP; its own route (to the pool) is off, the EPP speaks plain gRPC and fails closed.
    expect(sim.router.values).toMatchObject({
      provider: { name: 'none' },
      httpRoute: { create: false },
      router: { epp: { flags: { 'secure-serving': false } }, inferencePool: { failureMode: 'FailClose' } },
    });
    expect(sim.router.values).not.toHaveProperty('httpRoute.inferenceGatewayName');
    // Not the chart's name: a model moving between classes never has two routes of one name.
    expect(sim.httpRoute).toBe('router-sim-route');
    expect(plan.envoyGatewayClass).toEqual({ name: 'envoy', controllerName: 'gateway.envoyproxy.io/gatewayclass-controller', create: true });
    expect((sim.manifests.gateway as any).spec.gatewayClassName).toBe('envoy');
    // The kind stack places nothing: no EnvoyProxy.
    expect(sim.manifests.gatewayParameters).toBeNull();
    const labels = { 'app.kubernetes.io/managed-by': 'app-serving', 'app.kubernetes.io/part-of': 'app-serving', 'app-serving.io/model': 'sim' };
    const targetRefs = [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'router-sim-route' }];
    expect(sim.manifests.envoyRoute).toEqual({
      service: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'router-sim-pool', namespace: 'llm-d-sim', labels },
        spec: { type: 'ClusterIP', selector: { 'llm-d.ai/inference-serving': 'true', 'llm-d.ai/model': 'sim' }, ports: [{ name: 'http', protocol: 'TCP', port: 8000, targetPort: 8000 }] },
      },
      extensionPolicy: {
        apiVersion: 'gateway.envoyproxy.io/v1alpha1',
        kind: 'EnvoyExtensionPolicy',
        metadata: { name: 'router-sim-endpoint-picker', namespace: 'llm-d-sim', labels },
        spec: {
          targetRefs,
          extProc: [
            {
              backendRefs: [{ group: '', kind: 'Service', name: 'router-sim-epp', port: 9002 }],
              processingMode: { request: { body: 'FullDuplexStreamed' }, response: { body: 'FullDuplexStreamed' } },
              failOpen: false,
              messageTimeout: '1000s',
            },
          ],
        },
      },
      backendTrafficPolicy: {
        apiVersion: 'gateway.envoyproxy.io/v1alpha1',
        kind: 'BackendTrafficPolicy',
        metadata: { name: 'router-sim-backend-traffic', namespace: 'llm-d-sim', labels },
        spec: { targetRefs, loadBalancer: { type: 'LeastRequest', endpointOverride: { extractFrom: [{ header: 'x-gateway-destination-endpoint' }] } } },
      },
      httpRoute: {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'router-sim-route', namespace: 'llm-d-sim', labels },
        spec: {
          parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'router-sim-gateway' }],
          rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ group: '', kind: 'Service', name: 'router-sim-pool', port: 8000 }], timeouts: { request: '300s' } }],
        },
      },
    });
    // The pool's Service selects exactly what the pool selects.
    expect((sim.manifests.envoyRoute!.service as any).spec.selector).toEqual((sim.router.values as any).router.modelServers.matchLabels);
    // An embedder keeps its embeddings Service: no route of its own.
    const embed = router(plan.models.find((m) => m.slug === 'sim-embed'));
    expect(embed.manifests.envoyRoute).toBeNull();
    expect(embed.httpRoute).toBeNull();
    // The proxy image is Envoy Gateway's: the model pulls none of its own.
    expect(sim.images.map((i) => i.image).some((i) => i.includes('envoy'))).toBe(false);
  });

  it('places the proxy pods like the EPP through an EnvoyProxy that merges with the cluster\'s defaults; the class is the stack\'s one Envoy GatewayClass', () => {
    const plan = planOf(exampleWith('example', `${ENVOY}  app-serving:kserve:\n    gateway:\n      className: eg\n      create: false\n`));
    const qwen = router(plan.models.find((m) => m.slug === 'qwen3-06b-rke2'));
    expect(plan.envoyGatewayClass).toEqual({ name: 'eg', controllerName: 'gateway.envoyproxy.io/gatewayclass-controller', create: false });
    expect(qwen.manifests.gateway).toMatchObject({
      spec: { gatewayClassName: 'eg', infrastructure: { parametersRef: { group: 'gateway.envoyproxy.io', kind: 'EnvoyProxy', name: 'router-qwen3-06b-rke2-gateway' } } },
    });
    expect((qwen.manifests.gateway as any).metadata.labels).not.toHaveProperty('istio.io/enable-inference-extproc');
    expect(qwen.manifests.gatewayParameters).toEqual({
      apiVersion: 'gateway.envoyproxy.io/v1alpha1',
      kind: 'EnvoyProxy',
      metadata: { name: 'router-qwen3-06b-rke2-gateway', namespace: 'llm-d-qwen3-06b-rke2', labels: expect.any(Object) },
      spec: {
        mergeType: 'StrategicMerge',
        provider: {
          type: 'Kubernetes',
          kubernetes: {
            envoyDeployment: {
              pod: {
                affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'workload', operator: 'In', values: ['gpu'] }] }] } } },
                tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
              },
            },
          },
        },
      },
    });
    // No pull secret: the proxy runs in Envoy Gateway's namespace, where the model's Secret is not.
    expect(JSON.stringify(qwen.manifests.gatewayParameters)).not.toContain('harbor-creds');
    expect(qwen.gateway.parametersConfigMap).toBeNull();
  });

  const SERVER = { 'models/generative/M/server-m/values.yaml': 'image: vllm/vllm-openai:v0.30.0\nservedModelName: m\n' };
  const stack = (entry: string) =>
    `config:\n  app-serving:cloudProvider: cloud\n${ENVOY}  app-serving:apiKeys:\n    team:\n      secure: v1:AAAA:BBBB\n  app-serving:models:\n    generative:\n      - name: M\n${entry}`;
  const planWith = (entry: string, files: Record<string, string> = SERVER) => {
    const dir = tempRepo({ 'P.yaml': stack(entry), ...files });
    return () => planDeployment(loadStackFile(join(dir, 'P.yaml')), join(dir, 'models'));
  };

  it('enforces access on the route (the refusal of other classes is lifted); the rate limit joins the one BackendTrafficPolicy EG allows per route', () => {
    const m = router(planWith('        access:\n          apiKeys: [team]\n          rateLimit:\n            requestsPerMinute: 30\n')().models[0]);
    expect(m.access).toMatchObject({ mode: 'apiKeys', apiKeys: ['team'], requestsPerMinute: 30 });
    expect((m.manifests.envoyRoute!.backendTrafficPolicy as any).spec).toEqual({
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'router-m-route' }],
      loadBalancer: { type: 'LeastRequest', endpointOverride: { extractFrom: [{ header: 'x-gateway-destination-endpoint' }] } },
      rateLimit: { type: 'Local', local: { rules: [{ clientSelectors: [{ headers: [{ name: 'x-app-serving-client', type: 'Distinct' }] }], limit: { requests: 30, unit: 'Minute' } }] } },
    });
  });

  it('honours the Router values it can (ext_proc port, route timeout) and refuses, at the file and key, what this class cannot do', () => {
    const ok = router(planWith('', { ...SERVER, 'models/generative/M/router-m/values.yaml': 'router:\n  epp:\n    extProcPort: 9100\nhttpRoute:\n  requestTimeout: 1h\n' })().models[0]);
    expect((ok.manifests.envoyRoute!.extensionPolicy as any).spec.extProc[0].backendRefs[0].port).toBe(9100);
    expect((ok.manifests.envoyRoute!.httpRoute as any).spec.rules[0].timeouts).toEqual({ request: '1h' });
    const issues = issuesOf(
      planWith('', {
        ...SERVER,
        'models/generative/M/router-m/values.yaml': [
          'httpRoute:',
          '  create: true',
          '  headerMatches:',
          '    x-team: a',
          '  requestTimeout: 5 minutes',
          'router:',
          '  epp:',
          '    flags:',
          '      secure-serving: true',
          '    extProcPort: "9002"',
          '  inferencePool:',
          '    failureMode: FailOpen',
          '',
        ].join('\n'),
      }),
    );
    expect(issues.map((i) => [i.path, i.line]).sort()).toEqual(
      [
        ['httpRoute.create', 2],
        ['httpRoute.headerMatches', 3],
        ['httpRoute.requestTimeout', 5],
        ['router.epp.extProcPort', 10],
        ['router.epp.flags.secure-serving', 9],
        ['router.inferencePool.failureMode', 12],
      ].sort(),
    );
    const message = (path: string) => issues.find((i) => i.path === path)!.message;
    expect(message('httpRoute.create')).toMatch(/Envoy Gateway takes no InferencePool backend/);
    expect(message('router.epp.flags.secure-serving')).toMatch(/plain gRPC: it verifies a TLS backend only against a CA, and the EPP's certificate is self-signed/);
    expect(message('router.inferencePool.failureMode')).toMatch(/cannot fail open with FullDuplexStreamed/);
    expect(message('httpRoute.headerMatches')).toMatch(/does not carry httpRoute\.headerMatches/);
    expect(message('httpRoute.requestTimeout')).toMatch(/must be a Gateway API duration/);
  });

  it("checks the pool Service's name (Envoy Gateway's own Service name needs no check: it is cut to fit)", () => {
    // Helm's 53 for the release keeps `<release>-pool` within 63; a release with a dot makes it no DNS-1035 label.
    const issues = issuesOf(planWith('        releaseName: team.m\n'));
    expect(issues.map((i) => [i.code, i.path, i.message])).toEqual([
      ['name.too-long', 'models.generative[0].releaseName', expect.stringMatching(/the EPP Service "team\.m-epp" is not a valid Service name/)],
      ['name.too-long', 'models.generative[0].releaseName', expect.stringMatching(/the Service of the pool's pods "team\.m-pool" is not a valid Service name/)],
    ]);
    expect(router(planWith(`        releaseName: ${'r'.repeat(53)}\n`)().models[0]).gateway.service.length).toBeLessThanOrEqual(63);
  });
});
