import { existsSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { readUpstreamJson, readUpstreamYaml } from '@app-serving/test-cluster';
import { Ajv, type ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import { CATEGORIES, type Category } from '../src/constants.ts';
import { loadStackFile, type StackConfig } from '../src/stack.ts';
import type { ModelEntry } from '../src/config/types.ts';
import { planDeployment, type LlmdModelPlan } from '../src/plan.ts';
import { effectiveValues, type Values } from '../src/values/merge.ts';
import { REPO_ROOT } from './helpers.ts';

/**
 * What Helm will do with our values: every values document app-serving would hand the charts, for
 * every llm-d model folder under every example stack, validated against the charts' own
 * values.schema.json (JSON Schema draft-07, with ajv) after Helm's coalescing with the chart's
 * values.yaml. Zero errors: a chart would otherwise refuse `helm install` in the middle of `pulumi up`.
 */

const STACKS_DIR = join(REPO_ROOT, 'apps', 'app-serving');
const MODELS_DIR = join(REPO_ROOT, 'models');

const stacks = readdirSync(STACKS_DIR)
  .filter((f) => /^Pulumi\.[^.]+\.yaml$/.test(f) && f !== 'Pulumi.TEMPLATE.yaml')
  .sort();

/** Every llm-d model folder (it holds a `ms-<slug>/` folder). */
const folders: { category: Category; name: string }[] = CATEGORIES.flatMap((category) =>
  readdirSync(join(MODELS_DIR, category))
    .filter((name) => readdirSync(join(MODELS_DIR, category, name)).some((d) => d.startsWith('ms-')))
    .map((name) => ({ category, name })),
).sort((a, b) => `${a.category}/${a.name}`.localeCompare(`${b.category}/${b.name}`));

const ajv = new Ajv({ allErrors: true, strict: false });
const chart = (dir: string): { defaults: Values; validate: ValidateFunction | undefined } => ({
  defaults: readUpstreamYaml(`charts/${dir}/values.yaml`)[0] as Values,
  validate: dir.startsWith('inferencepool') ? undefined : ajv.compile(readUpstreamJson(`charts/${dir}/values.schema.json`) as object),
});
const CHARTS = {
  infra: chart('llm-d-infra-v1.3.10'),
  gaie: chart('inferencepool-v1.2.0'),
  modelService: chart('llm-d-modelservice-v0.4.12'),
};

/** The stack with only this folder enabled: the stack's own entry for it when it lists it, else a plain one. */
function withOnly(config: StackConfig, category: Category, name: string): StackConfig {
  const own = config.models[category].find((e) => e.name === name);
  const entry: ModelEntry = { ...(own ?? { name, enabled: true, nodeSelector: {} }), enabled: true, platform: 'llm-d' };
  return { ...config, models: { generative: [], embedder: [], [category]: [entry] } };
}

function errorsOf(validate: ValidateFunction, values: Values): string[] {
  return validate(values) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

describe('every merged values document passes the charts’ values schemas', () => {
  it('finds the example stacks and model folders', () => {
    expect(stacks.length).toBeGreaterThanOrEqual(3);
    expect(folders.length).toBeGreaterThanOrEqual(4);
    expect(existsSync(join(STACKS_DIR, 'Pulumi.example.yaml'))).toBe(true);
  });

  // The stacks on the 2026-02 set: the llm-d Router charts of 2026-08 publish no values schema (they
  // validate in templates/_validations.tpl), so those stacks are held against real `helm template`
  // of the published charts instead (packages/cli/test/control-plane.test.ts).
  const on2026_02 = stacks.filter((f) => loadStackFile(join(STACKS_DIR, f), basename(f), { checkRules: false }).upstream !== '2026-08');
  describe.each(on2026_02)('%s', (stackFile) => {
    const config = loadStackFile(join(STACKS_DIR, stackFile), basename(stackFile), { checkRules: false });

    it.each(folders.map((f) => [`${f.category}/${f.name}`, f] as const))('%s', (_label, { category, name }) => {
      const plan = planDeployment(withOnly(config, category, name), MODELS_DIR);
      const model = plan.models[0] as LlmdModelPlan;
      expect(model.platform).toBe('llm-d');
      const problems: Record<string, string[]> = {};
      for (const key of ['infra', 'modelService'] as const) {
        const effective = effectiveValues(CHARTS[key].defaults, model.values[key]);
        problems[key] = errorsOf(CHARTS[key].validate!, effective);
      }
      expect(problems).toEqual({ infra: [], modelService: [] });
      // GAIE v1.2.0 has no schema: core warns on the keys it does not read instead.
      expect(plan.warnings.filter((w) => w.code === 'warning.unknown-key')).toEqual([]);
    });
  });

  it('catches a value the schema rejects (the check is not vacuous)', () => {
    const effective = effectiveValues(CHARTS.modelService.defaults, { routing: { servicePort: 8000, port: 1 }, accelerator: { resources: { tpu: 'x' } } });
    expect(errorsOf(CHARTS.modelService.validate!, effective)).toEqual([
      expect.stringContaining('/accelerator/resources must NOT have additional properties'),
      expect.stringContaining('/routing must NOT have additional properties'),
    ]);
    const infra = effectiveValues(CHARTS.infra.defaults, { gateway: { tls: { referenceGrant: { enable: true } } } });
    expect(errorsOf(CHARTS.infra.validate!, infra)).toEqual([expect.stringContaining('/gateway/tls/referenceGrant must NOT have additional properties')]);
  });
});
