import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadStackConfigFromMap, loadStackFile, planDeployment, type DeploymentPlan, type KserveModelPlan, type LlmdModelPlan } from '@app-serving/core';
import { recordUnderMocks, revealSecrets, type RecordedResource } from '../src/mock-runtime.ts';

/** Test helpers: run components under mocks and query what they registered. */

const here = dirname(fileURLToPath(import.meta.url));
export const REPO = resolve(here, '../../..');
export const MODELS_DIR = join(REPO, 'models');
export const APP_DIR = join(REPO, 'apps/app-serving');
export const FIXTURES = join(here, 'fixtures');

export const PROJECT = 'proj';
export const STACK = 'test';

/** What a test gets back from {@link record}. */
export class Recording {
  constructor(readonly resources: readonly RecordedResource[]) {}

  /** The resource with this logical name (and type, when names repeat); throws when absent or ambiguous. */
  get(name: string, type?: string): RecordedResource {
    const found = this.resources.filter((r) => r.name === name && (type === undefined || r.type === type));
    if (found.length !== 1) throw new Error(`${found.length} resources named ${name}${type ? ` of type ${type}` : ''}; have: ${this.resources.map((r) => r.name).join(', ')}`);
    return found[0]!;
  }

  byUrn(urn: string): RecordedResource {
    const found = this.resources.find((r) => r.urn === urn);
    if (!found) throw new Error(`no resource ${urn}`);
    return found;
  }

  /** Direct children of a resource, as sorted `<type> <name>` lines. */
  children(name: string): string[] {
    const parent = this.get(name).urn;
    return this.resources
      .filter((r) => r.parent === parent)
      .map((r) => `${r.type} ${r.name}`)
      .sort();
  }

  /** Every resource below `name` (not itself). */
  descendants(name: string): RecordedResource[] {
    const out: RecordedResource[] = [];
    const walk = (urn: string) => {
      for (const r of this.resources.filter((x) => x.parent === urn)) {
        out.push(r);
        walk(r.urn);
      }
    };
    walk(this.get(name).urn);
    return out;
  }

  /** Logical names of the resources `name` depends on, sorted. */
  dependencies(name: string, type?: string): string[] {
    return this.get(name, type)
      .dependencies.map((urn) => this.byUrn(urn).name)
      .sort();
  }

  /** The parent's logical name. */
  parentOf(name: string): string | undefined {
    const parent = this.get(name).parent;
    return parent === undefined ? undefined : this.byUrn(parent).name;
  }

  /** Inputs with secrets unwrapped. */
  revealed(name: string, type?: string): Record<string, unknown> {
    return revealSecrets(this.get(name, type).inputs) as Record<string, unknown>;
  }

  /** Plain Kubernetes objects (custom, non-provider resources that are not Helm charts). */
  kubernetesObjects(): RecordedResource[] {
    return this.resources.filter((r) => r.custom && r.type.startsWith('kubernetes:'));
  }

  /** `<type> <name>` of every resource, sorted. */
  summary(): string[] {
    return this.resources.map((r) => `${r.type} ${r.name}`).sort();
  }
}

/** Runs `program` under mocks (project `proj`, stack `test` unless given). */
export async function record(program: () => unknown, stack = STACK): Promise<Recording> {
  return new Recording(await recordUnderMocks(program, { project: PROJECT, stack }));
}

/** The plan of an example stack of apps/app-serving (`example`, `cloud`, `kind`, `current`: the example on 2026-08). */
export function examplePlan(stack: 'example' | 'cloud' | 'kind' | 'current'): DeploymentPlan {
  return planDeployment(loadStackFile(join(APP_DIR, `Pulumi.${stack}.yaml`)), MODELS_DIR);
}

/** One llm-d model of an example stack, by folder name. */
export function llmdModel(stack: 'example' | 'cloud' | 'kind', name: string): LlmdModelPlan {
  const model = examplePlan(stack).models.find((m) => m.name === name);
  if (!model || model.platform !== 'llm-d' || model.upstream !== '2026-02') throw new Error(`no llm-d model ${name} on the 2026-02 set in ${stack}`);
  return model;
}

