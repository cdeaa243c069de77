import { describe, expect, it, vi } from 'vitest';
import { isStackError, type Issue } from '../errors.ts';
import { isSecret } from '../secret.ts';
import { loadStackConfigFromMap, loadStackFile, parseStackFile, stackNameFromFile } from './load.ts';
import { join } from 'node:path';
import { tempRepo } from '../../test/helpers.ts';

function issuesOf(fn: () => unknown): Issue[] {
  try {
    fn();
  } catch (error) {
    if (isStackError(error)) return [...error.issues];
    throw error;
  }
  throw new Error('expected a StackError');
}

const CLOUD = `config:
  app-serving:cloudProvider: cloud
  app-serving:models:
    generative:
      - name: Sim
`;

describe('parseStackFile', () => {
  it('reads app-serving keys, applies defaults and ignores other namespaces', () => {
    const config = parseStackFile(`${CLOUD}  kubernetes:context: kind\n`, 'Pulumi.dev.yaml');
    expect(config.stackName).toBe('dev');
    expect(config.cloudProvider).toBe('cloud');
    expect(config.platform).toBe('llm-d');
    expect(config.models.generative).toEqual([{ name: 'Sim', enabled: true, nodeSelector: {} }]);
    expect(config.models.embedder).toEqual([]);
  });

  it('treats bare keys as keys of the app-serving project, as Pulumi does', () => {
    const config = parseStackFile('config:\n  cloudProvider: cloud\n  models: {}\n', 'Pulumi.dev.yaml');
    expect(config.cloudProvider).toBe('cloud');
  });

  it('rejects a key given both bare and namespaced', () => {
    const issues = issuesOf(() => parseStackFile(`${CLOUD}  cloudProvider: cloud\n`, 'Pulumi.dev.yaml'));
    expect(issues).toEqual([expect.objectContaining({ code: 'config.invalid', path: 'cloudProvider', line: 6 })]);
  });

  it('recognises secure values as secrets without decrypting them', () => {
    const config = parseStackFile(
      `${CLOUD}  app-serving:harborHostname: harbor.local\n  app-serving:harborUser: robot\n  app-serving:harborToken:\n    secure: v1:abc\n`,
      'Pulumi.dev.yaml',
    );
    expect(isSecret(config.harborToken)).toBe(true);
    expect(config.harborToken!.encrypted).toBe(true);
    expect(JSON.stringify(config)).not.toContain('v1:abc');
  });

  it('refuses a plaintext token and says how to set it', () => {
    const issues = issuesOf(() =>
      parseStackFile(`${CLOUD}  app-serving:harborHostname: harbor.local\n  app-serving:harborUser: robot\n  app-serving:harborToken: hunter2\n`, 'Pulumi.dev.yaml'),
    );
    // Only the form is wrong: the token is set, so no rule also calls it missing.
    expect(issues).toEqual([
      {
        code: 'config.not-secret',
        path: 'harborToken',
        message: 'must be a secret, not plain text in the stack file: run `pulumi config set --secret harborToken <value>`',
        file: 'Pulumi.dev.yaml',
        line: 8,
      },
    ]);
    expect(JSON.stringify(issues)).not.toContain('hunter2');
  });

  it('accepts a kubeconfig path or a kubeconfig secret', () => {
    expect(parseStackFile(`${CLOUD}  app-serving:kubeconfig: ~/.kube/config\n`, 'P.yaml').kubeconfig).toBe('~/.kube/config');
    expect(isSecret(parseStackFile(`${CLOUD}  app-serving:kubeconfig:\n    secure: v1:x\n`, 'P.yaml').kubeconfig)).toBe(true);
  });

  it('reports every problem in one pass, each with its line', () => {
    const issues = issuesOf(() =>
      parseStackFile(
        `config:
  app-serving:cloudProvider: clouds
  app-serving:modles: {}
  app-serving:models:
    generative:
      - name: Sim
        enabeld: true
        modelSource:
          harborRef: harbor.local/ai/m:1
          modelUri: hub/o/m
          storageSize: 40 GB
`,
        'Pulumi.dev.yaml',
      ),
    );
    expect(issues.map(({ code, path, line }) => ({ code, path, line }))).toEqual([
      { code: 'config.invalid', path: 'cloudProvider', line: 2 },
      { code: 'config.unknown-key', path: 'modles', line: 3 },
      { code: 'config.unknown-key', path: 'models.generative[0].enabeld', line: 7 },
      { code: 'config.invalid', path: 'models.generative[0].modelSource.storageSize', line: 11 },
    ]);
    expect(issues[0]!.message).toBe('must be one of "cloud", "on-prem", not "clouds"');
    expect(issues[1]!.message).toBe('unknown key "app-serving:modles" (did you mean "models"?)');
    expect(issues[2]!.message).toBe('unknown key "enabeld" (did you mean "enabled"?)');
    expect(issues[3]!.message).toBe('"40 GB" must be a Kubernetes quantity such as 40Gi or 500Mi');
  });

  it('reports our keys outside "config:" (a block that lost its indentation) with file, line and the fix', () => {
    // What Pulumi leaves of the template after `pulumi config set`, its commented blocks then uncommented.
    const text = [
      'config:',
      '  app-serving:cloudProvider: cloud',
      '  app-serving:models:',
      '    generative:',
      '      - name: Sim',
      'app-serving:charts:',
      '  modelService: { chart: llm-d-modelservice, version: v0.4.12 }',
      'kserve:',
      '  gateway: { name: kserve-gateway }',
      'encryptionsalt: v1:abc',
      '',
    ].join('\n');
    const issues = issuesOf(() => parseStackFile(text, 'Pulumi.dev.yaml'));
    expect(issues).toEqual([
      {
        code: 'config.misplaced-key',
        path: 'app-serving:charts',
        file: 'Pulumi.dev.yaml',
        line: 6,
        message: '"app-serving:charts" is outside "config:" (at the top level of the file), where Pulumi and validate ignore it: indent it and its block by two spaces under "config:", as "  app-serving:charts:"',
      },
      {
        code: 'config.misplaced-key',
        path: 'kserve',
        file: 'Pulumi.dev.yaml',
        line: 8,
        message: '"kserve" is outside "config:" (at the top level of the file), where Pulumi and validate ignore it: indent it and its block by two spaces under "config:", as "  app-serving:kserve:"',
      },
    ]);
    // Without a "config:" section, both problems in one pass.
    expect(issuesOf(() => parseStackFile('app-serving:models: {}\n', 'P.yaml')).map((i) => `${i.code} ${i.path} ${i.line}`)).toEqual(['config.misplaced-key app-serving:models 1', 'config.missing-key config 1']);
  });

  it('says a required key is missing', () => {
    const issues = issuesOf(() => parseStackFile('config:\n  app-serving:models: {}\n', 'P.yaml'));
    expect(issues).toEqual([{ code: 'config.missing-key', path: 'cloudProvider', message: 'is required', file: 'P.yaml', line: 1 }]);
  });

  it('reports wrong types in words', () => {
    const issues = issuesOf(() => parseStackFile('config:\n  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative: {}\n', 'P.yaml'));
    expect(issues).toEqual([expect.objectContaining({ path: 'models.generative', message: 'must be a list, not a mapping', line: 4 })]);
  });

  it('needs a config section in a mapping', () => {
    expect(issuesOf(() => parseStackFile('- a\n', 'P.yaml'))).toEqual([expect.objectContaining({ code: 'yaml.not-a-map' })]);
    expect(issuesOf(() => parseStackFile('encryptionsalt: x\n', 'P.yaml'))).toEqual([expect.objectContaining({ code: 'config.missing-key', path: 'config' })]);
    expect(issuesOf(() => parseStackFile('config: 3\n', 'P.yaml'))).toEqual([expect.objectContaining({ code: 'config.invalid', path: 'config' })]);
  });

  it('turns YAML syntax errors into issues', () => {
    expect(issuesOf(() => parseStackFile('config:\n  a: [\n', 'P.yaml'))[0]).toMatchObject({ code: 'yaml.syntax', file: 'P.yaml' });
  });
});

