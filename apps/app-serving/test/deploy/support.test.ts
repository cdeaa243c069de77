import { describe, expect, it } from 'vitest';
import { notPartOf, secretValue, takeSecrets } from './support.ts';

describe('a stack file made deployable: its secrets', () => {
  it('are taken out at any depth (pulumi config set --secret --path), by the path the engine sets them at', () => {
    const { config, secrets } = takeSecrets({
      'app-serving:harborToken': { secure: 'v1:a' },
      'app-serving:apiKeys': { ci: { secure: 'v1:b' }, 'ci-2': { secure: 'v1:c' } },
      'app-serving:models': { generative: [{ name: 'm' }] },
    });
    expect(config).toEqual({ 'app-serving:models': { generative: [{ name: 'm' }] } });
    expect(secrets).toEqual({
      'app-serving:harborToken': secretValue('app-serving:harborToken', 'v1:a'),
      'app-serving:apiKeys["ci"]': secretValue('app-serving:apiKeys["ci"]', 'v1:b'),
      'app-serving:apiKeys["ci-2"]': secretValue('app-serving:apiKeys["ci-2"]', 'v1:c'),
    });
    // Long enough for an API key, and sendable in a header.
    expect(secrets['app-serving:apiKeys["ci"]']).toMatch(/^test-apiKeys\.ci-[A-Za-z0-9_-]{32}$/);
  });
});

describe('notPartOf: what the plan wrote is in the object the API server holds', () => {
  it('passes defaults the server added, and nothing wanted where the plan has no value', () => {
    expect(notPartOf({ spec: { a: 1, list: [{ name: 'x' }] }, data: undefined }, { spec: { a: 1, b: 2, list: [{ name: 'x', weight: 1 }] }, data: undefined })).toBeNull();
    expect(notPartOf({ spec: undefined }, { spec: { finalizers: ['kubernetes'] } })).toBeNull();
  });

  it('names the first place that differs: a value, a missing key, a list of another length', () => {
    expect(notPartOf({ spec: { a: 1 } }, { spec: { a: 2 } })).toBe('.spec.a: 2, the plan\'s 1');
    expect(notPartOf({ spec: { a: { b: 1 } } }, { spec: {} })).toMatch(/^\.spec\.a: undefined, the plan's a map/);
    expect(notPartOf({ list: [1, 2] }, { list: [1] })).toMatch(/^\.list: \[1\], the plan's \[1,2\]/);
  });
});
