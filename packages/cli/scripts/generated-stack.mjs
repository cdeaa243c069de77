// A generated stack for the benchmarks: `count` models on the simulator in a temporary folder.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A stack of `count` models in a temporary folder.
 *
 * - `light` (the default): half generative, half embedders, on the simulator, two-line GAIE values.
 * - `heavy`: every model generative, with GAIE and modelservice values of the usual shape (the EPP
 *   image and flags; `hf://` weights, routing on port 8000, one decode container with
 *   `modelCommand: imageDefault`, args, env, ports, resources and probes), the routing sidecar
 *   left at the chart's default (so one warning applies to every model).
 */
export function generatedStack(count, { shape = 'light' } = {}) {
  const big = mkdtempSync(join(tmpdir(), 'app-serving-bench-'));
  const entries = { generative: [], embedder: [] };
  for (let i = 0; i < count; i += 1) {
    const category = shape === 'heavy' || i % 2 === 0 ? 'generative' : 'embedder';
    const slug = `model-${i}`;
    const folder = join(big, 'models', category, `Model-${i}`);
    mkdirSync(join(folder, `gaie-${slug}`), { recursive: true });
    mkdirSync(join(folder, `ms-${slug}`), { recursive: true });
    writeFileSync(join(folder, `gaie-${slug}`, 'values.yaml'), shape === 'heavy' ? heavyGaie(i) : 'inferenceExtension:\n  replicas: 1\n');
    writeFileSync(
      join(folder, `ms-${slug}`, 'values.yaml'),
      shape === 'heavy'
        ? heavyModelService(i)
        : `modelArtifacts:\n  name: org/model-${i}\n  uri: hf://org/model-${i}\ndecode:\n  containers:\n    - name: vllm\n      image: ghcr.io/llm-d/llm-d-inference-sim:v0.10.2\n      modelCommand: imageDefault\n`,
    );
    entries[category].push(`      - name: Model-${i}\n        nodeSelector:\n          workload: gpu`);
  }
  const list = (items) => (items.length ? `\n${items.join('\n')}` : ' []');
  writeFileSync(
    join(big, 'Pulumi.big.yaml'),
    `config:\n  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:${list(entries.generative)}\n    embedder:${list(entries.embedder)}\n`,
  );
  return big;
}

function heavyGaie(i) {
  return `# GAIE values of generated model ${i}.
inferenceExtension:
  replicas: 1
  image:
    hub: registry.k8s.io/gateway-api-inference-extension
    name: epp
    tag: v1.2.0
    pullPolicy: IfNotPresent
  flags:
    v: 1
    kv-cache-usage-percentage-metric: "vllm:kv_cache_usage_perc"
`;
}

function heavyModelService(i) {
  return `# modelservice values of generated model ${i}: the simulator, weights named on the Hub.
modelArtifacts:
  name: org/model-${i}
  uri: hf://org/model-${i}
  size: 10Gi

routing:
  servicePort: 8000
  proxy:
    enabled: true
    targetPort: 8200

decode:
  replicas: 1
  containers:
    - name: vllm
      image: ghcr.io/llm-d/llm-d-inference-sim:v0.10.2
      modelCommand: imageDefault
      args:
        - --max-model-len
        - "8192"
      env:
        - name: VLLM_LOGGING_LEVEL
          value: INFO
      ports:
        - containerPort: 8200
          name: http
          protocol: TCP
      resources:
        requests:
          cpu: "1"
          memory: 1Gi
        limits:
          memory: 2Gi
      extraConfig:
        readinessProbe:
          httpGet:
            path: /v1/models
            port: 8200
          periodSeconds: 10

prefill:
  create: false
`;
}
