import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, valuesFile } from '../../test/helpers.ts';
import { loadStackFile } from '../stack.ts';
import { planDeployment } from '../plan.ts';
import { isSimulatorImage, simulatorArgWarnings } from './simulator.ts';

const sim = (args: string, image = 'ghcr.io/llm-d/llm-d-inference-sim:v0.10.2') =>
  valuesFile('ms-sim/values.yaml', `decode:\n  containers:\n    - name: vllm\n      image: ${image}\n      args:\n${args}`);

describe('the simulator duration flags', () => {
  it('warns on a bare number after a duration flag, with the file, the line and the key', () => {
    const warnings = simulatorArgWarnings(sim('        - --mode\n        - echo\n        - --time-to-first-token\n        - "20"\n        - --inter-token-latency=5\n'));
    expect(warnings.map((w) => [w.code, w.file, w.line, w.path])).toEqual([
      ['warning.simulator-duration', 'ms-sim/values.yaml', 9, 'decode.containers[0].args[3]'],
      ['warning.simulator-duration', 'ms-sim/values.yaml', 10, 'decode.containers[0].args[4]'],
    ]);
    expect(warnings[0]!.message).toContain('write "20ms"');
    expect(warnings[1]!.message).toContain('--inter-token-latency "5" has no unit');
  });

  it('accepts durations with a unit, "0", other flags and other images', () => {
    expect(simulatorArgWarnings(sim('        - --time-to-first-token\n        - 20ms\n        - --inter-token-latency=1s\n        - --startup-duration\n        - "0"\n'))).toEqual([]);
    expect(simulatorArgWarnings(sim('        - --max-num-seqs\n        - "5"\n'))).toEqual([]);
    expect(simulatorArgWarnings(sim('        - --time-to-first-token\n        - "20"\n', 'vllm/vllm-openai:v0.11.0'))).toEqual([]);
  });

  it('knows the simulator by its repository, also in a mirror', () => {
    expect(isSimulatorImage('harbor.example.com/images-llm-d/llm-d/llm-d-inference-sim:v0.10.2')).toBe(true);
    expect(isSimulatorImage('ghcr.io/llm-d/llm-d-inference-sim@sha256:' + 'a'.repeat(64))).toBe(true);
    expect(isSimulatorImage('ghcr.io/llm-d/llm-d-cuda:v0.4.0')).toBe(false);
  });

  it('every example stack plans without a simulator warning (the kind recipe starts its simulator)', () => {
    const stacks = readdirSync(join(REPO_ROOT, 'apps/app-serving')).filter((f) => /^Pulumi\.(?!TEMPLATE)[a-z]+\.yaml$/.test(f) && f !== 'Pulumi.yaml');
    expect(stacks).toContain('Pulumi.kind.yaml');
    for (const stack of stacks) {
      const plan = planDeployment(loadStackFile(join(REPO_ROOT, 'apps/app-serving', stack)), join(REPO_ROOT, 'models'));
      expect(plan.warnings.filter((w) => w.code === 'warning.simulator-duration'), stack).toEqual([]);
    }
  });
});
