import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, llmdModel, tempRepo } from '../test/helpers.ts';
import { loadStackFile, parseStackFile } from './stack.ts';
import { isStackError, type Issue, type IssueCode } from './errors.ts';
import { chartRefs } from './charts.ts';
import { expandHome, planDeployment, withModelFolderIssues, type LlmdModelPlan } from './plan.ts';

const MODELS = join(REPO_ROOT, 'models');
/** The warnings, without the one every stack on the superseded 2026-02 set gets. */
const otherThanUpstream = (warnings: readonly Issue[]) => warnings.filter((w) => w.code !== 'warning.upstream-superseded');
const planOf = (stack: string) => planDeployment(loadStackFile(join(REPO_ROOT, 'apps/app-serving', `Pulumi.${stack}.yaml`)), MODELS);

describe('the example stack (on-prem: a generative model with a hostPath modelSource, an embedder)', () => {
  const plan = planOf('example');
  const [qwen, bge] = plan.models as LlmdModelPlan[];

  it('has the stack-wide settings and never the token', () => {
    expect(plan).toMatchObject({
      stack: 'example',
      cloudProvider: 'on-prem',
      platform: 'llm-d',
      kubeconfig: { path: '~/.kube/rke2-cluster.yaml' },
      harbor: { hostname: 'harbor.example.com', user: 'robot$k8s-puller', pullSecret: 'harbor-creds' },
      hfToken: false,
      gpuToleration: { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' },
      kserve: null,
    });
    expect(JSON.stringify(plan)).not.toMatch(/secure|v1:cGxh/);
    expect(plan.models.map((m) => m.name)).toEqual(['Qwen3-0.6B-rke2', 'bge-small-en-v1.5-rke2']);
  });

  it('names every object of the generative model as DESIGN §5 says', () => {
    expect(qwen).toMatchObject({
      platform: 'llm-d',
      category: 'generative',
      slug: 'qwen3-06b-rke2',
      namespace: 'llm-d-qwen3-06b-rke2',
      releases: { infra: 'infra-qwen3-06b-rke2', gaie: 'gaie-qwen3-06b-rke2', modelService: 'ms-qwen3-06b-rke2' },
      gateway: {
        name: 'infra-qwen3-06b-rke2-inference-gateway',
        service: 'infra-qwen3-06b-rke2-inference-gateway-istio',
        host: 'infra-qwen3-06b-rke2-inference-gateway-istio.llm-d-qwen3-06b-rke2.svc.cluster.local',
        port: 80,
        parametersConfigMap: 'infra-qwen3-06b-rke2-inference-gateway',
        alias: 'llmd-gateway-qwen3-06b-rke2',
      },
      httpRoute: 'llm-d-qwen3-06b-rke2',
      inferencePool: { name: 'gaie-qwen3-06b-rke2', epp: 'gaie-qwen3-06b-rke2-epp', eppHost: 'gaie-qwen3-06b-rke2-epp.llm-d-qwen3-06b-rke2.svc.cluster.local' },
      modelServer: {
        decodeDeployment: 'ms-qwen3-06b-rke2-llm-d-modelservice-decode',
        podLabels: { 'llm-d.ai/inference-serving': 'true', 'llm-d.ai/model': 'qwen3-06b-rke2' },
        servedModelName: 'Qwen/Qwen3-0.6B',
        port: 8200,
        servicePort: 8000,
        decodeReplicas: 1,
        prefillReplicas: 0,
      },
      embeddingService: null,
      storage: {
        pvc: 'qwen3-06b-rke2-model',
        pv: 'qwen3-06b-rke2-model-pv',
        job: 'qwen3-06b-rke2-model-pull',
        marker: '/model-cache/.pulled',
        storageClass: 'hostpath',
        hostPath: { node: 'gpu-node-1', dir: '/var/lib/hostpath/models/qwen3-06b-rke2' },
        image: 'harbor.example.com/images-infra/oras-project/oras:v1.3.1',
      },
      nodeSelector: { workload: 'gpu' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
      pullSecret: 'harbor-creds',
      charts: {
        infra: { chart: 'llm-d-infra', version: 'v1.3.10', repo: 'https://llm-d-incubation.github.io/llm-d-infra/' },
        gaie: { chart: 'oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool', version: 'v1.2.0' },
        modelService: { chart: 'llm-d-modelservice', version: 'v0.4.12', repo: 'https://llm-d-incubation.github.io/llm-d-modelservice/' },
      },
    });
  });

  it('wires the three releases together as DESIGN §6 says', () => {
    expect(qwen!.values.gaie).toMatchObject({
      provider: { name: 'istio', istio: { destinationRule: { host: qwen!.inferencePool.eppHost } } },
      inferencePool: { modelServers: { matchLabels: qwen!.modelServer.podLabels }, targetPorts: [{ number: 8000 }] },
    });
    expect(qwen!.values.modelService).toMatchObject({
      modelArtifacts: { uri: 'pvc+hf://qwen3-06b-rke2-model/hub/Qwen/Qwen3-0.6B', labels: qwen!.modelServer.podLabels, readOnly: false },
      decode: { tolerations: qwen!.tolerations, extraConfig: { imagePullSecrets: [{ name: 'harbor-creds' }] } },
    });
    expect(qwen!.values.infra).toMatchObject({ gateway: { gatewayClassName: 'istio', destinationRule: { enabled: false }, gatewayParameters: { enabled: true } } });
    expect(qwen!.patches).toEqual({
      infra: [expect.objectContaining({ kind: 'gateway-pod-placement', configMap: 'infra-qwen3-06b-rke2-inference-gateway', imagePullSecrets: [{ name: 'harbor-creds' }] })],
      gaie: [
        { kind: 'service-account-pull-secret', serviceAccount: 'gaie-qwen3-06b-rke2-epp', imagePullSecrets: [{ name: 'harbor-creds' }] },
        // The EPP Deployment is awaited for the model's readyTimeout too, not Pulumi's 10-minute default.
        { kind: 'await-timeout', deployment: 'gaie-qwen3-06b-rke2-epp', seconds: 1800 },
      ],
      modelService: [
        { kind: 'await-timeout', deployment: 'ms-qwen3-06b-rke2-llm-d-modelservice-decode', seconds: 1800 },
        { kind: 'await-timeout', deployment: 'ms-qwen3-06b-rke2-llm-d-modelservice-prefill', seconds: 1800 },
      ],
    });
    expect(qwen!.readyTimeout).toEqual({ text: '30m', seconds: 1800 });
    // The EPP tolerates the GPU taint and runs where the model does (no controlNodeSelector here).
    expect(qwen!.values.gaie).toMatchObject({
      inferenceExtension: {
        tolerations: qwen!.tolerations,
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'workload', operator: 'In', values: ['gpu'] }] }] } } },
      },
    });
    expect(qwen!.controlNodeSelector).toEqual({ workload: 'gpu' });
    expect(qwen!.gateway).toMatchObject({ routeNamespaces: 'Same', accessLogging: true });
  });

  it('never enables two DestinationRules for one EPP host', () => {
    for (const model of plan.models as LlmdModelPlan[]) {
      expect((model.values.infra.gateway as { destinationRule: { enabled: boolean } }).destinationRule.enabled).toBe(false);
      expect((model.values.gaie.provider as { name: string }).name).toBe('istio');
    }
  });

  it('gives the embedder a Service on 8200 instead of a route', () => {
    expect(bge).toMatchObject({
      category: 'embedder',
      slug: 'bge-small-rke2',
      httpRoute: null,
      embeddingService: { name: 'ms-bge-small-rke2-embeddings', port: 8200, targetPort: 8200, host: 'ms-bge-small-rke2-embeddings.llm-d-bge-small-rke2.svc.cluster.local' },
      storage: { pv: null, pvc: 'bge-small-rke2-model', storageClass: 'hostpath' },
    });
  });

  it('lists every image, all from Harbor, with no warnings', () => {
    expect(plan.images.map((i) => i.image)).toEqual([
      'harbor.example.com/images-infra/oras-project/oras:v1.3.1',
      'harbor.example.com/images-llm-d/gateway-api-inference-extension/epp:v1.2.0',
      'harbor.example.com/images-llm-d/llm-d/llm-d-cuda:v0.4.0',
      'harbor.example.com/images-llm-d/llm-d/llm-d-routing-sidecar:v0.4.0',
      'harbor.example.com/images-llm-d/michaelf34/infinity:0.0.77-cpu',
    ]);
    // Besides the one that the stack is on the superseded 2026-02 set (tested in upstream.test.ts).
    expect(otherThanUpstream(plan.warnings)).toEqual([]);
  });
});

