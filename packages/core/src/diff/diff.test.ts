import { describe, expect, it } from 'vitest';
import { diffDeployments, type DiffResource, type DiffSide } from './deployment.ts';
import { resourceIdentity, TYPE_ALIASES } from './identity.ts';
import { FORCE_NEW_FIELDS, replaceVerdict } from './replace.ts';
import { stackSecretFingerprints } from './secrets.ts';
import { diffValues, pathCovers, publicChange } from './values.ts';
import type { DeploymentPlan, ModelPlan } from '../plan.ts';

const changes = (a: unknown, b: unknown) => diffValues(a, b).map(publicChange);

describe('diffValues', () => {
  it('lists changes by key path, keys sorted, lists of maps item by item, lists of scalars whole', () => {
    const before = { decode: { containers: [{ name: 'vllm', image: 'a:1', args: ['--x', '1'] }], replicas: 1 }, gone: { x: 1 }, 'llm-d.ai/model': 'a' };
    const after = { decode: { containers: [{ name: 'vllm', image: 'a:2', args: ['--x', '2'] }, { name: 'side' }], replicas: 1 }, added: true, 'llm-d.ai/model': 'b' };
    expect(changes(before, after)).toEqual([
      { path: 'added', change: 'added', new: true },
      { path: 'decode.containers[0].args', change: 'changed', old: ['--x', '1'], new: ['--x', '2'] },
      { path: 'decode.containers[0].image', change: 'changed', old: 'a:1', new: 'a:2' },
      { path: 'decode.containers[1]', change: 'added', new: { name: 'side' } },
      { path: 'gone', change: 'removed', old: { x: 1 } },
      { path: '["llm-d.ai/model"]', change: 'changed', old: 'a', new: 'b' },
    ]);
    expect(changes({ a: [1] }, { a: [1] })).toEqual([]);
  });

  it('never shows a secret, digest or not: only that it changed', () => {
    expect(changes({ stringData: '[secret:aa11]' }, { stringData: '[secret:bb22]' })).toEqual([{ path: 'stringData', change: 'changed', secret: true }]);
    expect(changes({}, { s: { token: '[secret:cc33]', user: 'u' } })).toEqual([{ path: 's', change: 'added', new: { token: '[secret]', user: 'u' } }]);
    expect(changes({ a: '[secret:aa11]' }, { a: '[secret:aa11]' })).toEqual([]);
  });
});

describe('pathCovers', () => {
  it('matches a field, what is under it, and a whole object replaced above it', () => {
    expect(pathCovers('spec.template', ['spec', 'template', 'spec', 'containers', 0, 'image'])).toBe(true);
    expect(pathCovers('spec.template', ['spec'])).toBe(true);
    expect(pathCovers('spec.template', ['spec', 'backoffLimit'])).toBe(false);
    expect(pathCovers('.spec.containers[*].image', ['spec', 'containers', 3, 'image'])).toBe(true);
    expect(pathCovers('metadata.labels["a.b/c"]', ['metadata', 'labels', 'a.b/c'])).toBe(true);
  });
});

