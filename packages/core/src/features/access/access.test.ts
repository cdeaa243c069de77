import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { issuesOf, llmdModel, stackFile, tempRepo } from '../../../test/helpers.ts';
import { accessPlan, apiKeyProblem, describeAccess, htpasswd, jwksProblem, openModelsWarning } from './index.ts';
import { loadStackConfigFromMap, parseStackFile } from '../../stack.ts';
import { planDeployment } from '../../plan.ts';
import { Secret, isSecret } from '../../secret.ts';

const JWKS = JSON.stringify({ keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1' }] });


/** A cloud stack with one generative llm-d model `M` (slug m) whose entry gets `extra` lines. */
function stack(extra: string, top = ''): string {
  return stackFile(`app-serving:cloudProvider: cloud\n${top}app-serving:models:\n  generative:\n    - name: M\n${extra
    .split('\n')
    .map((l) => (l ? `      ${l}` : l))
    .join('\n')}`);
}

const KEYS = "app-serving:apiKeys:\n  ci:\n    secure: v1:abc\n  ci-next:\n    secure: v1:def\n";

describe('access in the stack file', () => {
  it('reads named keys as secrets, never as text, and the model entry as the plan holds it', () => {
    const config = parseStackFile(stack('access:\n  apiKeys: [ci-next, ci]\n  rateLimit:\n    requestsPerMinute: 60', KEYS), 'Pulumi.dev.yaml');
    expect(Object.keys(config.apiKeys!)).toEqual(['ci', 'ci-next']);
    expect(isSecret(config.apiKeys!.ci) && config.apiKeys!.ci.encrypted).toBe(true);
    const plan = accessPlan(config.models.generative[0]!.access);
    expect(plan).toEqual({ mode: 'apiKeys', explicit: true, apiKeys: ['ci', 'ci-next'], jwt: null, requestsPerMinute: 60 });
    expect(describeAccess(plan)).toBe('API keys ci, ci-next; 60 requests/min per key, per gateway pod');
  });

  it('refuses a key written in plain text, with the command that sets it, and never echoes it', () => {
    const issues = issuesOf(() => parseStackFile(stack('access:\n  apiKeys: [ci]', 'app-serving:apiKeys:\n  ci: sk-plain-text-key-0123456789\n'), 'Pulumi.dev.yaml'));
    expect(issues).toEqual([
      {
        code: 'config.not-secret',
        path: 'apiKeys.ci',
        file: 'Pulumi.dev.yaml',
        line: 4,
        message: "must be a secret, not plain text in the stack file: run `pulumi config set --secret --path 'app-serving:apiKeys.ci' <key>`",
      },
    ]);
    expect(JSON.stringify(issues)).not.toContain('sk-plain');
  });

  it('reports every access mistake of a stack in one pass, with the line and the fix', () => {
    const text = stackFile(
      [
        'app-serving:cloudProvider: cloud',
        'app-serving:apiKeys:',
        '  ci:',
        '    secure: v1:abc',
        'app-serving:models:',
        '  generative:',
        '    - name: A',
        '      access: { apiKeys: [ci, gone] }',
        '    - name: B',
        '      access: { jwt: { issuer: https://id.example.com, jwksUri: http://id.example.com/keys } }',
        '    - name: C',
        '      access: { open: true, apiKeys: [ci] }',
        '    - name: D',
        '      access: { rateLimit: { requestsPerMinute: 10, tokensPerMinute: 1000 } }',
        '    - name: E',
        `      access: { jwt: { issuer: i, jwks: '{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}' } }`,
        '  embedder:',
        '    - name: F',
        '      access: { apiKeys: [ci] }',
      ].join('\n'),
    );
    const issues = issuesOf(() => parseStackFile(text, 'Pulumi.dev.yaml'));
    expect(issues.map((i) => [i.code, i.path, i.line])).toEqual([
      ['config.missing-credential', 'models.generative[0].access.apiKeys[1]', 9],
      ['config.invalid', 'models.generative[1].access.jwt.jwksUri', 11],
      ['config.contradiction', 'models.generative[2].access.open', 13],
      ['config.missing-key', 'models.generative[3].access', 15],
      ['values.unsupported', 'models.generative[3].access.rateLimit.tokensPerMinute', 15],
      ['config.invalid', 'models.generative[4].access.jwt.jwks', 17],
      ['config.contradiction', 'models.embedder[0].access', 20],
    ]);
    expect(issues[0]!.message).toBe(`names the key "gone", which app-serving:apiKeys does not hold: pulumi config set --secret --path 'app-serving:apiKeys.gone' <key>`);
    expect(issues[2]!.message).toBe('sets apiKeys and open: a model has one mode; keep one of them');
    expect(issues[4]!.message).toBe("cannot be enforced: the model's gateway (Istio's, or Envoy Gateway's local rate limit) does not count LLM tokens; limit requestsPerMinute instead");
    expect(issues[6]!.message).toBe(
      "cannot be enforced for an llm-d embedding model: clients reach it through the ClusterIP Service ms-<slug>-embeddings, straight to its pods, with no gateway to check credentials (GAIE v1.2's endpoint picker rejects /v1/embeddings); remove apiKeys, jwt and rateLimit (access: {open: true} is allowed), or serve the model with platform: kserve",
    );
    // On 2026-08 the reason is not GAIE v1.2's endpoint picker, which that set does not run.
    const current = issuesOf(() => parseStackFile(text.replace('config:\n', 'config:\n  app-serving:upstream: 2026-08\n'), 'Pulumi.dev.yaml'));
    expect(current.find((i) => i.path === 'models.embedder[0].access')!.message).toMatch(/pods, with no gateway to check credentials \(app-serving routes no embedding model through its gateway, on either set\);/);
  });

  it('from a Pulumi program: the whole map is one secret (JSON), each entry becomes a Secret', () => {
    const models = JSON.stringify({ generative: [{ name: 'M', access: { apiKeys: ['ci'] } }] });
    const config = loadStackConfigFromMap(
      { 'app-serving:cloudProvider': 'cloud', 'app-serving:models': models, 'app-serving:apiKeys': Secret.plain(JSON.stringify({ ci: 'k'.repeat(30) })) },
      { stackName: 'dev' },
    );
    expect(config.apiKeys!.ci!.reveal()).toBe('k'.repeat(30));
    // Not a secret (Pulumi would mark it): refused, value dropped.
    const issues = issuesOf(() =>
      loadStackConfigFromMap({ 'app-serving:cloudProvider': 'cloud', 'app-serving:models': models, 'app-serving:apiKeys': JSON.stringify({ ci: 'k'.repeat(30) }) }, { stackName: 'dev' }),
    );
    expect(issues.map((i) => [i.code, i.path])).toEqual([['config.not-secret', 'apiKeys.ci']]);
  });

  it('plans each model with its access; open by default, and open: true is explicit', () => {
    const dir = tempRepo({ ...llmdModel('generative', 'M', 'm'), ...llmdModel('generative', 'N', 'n') });
    const config = parseStackFile(
      stackFile('app-serving:cloudProvider: cloud\napp-serving:models:\n  generative:\n    - name: M\n      access: { open: true, rateLimit: { requestsPerMinute: 5 } }\n    - name: N'),
      'Pulumi.dev.yaml',
    );
    const plan = planDeployment(config, `${dir}/models`);
    expect(plan.models.map((m) => [m.name, m.access.mode, m.access.explicit, describeAccess(m.access)])).toEqual([
      ['M', 'open', true, 'open; 5 requests/min for all callers, per gateway pod'],
      ['N', 'open', false, 'open (default)'],
    ]);
    // validate's warning: once per stack, naming the models open by default only.
    expect(openModelsWarning(config)).toMatchObject({ code: 'warning.open-access', path: 'models.generative[1].name', message: expect.stringContaining('this model is open to anyone who reaches the gateway (N)') });
  });
});

describe('key hashes and checks', () => {
  it('htpasswd holds {SHA} base64 SHA-1 per key, sorted by name, and never the key', () => {
    const text = htpasswd([
      { name: 'b', key: 'second-key-0123456789abcdef' },
      { name: 'a', key: 'first-key-0123456789abcdef' },
    ]);
    const sha = (k: string) => createHash('sha1').update(k).digest('base64');
    expect(text).toBe(`a:{SHA}${sha('first-key-0123456789abcdef')}\nb:{SHA}${sha('second-key-0123456789abcdef')}`);
    expect(text).not.toContain('first-key');
    // What `htpasswd -s` writes for "password" (Apache docs): the same scheme.
    expect(htpasswd([{ name: 'u', key: 'password' }])).toBe('u:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=');
  });

  it('refuses short or unsendable keys by name only', () => {
    expect(apiKeyProblem('ci', 'short')).toBe('app-serving:apiKeys.ci is shorter than 24 characters: the gateway keeps its SHA-1, so the key must be unguessable (e.g. openssl rand -base64 32)');
    expect(apiKeyProblem('ci', `${'x'.repeat(30)} y`)).toBe('app-serving:apiKeys.ci holds white space or control characters: clients cannot send it in a header');
    expect(apiKeyProblem('ci', 'x'.repeat(24))).toBeNull();
  });

  it('accepts a public JWKS only', () => {
    expect(jwksProblem(JWKS)).toBeNull();
    expect(jwksProblem('{')).toBe('is not JSON: give the JWKS document, {"keys": [...]}');
    expect(jwksProblem('{"keys":[]}')).toBe('must be a JWKS document: {"keys": [{"kty": …}, …]} with at least one key');
    expect(jwksProblem(JSON.stringify({ keys: [{ kty: 'RSA', n: 'x', e: 'AQAB', d: 'private' }] }))).toMatch(/^holds a private or symmetric key/);
  });
});
