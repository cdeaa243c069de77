import { readUpstreamYaml } from '@app-serving/test-cluster';
import { describe, expect, it } from 'vitest';
import { AUTOSCALING_LIMITS } from './facts.ts';
import {
  autoscalingProblems,
  kserveScaling,
  planAutoscaling,
  resolveAutoscaling,
  signalQuery,
  valuesAutoscalerConflicts,
  type AutoscalingPlanInput,
} from './index.ts';
import { KSERVE_AUTOSCALER_KEYS } from '../../kserve/facts.ts';
import { GAIE_EPP_METRICS, GAIE_NO_REQUEST_BUFFERING, MODELSERVICE_AUTOSCALER_KEYS } from '../../upstream/2026-02.ts';
import { ROUTER_EMBEDDER_NO_BUFFERING, ROUTER_EPP_METRICS, ROUTER_REQUEST_BUFFERING } from '../../upstream/2026-08/facts.ts';
import { applyPatches, patchResourceOptions } from '../../patches.ts';
import { parseYaml } from '../../yaml-source.ts';
import type { ValuesFile } from '../../discovery.ts';

const input: AutoscalingPlanInput = {
  slug: 'qwen',
  namespace: 'llm-d-qwen',
  settings: { maxReplicas: 4 },
  prometheus: { address: 'http://prometheus-operated.monitoring.svc:9090', monitorLabels: { release: 'kps' } },
  targets: [{ role: 'decode', deployment: 'ms-qwen-llm-d-modelservice-decode' }],
  modelServer: { podLabels: { 'llm-d.ai/inference-serving': 'true', 'llm-d.ai/model': 'qwen' }, metricsPort: 8200, monitoredByChart: false },
  epp: { pool: 'gaie-qwen', podLabels: { inferencepool: 'gaie-qwen-epp' }, metricsPort: 'metrics', metrics: { queue: 'q', kvCache: 'kv', poolLabel: 'name' }, monitoredByChart: false },
};

function valuesFile(text: string, file = 'ms/values.yaml'): ValuesFile {
  const { source } = parseYaml(file, text);
  return { file, values: source.value as Record<string, unknown>, source };
}

describe('resolveAutoscaling', () => {
  it('fills in the documented defaults, the target from the signal', () => {
    expect(resolveAutoscaling({ maxReplicas: 3 })).toEqual({
      minReplicas: 1,
      maxReplicas: 3,
      signal: 'queue-depth',
      target: 5,
      cooldown: { text: '5m', seconds: 300 },
      pollingInterval: { text: '15s', seconds: 15 },
    });
    expect(resolveAutoscaling({ maxReplicas: 3, signal: 'kv-cache' }).target).toBe(0.8);
  });
});

describe('signalQuery', () => {
  it("selects the Deployment's pods by name for vLLM's signals, whichever monitor scraped them", () => {
    expect(signalQuery('queue-depth', { namespace: 'ns', deployment: 'ms-a.b' })).toEqual({
      query: 'sum(vllm:num_requests_waiting{namespace="ns",pod=~"ms-a\\\\.b-[a-z0-9]+-[a-z0-9]+"})',
      metricType: 'AverageValue',
    });
    expect(signalQuery('kv-cache', { namespace: 'ns', deployment: 'd' })).toEqual({ query: 'avg(vllm:kv_cache_usage_perc{namespace="ns",pod=~"d-[a-z0-9]+-[a-z0-9]+"})', metricType: 'Value' });
  });

  it("reads the EPP's pool gauges by the pool's label, with the names its set gives", () => {
    expect(signalQuery('epp-queue', { namespace: 'ns', deployment: 'd', pool: 'gaie-x', eppMetrics: GAIE_EPP_METRICS })).toEqual({
      query: 'max(inference_pool_average_queue_size{namespace="ns",name="gaie-x"})',
      metricType: 'Value',
    });
    expect(() => signalQuery('epp-kv-cache', { namespace: 'ns', deployment: 'd' })).toThrow(/InferencePool/);
    expect(() => signalQuery('epp-kv-cache', { namespace: 'ns', deployment: 'd', pool: 'gaie-x' })).toThrow(/metrics/);
  });
});

