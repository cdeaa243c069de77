import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, CLI_ROOT, REPO_ROOT } from './run-cli.ts';

/**
 * `plan --json`'s contract, `packages/cli/plan.schema.json`, held against the real output: every
 * example stack (apps/app-serving/Pulumi.*.yaml) planned on both sets of upstream versions (and, on
 * 2026-08, in the Router's standalone mode and behind agentgateway) validates against it, and the
 * schema is closed where the contract is (the plan, each model), so that a field the plan gains
 * fails here until the schema and docs/cli.md name it. docs/cli.md's plan section names every field.
 */
const SCHEMA = JSON.parse(readFileSync(join(CLI_ROOT, 'plan.schema.json'), 'utf8')) as {
  properties: Record<string, unknown>;
  definitions: Record<string, { properties: Record<string, unknown>; required: string[]; additionalProperties?: boolean }>;
};
const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
const validate = ajv.compile(SCHEMA);

const APP = join(REPO_ROOT, 'apps', 'app-serving');
const STACKS = readdirSync(APP).filter((f) => /^Pulumi\..+\.yaml$/.test(f) && f !== 'Pulumi.yaml').sort();
const TMP = mkdtempSync(join(tmpdir(), 'app-serving-plan-schema-'));
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

/** A copy of an example stack on `set` (its `app-serving:upstream` replaced or added), with `edit` applied. */
function onSet(file: string, set: string, edit: (text: string) => string = (t) => t): string {
  let text = readFileSync(join(APP, file), 'utf8');
  text = /^ {2}app-serving:upstream:.*$/m.test(text) ? text.replace(/^ {2}app-serving:upstream:.*$/m, `  app-serving:upstream: ${set}`) : text.replace('config:\n', `config:\n  app-serving:upstream: ${set}\n`);
  const out = join(TMP, `${set}-${Math.random().toString(36).slice(2)}-${file}`);
  writeFileSync(out, edit(text));
  return out;
}

const ROUTER = /^ {2}app-serving:router:\n(?: {4}.*\n)*/m;
const CASES: Array<[string, string, string]> = [
  ...STACKS.flatMap((file) => ['2026-02', '2026-08'].map((set) => [file, set, onSet(file, set)] as [string, string, string])),
  ['Pulumi.current.yaml (standalone)', '2026-08', onSet('Pulumi.current.yaml', '2026-08', (t) => t.replace(ROUTER, '  app-serving:router:\n    mode: standalone\n'))],
  ['Pulumi.kind.yaml (agentgateway)', '2026-08', onSet('Pulumi.kind.yaml', '2026-08', (t) => t.replace('config:\n', 'config:\n  app-serving:router:\n    gatewayClass: agentgateway\n'))],
  // Behind Envoy Gateway: the stack's Envoy GatewayClass, the proxy Service in Envoy Gateway's namespace, the pool's route.
  ['Pulumi.current.yaml (envoy)', '2026-08', onSet('Pulumi.current.yaml', '2026-08', (t) => t.replace(ROUTER, '  app-serving:router:\n    mode: gateway\n    gatewayClass: envoy\n'))],
  // The stack's endpoint: on Istio beside the models' own Gateways, and on Envoy Gateway in front of the Router's own proxies.
  ['Pulumi.current.yaml (endpoint, istio)', '2026-08', onSet('Pulumi.current.yaml', '2026-08', (t) => t.replace('config:\n', 'config:\n  app-serving:endpoint:\n    access:\n      open: true\n'))],
  ['Pulumi.current.yaml (endpoint, envoy)', '2026-08', onSet('Pulumi.current.yaml', '2026-08', (t) => t.replace(ROUTER, '  app-serving:router:\n    mode: standalone\n').replace('config:\n', 'config:\n  app-serving:endpoint:\n    class: envoy\n    access:\n      open: true\n'))],
  // A model at zero: the Router's flow control on, the ScaledObject's wake triggers.
  ['Pulumi.cloud.yaml (minReplicas 0)', '2026-08', onSet('Pulumi.cloud.yaml', '2026-08', (t) => t.replace('          minReplicas: 1\n', '          minReplicas: 0\n'))],
];

describe('plan --json against plan.schema.json', () => {
  it('covers every example stack', () => {
    expect(STACKS).toEqual(expect.arrayContaining(['Pulumi.cloud.yaml', 'Pulumi.current.yaml', 'Pulumi.example.yaml', 'Pulumi.kind.yaml', 'Pulumi.kserve.yaml']));
  });

  it.each(CASES)('%s on %s validates', { timeout: 120_000 }, async (_name, set, file) => {
    const result = await cli(['plan', '--json', '--stack', file, '--models-dir', join(REPO_ROOT, 'models')]);
    expect(result.code, result.stderr).toBe(0);
    const plan = JSON.parse(result.stdout) as { models: Array<{ platform: string; upstream: string }>; endpoint: unknown };
    const ok = validate(plan);
    expect(ok ? [] : validate.errors!.map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`)).toEqual([]);
    for (const model of plan.models) expect(model.upstream).toBe(set);
    if (_name.includes('(endpoint')) expect(plan.endpoint).not.toBeNull();
  });

  it('is closed where the contract is: an unknown field of the plan or of a model fails', async () => {
    const result = await cli(['plan', '--json', '--stack', CASES[0]![2], '--models-dir', join(REPO_ROOT, 'models')]);
    const plan = JSON.parse(result.stdout) as Record<string, unknown> & { models: Record<string, unknown>[] };
    expect(validate({ ...plan, extra: 1 })).toBe(false);
    if (plan.models.length > 0) expect(validate({ ...plan, models: [{ ...plan.models[0], extra: 1 }] })).toBe(false);
    for (const name of ['llmd202602', 'llmd202608', 'kserve']) expect(SCHEMA.definitions[name]!.additionalProperties, name).toBe(false);
  });
});

describe("docs/cli.md's plan section", () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'cli.md'), 'utf8');
  const section = doc.slice(doc.indexOf('\n## plan\n'), doc.indexOf('\n## render\n'));

  it('points at the schema', () => {
    expect(section).toContain('`packages/cli/plan.schema.json`');
  });

  it.each([
    ['the plan', Object.keys(SCHEMA.properties)],
    ['an llm-d model on 2026-02', Object.keys(SCHEMA.definitions.llmd202602!.properties)],
    ['an llm-d model on 2026-08', Object.keys(SCHEMA.definitions.llmd202608!.properties)],
    ['a KServe model', Object.keys(SCHEMA.definitions.kserve!.properties)],
  ])('names every field of %s', (_what, keys) => {
    expect(keys.filter((key) => !section.includes(`"${key}"`))).toEqual([]);
  });
});