describe('the other example stacks', () => {
  it('cloud: models from the Hub, no storage, no pull secret, the ambient kubeconfig', () => {
    const plan = planOf('cloud');
    expect(plan.kubeconfig).toBeNull();
    expect(plan.harbor).toBeNull();
    for (const model of plan.models as LlmdModelPlan[]) {
      expect(model.storage).toBeNull();
      expect(model.pullSecret).toBeNull();
      // No pull secret to add to the EPP's ServiceAccount; only the EPP's await timeout.
      expect(model.patches.gaie).toEqual([{ kind: 'await-timeout', deployment: model.inferencePool.epp, seconds: 1800 }]);
    }
    // Besides the one that the stack is on the superseded 2026-02 set (tested in upstream.test.ts).
    expect(otherThanUpstream(plan.warnings)).toEqual([]);
  });

  it('kind: two simulated models, no GPU toleration, no placement', () => {
    const plan = planOf('kind');
    expect(plan.models.map((m) => [m.name, m.slug])).toEqual([
      ['Sim', 'sim'],
      ['SimEmbeddings', 'sim-embed'],
    ]);
    expect((plan.models[0] as LlmdModelPlan).patches.infra).toEqual([]);
    expect((plan.models[1] as LlmdModelPlan).embeddingService).toMatchObject({ port: 8200, targetPort: 8200 });
  });
});