describe('replaceVerdict (pulumi-kubernetes force-new fields)', () => {
  const verdict = (type: string, inputs: Record<string, unknown>, before: unknown, after: unknown, extra: { replaceOnChanges?: string[]; secretMutable?: boolean } = {}) =>
    replaceVerdict({ type, inputs, ...extra }, diffValues(before, after));

  it('replaces a Job whose template changes (replaceOnChanges and the provider rule), updates its backoffLimit', () => {
    const job = { apiVersion: 'batch/v1', kind: 'Job' };
    const tmpl = (image: string) => ({ ...job, spec: { backoffLimit: 3, template: { spec: { containers: [{ image }] } } } });
    expect(verdict('kubernetes:batch/v1:Job', job, tmpl('a'), tmpl('b'), { replaceOnChanges: ['spec.template'] }).reasons).toEqual([
      'spec.template changed, and the resource has replaceOnChanges: [spec.template]',
      'spec.template changed: immutable in a Job',
    ]);
    expect(verdict('kubernetes:batch/v1:Job', job, { spec: { backoffLimit: 3 } }, { spec: { backoffLimit: 4 } }).reasons).toEqual([]);
  });

  it('replaces an object renamed or moved, a PV whose volume source changes, a PVC whose class changes, a Service whose clusterIP changes', () => {
    expect(verdict('kubernetes:core/v1:Namespace', { kind: 'Namespace' }, { metadata: { name: 'a' } }, { metadata: { name: 'b' } }).reasons).toEqual([
      'metadata.name changed ("a" → "b"): Kubernetes cannot rename or move an object',
    ]);
    expect(verdict('kubernetes:core/v1:PersistentVolume', { apiVersion: 'v1', kind: 'PersistentVolume' }, { spec: { hostPath: { path: '/a' } } }, { spec: { hostPath: { path: '/b' } } }).reasons).toEqual([
      'spec.hostPath changed: immutable in a PersistentVolume',
    ]);
    expect(verdict('kubernetes:core/v1:PersistentVolumeClaim', { apiVersion: 'v1', kind: 'PersistentVolumeClaim' }, { spec: { storageClassName: 'a' } }, { spec: { storageClassName: 'b' } }).reasons).toEqual([
      'spec.storageClassName changed: immutable in a PersistentVolumeClaim',
    ]);
    expect(verdict('kubernetes:core/v1:Service', { apiVersion: 'v1', kind: 'Service' }, { spec: { clusterIP: 'None' } }, { spec: {} }).reasons).toEqual([
      'spec.clusterIP changed: immutable in a Service',
    ]);
  });

  it('updates a PVC that grows, with the note that Kubernetes may refuse it', () => {
    const pvc = (size: string) => ({ spec: { resources: { requests: { storage: size } } } });
    expect(verdict('kubernetes:core/v1:PersistentVolumeClaim', { apiVersion: 'v1', kind: 'PersistentVolumeClaim' }, pvc('10Gi'), pvc('20Gi'))).toEqual({
      reasons: [],
      notes: ['a claim can only grow, and only when its StorageClass allows volume expansion: Kubernetes rejects any other size change'],
    });
  });

  it('replaces a Secret whose data changes unless the provider treats Secrets as mutable', () => {
    const secret = { apiVersion: 'v1', kind: 'Secret' };
    expect(verdict('kubernetes:core/v1:Secret', secret, { stringData: '[secret:01]' }, { stringData: '[secret:02]' }).reasons).toEqual([
      'stringData changed: the Kubernetes provider replaces a Secret whose data changes (unless it runs with enableSecretMutable)',
    ]);
    expect(verdict('kubernetes:core/v1:Secret', secret, { stringData: '[secret:01]' }, { stringData: '[secret:02]' }, { secretMutable: true }).reasons).toEqual([]);
  });

  it('replaces the objects of a Helm release renamed or moved; updates one whose values change', () => {
    expect(verdict('kubernetes:helm.sh/v4:Chart', {}, { name: 'ms-a', values: { x: 1 } }, { name: 'ms-b', values: { x: 1 } }).reasons).toEqual([
      'release renamed ("ms-a" → "ms-b"): every object of the chart is created under its new name and the old ones are deleted',
    ]);
    expect(verdict('kubernetes:helm.sh/v4:Chart', {}, { name: 'ms-a', values: { x: 1 } }, { name: 'ms-a', values: { x: 2 } }).reasons).toEqual([]);
  });

  it('carries the provider facts for every kind a stack or its charts create', () => {
    expect(Object.keys(FORCE_NEW_FIELDS).sort()).toEqual([
      '/PersistentVolume',
      '/PersistentVolumeClaim',
      '/ResourceQuota',
      '/Service',
      'apps/DaemonSet',
      'apps/Deployment',
      'apps/StatefulSet',
      'batch/Job',
      'rbac.authorization.k8s.io/ClusterRoleBinding',
      'rbac.authorization.k8s.io/RoleBinding',
      'storage.k8s.io/StorageClass',
    ]);
  });
});

