import { describe, expect, it } from 'vitest';
import { secretValue, takeSecrets } from './support.ts';

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