describe('planDeployment', () => {
  const stackText = (models: string, extra = '') => `config:\n  app-serving:cloudProvider: cloud\n${extra}  app-serving:models:\n${models}`;

  it('collects the problems of every model in one StackError', () => {
    const dir = tempRepo({
      ...llmdModel('generative', 'A', 'a', 'modelArtifacts:\n  labels:\n    llm-d.ai/model: wrong\n'),
      ...llmdModel('generative', 'B', 'b', '', 'provider:\n  name: gke\n'),
    });
    try {
      planDeployment(parseStackFile(stackText('    generative:\n      - name: A\n      - name: B\n'), 'P.yaml'), join(dir, 'models'));
      expect.unreachable();
    } catch (error) {
      if (!isStackError(error)) throw error;
      expect(error.issues.map((i) => [i.code, i.path])).toEqual([
        ['values.conflict', 'modelArtifacts.labels["llm-d.ai/model"]'],
        ['values.conflict', 'provider.name'],
      ]);
    }
  });

  it('reports rule problems and model folder problems together when the loader left the rules to it', () => {
    const dir = tempRepo({});
    const text = 'config:\n  app-serving:cloudProvider: on-prem\n  app-serving:models:\n    generative:\n      - name: Missing\n';
    try {
      planDeployment(parseStackFile(text, 'P.yaml', 'p', { checkRules: false }), join(dir, 'models'));
      expect.unreachable();
    } catch (error) {
      if (!isStackError(error)) throw error;
      expect(error.issues.map((i) => i.code).sort()).toEqual([...Array(4).fill('config.missing-credential'), 'model.not-found']);
    }
  });

  it('reports a plain-text harborToken and the missing kubeconfig in one pass (and a missing model folder too)', () => {
    const dir = tempRepo({});
    const text = [
      'config:',
      '  app-serving:cloudProvider: on-prem',
      '  app-serving:harborHostname: harbor.local',
      '  app-serving:harborUser: robot$x',
      '  app-serving:harborToken: plain-text-robot-secret',
      '  app-serving:models:',
      '    generative:',
      '      - name: Missing',
      '',
    ].join('\n');
    try {
      planDeployment(parseStackFile(text, 'P.yaml', 'p', { checkRules: false }), join(dir, 'models'));
      expect.unreachable();
    } catch (error) {
      if (!isStackError(error)) throw error;
      expect(error.issues.map((i) => [i.code, i.path, i.line])).toEqual([
        ['config.missing-credential', 'kubeconfig', 1],
        ['config.not-secret', 'harborToken', 5],
        ['model.not-found', 'models.generative[0].name', 8],
      ]);
      expect(error.message).not.toContain('plain-text-robot-secret');
    }
  });

  it('rejects two models in one namespace', () => {
    const dir = tempRepo({ ...llmdModel('generative', 'A', 'a'), ...llmdModel('generative', 'B', 'b') });
    try {
      planDeployment(parseStackFile(stackText('    generative:\n      - name: A\n        nameSpace: shared\n      - name: B\n        nameSpace: shared\n'), 'P.yaml'), join(dir, 'models'));
      expect.unreachable();
    } catch (error) {
      if (!isStackError(error)) throw error;
      expect(error.issues).toEqual([
        expect.objectContaining({ code: 'name.duplicate', path: 'models.generative[1].nameSpace', message: 'namespace "shared" is already used by generative/A; every model needs its own namespace' }),
      ]);
    }
  });

  it('reports a name override that breaks a limit, with its line', () => {
    const dir = tempRepo(llmdModel('generative', 'A', 'a'));
    try {
      planDeployment(parseStackFile(stackText(`    generative:\n      - name: A\n        releaseName: ${'r'.repeat(40)}\n`), 'P.yaml'), join(dir, 'models'));
      expect.unreachable();
    } catch (error) {
      if (!isStackError(error)) throw error;
      expect(error.issues).toEqual([expect.objectContaining({ code: 'name.too-long', path: 'models.generative[0].releaseName', line: 6 })]);
    }
  });

  it('warns when no model is enabled', () => {
    const dir = tempRepo({});
    const plan = planDeployment(parseStackFile(stackText('    generative: []\n'), 'P.yaml'), join(dir, 'models'));
    expect(plan.models).toEqual([]);
    expect(plan.warnings.map((w) => w.code)).toEqual(['warning.no-models']);
  });

  it('warns about unpinned images and, on-prem, images outside Harbor', () => {
    const dir = tempRepo(llmdModel('generative', 'A', 'a', 'decode:\n  containers:\n    - name: vllm\n      image: vllm/vllm-openai:latest\n'));
    const onPrem = `config:\n  app-serving:cloudProvider: on-prem\n  app-serving:kubeconfig: k\n  app-serving:harborHostname: harbor.local\n  app-serving:harborUser: u\n  app-serving:harborToken:\n    secure: x\n  app-serving:models:\n    generative:\n      - name: A\n`;
    const plan = planDeployment(parseStackFile(onPrem, 'P.yaml'), join(dir, 'models'));
    expect(otherThanUpstream(plan.warnings).map((w) => [w.code, w.message.split(' ')[0]])).toEqual([
      ['warning.image-unpinned', 'ghcr.io/llm-d/llm-d-routing-sidecar:latest'],
      ['warning.image-not-mirrored', 'ghcr.io/llm-d/llm-d-routing-sidecar:latest'],
      ['warning.image-not-mirrored', 'registry.k8s.io/gateway-api-inference-extension/epp:v1.2.0'],
      ['warning.image-unpinned', 'vllm/vllm-openai:latest'],
      ['warning.image-not-mirrored', 'vllm/vllm-openai:latest'],
    ]);
  });
});