describe('stackSecretFingerprints', () => {
  it('fingerprints each secure value, never returns it, and ignores other namespaces and plain values', () => {
    const text = 'config:\n  app-serving:harborToken:\n    secure: v1:abc\n  hfToken:\n    secure: v1:def\n  app-serving:kubeconfig: ~/.kube/x\n  aws:token:\n    secure: v1:zzz\n';
    const fp = stackSecretFingerprints(text);
    expect(Object.keys(fp).sort()).toEqual(['harborToken', 'hfToken']);
    expect(fp.harborToken).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(fp)).not.toContain('v1:abc');
    expect(stackSecretFingerprints(text.replace('v1:abc', 'v1:abd')).harborToken).not.toBe(fp.harborToken);
    expect(stackSecretFingerprints('config: [')).toEqual({});
  });
});

/** A minimal llm-d model plan: the diff reads name, category, platform, namespace, releases, storage, folder and images. */
function model(name: string, extra: Partial<Record<string, unknown>> = {}): ModelPlan {
  return {
    platform: 'llm-d',
    name,
    category: 'generative',
    slug: name.toLowerCase(),
    folder: `models/generative/${name}`,
    namespace: `llm-d-${name.toLowerCase()}`,
    releases: { infra: `infra-${name.toLowerCase()}`, gaie: `gaie-${name.toLowerCase()}`, modelService: `ms-${name.toLowerCase()}` },
    storage: null,
    images: [{ image: 'img:1', where: `models/generative/${name}/ms/values.yaml: decode.containers[0].image` }],
    ...extra,
  } as unknown as ModelPlan;
}

function side(models: ModelPlan[], resources: DiffResource[], secrets?: Record<string, string>): DiffSide {
  return { plan: { models } as unknown as DeploymentPlan, resources, ...(secrets && { secrets }) };
}

const chart = (model: string, values: unknown, name = `ms-${model.toLowerCase()}`): DiffResource => ({
  urn: `urn:${model}:chart`,
  type: 'kubernetes:helm.sh/v4:Chart',
  name: `app-${model}-model-service-chart`,
  model,
  inputs: { chart: 'llm-d-modelservice', name, namespace: `llm-d-${model.toLowerCase()}`, values },
});
const namespace = (model: string, name = `llm-d-${model.toLowerCase()}`): DiffResource => ({
  urn: `urn:${model}:ns`,
  type: 'kubernetes:core/v1:Namespace',
  name: `app-${model}-namespace`,
  model,
  inputs: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
});
const component = (model: string): DiffResource => ({ urn: `urn:${model}`, type: 'app-serving:llmd:LlmdModel', name: `app-${model}`, model, inputs: {} });

