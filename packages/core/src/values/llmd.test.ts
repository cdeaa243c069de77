import { describe, expect, it } from 'vitest';
import { valuesFile } from '../../test/helpers.ts';
import { llmdNames } from '../names.ts';
import { getPath } from './merge.ts';
import { llmdValues, modelArtifactsUri, type LlmdValuesInput } from './llmd.ts';

const names = llmdNames('m1');
const GAIE = 'gaie-m1/values.yaml';
const MS = 'ms-m1/values.yaml';
const INFRA = 'infra-m1/values.yaml';

function build(overrides: Partial<LlmdValuesInput> & { ms?: string; gaie?: string; infra?: string } = {}) {
  const { ms, gaie, infra, ...rest } = overrides;
  return llmdValues({
    names,
    category: 'generative',
    files: {
      gaie: valuesFile(GAIE, gaie ?? 'inferenceExtension:\n  replicas: 1\n'),
      modelService: valuesFile(MS, ms ?? 'modelArtifacts:\n  name: org/model\n'),
      ...(infra !== undefined && { infra: valuesFile(INFRA, infra) }),
    },
    nodeSelector: {},
    ...rest,
  });
}

const AFFINITY_TERMS = [{ matchExpressions: [{ key: 'workload', operator: 'In', values: ['gpu'] }] }];