let fixtureModels: string | undefined;
/**
 * A models directory holding the KServe fixture folders (test/fixtures/models) and the repo's
 * `Sim` model, for the KServe stacks.
 */
export function fixtureModelsDir(): string {
  if (!fixtureModels) {
    const dir = mkdtempSync(join(tmpdir(), 'app-serving-models-'));
    for (const category of ['generative', 'embedder']) mkdirSync(join(dir, category));
    symlinkSync(join(MODELS_DIR, 'generative/Sim'), join(dir, 'generative/Sim'));
    symlinkSync(join(FIXTURES, 'models/generative/TinyKserve'), join(dir, 'generative/TinyKserve'));
    symlinkSync(join(FIXTURES, 'models/embedder/TinyKserveEmbed'), join(dir, 'embedder/TinyKserveEmbed'));
    fixtureModels = dir;
  }
  return fixtureModels;
}

/** The plan of a KServe fixture stack (`kserve`: cloud, HF download, plus Sim on llm-d; `kserve-onprem`: Harbor, no Gateway). */
export function kservePlan(stack: 'kserve' | 'kserve-onprem'): DeploymentPlan {
  return planDeployment(loadStackFile(join(FIXTURES, `Pulumi.${stack}.yaml`)), fixtureModelsDir());
}

export function kserveModel(stack: 'kserve' | 'kserve-onprem', name: string): KserveModelPlan {
  const model = kservePlan(stack).models.find((m) => m.name === name);
  if (!model || model.platform !== 'kserve') throw new Error(`no kserve model ${name} in ${stack}`);
  return model;
}

/** Every string inside `value` (for "the secret never appears in plaintext" checks). */
export function allStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(allStrings);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(allStrings);
  return [];
}

/** Longest dependency chain (number of resources) through custom resources of `resources`. */
export function dependencyDepth(resources: readonly RecordedResource[]): number {
  const byUrn = new Map(resources.map((r) => [r.urn, r]));
  const memo = new Map<string, number>();
  const depth = (r: RecordedResource): number => {
    const known = memo.get(r.urn);
    if (known !== undefined) return known;
    const d = 1 + Math.max(0, ...r.dependencies.map((u) => byUrn.get(u)).filter((x): x is RecordedResource => x !== undefined).map(depth));
    memo.set(r.urn, d);
    return d;
  };
  return Math.max(0, ...resources.map(depth));
}

/** The value of an Output (or plain value) once known. */
export function valueOf<T>(output: import('@pulumi/pulumi').Input<T>): Promise<T> {
  return import('@pulumi/pulumi').then(
    (pulumi) =>
      new Promise<T>((resolve) => {
        pulumi.output(output).apply((v) => {
          resolve(v as T);
          return v;
        });
      }),
  );
}

/**
 * A plan of `n` generative models, each a copy of the repo's `Sim` folder under its own slug
 * (`sim-<i>`), planned by core from a stack config map — for scale tests and timings.
 */
export function manyModelsPlan(n: number): DeploymentPlan {
  const dir = mkdtempSync(join(tmpdir(), `app-serving-${n}-models-`));
  const entries: { name: string }[] = [];
  for (let i = 0; i < n; i += 1) {
    const name = `Sim${i}`;
    for (const prefix of ['gaie', 'ms']) {
      mkdirSync(join(dir, 'generative', name, `${prefix}-sim-${i}`), { recursive: true });
      copyFileSync(join(MODELS_DIR, 'generative/Sim', `${prefix}-sim`, 'values.yaml'), join(dir, 'generative', name, `${prefix}-sim-${i}`, 'values.yaml'));
    }
    entries.push({ name });
  }
  const config = loadStackConfigFromMap({ 'app-serving:cloudProvider': 'cloud', 'app-serving:models': JSON.stringify({ generative: entries }) }, { stackName: `scale${n}` });
  return planDeployment(config, dir);
}