describe('diffDeployments', () => {
  it('reports nothing for identical revisions', () => {
    const s = side([model('A')], [component('A'), namespace('A'), chart('A', { x: 1 })]);
    expect(diffDeployments(s, s)).toEqual({
      changed: false,
      summary: { create: 0, update: 0, replace: 0, delete: 0, unchangedModels: 1 },
      models: [],
      stack: { resources: [], secrets: [] },
      warnings: [],
    });
  });

  it('shows a release values change by key path, the image change, and that the model pods restart', () => {
    const values = (tag: string, replicas: number) => ({ decode: { replicas, containers: [{ image: `img:${tag}` }] } });
    const newModel = model('A', { images: [{ image: 'img:2', where: 'models/generative/A/ms/values.yaml: decode.containers[0].image' }] });
    const diff = diffDeployments(side([model('A')], [namespace('A'), chart('A', values('1', 1))]), side([newModel], [namespace('A'), chart('A', values('2', 2))]));
    expect(diff.summary).toEqual({ create: 0, update: 1, replace: 0, delete: 0, unchangedModels: 0 });
    expect(diff.models).toEqual([
      {
        name: 'A',
        category: 'generative',
        platform: 'llm-d',
        status: 'changed',
        namespace: 'llm-d-a',
        releases: [
          {
            release: 'ms-a',
            chart: 'llm-d-modelservice',
            changes: [
              { path: 'decode.containers[0].image', change: 'changed', old: 'img:1', new: 'img:2' },
              { path: 'decode.replicas', change: 'changed', old: 1, new: 2 },
            ],
          },
        ],
        images: { added: [], removed: [], changed: [{ old: 'img:1', new: 'img:2', where: 'models/generative/A/ms/values.yaml: decode.containers[0].image' }] },
        resources: [{ action: 'update', type: 'kubernetes:helm.sh/v4:Chart', name: 'app-A-model-service-chart', object: 'release llm-d-a/ms-a (llm-d-modelservice)', reasons: [], notes: [], changes: [] }],
      },
    ]);
    expect(diff.warnings).toEqual([
      { code: 'pods.restart', model: 'A', message: "the model server's pods change (decode.containers[0].image): they restart (a rolling update; new pods may wait for a free GPU)" },
    ]);
  });

  it('does not warn of a restart when only replicas change', () => {
    const diff = diffDeployments(side([model('A')], [chart('A', { decode: { replicas: 1 } })]), side([model('A')], [chart('A', { decode: { replicas: 3 } })]));
    expect(diff.summary.update).toBe(1);
    expect(diff.warnings).toEqual([]);
  });

  it('creates an added model, deletes a removed one and warns of the removal', () => {
    const diff = diffDeployments(side([model('A')], [component('A'), namespace('A'), chart('A', {})]), side([model('B')], [component('B'), namespace('B')]));
    expect(diff.summary).toEqual({ create: 1, update: 0, replace: 0, delete: 2, unchangedModels: 0 });
    expect(diff.models.map((m) => [m.name, m.status, m.resources.map((r) => `${r.action} ${r.object}`), m.images])).toEqual([
      ['A', 'removed', ['delete Namespace llm-d-a', 'delete release llm-d-a/ms-a (llm-d-modelservice)'], { added: [], removed: ['img:1'], changed: [] }],
      ['B', 'added', ['create Namespace llm-d-b'], { added: ['img:1'], removed: [], changed: [] }],
    ]);
    expect(diff.warnings).toEqual([{ code: 'model.removed', model: 'A', message: 'removed: its endpoint, model pods and Kubernetes objects are deleted (2 resources)' }]);
  });

  it('replaces the namespace of a model whose namespace is renamed, and warns', () => {
    const diff = diffDeployments(side([model('A')], [namespace('A')]), side([model('A', { namespace: 'team-a' })], [namespace('A', 'team-a')]));
    expect(diff.models[0]!.resources).toEqual([
      {
        action: 'replace',
        type: 'kubernetes:core/v1:Namespace',
        name: 'app-A-namespace',
        object: 'Namespace team-a',
        reasons: ['metadata.name changed ("llm-d-a" → "team-a"): Kubernetes cannot rename or move an object'],
        notes: [],
        changes: [{ path: 'metadata.name', change: 'changed', old: 'llm-d-a', new: 'team-a' }],
      },
    ]);
    expect(diff.warnings.map((w) => w.code)).toEqual(['namespace.renamed']);
  });

  it('warns of new weights, reports a changed secret without its value, and marks delete-before-replace', () => {
    const storage = (ref: string) => ({ storage: { source: { kind: 'oras', ref, registry: 'h' }, modelUri: 'hub/m' } });
    const job = (ref: string): DiffResource => ({
      urn: 'urn:A:job',
      type: 'kubernetes:batch/v1:Job',
      name: 'app-A-storage-pull-job',
      model: 'A',
      inputs: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'a-model-pull', namespace: 'llm-d-a' }, spec: { template: { spec: { containers: [{ env: [{ name: 'MODEL_REF', value: ref }] }] } } } },
      options: { replaceOnChanges: ['spec.template'], deleteBeforeReplace: true },
    });
    const diff = diffDeployments(side([model('A', storage('h/m:1'))], [job('h/m:1')], { harborToken: 'aaa' }), side([model('A', storage('h/m:2'))], [job('h/m:2')], { harborToken: 'bbb' }));
    expect(diff.changed).toBe(true);
    expect(diff.stack.secrets).toEqual([{ key: 'harborToken', change: 'changed' }]);
    const [resource] = diff.models[0]!.resources;
    expect(resource).toMatchObject({ action: 'replace', object: 'Job llm-d-a/a-model-pull', deleteBeforeReplace: true });
    expect(diff.warnings.map((w) => [w.code, w.message])).toEqual([
      ['weights.changed', 'new weights (h/m:1 (hub/m) → h/m:2 (hub/m)): the pull Job runs again, then the model pods restart'],
      ['secret.changed', 'harborToken is changed in the stack file (a secret: its value is never shown; a re-encrypted but equal value also counts as changed)'],
    ]);
    expect(JSON.stringify(diff)).not.toContain('aaa');
  });
});