describe('llmdValues: modelservice', () => {
  it('adds the pod labels and keeps the file values', () => {
    const result = build();
    expect(result.issues).toEqual([]);
    expect(result.values.modelService).toEqual({
      modelArtifacts: { name: 'org/model', labels: { 'llm-d.ai/inference-serving': 'true', 'llm-d.ai/model': 'm1' } },
    });
    expect(result.podLabels).toEqual({ 'llm-d.ai/inference-serving': 'true', 'llm-d.ai/model': 'm1' });
    expect(result.servedModelName).toBe('org/model');
  });

  it('adds node affinity, the GPU toleration and the pull secret on decode and prefill, keeping the file lists', () => {
    const result = build({
      ms: 'decode:\n  tolerations:\n    - key: other\n      operator: Exists\n  extraConfig:\n    imagePullSecrets:\n      - name: mine\n',
      nodeSelector: { workload: 'gpu' },
      toleration: { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' },
      pullSecret: 'harbor-creds',
    });
    expect(result.issues).toEqual([]);
    const ms = result.values.modelService as Record<string, Record<string, unknown>>;
    expect(ms.decode).toEqual({
      tolerations: [
        { key: 'other', operator: 'Exists' },
        { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' },
      ],
      extraConfig: {
        imagePullSecrets: [{ name: 'mine' }, { name: 'harbor-creds' }],
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: AFFINITY_TERMS } } },
      },
    });
    expect(ms.prefill).toEqual({
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
      extraConfig: {
        imagePullSecrets: [{ name: 'harbor-creds' }],
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: AFFINITY_TERMS } } },
      },
    });
  });

  it('does not add a toleration twice', () => {
    const toleration = { key: 'dedicated', operator: 'Equal' as const, value: 'gpu', effect: 'NoSchedule' as const };
    const result = build({ ms: 'decode:\n  tolerations:\n    - {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}\n', toleration });
    expect((result.values.modelService.decode as { tolerations: unknown[] }).tolerations).toEqual([toleration]);
  });

  it('sets the PVC URI from modelSource, defaults the served name and a writable hub cache', () => {
    const artifacts = { uri: modelArtifactsUri('m1-model', 'hub/Qwen/Qwen3-0.6B', 'hf-cache'), layout: 'hf-cache' as const, modelUri: 'hub/Qwen/Qwen3-0.6B', ref: 'harbor.local/ai/q:1' };
    expect(artifacts.uri).toBe('pvc+hf://m1-model/hub/Qwen/Qwen3-0.6B');
    const result = build({ ms: 'routing:\n  servicePort: 8000\n', artifacts });
    expect(result.values.modelService.modelArtifacts).toEqual({
      readOnly: false,
      name: 'Qwen/Qwen3-0.6B',
      labels: { 'llm-d.ai/inference-serving': 'true', 'llm-d.ai/model': 'm1' },
      uri: 'pvc+hf://m1-model/hub/Qwen/Qwen3-0.6B',
      mountPath: '/model-cache',
    });
    expect(modelArtifactsUri('m1-model', 'models/qwen', 'directory')).toBe('pvc://m1-model/models/qwen');
    // New weights roll the model pods: the reference is a pod annotation.
    for (const role of ['decode', 'prefill']) {
      expect((result.values.modelService[role] as { podAnnotations: unknown }).podAnnotations).toEqual({ 'app-serving.io/model-ref': 'harbor.local/ai/q:1' });
    }
  });

  it('accepts a file that repeats the required URI, and rejects one that contradicts it', () => {
    const artifacts = { uri: 'pvc+hf://m1-model/hub/o/m', layout: 'hf-cache' as const, modelUri: 'hub/o/m', ref: 'r' };
    expect(build({ ms: 'modelArtifacts:\n  uri: pvc+hf://m1-model/hub/o/m\n', artifacts }).issues).toEqual([]);
    expect(build({ ms: 'modelArtifacts:\n  uri: hf://o/m\n', artifacts }).issues).toEqual([
      {
        code: 'values.conflict',
        path: 'modelArtifacts.uri',
        message: 'is "hf://o/m" in the values file, but the stack sets "pvc+hf://m1-model/hub/o/m" (modelSource puts the weights on the PVC m1-model); remove it from the file',
        file: MS,
        line: 2,
      },
    ]);
  });

  it('rejects a label value that contradicts the slug, and a labels map replaced by a scalar', () => {
    expect(build({ ms: 'modelArtifacts:\n  labels:\n    llm-d.ai/model: other\n' }).issues.map((i) => [i.code, i.path, i.line])).toEqual([
      ['values.conflict', 'modelArtifacts.labels["llm-d.ai/model"]', 3],
    ]);
    expect(build({ ms: 'modelArtifacts: none\n' }).issues.map((i) => [i.code, i.path, i.line])).toEqual([
      ['values.conflict', 'modelArtifacts', 1],
    ]);
  });

  it('rejects a null that would delete a required value', () => {
    expect(build({ ms: 'modelArtifacts:\n  labels: null\n' }).issues).toEqual([
      {
        code: 'values.conflict',
        path: 'modelArtifacts.labels',
        message:
          'is null in the values file, but the stack needs modelArtifacts.labels["llm-d.ai/inference-serving"] = "true" (the InferencePool and the embeddings Service select the model pods by this label); remove it from the file',
        file: MS,
        line: 2,
      },
    ]);
  });

  it('rejects renaming overrides and a second affinity source', () => {
    const result = build({ ms: 'fullnameOverride: short\ndecode:\n  acceleratorTypes:\n    labelKey: gpu-type\n', nodeSelector: { workload: 'gpu' } });
    expect(result.issues.map((i) => [i.path, i.line])).toEqual([
      ['fullnameOverride', 1],
      ['decode.acceleratorTypes.labelKey', 4],
    ]);
    expect(result.issues[1]!.message).toBe(
      "app-serving sets decode.extraConfig.affinity from the stack's nodeSelector, and the chart also renders affinity from this key: the pod spec would hold the key twice and one value would be lost; move this label into the model's nodeSelector in the stack (or drop decode.acceleratorTypes and write the affinity in decode.extraConfig.affinity)",
    );
    expect(result.issues[0]!.message).toBe('must not be set (the decode Deployment must be named ms-m1-llm-d-modelservice-decode); remove it from the file');
  });

  it('rejects keys the chart schema rejects, with a suggestion', () => {
    expect(build({ ms: 'modelArtifacts:\n  nmae: x\nrouting:\n  parentRefs: []\n' }).issues).toEqual([
      expect.objectContaining({ code: 'values.unknown-key', path: 'modelArtifacts.nmae', line: 2, message: expect.stringMatching(/^llm-d-modelservice v0.4.12 does not accept this key \(did you mean "name"\?\)/) }),
      expect.objectContaining({ code: 'values.unknown-key', path: 'routing.parentRefs', line: 4 }),
    ]);
  });

  it('rejects wrong types of the keys it reads', () => {
    expect(build({ ms: 'routing:\n  servicePort: "8000"\ndecode:\n  tolerations: {}\n' }).issues.map((i) => [i.code, i.path, i.message])).toEqual([
      ['values.invalid', 'routing.servicePort', 'must be a port number (1–65535), not "8000"'],
      ['values.invalid', 'decode.tolerations', 'must be a list of tolerations, not {}'],
    ]);
  });

  it('computes the ports vLLM listens on', () => {
    expect(build()).toMatchObject({ servicePort: 8000, decodePort: 8200 });
    expect(build({ ms: 'routing:\n  proxy:\n    enabled: false\n' })).toMatchObject({ servicePort: 8000, decodePort: 8000 });
    expect(build({ ms: 'routing:\n  servicePort: 8200\n  proxy:\n    enabled: false\n' })).toMatchObject({ servicePort: 8200, decodePort: 8200 });
    expect(build({ ms: 'routing:\n  proxy:\n    targetPort: 9000\n' })).toMatchObject({ decodePort: 9000 });
  });

  it('counts replicas as the chart does', () => {
    expect(build()).toMatchObject({ decodeReplicas: 1, prefillReplicas: 0 });
    expect(build({ ms: 'decode:\n  replicas: 3\nprefill:\n  replicas: 2\n' })).toMatchObject({ decodeReplicas: 3, prefillReplicas: 2 });
    expect(build({ ms: 'prefill:\n  create: false\n  replicas: 2\n' })).toMatchObject({ prefillReplicas: 0 });
  });
});

