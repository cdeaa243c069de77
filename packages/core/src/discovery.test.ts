import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { llmdModel, tempRepo } from '../test/helpers.ts';
import { parseStackFile } from './stack.ts';
import { discoverModels, listModelFolders } from './discovery.ts';
import { isStackError, type Issue } from './errors.ts';

const stack = (models: string, extra = '') => parseStackFile(`config:\n  app-serving:cloudProvider: cloud\n${extra}  app-serving:models:\n${models}`, 'Pulumi.t.yaml');

function discoveryIssues(dir: string, models: string, extra = ''): Pick<Issue, 'code' | 'path' | 'message'>[] {
  try {
    discoverModels(stack(models, extra), join(dir, 'models'));
  } catch (error) {
    if (isStackError(error)) return error.issues.map(({ code, path, message }) => ({ code, path, message }));
    throw error;
  }
  return [];
}

describe('discoverModels', () => {
  it('finds each enabled model with its slug and parsed values', () => {
    const dir = tempRepo({ ...llmdModel('generative', 'Qwen', 'qwen'), ...llmdModel('embedder', 'Bge', 'bge'), 'models/generative/Qwen/README.md': 'notes' });
    const found = discoverModels(stack('    generative:\n      - name: Qwen\n    embedder:\n      - name: Bge\n'), join(dir, 'models'));
    expect(found.map(({ category, index, platform, slug }) => ({ category, index, platform, slug }))).toEqual([
      { category: 'generative', index: 0, platform: 'llm-d', slug: 'qwen' },
      { category: 'embedder', index: 0, platform: 'llm-d', slug: 'bge' },
    ]);
    expect(found[0]!.values.gaie!.values).toEqual({ inferenceExtension: { replicas: 1 } });
    expect(found[0]!.values.modelService!.file).toMatch(/models\/generative\/Qwen\/ms-qwen\/values\.yaml$/);
    expect(found[0]!.values.infra).toBeUndefined();
    // As read, a values file is frozen: merges share it instead of copying it, and nothing changes it.
    expect(Object.isFrozen(found[0]!.values.gaie!.values)).toBe(true);
    expect(Object.isFrozen(found[0]!.values.gaie!.values.inferenceExtension)).toBe(true);
  });

  it('never reads a disabled model', () => {
    const dir = tempRepo({ 'models/generative/Broken/gaie-x/values.yaml': ': : :' });
    expect(discoverModels(stack('    generative:\n      - name: Broken\n        enabled: false\n      - name: Missing\n        enabled: false\n'), join(dir, 'models'))).toEqual([]);
  });

  it('reads an optional infra values file with the same slug', () => {
    const dir = tempRepo({ ...llmdModel('generative', 'Q', 'q'), 'models/generative/Q/infra-q/values.yaml': 'gateway:\n  service:\n    type: LoadBalancer\n' });
    expect(discoverModels(stack('    generative:\n      - name: Q\n'), join(dir, 'models'))[0]!.values.infra!.values).toEqual({ gateway: { service: { type: 'LoadBalancer' } } });
  });

  it('reads the kserve folder for a kserve model, and only that', () => {
    const dir = tempRepo({ ...llmdModel('generative', 'Q', 'q'), 'models/generative/Q/kserve-q/values.yaml': 'replicas: 2\n' });
    const [model] = discoverModels(stack('    generative:\n      - name: Q\n        platform: kserve\n'), join(dir, 'models'));
    expect(model!.platform).toBe('kserve');
    expect(Object.keys(model!.values)).toEqual(['kserve']);
  });

  it('treats an empty values file as empty values', () => {
    const dir = tempRepo({ 'models/generative/Q/gaie-q/values.yaml': '', 'models/generative/Q/ms-q/values.yaml': '# only a comment\n' });
    const [model] = discoverModels(stack('    generative:\n      - name: Q\n'), join(dir, 'models'));
    expect(model!.values.gaie!.values).toEqual({});
  });

  it('names a missing folder and suggests the closest one', () => {
    const dir = tempRepo(llmdModel('generative', 'Qwen3-0.6B', 'q'));
    expect(discoveryIssues(dir, '    generative:\n      - name: Qwen3-0.6b\n')).toEqual([
      { code: 'model.not-found', path: 'models.generative[0].name', message: `no model folder ${join(dir, 'models/generative/Qwen3-0.6b')} (did you mean "Qwen3-0.6B"?)` },
    ]);
  });

  it('says when a model sits under the other category', () => {
    const dir = tempRepo(llmdModel('embedder', 'Bge', 'bge'));
    expect(discoveryIssues(dir, '    generative:\n      - name: Bge\n')[0]!.message).toBe(
      `no model folder ${join(dir, 'models/generative/Bge')} (it is in ${join(dir, 'models/embedder')}: list it under models.embedder)`,
    );
  });

  it('tells how to create an unknown model', () => {
    const dir = tempRepo({});
    expect(discoveryIssues(dir, '    generative:\n      - name: New\n')[0]!.message).toMatch(/\(create it with: app-serving new-model New --category generative --slug <slug>\)$/);
  });

  it('reports missing and doubled values folders', () => {
    const dir = tempRepo({
      'models/generative/A/gaie-a/values.yaml': '',
      'models/generative/B/gaie-b/values.yaml': '',
      'models/generative/B/gaie-b2/values.yaml': '',
      'models/generative/B/ms-b/values.yaml': '',
    });
    expect(discoveryIssues(dir, '    generative:\n      - name: A\n      - name: B\n').map((i) => [i.code, i.path])).toEqual([
      ['model.values-missing', 'models.generative[0].name'],
      ['model.values-ambiguous', 'models.generative[1].name'],
    ]);
  });

  it('reports a folder without values.yaml', () => {
    const dir = tempRepo({ 'models/generative/A/gaie-a/README.md': '', 'models/generative/A/ms-a/values.yaml': '' });
    expect(discoveryIssues(dir, '    generative:\n      - name: A\n')).toEqual([
      { code: 'model.values-missing', path: 'models.generative[0].name', message: `${join(dir, 'models/generative/A/gaie-a')} has no values.yaml` },
    ]);
  });

  it('reports different slugs in one folder and invalid slugs', () => {
    const dir = tempRepo({ ...llmdModel('generative', 'A', 'a'), 'models/generative/A/ms-b/values.yaml': '', ...llmdModel('generative', 'B', 'Bad_Slug') });
    const found = discoveryIssues(dir, '    generative:\n      - name: A\n      - name: B\n');
    expect(found.map((i) => i.code)).toEqual(['model.values-ambiguous', 'slug.invalid']);
    const dir2 = tempRepo({ 'models/generative/A/gaie-a/values.yaml': '', 'models/generative/A/ms-b/values.yaml': '' });
    expect(discoveryIssues(dir2, '    generative:\n      - name: A\n')[0]!.code).toBe('model.slug-mismatch');
  });

  it('rejects a slug used twice in the stack', () => {
    const dir = tempRepo({ ...llmdModel('generative', 'A', 'same'), ...llmdModel('embedder', 'B', 'same') });
    expect(discoveryIssues(dir, '    generative:\n      - name: A\n    embedder:\n      - name: B\n')).toEqual([
      {
        code: 'slug.duplicate',
        path: 'models.embedder[0].name',
        message: 'slug "same" is already used by generative/A; every model of a stack needs its own slug (rename the values folders of one of them)',
      },
    ]);
  });

  it('reports YAML errors in values files with their own file and line', () => {
    const dir = tempRepo({ ...llmdModel('generative', 'A', 'a', 'decode:\n  replicas: [1\n') });
    try {
      discoverModels(stack('    generative:\n      - name: A\n'), join(dir, 'models'));
      expect.unreachable();
    } catch (error) {
      if (!isStackError(error)) throw error;
      expect(error.issues[0]).toMatchObject({ code: 'yaml.syntax', file: expect.stringMatching(/ms-a\/values\.yaml$/) });
      expect(error.issues[0]!.line).toBeGreaterThanOrEqual(2);
    }
  });

  it('rejects a values file that is not a mapping', () => {
    const dir = tempRepo(llmdModel('generative', 'A', 'a', '- one\n- two\n'));
    expect(discoveryIssues(dir, '    generative:\n      - name: A\n')).toEqual([{ code: 'yaml.not-a-map', path: '', message: 'a values file must be a YAML mapping of chart values' }]);
  });

  it('collects the problems of every model in one pass', () => {
    const dir = tempRepo({});
    expect(discoveryIssues(dir, '    generative:\n      - name: A\n      - name: B\n    embedder:\n      - name: C\n')).toHaveLength(3);
  });
});

