import { gatewayAliasManifest } from '@app-serving/core';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { llmdModel, record } from '../test/harness.ts';
import { kubernetesProblems } from '../test/k8s-schemas.ts';
import { LlmdInfra } from './llmd-infra.ts';

describe('LlmdInfra', () => {
  const qwen = llmdModel('example', 'Qwen3-0.6B-rke2');
  const args = {
    namespace: qwen.namespace,
    slug: qwen.slug,
    releaseName: qwen.releases.infra,
    chart: qwen.charts.infra,
    values: qwen.values.infra,
    patches: qwen.patches.infra,
    gatewayAlias: qwen.gateway.alias,
    gatewayHost: qwen.gateway.host,
  };

  it('deploys the llm-d-infra chart and the ExternalName alias of the gateway Service', async () => {
    const rec = await record(() => new LlmdInfra('i', args));
    expect(rec.children('i')).toEqual(['kubernetes:core/v1:Service i-gateway-alias', 'kubernetes:helm.sh/v4:Chart i-chart']);
    const chart = rec.get('i-chart');
    expect(chart.remote).toBe(true);
    expect(chart.inputs).toEqual({
      name: 'infra-qwen3-06b-rke2',
      namespace: 'llm-d-qwen3-06b-rke2',
      chart: 'llm-d-infra',
      version: 'v1.3.10',
      repositoryOpts: { repo: 'https://llm-d-incubation.github.io/llm-d-infra/' },
      values: qwen.values.infra,
    });
    expect(chart.transforms).toHaveLength(1);
    expect(rec.revealed('i-gateway-alias')).toEqual(
      gatewayAliasManifest({ name: 'llmd-gateway-qwen3-06b-rke2', namespace: 'llm-d-qwen3-06b-rke2', slug: 'qwen3-06b-rke2', gatewayHost: qwen.gateway.host }),
    );
    expect(rec.revealed('i-gateway-alias')).toMatchObject({
      spec: { type: 'ExternalName', externalName: 'infra-qwen3-06b-rke2-inference-gateway-istio.llm-d-qwen3-06b-rke2.svc.cluster.local', ports: [{ port: 80 }] },
    });
    expect(kubernetesProblems(rec.revealed('i-gateway-alias'))).toEqual([]);
    // The alias needs nothing from the chart.
    expect(rec.dependencies('i-gateway-alias')).toEqual([]);
    expect(rec.dependencies('i-chart')).toEqual([]);
  });

  it("places the gateway pods through the registered transform on the Gateway's parameters ConfigMap", async () => {
    const rec = await record(() => new LlmdInfra('i', args));
    const [transform] = rec.get('i-chart').transforms;
    // What llm-d-infra v1.3.10 renders for an Istio Gateway: the parametersRef ConfigMap named after the Gateway.
    const deployment = [
      'spec:',
      '  template:',
      '    spec:',
      '      containers:',
      '      - name: istio-proxy',
      '        args: [proxy, router, --domain, $(POD_NAMESPACE).svc.cluster.local, --proxyLogLevel, warn]',
      '        resources:',
      '          limits: {cpu: "2", memory: 1Gi}',
      '          requests: {cpu: 100m, memory: 128Mi}',
      '',
    ].join('\n');
    const configMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'infra-qwen3-06b-rke2-inference-gateway', namespace: 'llm-d-qwen3-06b-rke2', labels: { 'app.kubernetes.io/component': 'inference-gateway' } },
      data: { deployment, service: 'spec:\n  type: ClusterIP\n' },
    };
    const result = await transform!({ custom: true, type: 'kubernetes:core/v1:ConfigMap', name: 'i-chart:llm-d-qwen3-06b-rke2/infra-qwen3-06b-rke2-inference-gateway', props: configMap, opts: {} });
    const props = result!.props as typeof configMap;
    expect(props.metadata).toEqual(configMap.metadata);
    expect(props.data.service).toBe('spec:\n  type: ClusterIP\n');
    expect(parse(props.data.deployment)).toEqual({
      spec: {
        template: {
          spec: {
            containers: [
              {
                name: 'istio-proxy',
                args: ['proxy', 'router', '--domain', '$(POD_NAMESPACE).svc.cluster.local', '--proxyLogLevel', 'warn'],
                resources: { limits: { cpu: '2', memory: '1Gi' }, requests: { cpu: '100m', memory: '128Mi' } },
              },
            ],
            affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'workload', operator: 'In', values: ['gpu'] }] }] } } },
            tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
            imagePullSecrets: [{ name: 'harbor-creds' }],
          },
        },
      },
    });

    // Everything else the chart renders passes unchanged.
    const gateway = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'infra-qwen3-06b-rke2-inference-gateway' }, spec: {} };
    const otherConfigMap = { ...configMap, metadata: { ...configMap.metadata, name: 'something-else' } };
    for (const props of [gateway, otherConfigMap]) {
      expect(await transform!({ custom: true, type: `kubernetes:x:${props.kind}`, name: 'x', props, opts: {} })).toEqual({ props, opts: { deleteBeforeReplace: true } });
    }
    expect(await transform!({ custom: false, type: 'kubernetes:helm.sh/v4:Chart', name: 'i-chart', props: rec.get('i-chart').inputs, opts: {} })).toBeUndefined();
  });

  it('registers no transform without patches, and no alias without gatewayAlias', async () => {
    const sim = llmdModel('kind', 'Sim');
    const rec = await record(() => new LlmdInfra('i', { namespace: sim.namespace, slug: sim.slug, releaseName: sim.releases.infra, values: sim.values.infra, patches: sim.patches.infra }));
    expect(rec.children('i')).toEqual(['kubernetes:helm.sh/v4:Chart i-chart']);
    // Only the transform every chart has (rendered objects replaced delete-first): nothing to patch.
    expect(rec.get('i-chart').transforms).toHaveLength(1);
    // The chart defaults to the pinned llm-d-infra.
    expect(rec.get('i-chart').inputs).toMatchObject({ chart: 'llm-d-infra', version: 'v1.3.10' });
  });

  it('rejects half an alias and a bad chart reference', async () => {
    await expect(record(() => new LlmdInfra('i', { ...args, gatewayHost: undefined }))).rejects.toMatchObject({ propertyPath: 'gatewayHost' });
    await expect(record(() => new LlmdInfra('i', { ...args, chart: { chart: 'oci://x/y', version: '1', repo: 'https://x' } }))).rejects.toMatchObject({ propertyPath: 'chart.repo' });
  });
});