describe('llmdValues: GAIE', () => {
  it('wires the pool to the model pods and the Istio DestinationRule to the EPP', () => {
    const result = build({ ms: 'routing:\n  servicePort: 8200\n' });
    expect(result.values.gaie).toEqual({
      provider: {
        name: 'istio',
        istio: {
          destinationRule: {
            host: 'gaie-m1-epp.llm-d-m1.svc.cluster.local',
            trafficPolicy: {
              connectionPool: {
                http: { http1MaxPendingRequests: 256000, maxRequestsPerConnection: 256000, http2MaxRequests: 256000, idleTimeout: '900s' },
                tcp: { maxConnections: 256000, maxConnectionDuration: '1800s', connectTimeout: '900s' },
              },
            },
          },
        },
      },
      inferenceExtension: { replicas: 1 },
      inferencePool: {
        modelServers: { matchLabels: { 'llm-d.ai/inference-serving': 'true', 'llm-d.ai/model': 'm1' } },
        targetPorts: [{ number: 8200 }],
        apiVersion: 'inference.networking.k8s.io/v1',
      },
    });
  });

  it('lets the file change the connection pool', () => {
    const result = build({ gaie: 'provider:\n  istio:\n    destinationRule:\n      trafficPolicy:\n        connectionPool:\n          tcp:\n            maxConnections: 10\n' });
    expect(result.issues).toEqual([]);
    expect(result.effective.gaie).toMatchObject({ provider: { istio: { destinationRule: { trafficPolicy: { connectionPool: { tcp: { maxConnections: 10, connectTimeout: '900s' } } } } } } });
  });

  it('rejects another provider, another DestinationRule host and a pool on other ports', () => {
    const result = build({ gaie: 'provider:\n  name: gke\n  istio:\n    destinationRule:\n      host: elsewhere\ninferencePool:\n  targetPorts:\n    - number: 9999\n' });
    expect(result.issues.map((i) => [i.path, i.line])).toEqual([
      ['provider.name', 2],
      ['provider.istio.destinationRule.host', 5],
      ['inferencePool.targetPorts', 7],
    ]);
  });

  it('rejects a pool label the model pods do not carry', () => {
    const result = build({ gaie: 'inferencePool:\n  modelServers:\n    matchLabels:\n      llm-d.ai/guide: demo\n' });
    expect(result.issues).toEqual([
      expect.objectContaining({
        code: 'values.conflict',
        path: 'inferencePool.modelServers.matchLabels["llm-d.ai/guide"]',
        line: 4,
        message: `the model pods do not carry llm-d.ai/guide="demo" (modelArtifacts.labels in ${MS}); the InferencePool would select no pods — add the label there or remove it here`,
      }),
    ]);
    expect(build({ gaie: 'inferencePool:\n  modelServers:\n    matchLabels:\n      llm-d.ai/guide: demo\n', ms: 'modelArtifacts:\n  labels:\n    llm-d.ai/guide: demo\n' }).issues).toEqual([]);
  });

  it('reports Prometheus monitoring', () => {
    expect(build().prometheusMonitoring).toBe(false);
    expect(build({ gaie: 'inferenceExtension:\n  monitoring:\n    prometheus:\n      enabled: true\n' }).prometheusMonitoring).toBe(true);
  });

  it('patches the EPP ServiceAccount only when there is a pull secret', () => {
    expect(build().patches.gaie).toEqual([]);
    expect(build({ pullSecret: 'harbor-creds' }).patches.gaie).toEqual([
      { kind: 'service-account-pull-secret', serviceAccount: 'gaie-m1-epp', imagePullSecrets: [{ name: 'harbor-creds' }] },
    ]);
  });
});