describe('loadStackFile', () => {
  it('reads the file from disk and names it in messages', () => {
    const dir = tempRepo({ 'Pulumi.prod.yaml': CLOUD });
    const config = loadStackFile(join(dir, 'Pulumi.prod.yaml'), 'Pulumi.prod.yaml');
    expect(config.stackName).toBe('prod');
    expect(config.file).toBe('Pulumi.prod.yaml');
  });

  it('reports a missing file as an issue', () => {
    expect(issuesOf(() => loadStackFile('/nonexistent/Pulumi.x.yaml'))).toEqual([
      { code: 'file.unreadable', path: '', message: 'cannot read the stack file: ENOENT', file: '/nonexistent/Pulumi.x.yaml' },
    ]);
  });
});

describe('loadStackConfigFromMap', () => {
  it('decodes the JSON strings a Pulumi program hands over and wraps secret keys', () => {
    const config = loadStackConfigFromMap(
      {
        'app-serving:cloudProvider': 'on-prem',
        'app-serving:kubeconfig': '~/.kube/rke2.yaml',
        'app-serving:harborHostname': 'harbor.local',
        'app-serving:harborUser': 'robot$puller',
        'app-serving:harborToken': 'hunter2',
        'app-serving:models': JSON.stringify({ generative: [{ name: 'A', nodeSelector: { workload: 'gpu' } }] }),
        'kubernetes:context': 'ignored',
      },
      { stackName: 'prod' },
    );
    expect(config.file).toBe('Pulumi.prod.yaml');
    expect(config.models.generative[0]!.nodeSelector).toEqual({ workload: 'gpu' });
    expect(isSecret(config.harborToken)).toBe(true);
    expect(config.harborToken!.reveal()).toBe('hunter2');
    expect(JSON.stringify(config)).not.toContain('hunter2');
  });

  it('reports problems by key path, without lines', () => {
    const issues = issuesOf(() => loadStackConfigFromMap({ 'app-serving:cloudProvider': 'cloud', 'app-serving:models': '{"generative": [{"nam": "x"}]}' }, { stackName: 's' }));
    expect(issues.map((i) => [i.code, i.path, i.line])).toEqual([
      ['config.unknown-key', 'models.generative[0].nam', undefined],
      ['config.missing-key', 'models.generative[0].name', undefined],
    ]);
  });
});