describe("a folder of the other set of upstream versions", () => {
  const server = (category: string, name: string, slug: string) => ({
    [`models/${category}/${name}/server-${slug}/values.yaml`]: 'image: docker.io/vllm/vllm-openai:v0.30.0\nservedModelName: org/model\n',
    [`models/${category}/${name}/router-${slug}/values.yaml`]: '{}\n',
  });

  it('2026-08 folders in a stack without upstream (new-model\'s default there): one problem naming the set, why, and both fixes', () => {
    const dir = tempRepo(server('generative', 'Qwen3-8B', 'qwen3-8b'));
    expect(discoveryIssues(dir, '    generative:\n      - name: Qwen3-8B\n')).toEqual([
      {
        code: 'model.values-missing',
        path: 'models.generative[0].name',
        message: `${join(dir, 'models/generative/Qwen3-8B')} holds router-qwen3-8b/, server-qwen3-8b/, the folders of the 2026-08 set, but the model is on the 2026-02 set (a stack without app-serving:upstream is on 2026-02): either put the model on 2026-08 with "upstream: 2026-08" on this entry (or app-serving:upstream: 2026-08 for the whole stack), or add its 2026-02 folders beside them with: app-serving new-model Qwen3-8B --category generative --slug qwen3-8b --upstream 2026-02 --models-dir ${join(dir, 'models')}`,
      },
    ]);
  });

  it('2026-02 folders in a 2026-08 stack: keep the model on 2026-02 (migrate converts it later), or add its 2026-08 folders', () => {
    const dir = tempRepo(llmdModel('embedder', 'Bge', 'bge'));
    const [issue] = discoveryIssues(dir, '    embedder:\n      - name: Bge\n', '  app-serving:upstream: 2026-08\n');
    expect(issue!.message).toBe(
      `${join(dir, 'models/embedder/Bge')} holds gaie-bge/, ms-bge/, the folders of the 2026-02 set, but the model is on the 2026-08 set (the stack's app-serving:upstream is 2026-08): either keep the model on 2026-02 with "upstream: 2026-02" on this entry (app-serving migrate --stack Pulumi.t.yaml --to 2026-08 --model Bge converts its folders later), or add its 2026-08 folders beside them with: app-serving new-model Bge --category embedder --slug bge --upstream 2026-08 --models-dir ${join(dir, 'models')}`,
    );
  });

  it('a model kept on 2026-02 by its own key in a 2026-08 stack, with only 2026-08 folders: remove the key', () => {
    const dir = tempRepo(server('generative', 'M', 'm'));
    const [issue] = discoveryIssues(dir, '    generative:\n      - name: M\n        upstream: 2026-02\n', '  app-serving:upstream: 2026-08\n');
    expect(issue!.message).toMatch(/but the model is on the 2026-02 set \(its entry says upstream: 2026-02\): either put the model on 2026-08: remove "upstream: 2026-02" from this entry \(the stack is on 2026-08\), or add/);
  });

  it('a cluster variant with a modelSource gets new-model --target, as it was made', () => {
    const dir = tempRepo(server('generative', 'Qwen3-0.6B-rke2', 'qwen3-06b-rke2'));
    const source = '        modelSource:\n          harborRef: harbor.example.com/ai-models/q:1\n          modelUri: hub/Qwen/Qwen3-0.6B\n          storageSize: 10Gi\n';
    const harbor = '  app-serving:harborHostname: harbor.example.com\n  app-serving:harborUser: robot\n  app-serving:harborToken:\n    secure: v1:abc\n';
    const issue = discoveryIssues(dir, `    generative:\n      - name: Qwen3-0.6B-rke2\n${source}`, harbor).find((i) => i.code === 'model.values-missing');
    expect(issue!.message).toMatch(/with: app-serving new-model Qwen3-0\.6B --category generative --slug qwen3-06b --target rke2 --upstream 2026-02 --models-dir /);
  });

  it('a folder of its own set that misses a file still says which file (one set\'s folder is there)', () => {
    const dir = tempRepo({ ...server('generative', 'A', 'a'), 'models/generative/A/gaie-a/values.yaml': '' });
    expect(discoveryIssues(dir, '    generative:\n      - name: A\n')[0]!.message).toMatch(/has no ms-<slug>\/values\.yaml \(needed for the llm-d platform\)$/);
  });

  it('a slug too long on 2026-08 is explained with that set\'s own gateway Service, and why 33 holds there too', () => {
    const slug = 'a'.repeat(34);
    const dir = tempRepo(server('generative', 'A', slug));
    expect(discoveryIssues(dir, '    generative:\n      - name: A\n', '  app-serving:upstream: 2026-08\n')[0]!.message).toBe(
      `${join(dir, 'models/generative/A')}: "${slug}" is 34 characters; a slug may have at most 33 on either set: on 2026-08 the Istio gateway Service "router-${slug}-gateway-istio" (55 characters) fits, but the model must be able to move back to 2026-02, where its Istio gateway Service "infra-${slug}-inference-gateway-istio" would be 64 characters (limit 63) and the Gateway would never become Programmed`,
    );
  });
});