describe('llmdValues: llm-d-infra', () => {
  it('sets the gateway class and keeps exactly one DestinationRule per EPP host', () => {
    const result = build();
    expect(result.values.infra).toEqual({
      gateway: {
        enabled: true,
        gatewayClassName: 'istio',
        service: { type: 'ClusterIP' },
        destinationRule: { enabled: false },
        // Only the model's own namespace may attach routes; access logging is an explicit choice.
        listeners: [{ name: 'default', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'Same' } } }],
        gatewayParameters: { accessLogging: true, enabled: true },
      },
    });
    expect(result.patches.infra).toEqual([]);
  });

  it('takes an optional infra values file', () => {
    const result = build({ infra: 'gateway:\n  service:\n    type: LoadBalancer\n' });
    expect(result.issues).toEqual([]);
    expect(result.effective.infra).toMatchObject({ gateway: { service: { type: 'LoadBalancer' }, gatewayClassName: 'istio' } });
  });

  it('rejects a second DestinationRule for the EPP host, but not one for another host', () => {
    for (const host of ['gaie-m1-epp', 'gaie-m1-epp.llm-d-m1', 'gaie-m1-epp.llm-d-m1.svc.cluster.local']) {
      expect(build({ infra: `gateway:\n  destinationRule:\n    enabled: true\n    host: ${host}\n` }).issues).toEqual([
        expect.objectContaining({ code: 'values.conflict', path: 'gateway.destinationRule.enabled', file: INFRA, line: 3 }),
      ]);
    }
    expect(build({ infra: 'gateway:\n  destinationRule:\n    enabled: true\n    host: other.svc\n' }).issues).toEqual([]);
  });

  it('rejects renaming the Gateway, another class and unknown keys', () => {
    const result = build({ infra: 'gateway:\n  fullnameOverride: gw\n  gatewayClassName: kgateway\n  servce: {}\n' });
    expect(result.issues.map((i) => [i.code, i.path])).toEqual([
      ['values.unknown-key', 'gateway.servce'],
      ['values.conflict', 'gateway.gatewayClassName'],
      ['values.conflict', 'gateway.fullnameOverride'],
    ]);
  });

  it('places the gateway pods through the parameters ConfigMap', () => {
    const result = build({ nodeSelector: { workload: 'gpu' }, toleration: { key: 'gpu', operator: 'Exists' }, pullSecret: 'harbor-creds' });
    expect(result.values.infra).toMatchObject({ gateway: { gatewayParameters: { enabled: true } } });
    expect(result.patches.infra).toEqual([
      {
        kind: 'gateway-pod-placement',
        configMap: 'infra-m1-inference-gateway',
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: AFFINITY_TERMS } } },
        tolerations: [{ key: 'gpu', operator: 'Exists' }],
        imagePullSecrets: [{ name: 'harbor-creds' }],
      },
    ]);
    expect(build({ infra: 'gateway:\n  gatewayParameters:\n    enabled: false\n', nodeSelector: { workload: 'gpu' } }).issues.map((i) => i.path)).toEqual([
      'gateway.gatewayParameters.enabled',
    ]);
  });
});

