// A generated stack for the benchmarks: `count` models on the simulator in a temporary folder.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A stack of `count` models on the simulator (half generative, half embedders) in a temporary folder. */
export function generatedStack(count) {
  const big = mkdtempSync(join(tmpdir(), 'app-serving-bench-'));
  const entries = { generative: [], embedder: [] };
  for (let i = 0; i < count; i += 1) {
    const category = i % 2 === 0 ? 'generative' : 'embedder';
    const slug = `model-${i}`;
    const folder = join(big, 'models', category, `Model-${i}`);
    mkdirSync(join(folder, `gaie-${slug}`), { recursive: true });
    mkdirSync(join(folder, `ms-${slug}`), { recursive: true });
    writeFileSync(join(folder, `gaie-${slug}`, 'values.yaml'), 'inferenceExtension:\n  replicas: 1\n');
    writeFileSync(
      join(folder, `ms-${slug}`, 'values.yaml'),
      `modelArtifacts:\n  name: org/model-${i}\n  uri: hf://org/model-${i}\ndecode:\n  containers:\n    - name: vllm\n      image: ghcr.io/llm-d/llm-d-inference-sim:v0.10.2\n      modelCommand: imageDefault\n`,
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