describe('planAutoscaling', () => {
  it('plans one ScaledObject per Deployment, named after it, with the Prometheus trigger and the cool-down on both paths', () => {
    const plan = planAutoscaling({ ...input, settings: { minReplicas: 1, maxReplicas: 4, cooldown: '2m', pollingInterval: '5s', target: 3 } });
    expect(plan.initialReplicas).toBe(1);
    expect(plan.targets[0]!.wake).toEqual([]);
    expect(plan.patches).toEqual([{ kind: 'autoscaled-replicas', deployment: 'ms-qwen-llm-d-modelservice-decode' }]);
    const scaled = plan.objects.filter((o) => o.kind === 'ScaledObject');
    expect(scaled).toEqual([
      {
        apiVersion: 'keda.sh/v1alpha1',
        kind: 'ScaledObject',
        metadata: { name: 'ms-qwen-llm-d-modelservice-decode', namespace: 'llm-d-qwen', labels: { 'app.kubernetes.io/managed-by': 'app-serving', 'llm-d.ai/model': 'qwen' } },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'ms-qwen-llm-d-modelservice-decode' },
          minReplicaCount: 1,
          maxReplicaCount: 4,
          pollingInterval: 5,
          cooldownPeriod: 120,
          advanced: { horizontalPodAutoscalerConfig: { behavior: { scaleDown: { stabilizationWindowSeconds: 120 } } } },
          triggers: [
            {
              type: 'prometheus',
              name: 'queue-depth',
              metricType: 'AverageValue',
              metadata: {
                serverAddress: 'http://prometheus-operated.monitoring.svc:9090',
                query: 'sum(vllm:num_requests_waiting{namespace="llm-d-qwen",pod=~"ms-qwen-llm-d-modelservice-decode-[a-z0-9]+-[a-z0-9]+"})',
                threshold: '3',
                activationThreshold: '0',
                ignoreNullValues: 'true',
              },
            },
          ],
        },
      },
    ]);
  });

  it("at zero (the Router's flow control holds the requests): wakes on the flow-control queue and stays up while requests run", () => {
    const router = { ...input, epp: { pool: 'router-qwen', deployment: 'router-qwen-epp', podLabels: { 'llm-d-router-gateway': 'router-qwen-epp' }, metricsPort: 'metrics', metrics: ROUTER_EPP_METRICS, monitoredByChart: false } };
    const plan = planAutoscaling({ ...router, settings: { minReplicas: 0, maxReplicas: 4, target: 3 } });
    expect(plan.initialReplicas).toBe(1);
    const triggers = (plan.objects.find((o) => o.kind === 'ScaledObject') as any).spec.triggers;
    expect(triggers.map((t: any) => [t.name, t.metricType, t.metadata.query, t.metadata.threshold, t.metadata.activationThreshold])).toEqual([
      ['queue-depth', 'AverageValue', 'sum(vllm:num_requests_waiting{namespace="llm-d-qwen",pod=~"ms-qwen-llm-d-modelservice-decode-[a-z0-9]+-[a-z0-9]+"})', '3', '0'],
      // 0 → 1 when a request waits in the EPP; from 1 up, 3 waiting per replica (the model's target).
      ['epp-flow-control', 'AverageValue', 'sum(llm_d_epp_flow_control_queue_size{namespace="llm-d-qwen",inference_pool="router-qwen"})', '3', '0'],
      // Up while the EPP has a request running; never more than one replica from it.
      ['epp-running', 'AverageValue', 'clamp_max(sum(llm_d_epp_request_running{namespace="llm-d-qwen",pod=~"router-qwen-epp-[a-z0-9]+-[a-z0-9]+"}), 1)', '1', '0'],
    ]);
    expect(plan.targets[0]!.wake.map((w) => w.name)).toEqual(['epp-flow-control', 'epp-running']);
    // A KV-cache signal: the flow-control queue wakes it with the default queue target.
    const kv = planAutoscaling({ ...router, settings: { minReplicas: 0, maxReplicas: 4, signal: 'kv-cache' } });
    expect(kv.targets[0]!.wake[0]!.threshold).toBe(5);
    // The dashboard shows the flow-control queue and the running requests.
    const dashboard = JSON.stringify(plan.objects.find((o) => o.kind === 'ConfigMap'));
    expect(dashboard).toContain('llm_d_epp_flow_control_queue_size');
    expect(dashboard).toContain('llm_d_epp_request_running');
    // Without an EPP with flow control, a model cannot be planned at zero (the rules refuse it first).
    expect(() => planAutoscaling({ ...input, settings: { minReplicas: 0, maxReplicas: 4 } })).toThrow(/flow control/);
    expect(() => planAutoscaling({ ...router, epp: null, settings: { minReplicas: 0, maxReplicas: 4 } })).toThrow(/flow control/);
  });

  it("creates PodMonitors for vLLM's /metrics and the EPP's, with the Prometheus's selector labels, unless a chart's own monitor is on", () => {
    const plan = planAutoscaling(input);
    const monitors = plan.objects.filter((o) => o.kind === 'PodMonitor');
    expect(monitors.map((m) => [m.metadata?.name, (m as any).spec])).toEqual([
      ['qwen-model-server', { selector: { matchLabels: input.modelServer.podLabels }, podMetricsEndpoints: [{ portNumber: 8200, path: '/metrics', interval: '15s' }] }],
      ['qwen-epp', { selector: { matchLabels: { inferencepool: 'gaie-qwen-epp' } }, podMetricsEndpoints: [{ port: 'metrics', path: '/metrics', interval: '15s' }] }],
    ]);
    expect(monitors[0]!.metadata?.labels).toEqual({ release: 'kps', 'app.kubernetes.io/managed-by': 'app-serving', 'llm-d.ai/model': 'qwen' });
    const byCharts = planAutoscaling({ ...input, modelServer: { ...input.modelServer, monitoredByChart: true }, epp: { ...input.epp!, monitoredByChart: true } });
    expect(byCharts.objects.filter((o) => o.kind === 'PodMonitor')).toEqual([]);
    expect(planAutoscaling({ ...input, epp: null }).monitors).toEqual(['qwen-model-server']);
  });

  it('reads Prometheus credentials through a TriggerAuthentication from a Secret, never holding them', () => {
    const plan = planAutoscaling({ ...input, prometheus: { ...input.prometheus, auth: 'basic', username: 'keda' } });
    expect(plan.prometheus).toEqual({ address: input.prometheus.address, auth: 'basic', username: 'keda', secret: 'qwen-prometheus', triggerAuthentication: 'qwen-prometheus' });
    expect(plan.objects[0]).toEqual({
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'TriggerAuthentication',
      metadata: { name: 'qwen-prometheus', namespace: 'llm-d-qwen', labels: { 'app.kubernetes.io/managed-by': 'app-serving', 'llm-d.ai/model': 'qwen' } },
      spec: {
        secretTargetRef: [
          { parameter: 'username', name: 'qwen-prometheus', key: 'username' },
          { parameter: 'password', name: 'qwen-prometheus', key: 'password' },
        ],
      },
    });
    const trigger = (plan.objects.find((o) => o.kind === 'ScaledObject') as any).spec.triggers[0];
    expect(trigger.metadata.authModes).toBe('basic');
    expect(trigger.authenticationRef).toEqual({ name: 'qwen-prometheus' });
  });

  it('scales prefill too where the model has prefill pods', () => {
    const plan = planAutoscaling({ ...input, targets: [...input.targets, { role: 'prefill', deployment: 'ms-qwen-llm-d-modelservice-prefill' }] });
    expect(plan.targets.map((t) => [t.role, t.scaledObject])).toEqual([
      ['decode', 'ms-qwen-llm-d-modelservice-decode'],
      ['prefill', 'ms-qwen-llm-d-modelservice-prefill'],
    ]);
  });
});

