/**
 * Our LLMInferenceService (v1alpha2) and LLMInferenceServiceConfig, merged with KServe v0.20.0's
 * well-known configs (../shared/upstream/current/kserve/v0.20.0-llmisvcconfig/) the way its
 * controller merges them, then turned into the workload, its Service, the managed HTTPRoute and the
 * status the way its controller builds them (test/kserve-controller.ts names each source). The
 * data-path tier applies the same objects and runs them for real (apps/data-path/test/kserve.test.ts).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../test/helpers.ts';
import {
  combineBaseRefsV020,
  httpRouteV020,
  statusV020,
  wellKnownConfigs,
  workloadDeploymentV020,
  workloadServiceV020,
  type KserveService,
} from '../../test/kserve-controller.ts';
import { loadStackFile } from '../config/load.ts';
import { envoyGatewayAccessManifests } from '../features/access/manifests.ts';
import { parseStackFile } from '../stack.ts';
import { llmInferenceServiceConfigManifest, llmInferenceServiceManifest } from '../manifests/kserve.ts';
import { planDeployment } from '../plan.ts';
import type { Values } from '../values/merge.ts';
import type { KserveModelPlan } from './plan.ts';

function merge(model: KserveModelPlan) {
  const service = { ...llmInferenceServiceManifest(model), metadata: { ...llmInferenceServiceManifest(model).metadata, uid: 'uid-1' } } as unknown as KserveService;
  const config = llmInferenceServiceConfigManifest(model);
  const configs = wellKnownConfigs('v0.20.0');
  const { spec, applied } = combineBaseRefsV020(service, (name) =>
    name === config.metadata.name ? { namespace: model.namespace, spec: config.spec } : configs.has(name) ? { namespace: 'kserve', spec: configs.get(name)! } : undefined,
  );
  return { service, spec, applied };
}

const DATA_PATH = join(REPO_ROOT, 'apps/data-path');
const byName = (items: unknown) => [...((items as Values[] | undefined) ?? [])].sort((a, b) => String(a.name).localeCompare(String(b.name)));
const matches = (selector: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>>) => Object.entries(selector).every(([k, v]) => labels[k] === v);

describe('KServe v0.20.0 and a model without the scheduler (apps/data-path stacks/Pulumi.kserve-datapath.yaml)', () => {
  const plan = planDeployment(loadStackFile(join(DATA_PATH, 'stacks/Pulumi.kserve-datapath.yaml'), 'Pulumi.kserve-datapath.yaml', { checkRules: false }), join(DATA_PATH, 'models'));
  const model = plan.models[0] as KserveModelPlan;
  const { service, spec, applied } = merge(model);
  const deployment = workloadDeploymentV020(service, spec) as any;
  const workloadService = workloadServiceV020(service, spec) as any;
  const route = httpRouteV020(service, spec, []) as any;
  const pod = deployment.spec.template;
  const main = pod.spec.containers.find((c: Values) => c.name === 'main');

  it('merges the route and template presets, then our config, and renders every placeholder', () => {
    expect(applied).toEqual([
      { name: 'kserve-config-llm-router-route', namespace: 'kserve', source: 'Preset' },
      { name: 'kserve-config-llm-template', namespace: 'kserve', source: 'Preset' },
      { name: model.config, namespace: model.namespace, source: 'UserRef' },
    ]);
    expect(model.wellKnownConfigs).toEqual(applied.filter((a) => a.source === 'Preset').map((a) => a.name));
    expect(JSON.stringify([deployment, workloadService, route])).not.toContain('{{');
  });

  it("runs vLLM by the template's command: served under the plan's model name, our arguments after its `--`, our env", () => {
    expect(main.image).toBe('ghcr.io/llm-d/llm-d-cuda:v0.8.0');
    expect(main.command.slice(0, 2)).toEqual(['/bin/bash', '-c']);
    expect(main.command.at(-1)).toBe('--');
    const script: string = main.command[2];
    expect(script).toContain(
      `eval "exec vllm serve /mnt/models \\\n  --served-model-name "${model.servedModelName}" "publishers/${model.namespace}/models/${model.servedModelName}" \\\n  --port ${model.port} \\`,
    );
    // shutdownTimeout of our template (no grace period: 60 s) less the 15 s preStop and 5 s.
    expect(script).toContain('SHUTDOWN_TIMEOUT_ARGS="--shutdown-timeout 40"');
    expect(main.args).toEqual(['--dtype', 'bfloat16']);
    expect(byName(main.env).map((e) => e.name)).toEqual(['HF_HUB_CACHE', 'HF_HUB_OFFLINE', 'HOME', 'VLLM_ADDITIONAL_ARGS', 'VLLM_LOGGING_LEVEL']);
    expect(main.ports).toEqual([{ containerPort: model.port, protocol: 'TCP' }]);
    expect(main.readinessProbe.httpGet).toEqual({ path: '/health', port: model.port, scheme: 'HTTP' });
  });

  it('mounts the claim the download Job fills at /mnt/models, the repository folder as its subPath', () => {
    expect(main.volumeMounts).toContainEqual({ name: 'kserve-pvc-source', mountPath: '/mnt/models', subPath: model.storage!.modelUri, readOnly: true });
    expect(byName(pod.spec.volumes).find((v) => v.name === 'kserve-pvc-source')).toEqual({ name: 'kserve-pvc-source', persistentVolumeClaim: { claimName: model.storage!.pvc } });
    expect(byName(pod.spec.volumes).find((v) => v.name === 'tls-certs')).toEqual({ name: 'tls-certs', secret: { secretName: `${model.service}-kserve-self-signed-certs` } });
    expect(pod.spec.serviceAccountName).toBe(model.serviceAccount);
  });

  it("names and labels what verify looks for: the workload, its Service, the pods' labels", () => {
    expect(deployment.metadata.name).toBe(model.workload);
    expect(deployment.spec.replicas).toBe(model.replicas);
    expect(matches(model.podLabels, pod.metadata.labels)).toBe(true);
    expect(workloadService.metadata.name).toBe(model.workloadService);
    expect(matches(workloadService.spec.selector, pod.metadata.labels)).toBe(true);
    expect(workloadService.spec.ports).toEqual([{ name: 'http', protocol: 'TCP', appProtocol: 'http', port: model.port, targetPort: model.port }]);
    // spec.annotations reach the pods (new weights roll them), the model-routing marker does not.
    expect(pod.metadata.annotations).toEqual({ 'app-serving.io/model-ref': 'hf://HuggingFaceTB/SmolLM2-135M-Instruct' });
  });

  it('routes every rule to the workload Service (no InferencePool), under the path prefix, on the stack\'s Gateway — the route our access policies target', () => {
    expect(route.metadata.name).toBe(model.route);
    expect(route.spec.parentRefs).toEqual([{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: model.gateway.name, namespace: model.gateway.namespace }]);
    const backends = new Set(route.spec.rules.flatMap((r: Values) => (r.backendRefs as Values[]).map((b) => `${b.group ?? ''}/${b.kind}/${b.name}:${b.port}`)));
    expect([...backends]).toEqual([`/Service/${model.workloadService}:${model.port}`]);
    const rewrite = (path: string) => route.spec.rules.find((r: Values) => (r.matches as Values[]).some((m) => (m.path as Values | undefined)?.value === path))?.filters?.[0]?.urlRewrite?.path;
    expect(rewrite(`${model.pathPrefix}/v1/chat/completions`)).toEqual({ type: 'ReplacePrefixMatch', replacePrefixMatch: '/v1/chat/completions' });
    expect(rewrite(model.pathPrefix)).toEqual({ type: 'ReplacePrefixMatch', replacePrefixMatch: '/' });
    const policies = envoyGatewayAccessManifests({ namespace: model.namespace, route: model.route }, model.slug, model.access) as any[];
    // The keys (SecurityPolicy) and the rate limit (BackendTrafficPolicy) both on KServe's route.
    expect(policies.filter((p) => p.spec?.targetRefs).map((p) => [p.kind, p.spec.targetRefs])).toEqual([
      ['SecurityPolicy', [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: route.metadata.name }]],
      ['BackendTrafficPolicy', [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: route.metadata.name }]],
    ]);
  });

  it('keeps the model-routing rules where the Gateway allows them, and drops them where it opts out', () => {
    const header = (r: Values) => (r.matches as Values[]).some((m) => Array.isArray(m.headers));
    expect(route.spec.rules.filter(header).map((r: Values) => r.name)).toEqual(['v1-model-routing', 'v1-catch-all-model-routing']);
    const optedOut = httpRouteV020(service, spec, [{ metadata: { annotations: { 'serving.kserve.io/model-based-routing-enabled': 'false' } } }]) as any;
    expect(optedOut.spec.rules.filter(header)).toEqual([]);
  });

  it('reports Ready with the URL on the Gateway\'s address and the path prefix once the Deployment is available and the route accepted', () => {
    const gateway = {
      metadata: { name: model.gateway.name, namespace: model.gateway.namespace },
      spec: { listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }] },
      status: { addresses: [{ type: 'IPAddress', value: '10.0.254.1' }], conditions: [{ type: 'Programmed', status: 'True' }] },
    };
    const accepted = { ...route, metadata: { ...route.metadata, generation: 1 }, status: { parents: [{ parentRef: route.spec.parentRefs[0], conditions: [{ type: 'Accepted', status: 'True', observedGeneration: 1 }, { type: 'ResolvedRefs', status: 'True', observedGeneration: 1 }] }] } };
    const available = { status: { conditions: [{ type: 'Available', status: 'True' }] } };
    const status = statusV020(service, spec, applied, route, { deployment: available, route: accepted, gateways: [gateway], backingService: () => null }) as any;
    expect(status.url).toBe(`http://10.0.254.1${model.pathPrefix}`);
    expect(status.conditions.find((c: Values) => c.type === 'Ready')).toEqual({ type: 'Ready', status: 'True' });
    expect(status.addresses.map((a: Values) => `${a.name} ${a.url}`)).toEqual([
      'internal-model-routing http://10.0.254.1/',
      `internal http://10.0.254.1${model.pathPrefix}`,
      `internal http://10.0.254.1/publishers/${model.namespace}/models/${model.servedModelName}`,
    ]);
    const refused = { ...accepted, status: { parents: [{ parentRef: route.spec.parentRefs[0], conditions: [{ type: 'Accepted', status: 'True' }, { type: 'ResolvedRefs', status: 'False', reason: 'BackendNotFound' }] }] } };
    const notReady = statusV020(service, spec, applied, route, { deployment: available, route: refused, gateways: [gateway], backingService: () => null }) as any;
    expect(notReady.conditions.find((c: Values) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'HTTPRoutesNotReady' });
  });
});

describe('KServe v0.20.0 and a model with the scheduler (the Qwen2.5 example on 2026-08)', () => {
  const stack = `config:
  app-serving:upstream: 2026-08
  app-serving:cloudProvider: cloud
  app-serving:platform: kserve
  app-serving:gpuToleration:
    key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
  app-serving:models:
    generative:
      - name: Qwen2.5-0.5B-Instruct
        nodeSelector:
          workload: gpu
        modelSource:
          huggingFace:
            repo: Qwen/Qwen2.5-0.5B-Instruct
          storageSize: 5Gi
`;
  const plan = planDeployment(parseStackFile(stack, 'Pulumi.test.yaml'), join(REPO_ROOT, 'models'));
  const model = plan.models[0] as KserveModelPlan;
  const { spec } = merge(model);
  const pods = [spec.template, (spec.router as Values).scheduler && ((spec.router as Values).scheduler as Values).template] as Values[];

  it('renders every placeholder and keeps the scheduler\'s containers (v0.20 defaults them, our `main` merges into them)', () => {
    expect(JSON.stringify(spec)).not.toContain('{{');
    expect(byName(pods[1]!.containers).map((c) => [c.name, c.image])).toEqual([
      ['main', 'ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0'],
      ['tokenizer', 'ghcr.io/llm-d/llm-d-uds-tokenizer:vllm-v0.19.1'],
    ]);
  });

  it('pulls exactly the KServe images the plan lists', () => {
    const pulled = pods.flatMap((pod) => ['containers', 'initContainers'].flatMap((list) => byName(pod[list]).map((c) => String(c.image))));
    expect([...new Set(pulled)].sort()).toEqual(model.images.filter((i) => !i.where.startsWith('model ')).map((i) => i.image).sort());
  });

  it('keeps the route on the InferencePool (which plain Envoy Gateway refuses: the data-path tier leaves this model to the stand-in of the control-plane tiers)', () => {
    const backends = new Set(((((spec.router as Values).route as Values).http as Values).spec as { rules: Values[] }).rules.flatMap((r) => (r.backendRefs as Values[]).map((b) => `${b.kind}/${b.name}`)));
    expect([...backends].sort()).toEqual([`InferencePool/${model.inferencePool}`, `Service/${model.workloadService}`]);
  });
});