describe('stackNameFromFile', () => {
  it('takes the stack from Pulumi.<stack>.yaml', () => {
    expect(stackNameFromFile('/a/Pulumi.my-stack.yaml')).toBe('my-stack');
    expect(stackNameFromFile('/a/Pulumi.x.yml')).toBe('x');
    expect(stackNameFromFile('/a/stack.yaml')).toBe('stack');
  });
});

describe('a stack file with problems keeps what parsed, for one pass over the model folders', () => {
  const errorOf = (text: string) => {
    try {
      parseStackFile(text, 'Pulumi.s.yaml', 's', { checkRules: false });
    } catch (error) {
      if (isStackError(error)) return error;
      throw error;
    }
    throw new Error('expected a StackError');
  };
  const stack = (models: string, extra = '') => `config:\n  app-serving:cloudProvider: cloud\n${extra}  app-serving:models:\n${models}`;

  it('replaces a model entry that does not parse by a disabled placeholder at its index', () => {
    const error = errorOf(stack('    generative:\n      - name: A\n        modelSource: { storageSize: 40 GB, harborRef: h.io/a/b:1, modelUri: hub/a/b }\n      - name: B\n'));
    expect(error.issues.map((i) => i.path)).toEqual(['models.generative[0].modelSource.storageSize']);
    expect(error.partial?.models.generative.map((e) => [e.name, e.enabled])).toEqual([
      ['invalid-entry', false],
      ['B', true],
    ]);
  });

  it('drops a misspelt category and an optional key that does not parse, and checks the rules on the rest without repeating a key', () => {
    const error = errorOf(stack('    generative:\n      - name: A\n    embedders: []\n', '  app-serving:harborHostname: "Not A Host"\n  app-serving:harborUser: robot\n'));
    expect(error.issues.map((i) => [i.code, i.path])).toEqual([
      ['config.missing-credential', 'harborToken'],
      ['config.invalid', 'harborHostname'],
      ['config.unknown-key', 'models.embedders'],
    ]);
    expect(error.partial?.harborHostname).toBeUndefined();
    expect(error.partial?.models.generative.map((e) => e.name)).toEqual(['A']);
  });

  it('keeps the whole config when only refused keys (unknown, not a secret) were reported: the planner reports them with the model folders', () => {
    const config = parseStackFile(stack('    generative:\n      - name: A\n', '  app-serving:gpuTolerance: {}\n'), 'Pulumi.s.yaml', 's', { checkRules: false });
    expect(config.deferredIssues.map((i) => i.code)).toEqual(['config.unknown-key']);
    expect(config.models.generative[0]?.name).toBe('A');
  });

  it('salvages nothing when cloudProvider, platform or the models section itself is wrong', () => {
    expect(errorOf(stack('    generative:\n      - name: A\n').replace('cloud\n', 'gcp\n')).partial).toBeUndefined();
    expect(errorOf(stack('    generative:\n      - name: A\n', '  app-serving:platform: vllm\n')).partial).toBeUndefined();
    expect(errorOf(stack('    generative: A\n')).partial).toBeUndefined();
  });

  it('never shows the partial config when the error is printed or serialised', () => {
    const error = errorOf(stack('    generative:\n      - name: A\n        modelSource: { storageSize: 40 GB, harborRef: h.io/a/b:1, modelUri: hub/a/b }\n'));
    expect(error.partial).toBeDefined();
    expect(Object.keys(error)).not.toContain('partial');
    expect(JSON.stringify(error)).not.toContain('"models"');
  });
});

