import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../test/helpers.ts';
import { loadStackFile } from './stack.ts';
import { planDeployment } from './plan.ts';
import { summarizeNames } from './errors.ts';
import { INFRA_IMAGES, imageWarnings, inventory, mirrorReference, mirrorSteps, modelServiceImages, parseImage } from './images.ts';

describe('parseImage', () => {
  it.each([
    ['ghcr.io/llm-d/llm-d-cuda:v0.4.0', { registry: 'ghcr.io', repository: 'llm-d/llm-d-cuda', tag: 'v0.4.0', digest: null }],
    ['michaelf34/infinity:0.0.77-cpu', { registry: 'docker.io', repository: 'michaelf34/infinity', tag: '0.0.77-cpu', digest: null }],
    ['nginx', { registry: 'docker.io', repository: 'library/nginx', tag: null, digest: null }],
    ['harbor.local:8443/p/img@sha256:abc', { registry: 'harbor.local:8443', repository: 'p/img', tag: null, digest: 'sha256:abc' }],
    ['localhost/img:1', { registry: 'localhost', repository: 'img', tag: '1', digest: null }],
  ])('%s', (image, parts) => {
    expect(parseImage(image)).toEqual(parts);
  });
});

describe('inventory', () => {
  it('de-duplicates images across models and sorts them', () => {
    expect(
      inventory([
        { model: 'a', sources: [{ image: 'z:1', where: 'x' }, { image: 'b:1', where: 'y' }] },
        { model: 'b', sources: [{ image: 'z:1', where: 'x' }, { image: 'z:1', where: 'x' }] },
      ]),
    ).toEqual([
      { image: 'b:1', uses: [{ model: 'a', where: 'y' }] },
      { image: 'z:1', uses: [{ model: 'a', where: 'x' }, { model: 'b', where: 'x' }] },
    ]);
  });
});

describe('modelServiceImages', () => {
  it('lists containers of roles that run, the sidecar, init containers and where each comes from', () => {
    const effective = {
      routing: { proxy: { enabled: true, image: 'sidecar:1' } },
      decode: { replicas: 1, containers: [{ image: 'vllm:1' }], initContainers: [{ image: 'init:1' }] },
      prefill: { replicas: 0, containers: [{ image: 'unused:1' }] },
      requester: { enable: true, image: 'req:1' },
    };
    expect(modelServiceImages(effective, 'ms.yaml', { decode: { containers: [{ image: 'vllm:1' }] } }, 'chart')).toEqual([
      { image: 'vllm:1', where: 'ms.yaml: decode.containers[0].image' },
      { image: 'init:1', where: 'chart default (decode.initContainers[0].image)' },
      { image: 'sidecar:1', where: 'chart default (routing.proxy.image)' },
      { image: 'req:1', where: 'chart default (requester.image)' },
    ]);
  });
});

describe('imageWarnings', () => {
  it('flags unpinned images, and on-prem, images outside Harbor', () => {
    const images = inventory([{ model: 'm', sources: [{ image: 'harbor.local/p/a:latest', where: 'f' }, { image: 'ghcr.io/x:1', where: 'g' }, { image: 'harbor.local/p/b@sha256:1', where: 'h' }] }]);
    expect(imageWarnings(images, 'harbor.local', true).map((w) => [w.code, w.message.split(' ')[0]])).toEqual([
      ['warning.image-not-mirrored', 'ghcr.io/x:1'],
      ['warning.image-unpinned', 'harbor.local/p/a:latest'],
    ]);
    expect(imageWarnings(images, undefined, false).map((w) => w.code)).toEqual(['warning.image-unpinned']);
  });

  const models = (count: number, where: (i: number) => string) =>
    inventory(Array.from({ length: count }, (_, i) => ({ model: `M${i}`, sources: [{ image: 'ghcr.io/llm-d/llm-d-routing-sidecar:latest', where: where(i) }] })));

  it('names every use of an image up to four models, with no uses list', () => {
    const [warning] = imageWarnings(models(4, () => 'chart default (routing.proxy.image)'), undefined, false);
    expect(warning).toEqual({
      code: 'warning.image-unpinned',
      path: '',
      message:
        'ghcr.io/llm-d/llm-d-routing-sidecar:latest is not pinned to a version (M0: chart default (routing.proxy.image); M1: chart default (routing.proxy.image); M2: chart default (routing.proxy.image); M3: chart default (routing.proxy.image)); pin a tag so every node runs the same code and a mirror can copy it',
    });
  });

  it('summarises an image many models pull from the same place: a count and the first three names; uses keeps every one', () => {
    const [unpinned, notMirrored] = imageWarnings(models(50, () => 'chart default (routing.proxy.image)'), 'harbor.local', true);
    expect(unpinned!.message).toBe(
      'ghcr.io/llm-d/llm-d-routing-sidecar:latest is not pinned to a version (chart default (routing.proxy.image) in 50 models: M0, M1, M2 and 47 more); pin a tag so every node runs the same code and a mirror can copy it',
    );
    expect(notMirrored!.message).toContain('cannot reach it (chart default (routing.proxy.image) in 50 models: M0, M1, M2 and 47 more) — mirror it');
    expect(unpinned!.uses).toEqual(Array.from({ length: 50 }, (_, i) => ({ model: `M${i}`, where: 'chart default (routing.proxy.image)' })));
    expect(notMirrored!.uses).toEqual(unpinned!.uses);
  });

  it('summarises an image many models set in their own files: the first three uses and a count', () => {
    const [warning] = imageWarnings(models(500, (i) => `m${i}.yaml: decode.containers[0].image`), undefined, false);
    expect(warning!.message).toBe(
      'ghcr.io/llm-d/llm-d-routing-sidecar:latest is not pinned to a version (in 500 models: M0: m0.yaml: decode.containers[0].image, M1: m1.yaml: decode.containers[0].image, M2: m2.yaml: decode.containers[0].image and 497 more); pin a tag so every node runs the same code and a mirror can copy it',
    );
    expect(warning!.uses).toHaveLength(500);
  });
});

