import { describe, expect, it } from 'vitest';
import { isStackError, type Issue } from '../errors.ts';
import { parseStackFile } from './load.ts';

function problems(body: string): { code: string; path: string; message: string }[] {
  try {
    parseStackFile(`config:\n${body}`, 'Pulumi.t.yaml');
  } catch (error) {
    if (isStackError(error)) return error.issues.map(({ code, path, message }: Issue) => ({ code, path, message }));
    throw error;
  }
  return [];
}

const HARBOR = `  app-serving:harborHostname: harbor.local
  app-serving:harborUser: robot
  app-serving:harborToken:
    secure: v1:x
`;
const source = (extra = '') => `        modelSource:
          harborRef: harbor.local/ai/model:1
          modelUri: hub/org/model
          storageSize: 10Gi
${extra}`;

describe('credentials per cloudProvider', () => {
  it('on-prem needs kubeconfig and all three Harbor keys', () => {
    expect(problems('  app-serving:cloudProvider: on-prem\n  app-serving:models: {}\n')).toEqual([
      { code: 'config.missing-credential', path: 'harborHostname', message: 'is required when cloudProvider is on-prem' },
      { code: 'config.missing-credential', path: 'harborToken', message: 'is required when cloudProvider is on-prem (pulumi config set --secret harborToken <robot secret>)' },
      { code: 'config.missing-credential', path: 'harborUser', message: 'is required when cloudProvider is on-prem' },
      { code: 'config.missing-credential', path: 'kubeconfig', message: 'is required when cloudProvider is on-prem' },
    ]);
  });

  it('cloud needs none', () => {
    expect(problems('  app-serving:cloudProvider: cloud\n  app-serving:models: {}\n')).toEqual([]);
  });

  it('cloud needs Harbor credentials when a model pulls from Harbor', () => {
    const found = problems(`  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:\n      - name: A\n${source()}`);
    expect(found.map((p) => p.path)).toEqual(['harborHostname', 'harborToken', 'harborUser']);
    expect(found[0]!.message).toBe('is required because a model pulls its weights from Harbor (modelSource.harborRef)');
  });

  it('a disabled model does not need credentials', () => {
    expect(problems(`  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:\n      - name: A\n        enabled: false\n${source()}`)).toEqual([]);
  });

  it('partial Harbor credentials are an error on cloud too', () => {
    expect(problems('  app-serving:cloudProvider: cloud\n  app-serving:harborUser: robot\n  app-serving:models: {}\n').map((p) => p.path)).toEqual(['harborHostname', 'harborToken']);
  });
});

describe('modelSource rules', () => {
  const stack = (model: string, platform = '') => `  app-serving:cloudProvider: on-prem\n  app-serving:kubeconfig: k\n${HARBOR}${platform}  app-serving:models:\n    generative:\n      - name: A\n${model}`;

  it('accepts a complete on-prem source with a hostPath node', () => {
    expect(problems(stack(source('          hostpathNode: node-1\n')))).toEqual([]);
  });

  it('hostPath keys are for on-prem only', () => {
    const found = problems(`  app-serving:cloudProvider: cloud\n${HARBOR}  app-serving:models:\n    generative:\n      - name: A\n${source('          hostpathNode: n\n          hostpathDir: /d\n')}`);
    expect(found.map((p) => [p.code, p.path])).toEqual([
      ['config.contradiction', 'models.generative[0].modelSource.hostpathNode'],
      ['config.contradiction', 'models.generative[0].modelSource.hostpathDir'],
    ]);
  });

  it('hostpathDir needs hostpathNode', () => {
    expect(problems(stack(source('          hostpathDir: /data/m\n')))).toEqual([
      { code: 'config.missing-key', path: 'models.generative[0].modelSource.hostpathNode', message: 'is required with hostpathDir: the node whose directory backs the PV' },
    ]);
  });

  it('an llm-d model pulls from Harbor, not Hugging Face', () => {
    const found = problems(stack('        modelSource:\n          huggingFace:\n            repo: org/model\n          storageSize: 1Gi\n'));
    expect(found.map((p) => [p.code, p.path])).toEqual([
      ['config.missing-key', 'models.generative[0].modelSource.harborRef'],
      ['config.contradiction', 'models.generative[0].modelSource.huggingFace'],
    ]);
  });

  it('a kserve model takes one of harborRef and huggingFace', () => {
    const both = '        platform: kserve\n        modelSource:\n          harborRef: harbor.local/a/b:1\n          modelUri: m\n          layout: directory\n          huggingFace:\n            repo: org/model\n          storageSize: 1Gi\n';
    expect(problems(stack(both)).map((p) => p.path)).toEqual(['models.generative[0].modelSource', 'models.generative[0].modelSource.modelUri']);
    const neither = '        platform: kserve\n        modelSource:\n          storageSize: 1Gi\n';
    expect(problems(stack(neither))).toEqual([
      { code: 'config.missing-key', path: 'models.generative[0].modelSource', message: 'needs harborRef (pull from Harbor) or huggingFace (download from Hugging Face)' },
    ]);
  });

  it('harborRef needs modelUri, and an hf-cache modelUri needs <dir>/<org>/<model>', () => {
    expect(problems(stack('        modelSource:\n          harborRef: harbor.local/a/b:1\n          storageSize: 1Gi\n')).map((p) => p.path)).toEqual(['models.generative[0].modelSource.modelUri']);
    expect(problems(stack('        modelSource:\n          harborRef: harbor.local/a/b:1\n          modelUri: org/model\n          storageSize: 1Gi\n'))[0]!.message).toBe(
      '"org/model" is not a Hugging Face cache path: use <cache-dir>/<org>/<model> (e.g. hub/Qwen/Qwen3-0.6B), or set layout: directory',
    );
    expect(problems(stack('        modelSource:\n          harborRef: harbor.local/a/b:1\n          modelUri: org/model\n          layout: directory\n          storageSize: 1Gi\n'))).toEqual([]);
  });

  it('harborRef must be on the registry the credentials are for', () => {
    expect(problems(stack('        modelSource:\n          harborRef: other.registry/a/b:1\n          modelUri: hub/o/m\n          storageSize: 1Gi\n'))).toEqual([
      {
        code: 'config.contradiction',
        path: 'models.generative[0].modelSource.harborRef',
        message: 'points at registry "other.registry", but the Harbor credentials are for "harbor.local"; the pull Job could not authenticate',
      },
    ]);
  });

  it('harborRef needs a tag or digest', () => {
    expect(problems(stack('        modelSource:\n          harborRef: harbor.local/a/b\n          modelUri: hub/o/m\n          storageSize: 1Gi\n'))[0]).toMatchObject({
      code: 'config.invalid',
      path: 'models.generative[0].modelSource.harborRef',
    });
  });
});