const GPU = { key: 'dedicated', operator: 'Equal' as const, value: 'gpu', effect: 'NoSchedule' as const };
const affinityOf = (selector: Record<string, string>) => ({
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [{ matchExpressions: Object.entries(selector).map(([key, value]) => ({ key, operator: 'In', values: [value] })) }],
    },
  },
});

describe('llmdValues: placement of the EPP and the gateway pods (issue 10 item 1)', () => {
  it('gives the EPP the GPU toleration (keeping the file’s) and the model’s node affinity', () => {
    const result = build({ gaie: 'inferenceExtension:\n  tolerations:\n    - {key: other, operator: Exists}\n', toleration: GPU, nodeSelector: { workload: 'gpu' } });
    expect(result.issues).toEqual([]);
    expect(result.values.gaie.inferenceExtension).toEqual({ tolerations: [{ key: 'other', operator: 'Exists' }, GPU], affinity: affinityOf({ workload: 'gpu' }) });
    expect(result.eppPlacement).toEqual({ affinity: affinityOf({ workload: 'gpu' }), tolerations: [GPU] });
  });

  it('places the EPP and the gateway pods on the control nodes when the stack says so', () => {
    const result = build({ toleration: GPU, nodeSelector: { workload: 'gpu' }, controlNodeSelector: { role: 'system' } });
    expect(getPath(result.values.gaie, ['inferenceExtension', 'affinity'])).toEqual(affinityOf({ role: 'system' }));
    expect(result.patches.infra).toEqual([{ kind: 'gateway-pod-placement', configMap: names.gatewayParameters, affinity: affinityOf({ role: 'system' }), tolerations: [GPU] }]);
    // The model pods stay on the GPU nodes.
    expect(getPath(result.values.modelService, ['decode', 'extraConfig', 'affinity'])).toEqual(affinityOf({ workload: 'gpu' }));
  });

  it('adds no EPP placement when the stack has none', () => {
    expect(build().values.gaie.inferenceExtension).toEqual({ replicas: 1 });
  });

  it('rejects a GAIE file whose EPP node affinity contradicts the stack', () => {
    const gaie = 'inferenceExtension:\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms: []\n';
    expect(build({ gaie, nodeSelector: { workload: 'gpu' } }).issues.map((i) => [i.code, i.path, i.line])).toEqual([
      ['values.conflict', 'inferenceExtension.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms', 5],
    ]);
  });
});