describe('secrets in the wrong place are never echoed', () => {
  const PASS = 'S3cr3t-PASS-value';
  const all = (issues: Issue[]) => JSON.stringify(issues);

  it('harborHostname with credentials: the error does not repeat them', () => {
    const issues = issuesOf(() => parseStackFile(`${CLOUD}  app-serving:harborHostname: "https://robot:${PASS}@harbor.local"\n`, 'Pulumi.dev.yaml'));
    expect(issues.map((i) => i.path)).toEqual(['harborHostname']);
    expect(all(issues)).not.toContain(PASS);
    expect(issues[0]!.message).toContain('https://[redacted]@harbor.local');
  });

  it('a chart repo or oci:// chart with credentials is refused, without echoing them', () => {
    const text = `${CLOUD}  app-serving:charts:\n    infra:\n      repo: https://user:${PASS}@charts.example.com\n    gaie:\n      chart: oci://u:${PASS}@reg.example.com/charts/x\n    modelService:\n      repo: https://charts.example.com/?token=${PASS}\n`;
    const issues = issuesOf(() => parseStackFile(text, 'Pulumi.dev.yaml'));
    expect(issues.map((i) => i.path).sort()).toEqual(['charts.gaie.chart', 'charts.infra.repo', 'charts.modelService.repo']);
    expect(issues.every((i) => /carries credentials/.test(i.message))).toBe(true);
    expect(all(issues)).not.toContain(PASS);
  });

  it('kubeconfig content as a plain value must be a secret, and is not echoed', () => {
    const content = `apiVersion: v1\nclusters:\n- cluster:\n    server: https://1.2.3.4\nusers:\n- user:\n    token: ${PASS}\n`;
    const issues = issuesOf(() => parseStackFile(`${CLOUD}  app-serving:kubeconfig: ${JSON.stringify(content)}\n`, 'Pulumi.dev.yaml'));
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ code: 'config.not-secret', path: 'kubeconfig' });
    expect(all(issues)).not.toContain(PASS);
    // A Pulumi program handing over the content as a plain string: treated as a secret.
    const config = loadStackConfigFromMap({ 'app-serving:cloudProvider': 'cloud', 'app-serving:models': '{"generative":[]}', 'app-serving:kubeconfig': content }, { stackName: 'dev' });
    expect(isSecret(config.kubeconfig)).toBe(true);
  });
});