describe('other rules', () => {
  it('a model listed twice is an error', () => {
    expect(problems('  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:\n      - name: A\n      - name: A\n')).toEqual([
      { code: 'model.duplicate', path: 'models.generative[1].name', message: 'model "A" is listed twice under models.generative (also at models.generative[0])' },
    ]);
  });

  it('a model name is a folder name', () => {
    expect(problems('  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:\n      - name: ../etc\n')[0]).toMatchObject({ code: 'config.invalid', path: 'models.generative[0].name' });
  });

  it('a toleration with operator Exists has no value', () => {
    expect(problems('  app-serving:cloudProvider: cloud\n  app-serving:models: {}\n  app-serving:gpuToleration:\n    key: gpu\n    operator: Exists\n    value: x\n')).toEqual([
      { code: 'config.contradiction', path: 'gpuToleration.value', message: 'must not be set when operator is Exists' },
    ]);
  });

  it('chart overrides name a repository exactly when they need one', () => {
    const found = problems(
      '  app-serving:cloudProvider: cloud\n  app-serving:models: {}\n  app-serving:charts:\n    gaie:\n      chart: oci://mirror/inferencepool\n      repo: https://x.example\n    modelService:\n      chart: llm-d-modelservice\n',
    );
    expect(found.map((p) => [p.code, p.path])).toEqual([
      ['config.contradiction', 'charts.gaie.repo'],
      ['config.missing-key', 'charts.modelService.repo'],
    ]);
  });
});

describe('readyTimeout, controlNodeSelector and modelGateway', () => {
  const models = (entry: string) => `  app-serving:cloudProvider: cloud\n  app-serving:models:\n    generative:\n      - name: A\n${entry}`;

  it('accepts durations and rejects anything else', () => {
    expect(problems(models('        readyTimeout: 1h30m\n'))).toEqual([]);
    expect(problems(models('        readyTimeout: 90\n'))).toEqual([{ code: 'config.invalid', path: 'models.generative[0].readyTimeout', message: 'must be a string, not 90' }]);
    for (const bad of ['30 min', '0m', 'm', '1d']) {
      expect(problems(models(`        readyTimeout: "${bad}"\n`)).map((p) => p.path)).toEqual(['models.generative[0].readyTimeout']);
    }
  });

  it('rejects readyTimeout on a kserve model', () => {
    expect(problems(models('        platform: kserve\n        readyTimeout: 45m\n'))).toEqual([
      {
        code: 'config.contradiction',
        path: 'models.generative[0].readyTimeout',
        message: 'is only for llm-d models (it sets how long `pulumi up` awaits their Deployments); remove it',
      },
    ]);
  });

  it('checks controlNodeSelector labels and modelGateway namespaces', () => {
    const body = `  app-serving:cloudProvider: cloud\n  app-serving:controlNodeSelector:\n    "bad key!": x\n  app-serving:modelGateway:\n    routeNamespaces: [Apps]\n    acessLogging: false\n  app-serving:models: {}\n`;
    expect(problems(body).map((p) => [p.code, p.path])).toEqual([
      ['config.invalid', 'controlNodeSelector["bad key!"]'],
      ['config.invalid', 'modelGateway.routeNamespaces[0]'],
      ['config.unknown-key', 'modelGateway.acessLogging'],
    ]);
  });
});