describe('llmdValues: pod-spec keys written twice (issue 10 item 2)', () => {
  it('reports extraConfig.tolerations when the stack sets decode.tolerations', () => {
    const result = build({ ms: 'decode:\n  extraConfig:\n    tolerations:\n      - {key: a, operator: Exists}\n', toleration: GPU });
    expect(result.issues).toEqual([
      {
        code: 'values.conflict',
        path: 'decode.extraConfig.tolerations',
        file: MS,
        line: 3,
        message:
          "llm-d-modelservice also renders tolerations into the decode pod spec (from decode.tolerations, where app-serving puts the stack's gpuToleration): the pod spec would hold the key twice and one value would be lost; list them under decode.tolerations instead (app-serving adds the stack's GPU toleration there)",
      },
    ]);
  });

  it('reports the deprecated decode.imagePullSecrets when the stack adds the pull secret to extraConfig', () => {
    const result = build({ ms: 'prefill:\n  imagePullSecrets:\n    - name: mine\n', pullSecret: 'harbor-creds' });
    expect(result.issues.map((i) => [i.code, i.path, i.line])).toEqual([['values.conflict', 'prefill.imagePullSecrets', 2]]);
    expect(result.issues[0]!.message).toContain('app-serving sets prefill.extraConfig.imagePullSecrets (the Harbor pull secret)');
  });

  it('reports both places set in the file, and the fields the chart always renders', () => {
    const ms = [
      'decode:',
      '  nodeSelector: {a: b}',
      '  extraConfig:',
      '    nodeSelector: {c: d}',
      '    serviceAccountName: mine',
      '    volumes: []',
      '    hostIPC: true',
      '',
    ].join('\n');
    expect(build({ ms }).issues.map((i) => [i.path, i.line])).toEqual([
      ['decode.extraConfig.nodeSelector', 4],
      ['decode.extraConfig.serviceAccountName', 5],
      ['decode.extraConfig.volumes', 6],
    ]);
  });

  it('reports extraConfig.initContainers on decode while the routing proxy is on', () => {
    expect(build({ ms: 'routing:\n  proxy:\n    enabled: true\ndecode:\n  extraConfig:\n    initContainers: []\n' }).issues.map((i) => i.path)).toEqual(['decode.extraConfig.initContainers']);
    expect(build({ ms: 'routing:\n  proxy:\n    enabled: false\ndecode:\n  extraConfig:\n    initContainers: []\n' }).issues).toEqual([]);
  });

  it('reports priorityClassName in both places, unless the chart skips its own ("none")', () => {
    expect(build({ ms: 'decode:\n  priorityClassName: high\n  extraConfig:\n    priorityClassName: low\n' }).issues.map((i) => i.path)).toEqual(['decode.extraConfig.priorityClassName']);
    expect(build({ ms: 'decode:\n  priorityClassName: None\n  extraConfig:\n    priorityClassName: low\n' }).issues).toEqual([]);
  });

  it('accepts extraConfig fields the chart does not render itself', () => {
    expect(build({ ms: 'decode:\n  extraConfig:\n    hostIPC: true\n    priorityClassName: high\n', toleration: GPU, pullSecret: 'p' }).issues).toEqual([]);
  });
});

describe('llmdValues: modelArtifacts with modelSource (issue 10 items 3 and 7)', () => {
  const artifacts = { uri: 'pvc+hf://m1-model/hub/o/m', layout: 'hf-cache' as const, modelUri: 'hub/o/m', ref: 'r' };

  it('rejects another mountPath', () => {
    const result = build({ ms: 'modelArtifacts:\n  name: o/m\n  mountPath: /models\n', artifacts });
    expect(result.issues.map((i) => [i.code, i.path, i.line])).toEqual([['values.conflict', 'modelArtifacts.mountPath', 3]]);
    expect(result.issues[0]!.message).toContain('the chart hard-codes HF_HUB_CACHE=/model-cache/…');
    expect(build({ ms: 'modelArtifacts:\n  mountPath: /model-cache\n', artifacts }).issues).toEqual([]);
    // Without modelSource the mount path is the file's business.
    expect(build({ ms: 'modelArtifacts:\n  mountPath: /models\n' }).issues).toEqual([]);
  });

  it('warns that modelArtifacts.size does nothing for a PVC', () => {
    const result = build({ ms: 'modelArtifacts:\n  name: o/m\n  size: 10Gi\n', artifacts });
    expect(result.issues).toEqual([]);
    expect(result.warnings.map((w) => [w.code, w.path, w.line])).toEqual([['warning.no-effect', 'modelArtifacts.size', 3]]);
    expect(build({ ms: 'modelArtifacts:\n  size: 10Gi\n' }).warnings).toEqual([]);
  });
});