describe('values Kubernetes and Helm would reject', () => {
  it('toleration key and value, KServe gateway name, namespace and class, chart reference: every one, with its line', () => {
    const text = `${CLOUD}  app-serving:gpuToleration:
    key: "bad key!"
    value: "a b"
  app-serving:kserve:
    gateway:
      name: Bad_Name!
      namespace: "UPPER ns"
      className: "x y"
  app-serving:charts:
    gaie:
      chart: "oci://x y/z"
`;
    const issues = issuesOf(() => parseStackFile(text, 'Pulumi.dev.yaml'));
    expect(issues.map((i) => [i.path, i.line])).toEqual([
      ['gpuToleration.key', 7],
      ['gpuToleration.value', 8],
      ['kserve.gateway.name', 11],
      ['kserve.gateway.namespace', 12],
      ['kserve.gateway.className', 13],
      ['charts.gaie.chart', 16],
    ]);
  });
});

describe('loadStackConfigFromMap under another project name', () => {
  const models = JSON.stringify({ generative: [{ name: 'A' }] });
  it('reads <project>:* keys when given the namespace', () => {
    const config = loadStackConfigFromMap({ 'platform:cloudProvider': 'cloud', 'platform:models': models, 'kubernetes:kubeconfig': '/k' }, { stackName: 'dev', namespace: 'platform' });
    expect(config.models.generative[0]!.name).toBe('A');
    expect(config.kubeconfig).toBeUndefined();
  });

  it('says when the keys sit under another namespace, with the fix', () => {
    const issues = issuesOf(() => loadStackConfigFromMap({ 'app-serving:cloudProvider': 'cloud', 'app-serving:models': models, 'kubernetes:kubeconfig': '/k' }, { stackName: 'dev', namespace: 'platform' }));
    expect(issues.filter((i) => i.code === 'config.unknown-key').map((i) => `${i.path}: ${i.message}`)).toEqual([
      'app-serving:cloudProvider: sits under the namespace "app-serving", but this program reads "platform:*" keys (its project\'s): set it as "platform:cloudProvider" (pulumi config set platform:cloudProvider …), or read the config with namespace "app-serving"',
      'app-serving:models: sits under the namespace "app-serving", but this program reads "platform:*" keys (its project\'s): set it as "platform:models" (pulumi config set platform:models …), or read the config with namespace "app-serving"',
    ]);
  });

  it('a provider namespace holding a known key name (kubernetes:kubeconfig) is not reported', () => {
    const config = loadStackConfigFromMap({ 'app-serving:cloudProvider': 'cloud', 'app-serving:models': models, 'kubernetes:kubeconfig': '/k' }, { stackName: 'dev' });
    expect(config.models.generative).toHaveLength(1);
  });
});

describe('reading a stack compiles no code', () => {
  it("zod's generated object parsers are not built (jitless): each would be compiled by V8 on every run of the CLI", async () => {
    // Fresh schema objects: zod keeps a parser it built once per schema, for the process.
    vi.resetModules();
    const fresh = (await import('./load.ts')) as typeof import('./load.ts');
    const compiled: string[] = [];
    const original = globalThis.Function;
    // Every `new Function(...)` with a body: what zod's JIT would compile for each object schema.
    globalThis.Function = new Proxy(original, {
      construct(target, args: string[]) {
        if (args.length && String(args.at(-1)).trim()) compiled.push(String(args.at(-1)).slice(0, 80));
        return Reflect.construct(target, args);
      },
    });
    try {
      fresh.parseStackFile(CLOUD, 'Pulumi.cloud.yaml');
    } finally {
      globalThis.Function = original;
    }
    expect(compiled).toEqual([]);
  });
});