describe('chartRefs', () => {
  const locate = (code: IssueCode, path: readonly (string | number)[], message: string): Issue => ({ code, path: path.join('.'), message });

  it('uses the pinned charts by default', () => {
    expect(chartRefs({ charts: undefined, locate }).gaie).toEqual({ chart: 'oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool', version: 'v1.2.0' });
  });

  it('takes a mirror and warns about a version it did not check', () => {
    const warnings: Issue[] = [];
    const refs = chartRefs({ charts: { gaie: { chart: 'oci://harbor.local/charts/inferencepool' }, modelService: { version: 'v0.4.13' } }, locate }, warnings);
    expect(refs.gaie).toEqual({ chart: 'oci://harbor.local/charts/inferencepool', version: 'v1.2.0' });
    expect(refs.modelService).toEqual({ chart: 'llm-d-modelservice', version: 'v0.4.13', repo: 'https://llm-d-incubation.github.io/llm-d-modelservice/' });
    expect(warnings).toEqual([expect.objectContaining({ code: 'warning.chart-version', path: 'charts.modelService.version' })]);
  });
});

describe('expandHome', () => {
  it('expands a leading ~', () => {
    expect(expandHome('~/.kube/config', '/home/u')).toBe('/home/u/.kube/config');
    expect(expandHome('~', '/home/u')).toBe('/home/u');
    expect(expandHome('/etc/k', '/home/u')).toBe('/etc/k');
  });
});

describe('withModelFolderIssues: one pass over a stack file with problems and its model folders', () => {
  it('adds the problems of the model folders of the entries that parsed, and not twice the same key', () => {
    const dir = tempRepo({
      'Pulumi.s.yaml':
        'config:\n  app-serving:cloudProvider: cloud\n  app-serving:harborToken: plain\n  app-serving:models:\n    generative:\n      - name: A\n        modelSource: { storageSize: 40 GB }\n      - name: B\n',
      ...llmdModel('generative', 'A', 'a', 'modelArtifacts:\n  labels:\n    llm-d.ai/model: other\n'),
      ...llmdModel('generative', 'B', 'b', 'modelArtifacts:\n  labels:\n    llm-d.ai/model: other\n'),
    });
    let error: unknown;
    try {
      loadStackFile(join(dir, 'Pulumi.s.yaml'), 'Pulumi.s.yaml', { checkRules: false });
    } catch (e) {
      error = e;
    }
    if (!isStackError(error)) throw new Error('expected a StackError');
    const all = withModelFolderIssues(error, join(dir, 'models'));
    expect(all.issues.map((i) => [i.code, i.file?.replace(/^.*\/models\//, 'models/'), i.path])).toEqual([
      ['values.conflict', 'models/generative/B/ms-b/values.yaml', 'modelArtifacts.labels["llm-d.ai/model"]'],
      // A token without its registry and user: reported with the token's own problem, one pass.
      ['config.missing-credential', 'Pulumi.s.yaml', 'harborHostname'],
      ['config.missing-credential', 'Pulumi.s.yaml', 'harborUser'],
      ['config.not-secret', 'Pulumi.s.yaml', 'harborToken'],
      ['config.invalid', 'Pulumi.s.yaml', 'models.generative[0].modelSource.storageSize'],
    ]);
  });
});