describe('llmdValues: decode objects that are not a Deployment (issue 10 item 4)', () => {
  it('rejects multinode and the requester', () => {
    const result = build({ ms: 'multinode: true\nrequester:\n  enable: true\n' });
    expect(result.issues.map((i) => [i.code, i.path, i.line])).toEqual([
      ['values.unsupported', 'multinode', 1],
      ['values.unsupported', 'requester.enable', 3],
    ]);
    expect(result.issues[0]!.message).toBe(
      'makes llm-d-modelservice render a LeaderWorkerSet instead of the Deployment ms-m1-llm-d-modelservice-decode; app-serving deploys, awaits and verifies a decode Deployment — remove it (multi-node serving is not supported)',
    );
    expect(build({ ms: 'multinode: false\nrequester:\n  enable: false\n' }).issues).toEqual([]);
  });
});

describe('llmdValues: await timeout of the model Deployments (issue 10 item 5)', () => {
  it('patches the decode and prefill Deployments', () => {
    expect(build({ readyTimeoutSeconds: 2700 }).patches.modelService).toEqual([
      { kind: 'await-timeout', deployment: 'ms-m1-llm-d-modelservice-decode', seconds: 2700 },
      { kind: 'await-timeout', deployment: 'ms-m1-llm-d-modelservice-prefill', seconds: 2700 },
    ]);
  });
});

describe('llmdValues: GAIE keys the chart does not read (issue 10 item 6)', () => {
  it('warns on unknown keys, with a suggestion, and on DestinationRule fields the chart ignores', () => {
    const gaie = [
      'inferenceExtension:',
      '  replica: 2',
      '  flags:',
      '    any-flag: x',
      'provider:',
      '  istio:',
      '    destinationRule:',
      '      trafficPolicy:',
      '        outlierDetection: {}',
      '',
    ].join('\n');
    const result = build({ gaie });
    expect(result.issues).toEqual([]);
    expect(result.warnings.map((w) => [w.code, w.path, w.line])).toEqual([
      ['warning.unknown-key', 'inferenceExtension.replica', 2],
      ['warning.unknown-key', 'provider.istio.destinationRule.trafficPolicy.outlierDetection', 9],
    ]);
    expect(result.warnings[0]!.message).toMatch(/^GAIE inferencepool v1.2.0 does not read this key, so it has no effect \(did you mean "replicas"\?\)/);
  });
});

describe('llmdValues: who may attach routes to the Gateway, and access logging (issue 10 item 8)', () => {
  const listener = (result: ReturnType<typeof build>) => getPath(result.values.infra, ['gateway', 'listeners']);

  it('admits routes from the model namespace only by default', () => {
    expect(listener(build())).toEqual([{ name: 'default', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'Same' } } }]);
  });

  it('widens to all namespaces, or to named ones besides the model’s', () => {
    expect(listener(build({ routeNamespaces: 'All' }))).toEqual([{ name: 'default', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }]);
    expect(listener(build({ routeNamespaces: ['apps', 'llm-d-m1'] }))).toEqual([
      {
        name: 'default',
        port: 80,
        protocol: 'HTTP',
        allowedRoutes: { namespaces: { from: 'Selector', selector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['llm-d-m1', 'apps'] }] } } },
      },
    ]);
  });

  it('sets access logging explicitly, and rejects a file that contradicts the stack', () => {
    expect(getPath(build({ accessLogging: false }).values.infra, ['gateway', 'gatewayParameters'])).toEqual({ accessLogging: false });
    const result = build({ infra: 'gateway:\n  gatewayParameters:\n    accessLogging: false\n  listeners:\n    - {name: default, port: 80, protocol: HTTP}\n' });
    expect(result.issues.map((i) => [i.code, i.path, i.line])).toEqual([
      ['values.conflict', 'gateway.listeners', 4],
      ['values.conflict', 'gateway.gatewayParameters.accessLogging', 3],
    ]);
    expect(result.accessLogging).toBe(true);
  });
});