describe('summarizeNames', () => {
  it.each([
    [[], ''],
    [['A'], 'A'],
    [['A', 'B'], 'A and B'],
    [['A', 'B', 'C', 'D'], 'A, B, C and D'],
    [['A', 'B', 'C', 'D', 'E'], 'A, B, C and 2 more'],
    [Array.from({ length: 1050 }, (_, i) => `M${i}`), 'M0, M1, M2 and 1,047 more'],
  ])('%j → %s', (names, text) => {
    expect(summarizeNames(names)).toBe(text);
  });
});

describe('mirrorReference', () => {
  it.each([
    ['ghcr.io/llm-d/llm-d-cuda:v0.4.0', 'harbor.local/images-llm-d', 'harbor.local/images-llm-d/llm-d/llm-d-cuda:v0.4.0'],
    ['registry.k8s.io/gateway-api-inference-extension/epp:v1.2.0', 'harbor.local/images-llm-d', 'harbor.local/images-llm-d/gateway-api-inference-extension/epp:v1.2.0'],
    ['michaelf34/infinity:0.0.77-cpu', 'harbor.local/p', 'harbor.local/p/michaelf34/infinity:0.0.77-cpu'],
    ['nginx', 'harbor.local/p/', 'harbor.local/p/nginx'],
    ['ghcr.io/x/y@sha256:abc', 'harbor.local/p', 'harbor.local/p/x/y@sha256:abc'],
    ['harbor.local/p/already:1', 'harbor.local/other', 'harbor.local/p/already:1'],
    // already laid out under the project on another registry: only the registry changes
    ['old-harbor.corp/images-llm-d/llm-d/llm-d-cuda:v0.4.0', 'harbor.local/images-llm-d', 'harbor.local/images-llm-d/llm-d/llm-d-cuda:v0.4.0'],
    ['old-harbor.corp/a/b/x/y:1', 'harbor.local/a/b/', 'harbor.local/a/b/x/y:1'],
    ['old-harbor.corp/images-llm-d-extra/x:1', 'harbor.local/images-llm-d', 'harbor.local/images-llm-d/images-llm-d-extra/x:1'],
  ])('%s under %s', (image, mirror, expected) => {
    expect(mirrorReference(image, mirror)).toBe(expected);
  });
});