describe('listModelFolders', () => {
  it('lists the model folders of a category, sorted', () => {
    const dir = tempRepo({ ...llmdModel('generative', 'B', 'b'), ...llmdModel('generative', 'A', 'a') });
    expect(listModelFolders(join(dir, 'models'), 'generative')).toEqual(['A', 'B']);
    expect(listModelFolders(join(dir, 'models'), 'embedder')).toEqual([]);
  });
});

describe('nothing is read outside models/', () => {
  it('a model name with "/" or ".." is refused before any file under it is opened', () => {
    // A broken values file outside models/: its parse error would reveal that the path exists.
    const dir = tempRepo({ ...llmdModel('generative', 'M', 'm', 'broken: [\n'), 'outside/M/gaie-m/values.yaml': 'x: [\n', 'outside/M/ms-m/values.yaml': 'x: [\n' });
    const text = `config:\n  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:\n      - name: ../../outside/M\n`;
    let issues: readonly Issue[] = [];
    try {
      discoverModels(parseStackFile(text, 'Pulumi.dev.yaml'), join(dir, 'models'));
    } catch (error) {
      if (isStackError(error)) issues = error.issues;
      else throw error;
    }
    expect(issues.map((i) => [i.code, i.path])).toEqual([['config.invalid', 'models.generative[0].name']]);
    expect(issues[0]!.message).toMatch(/must be a model folder name/);
  });
});