describe('adapters (features/adapters)', () => {
  const adapter = (name: string, ref: string) => ({ name, parent: 'org/m', source: { kind: 'oras', ref }, path: `/model-cache/adapters/${name}` });
  const server = (args: string[]): DiffResource => ({
    urn: 'urn:A:server',
    type: 'kubernetes:apps/v1:Deployment',
    name: 'app-A-model-server',
    model: 'A',
    inputs: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'server-a', namespace: 'llm-d-a' }, spec: { template: { spec: { containers: [{ args }] } } } },
  });
  const routerModel = (adapters: unknown[], lora: unknown) =>
    model('A', { upstream: '2026-08', modelServer: { decodeDeployment: 'server-a' }, adapters, lora });

  it('warns of an added and a removed adapter, and of a new source: the server restarts (after the pull for a new artifact)', () => {
    const before = routerModel([adapter('sql', 'h/sql:1'), adapter('old', 'h/old:1')], { maxRank: 16, maxLoras: 2, maxCpuLoras: 2 });
    const after = routerModel([adapter('sql', 'h/sql:2'), adapter('chat', 'h/chat:1')], { maxRank: 16, maxLoras: 2, maxCpuLoras: 2 });
    const diff = diffDeployments(
      side([before], [server(['--lora-modules', 'sql=/model-cache/adapters/sql', 'old=/model-cache/adapters/old'])]),
      side([after], [server(['--lora-modules', 'sql=/model-cache/adapters/sql', 'chat=/model-cache/adapters/chat'])]),
    );
    expect(diff.warnings.map((w) => [w.code, w.message])).toEqual([
      [
        'adapters.changed',
        'adapters added chat (h/chat:1); removed old; new source for sql (h/sql:1 → h/sql:2): the model server\'s arguments (--lora-modules) change and its pods restart (a rolling update), once the pull Job has fetched the new adapters; clients of old get "model not found" from then on',
      ],
      ['pods.restart', "the model server's pods change (spec.template.spec.containers[0].args): they restart (a rolling update; new pods may wait for a free GPU)"],
    ]);
  });

  it('says nothing of adapters when they are the same', () => {
    const same = routerModel([adapter('sql', 'h/sql:1')], { maxRank: 16, maxLoras: 1, maxCpuLoras: 1 });
    const diff = diffDeployments(side([same], [server(['a'])]), side([same], [server(['a'])]));
    expect(diff.warnings).toEqual([]);
  });
});

describe('resource identity across sets of upstream versions (the components\' aliases)', () => {
  const urn = (types: string, name: string) => `urn:pulumi:prod::app-serving::app-serving:index:AppServing$app-serving:llmd:LlmdModel$${types}::${name}`;

  it('is the URN with every aliased type replaced, the ancestors\' included: a child keeps its identity through its parent\'s alias', () => {
    expect(resourceIdentity(urn('app-serving:llmd:RouterGateway$kubernetes:core/v1:Service', 'app-serving-a-infra-gateway-alias'))).toBe(
      urn('app-serving:llmd:LlmdInfra$kubernetes:core/v1:Service', 'app-serving-a-infra-gateway-alias'),
    );
    expect(resourceIdentity('urn:pulumi:s::p::app-serving:kserve:KserveModel$kubernetes:serving.kserve.io/v1alpha2:LLMInferenceService::x')).toBe(
      'urn:pulumi:s::p::app-serving:kserve:KserveModel$kubernetes:serving.kserve.io/v1alpha1:LLMInferenceService::x',
    );
    expect(resourceIdentity(urn('app-serving:llmd:ModelServer$kubernetes:apps/v1:Deployment', 'd'))).toBe(urn('app-serving:llmd:ModelServer$kubernetes:apps/v1:Deployment', 'd'));
    expect(resourceIdentity('not-a-urn')).toBe('not-a-urn');
  });

  it('lists the aliases the components declare', () => {
    expect(TYPE_ALIASES).toEqual({
      'app-serving:llmd:RouterGateway': 'app-serving:llmd:LlmdInfra',
      'kubernetes:serving.kserve.io/v1alpha2:LLMInferenceService': 'kubernetes:serving.kserve.io/v1alpha1:LLMInferenceService',
      'kubernetes:serving.kserve.io/v1alpha2:LLMInferenceServiceConfig': 'kubernetes:serving.kserve.io/v1alpha1:LLMInferenceServiceConfig',
    });
  });
});