describe('the autoscaled-replicas patch', () => {
  const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 1 } };
  it('leaves the object as rendered and asks Pulumi to ignore spec.replicas, on that Deployment only', () => {
    const patches = [{ kind: 'autoscaled-replicas' as const, deployment: 'd' }];
    expect(applyPatches(patches, deployment)).toBe(deployment);
    expect(patchResourceOptions(patches, deployment)).toEqual({ ignoreChanges: ['spec.replicas'] });
    expect(patchResourceOptions(patches, { ...deployment, metadata: { name: 'other' } })).toBeUndefined();
    expect(patchResourceOptions(patches, { ...deployment, kind: 'Service', apiVersion: 'v1' })).toBeUndefined();
  });
});

describe('autoscalingProblems', () => {
  const llmd = { platform: 'llm-d' as const, requestBuffering: GAIE_NO_REQUEST_BUFFERING, noEpp: null };
  it('refuses min above max, scale to zero where no request can wait (each set its own reason), EPP signals without an EPP, a KV-cache target above 1', () => {
    expect(autoscalingProblems({ minReplicas: 3, maxReplicas: 2 }, llmd).map((p) => p.key)).toEqual(['minReplicas']);
    expect(autoscalingProblems({ minReplicas: 0, maxReplicas: 2 }, llmd)[0]!.message).toMatch(/GAIE v1\.2's EPP answers 503.*set minReplicas: 1 or more, or move the model to the 2026-08 set/);
    expect(autoscalingProblems({ minReplicas: 0, maxReplicas: 2 }, { ...llmd, requestBuffering: ROUTER_REQUEST_BUFFERING })).toEqual([]);
    const embedder = autoscalingProblems({ minReplicas: 0, maxReplicas: 2 }, { ...llmd, requestBuffering: ROUTER_EMBEDDER_NO_BUFFERING })[0]!.message;
    expect(embedder).toMatch(/^is 0, but an embedding model's requests go through its Service straight to the pods, not through the Router's EPP/);
    expect(embedder).not.toMatch(/GAIE/);
    expect(autoscalingProblems({ maxReplicas: 2, signal: 'epp-queue' }, { ...llmd, noEpp: 'no EPP' })[0]).toMatchObject({ key: 'signal' });
    expect(autoscalingProblems({ maxReplicas: 2, signal: 'kv-cache', target: 80 }, llmd)[0]).toMatchObject({ key: 'target' });
  });

  it("holds KServe to its CRD: no scale to zero, and no signal, target or polling of ours (WVA chooses)", () => {
    const kserve = { platform: 'kserve' as const, requestBuffering: GAIE_NO_REQUEST_BUFFERING, noEpp: null };
    expect(autoscalingProblems({ minReplicas: 0, maxReplicas: 2, signal: 'kv-cache', target: 0.5, pollingInterval: '5s', cooldown: '1m' }, kserve).map((p) => p.key)).toEqual([
      'minReplicas',
      'signal',
      'target',
      'pollingInterval',
    ]);
  });
});

describe('kserveScaling', () => {
  it('writes WVA with one actuator: the HPA (KServe v0.18) or KEDA (v0.20), the cool-down as its scale-down window', () => {
    expect(kserveScaling({ maxReplicas: 3, cooldown: '2m' }, 'hpa')).toEqual({ minReplicas: 1, maxReplicas: 3, wva: { hpa: { behavior: { scaleDown: { stabilizationWindowSeconds: 120 } } } } });
    expect(kserveScaling({ minReplicas: 2, maxReplicas: 3 }, 'keda')).toEqual({ minReplicas: 2, maxReplicas: 3, wva: { keda: { cooldownPeriod: 300, pollingInterval: 15 } } });
  });
});

describe('valuesAutoscalerConflicts', () => {
  it('names every key of a values file that fixes replicas or brings its own autoscaler, with its line', () => {
    const file = valuesFile('decode:\n  replicas: 2\n  autoscaling:\n    enabled: true\nprefill:\n  autoscaling:\n    enabled: false\nextraObjects:\n  - kind: HorizontalPodAutoscaler\n  - kind: ConfigMap\n');
    expect(valuesAutoscalerConflicts(file, MODELSERVICE_AUTOSCALER_KEYS).map((i) => [i.path, i.line])).toEqual([
      ['decode.replicas', 2],
      ['decode.autoscaling.enabled', 4],
      ['extraObjects[0].kind', 9],
    ]);
    const kserve = valuesFile('replicas: 1\nscaling:\n  maxReplicas: 2\n', 'kserve/values.yaml');
    expect(valuesAutoscalerConflicts(kserve, KSERVE_AUTOSCALER_KEYS).map((i) => [i.file, i.path, i.code])).toEqual([
      ['kserve/values.yaml', 'replicas', 'values.conflict'],
      ['kserve/values.yaml', 'scaling', 'values.conflict'],
    ]);
  });
});

describe('a stack with autoscaling', async () => {
  const { tempRepo, llmdModel, stackFile } = await import('../../../test/helpers.ts');
  const { loadStackFile } = await import('../../stack.ts');
  const { planDeployment } = await import('../../plan.ts');
  const { isStackError } = await import('../../errors.ts');
  const { join } = await import('node:path');

  const problems = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      if (isStackError(error)) return error.issues.map((i) => `${i.file?.split('/').at(-1)}:${i.line} ${i.path}: ${i.message}`);
      throw error;
    }
    return [];
  };

  it('plans the ScaledObject, the monitors and the replicas patch of an llm-d model, and the first replica count', () => {
    const repo = tempRepo({
      ...llmdModel('generative', 'Qwen', 'qwen'),
      'Pulumi.s.yaml': stackFile(
        'app-serving:cloudProvider: cloud\napp-serving:prometheus:\n  address: http://prom.monitoring.svc:9090\napp-serving:models:\n  generative:\n    - name: Qwen\n      autoscaling:\n        minReplicas: 2\n        maxReplicas: 5\n',
      ),
    });
    const plan = planDeployment(loadStackFile(join(repo, 'Pulumi.s.yaml')), join(repo, 'models'));
    const model = plan.models[0]!;
    if (model.platform !== 'llm-d' || model.upstream !== '2026-02') throw new Error('llm-d on 2026-02 expected');
    expect(model.autoscaling?.objects.map((o) => `${o.kind}/${o.metadata?.name}`)).toEqual(['PodMonitor/qwen-model-server', 'PodMonitor/qwen-epp', 'ScaledObject/ms-qwen-llm-d-modelservice-decode', 'ConfigMap/qwen-dashboard']);
    expect(model.patches.modelService).toContainEqual({ kind: 'autoscaled-replicas', deployment: 'ms-qwen-llm-d-modelservice-decode' });
    expect((model.values.modelService as any).decode.replicas).toBe(2);
    expect(model.modelServer.decodeReplicas).toBe(2);
  });

  it('refuses each contradiction with its file, line and key, in one pass', () => {
    const repo = tempRepo({
      ...llmdModel('generative', 'Qwen', 'qwen', 'modelArtifacts:\n  name: org/model\n  uri: hf://org/model\ndecode:\n  replicas: 3\n'),
      ...llmdModel('embedder', 'Emb', 'emb'),
      'Pulumi.s.yaml': stackFile(
        'app-serving:cloudProvider: cloud\napp-serving:prometheusCredentials:\n  secure: v1:abc\napp-serving:models:\n  generative:\n    - name: Qwen\n      autoscaling:\n        minReplicas: 0\n        maxReplicas: 2\n  embedder:\n    - name: Emb\n      autoscaling:\n        minReplicas: 3\n        maxReplicas: 2\n        signal: epp-queue\n',
      ),
    });
    const found = problems(() => planDeployment(loadStackFile(join(repo, 'Pulumi.s.yaml'), 'Pulumi.s.yaml', { checkRules: false }), join(repo, 'models')));
    expect(found.map((p) => p.split(': ')[0]).sort()).toEqual([
      'Pulumi.s.yaml:1 prometheus',
      'Pulumi.s.yaml:14 models.embedder[0].autoscaling.minReplicas',
      'Pulumi.s.yaml:16 models.embedder[0].autoscaling.signal',
      'Pulumi.s.yaml:3 prometheusCredentials',
      'Pulumi.s.yaml:9 models.generative[0].autoscaling.minReplicas',
    ]);
    expect(found.join('\n')).toMatch(/minReplicas: is 0, but nothing holds a request.*set minReplicas: 1/);
  });

  it("refuses a values file that fixes replicas or brings its own autoscaler, with its file and line", () => {
    const repo = tempRepo({
      ...llmdModel('generative', 'Qwen', 'qwen', 'modelArtifacts:\n  name: org/model\n  uri: hf://org/model\ndecode:\n  replicas: 3\n  autoscaling:\n    enabled: true\n'),
      'Pulumi.s.yaml': stackFile('app-serving:cloudProvider: cloud\napp-serving:prometheus:\n  address: http://prom:9090\napp-serving:models:\n  generative:\n    - name: Qwen\n      autoscaling:\n        maxReplicas: 2\n'),
    });
    expect(problems(() => planDeployment(loadStackFile(join(repo, 'Pulumi.s.yaml')), join(repo, 'models'))).map((p) => p.split(': ')[0])).toEqual([
      'values.yaml:5 decode.replicas',
      'values.yaml:7 decode.autoscaling.enabled',
    ]);
  });

  it("writes a KServe model's autoscaling as its LLMInferenceService's scaling, without replicas", () => {
    const repo = tempRepo({
      'models/generative/K/kserve-k/values.yaml': 'model:\n  uri: hf://org/model\n',
      'Pulumi.s.yaml': stackFile('app-serving:cloudProvider: cloud\napp-serving:platform: kserve\napp-serving:models:\n  generative:\n    - name: K\n      autoscaling:\n        minReplicas: 1\n        maxReplicas: 3\n        cooldown: 10m\n'),
    });
    const plan = planDeployment(loadStackFile(join(repo, 'Pulumi.s.yaml')), join(repo, 'models'));
    const model = plan.models[0]!;
    if (model.platform !== 'kserve') throw new Error('kserve expected');
    expect((model.spec as any).replicas).toBeUndefined();
    expect((model.spec as any).scaling).toEqual({ minReplicas: 1, maxReplicas: 3, wva: { hpa: { behavior: { scaleDown: { stabilizationWindowSeconds: 600 } } } } });
    expect(model.autoscaling).toMatchObject({ minReplicas: 1, maxReplicas: 3, actuator: 'hpa' });
  });
});