describe('mirrorSteps', () => {
  it('puts model images under the mirror and app-serving images under images-infra', () => {
    const images = inventory([{ model: 'm', sources: [{ image: 'ghcr.io/llm-d/llm-d-cuda:v0.4.0', where: 'f' }, { image: 'ghcr.io/oras-project/oras:v1.3.1', where: 'job' }] }]);
    expect(mirrorSteps(images, 'harbor.local/images-llm-d')).toEqual([
      { image: 'ghcr.io/llm-d/llm-d-cuda:v0.4.0', source: 'ghcr.io/llm-d/llm-d-cuda:v0.4.0', target: 'harbor.local/images-llm-d/llm-d/llm-d-cuda:v0.4.0', inHarbor: false },
      { image: 'ghcr.io/oras-project/oras:v1.3.1', source: 'ghcr.io/oras-project/oras:v1.3.1', target: 'harbor.local/images-infra/oras-project/oras:v1.3.1', inHarbor: false },
    ]);
  });

  it('moves images named under another Harbor without adding the project twice', () => {
    const images = inventory([
      { model: 'm', sources: [{ image: 'old.corp/images-infra/oras-project/oras:v1.3.1', where: 'job' }, { image: 'old.corp/images-llm-d/llm-d/llm-d-cuda:v0.4.0', where: 'f' }] },
    ]);
    expect(mirrorSteps(images, 'harbor.local/images-llm-d').map((s) => s.target)).toEqual([
      'harbor.local/images-infra/oras-project/oras:v1.3.1',
      'harbor.local/images-llm-d/llm-d/llm-d-cuda:v0.4.0',
    ]);
  });

  it('knows the upstream of app-serving images already named in Harbor, not of the others', () => {
    const images = inventory([
      { model: 'm', sources: [{ image: 'harbor.local/images-infra/oras-project/oras:v1.3.1', where: 'job' }, { image: 'harbor.local/images-llm-d/x/y:1', where: 'f' }] },
    ]);
    expect(mirrorSteps(images, 'harbor.local/images-llm-d')).toEqual([
      { image: 'harbor.local/images-infra/oras-project/oras:v1.3.1', source: 'ghcr.io/oras-project/oras:v1.3.1', target: 'harbor.local/images-infra/oras-project/oras:v1.3.1', inHarbor: true },
      { image: 'harbor.local/images-llm-d/x/y:1', source: null, target: 'harbor.local/images-llm-d/x/y:1', inHarbor: true },
    ]);
  });

  it("knows the upstream of KServe's images mirrored by kserve.imageMirror", () => {
    const images = inventory([{ model: 'm', sources: [{ image: 'harbor.local/images-llm-d/llm-d/llm-d-uds-tokenizer:v0.7.1', where: 'KServe' }] }]);
    expect(mirrorSteps(images, 'harbor.local/images-llm-d')).toEqual([
      { image: 'harbor.local/images-llm-d/llm-d/llm-d-uds-tokenizer:v0.7.1', source: 'ghcr.io/llm-d/llm-d-uds-tokenizer:v0.7.1', target: 'harbor.local/images-llm-d/llm-d/llm-d-uds-tokenizer:v0.7.1', inHarbor: true },
    ]);
  });
});

describe('mirrorSteps and the 2026-08 set', () => {
  it('knows the upstream of the images the set pins (upstream vLLM, the Router\'s EPP and proxy) named in the mirror, as migrate and new-model name them', () => {
    const images = inventory([
      {
        model: 'm',
        sources: [
          { image: 'harbor.local/images-llm-d/vllm/vllm-openai:v0.30.0', where: 'server' },
          { image: 'harbor.local/images-llm-d/llm-d/llm-d-router-endpoint-picker:v0.10.0', where: 'router' },
          { image: 'harbor.local/images-llm-d/envoyproxy/envoy:distroless-v1.33.2', where: 'proxy' },
        ],
      },
    ]);
    expect(mirrorSteps(images, 'harbor.local/images-llm-d').map((s) => [s.image, s.source])).toEqual([
      ['harbor.local/images-llm-d/envoyproxy/envoy:distroless-v1.33.2', 'docker.io/envoyproxy/envoy:distroless-v1.33.2'],
      ['harbor.local/images-llm-d/llm-d/llm-d-router-endpoint-picker:v0.10.0', 'ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0'],
      ['harbor.local/images-llm-d/vllm/vllm-openai:v0.30.0', 'docker.io/vllm/vllm-openai:v0.30.0'],
    ]);
  });
});

describe('mirrorSteps on every example stack', () => {
  const dir = join(REPO_ROOT, 'apps/app-serving');
  const stacks = readdirSync(dir).filter((f) => /^Pulumi\.[a-z]+\.yaml$/.test(f) && f !== 'Pulumi.yaml' && f !== 'Pulumi.TEMPLATE.yaml');

  it.each(stacks.flatMap((stack) => ['harbor.example.com/images-llm-d', 'mirror.internal:5000/images-llm-d'].map((mirror) => [stack, mirror] as const)))(
    '%s --mirror-to %s: model images under the project, app-serving images under images-infra, no project twice',
    (stack, mirror) => {
      const plan = planDeployment(loadStackFile(join(dir, stack)), join(REPO_ROOT, 'models'));
      const registry = mirror.split('/')[0]!;
      for (const step of mirrorSteps(plan.images, mirror)) {
        if (step.inHarbor) {
          expect(step.target).toBe(step.image);
          continue;
        }
        const infra = INFRA_IMAGES.includes(step.image) || parseImage(step.image).repository.startsWith('images-infra/');
        const under = infra ? `${registry}/images-infra/` : `${mirror}/`;
        expect(step.target.startsWith(under), `${step.image} → ${step.target}`).toBe(true);
        const rest = step.target.slice(under.length);
        expect(rest, `${step.image} → ${step.target}`).not.toMatch(/^images-(llm-d|infra)\//);
        expect(parseImage(step.target).tag ?? parseImage(step.target).digest).toBe(parseImage(step.image).tag ?? parseImage(step.image).digest);
      }
    },
  );
});