describe('misleading messages', () => {
  it('symlinked values folders are found (ms-<slug>/ and infra-<slug>/)', async () => {
    const { symlinkSync } = await import('node:fs');
    const dir = tempRepo({ 'shared/ms/values.yaml': 'modelArtifacts:\n  name: org/model\n  uri: hf://org/model\n', 'shared/infra/values.yaml': '{}\n', 'models/generative/M/gaie-m/values.yaml': 'inferenceExtension:\n  replicas: 1\n' });
    symlinkSync(join(dir, 'shared/ms'), join(dir, 'models/generative/M/ms-m'));
    symlinkSync(join(dir, 'shared/infra'), join(dir, 'models/generative/M/infra-m'));
    const text = `config:\n  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:\n      - name: M\n`;
    const [model] = discoverModels(parseStackFile(text, 'Pulumi.dev.yaml'), join(dir, 'models'));
    expect(Object.keys(model!.values).sort()).toEqual(['gaie', 'infra', 'modelService']);
  });

  it('a model folder that is a link loop is unreadable (ELOOP); a dangling link, a file or nothing is not found', async () => {
    const { symlinkSync } = await import('node:fs');
    const dir = tempRepo({ ...llmdModel('generative', 'Fine', 'fine'), 'models/generative/File': 'not a folder' });
    symlinkSync(join(dir, 'models/generative/Loop'), join(dir, 'models/generative/Loop'));
    symlinkSync(join(dir, 'nowhere'), join(dir, 'models/generative/Dangling'));
    const issues = discoveryIssues(dir, '    generative:\n      - name: Fine\n      - name: Loop\n      - name: Dangling\n      - name: File\n      - name: Absent\n');
    expect(issues.map((i) => [i.code, i.path])).toEqual([
      ['file.unreadable', 'models.generative[1].name'],
      ['model.not-found', 'models.generative[2].name'],
      ['model.not-found', 'models.generative[3].name'],
      ['model.not-found', 'models.generative[4].name'],
    ]);
    expect(issues[0]!.message).toMatch(/^cannot read the model folder .*models\/generative\/Loop \(ELOOP\): check its permissions, or where its link points$/);
  });
});