describe('the Grafana dashboard', () => {
  it("is shipped per model as a ConfigMap Grafana's sidecar loads, graphing the signal the ScaledObject follows", () => {
    const plan = planAutoscaling(input);
    const configMap = plan.objects.find((o) => o.kind === 'ConfigMap')!;
    expect(configMap.metadata).toMatchObject({ name: 'qwen-dashboard', namespace: 'llm-d-qwen', labels: { grafana_dashboard: '1' } });
    const dashboard = JSON.parse((configMap as any).data['app-serving-qwen.json']);
    expect(dashboard.title).toBe('app-serving qwen: autoscaling');
    expect(dashboard.panels[0].targets[0].expr).toBe(plan.targets[0]!.query.query);
    expect(dashboard.panels.map((p: { title: string }) => p.title)).toEqual([
      'Autoscaling signal (queue-depth) and target',
      'Replicas (1–4)',
      'Requests waiting and running (vLLM, per pod)',
      'KV-cache utilisation (vLLM, per pod)',
      'EPP pool averages',
    ]);
  });
});

describe('values Kubernetes or KEDA would refuse later are refused now (M7)', () => {
  const llmd = { platform: 'llm-d' as const, requestBuffering: GAIE_NO_REQUEST_BUFFERING, noEpp: null };
  const kserve = { platform: 'kserve' as const, requestBuffering: GAIE_NO_REQUEST_BUFFERING, noEpp: null };
  it('cooldown: at most 1h (the HPA\'s scale-down window), on llm-d and KServe', () => {
    expect(autoscalingProblems({ maxReplicas: 2, cooldown: '1h' }, llmd)).toEqual([]);
    expect(autoscalingProblems({ maxReplicas: 2, cooldown: '60m' }, kserve)).toEqual([]);
    for (const platform of [llmd, kserve]) {
      expect(autoscalingProblems({ maxReplicas: 2, cooldown: '3601s' }, platform)).toEqual([
        {
          key: 'cooldown',
          message:
            "is 3601s (3601 s), more than the HPA's scale-down stabilization window allows: at most 1h (3600 s) (Kubernetes pkg/apis/autoscaling/validation MaxStabilizationWindowSeconds; KEDA v2.20 ScaledObject CRD) — use at most 1h",
        },
      ]);
    }
    expect(autoscalingProblems({ maxReplicas: 2, cooldown: '596h' }, llmd)[0]!.message).toMatch(/^is 596h \(2145600 s\), more than/);
    expect(autoscalingProblems({ maxReplicas: 2, cooldown: '99999999999999999999h' }, llmd)[0]!.message).toMatch(/^is 99999999999999999999h, more than the HPA's/);
  });

  it('pollingInterval: an int32 of seconds; target: at least 0.001', () => {
    expect(autoscalingProblems({ maxReplicas: 2, pollingInterval: '596523h14m7s' }, llmd)).toEqual([]);
    expect(autoscalingProblems({ maxReplicas: 2, pollingInterval: '99999999h' }, llmd)).toEqual([
      {
        key: 'pollingInterval',
        message: "is 99999999h (359999996400 s), more than KEDA's pollingInterval (an int32 of seconds) allows: at most 596523h14m7s (2147483647 s) (KEDA v2.20 ScaledObject CRD, format int32) — use at most 596523h14m7s",
      },
    ]);
    expect(autoscalingProblems({ maxReplicas: 2, target: 0.001 }, llmd)).toEqual([]);
    expect(autoscalingProblems({ maxReplicas: 2, target: 1e-300 }, llmd)).toEqual([
      { key: 'target', message: 'is 1e-300, less than 0.001: KEDA hands the target to the HPA with three decimals (v2.20 pkg/scalers/scaler.go, %.3f), so it would be 0, which the HPA refuses — use at least 0.001' },
    ]);
  });

  it('the limits are those of KEDA v2.20.2\'s ScaledObject CRD', () => {
    const [crd] = readUpstreamYaml('current/crds/keda-v2.20.2-keda.sh_scaledobjects.yaml') as any[];
    const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
    expect(spec.pollingInterval).toMatchObject({ type: 'integer', format: 'int32', minimum: 1 });
    expect(spec.cooldownPeriod).toMatchObject({ type: 'integer', format: 'int32', minimum: 0 });
    const scaleDown = spec.advanced.properties.horizontalPodAutoscalerConfig.properties.behavior.properties.scaleDown.properties.stabilizationWindowSeconds;
    expect(scaleDown).toMatchObject({ type: 'integer', format: 'int32' });
    expect(scaleDown.description).toContain(`less than or equal to ${AUTOSCALING_LIMITS.cooldownSeconds.seconds} (one hour)`);
    expect(AUTOSCALING_LIMITS.pollingIntervalSeconds.seconds).toBe(2 ** 31 - 1);
  });
});