describe('diffDeployments: a model moving from 2026-02 to 2026-08', () => {
  const root = 'urn:pulumi:prod::app-serving::app-serving:index:AppServing$app-serving:llmd:LlmdModel';
  const service = (parent: string, name: string, externalName: string): DiffResource => ({
    urn: `${root}$${parent}$kubernetes:core/v1:Service::app-serving-e-${name}`,
    type: 'kubernetes:core/v1:Service',
    name: `app-serving-e-${name}`,
    model: 'E',
    inputs: { apiVersion: 'v1', kind: 'Service', metadata: { name: externalName.split('|')[0], namespace: 'llm-d-e' }, spec: { type: 'ExternalName', externalName: externalName.split('|')[1] } },
  });
  const embeddings = (port: number): DiffResource => ({
    urn: `${root}$app-serving:llmd:EmbeddingService$kubernetes:core/v1:Service::app-serving-e-embeddings-service`,
    type: 'kubernetes:core/v1:Service',
    name: 'app-serving-e-embeddings-service',
    model: 'E',
    inputs: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ms-e-embeddings', namespace: 'llm-d-e' }, spec: { selector: { 'llm-d.ai/model': 'e' }, ports: [{ port: 8200, targetPort: port }] } },
  });
  const deployment = (name: string, selector: Record<string, string>): DiffResource => ({
    urn: `${root}$app-serving:llmd:ModelServer$kubernetes:apps/v1:Deployment::app-serving-e-model-server-deployment`,
    type: 'kubernetes:apps/v1:Deployment',
    name: 'app-serving-e-model-server-deployment',
    model: 'E',
    inputs: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'llm-d-e' }, spec: { selector: { matchLabels: selector }, template: { metadata: { labels: selector } } } },
  });
  const release = (name: string, chart: string): DiffResource => ({
    urn: `${root}$app-serving:llmd:ModelService$kubernetes:helm.sh/v4:Chart::app-serving-e-${name}`,
    type: 'kubernetes:helm.sh/v4:Chart',
    name: `app-serving-e-${name}`,
    model: 'E',
    inputs: { chart, name, namespace: 'llm-d-e', values: {} },
  });
  const common = {
    category: 'embedder',
    slug: 'e',
    namespace: 'llm-d-e',
    readyTimeout: { text: '30m', seconds: 1800 },
    embeddingService: { name: 'ms-e-embeddings', port: 8200, targetPort: 8200 },
  };
  const oldPlan = model('E', {
    ...common,
    upstream: '2026-02',
    gateway: { alias: 'llmd-gateway-e', service: 'infra-e-inference-gateway-istio' },
    modelServer: { decodeDeployment: 'ms-e-llm-d-modelservice-decode', decodeReplicas: 1 },
    images: [{ image: 'harbor.local/p/epp:v1.2.0', where: 'models/generative/E/gaie-e/values.yaml: inferenceExtension.image' }],
  });
  const newPlan = model('E', {
    ...common,
    upstream: '2026-08',
    gateway: { alias: 'llmd-gateway-e', service: 'router-e-gateway-istio' },
    modelServer: { decodeDeployment: 'server-e', decodeReplicas: 2 },
    images: [
      { image: 'harbor.local/p/llm-d/llm-d-router-endpoint-picker:v0.10.0', where: 'models/generative/E/router-e/values.yaml: router.epp.image' },
      { image: 'harbor.local/p/vllm/vllm-openai:v0.30.0', where: 'models/generative/E/server-e/values.yaml: image' },
    ],
  });
  const onPrem = (models: ModelPlan[], resources: DiffResource[]): DiffSide => ({ plan: { models, cloudProvider: 'on-prem', harbor: { hostname: 'harbor.local' } } as unknown as DeploymentPlan, resources });
  const before = [
    service('app-serving:llmd:LlmdInfra', 'infra-gateway-alias', 'llmd-gateway-e|infra-e-inference-gateway-istio.llm-d-e.svc.cluster.local'),
    embeddings(8200),
    release('ms-e', 'llm-d-modelservice'),
  ];
  const after = [
    service('app-serving:llmd:RouterGateway', 'infra-gateway-alias', 'llmd-gateway-e|router-e-gateway-istio.llm-d-e.svc.cluster.local'),
    embeddings(8200),
    deployment('server-e', { 'llm-d.ai/model': 'e' }),
  ];

  it('updates the alias Service in place (its parent\'s alias), keeps the embeddings Service, creates the new Deployment and deletes the old release', () => {
    const diff = diffDeployments(onPrem([oldPlan], before), onPrem([newPlan], after));
    expect(diff.summary).toEqual({ create: 1, update: 1, replace: 0, delete: 1, unchangedModels: 0 });
    expect(diff.models[0]!.resources.map((r) => `${r.action} ${r.object}`)).toEqual(['update Service llm-d-e/llmd-gateway-e', 'create Deployment llm-d-e/server-e', 'delete release llm-d-e/ms-e (llm-d-modelservice)']);
  });

  it('says which pods restart and whether the Services clients call keep working, and which images to mirror first', () => {
    const diff = diffDeployments(onPrem([oldPlan], before), onPrem([newPlan], after));
    expect(diff.warnings).toEqual([
      {
        code: 'pods.restart',
        model: 'E',
        message:
          'moves from the 2026-02 set to 2026-08: it is served by new pods — Deployment server-e (2 pods) is created and awaited (readyTimeout 30m) before the old release ms-e and its Deployment ms-e-llm-d-modelservice-decode are deleted (Pulumi deletes last), so the old pods serve until the new ones are ready; the new pods need room beside the old ones (their GPUs, CPU and memory), or they wait until the readyTimeout and pulumi up fails with the old pods still serving. ' +
          'The alias Service llmd-gateway-e is updated in place to point at router-e-gateway-istio after the new model server and Router are up: clients that call it keep working; clients that call infra-e-inference-gateway-istio directly must move to it (or to router-e-gateway-istio). ' +
          'The embeddings Service ms-e-embeddings keeps its name and selects the old and the new pods alike (the same model labels) until the old ones are deleted: its clients keep working',
      },
      {
        code: 'images.mirror-first',
        model: 'E',
        message:
          'images to mirror first: harbor.local/p/llm-d/llm-d-router-endpoint-picker:v0.10.0, harbor.local/p/vllm/vllm-openai:v0.30.0 — copy them into Harbor before pulumi up (`app-serving images` prints the commands); an air-gapped cluster cannot pull them from anywhere else, and the new pods would wait in ImagePullBackOff',
      },
    ]);
    // A cloud stack pulls from the registries themselves: nothing to mirror.
    const cloud = (models: ModelPlan[], resources: DiffResource[]): DiffSide => ({ plan: { models, cloudProvider: 'cloud', harbor: null } as unknown as DeploymentPlan, resources });
    expect(diffDeployments(cloud([oldPlan], before), cloud([newPlan], after)).warnings.map((w) => w.code)).toEqual(['pods.restart']);
  });

  it('a Deployment whose selector changes is replaced (Kubernetes rejects the change), the new pods warned of', () => {
    const moved = model('E', { ...common, upstream: '2026-08', gateway: newPlan.gateway, modelServer: { decodeDeployment: 'server-e', decodeReplicas: 1 } });
    const diff = diffDeployments(side([moved], [deployment('server-e', { 'llm-d.ai/model': 'e' })]), side([moved], [deployment('server-e', { 'llm-d.ai/model': 'e', 'llm-d.ai/role': 'decode' })]));
    expect(diff.models[0]!.resources.map((r) => [r.action, r.reasons])).toEqual([['replace', ['spec.selector changed: immutable in a Deployment']]]);
    expect(diff.warnings.map((w) => w.code)).toEqual(['pods.restart']);
  });
});
