import { describe, expect, it } from 'vitest';
import { imageWarnings, inventory, modelServiceImages, parseImage } from './images.ts';

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
});
