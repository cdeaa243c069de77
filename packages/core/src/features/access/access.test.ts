import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { issuesOf, llmdModel, stackFile, tempRepo } from '../../../test/helpers.ts';
import { accessPlan, apiKeyProblem, describeAccess, htpasswd, jwksProblem, openModelsWarning } from './index.ts';
import { loadStackConfigFromMap, parseStackFile } from '../../stack.ts';
import { planDeployment } from '../../plan.ts';
import { Secret, isSecret } from '../../secret.ts';

const RANDOM_KEY = 'q2N8vZr5Tb1WkXe7Jf3Lh0Ys9Pc4Mg6Ud+Ao/Ri1Ekw=';
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
    expect(apiKeyProblem('ci', 'short')).toBe('app-serving:apiKeys.ci is shorter than 24 characters: the gateway keeps its SHA-1, so the key must be unguessable (make a random key, e.g. openssl rand -base64 32)');
    expect(apiKeyProblem('ci', `${RANDOM_KEY} y`)).toBe(
      'app-serving:apiKeys.ci holds white space, a control, format or separator character (such as U+0085, U+200B, U+2028): clients cannot send it in a header, and a terminal does not show it (make a random key, e.g. openssl rand -base64 32)',
    );
    expect(apiKeyProblem('ci', RANDOM_KEY)).toBeNull();
  });

  // m13: what the third hostile round found accepted.
  it.each([
    ['24 × "a"', 'a'.repeat(24), 'it repeats a character or a block'],
    ['a common password and digits', 'password1234567890123456', 'it holds a run of the alphabet or of digits'],
    ['a keyboard row', 'qwertyuiopasdfghjklzxcvbnm', 'it holds a walk along the keyboard'],
    ['a repeated word with substitutions', 'P@ssw0rd!P@ssw0rd!P@ssw0rd!', 'it holds a common word or password'],
    ['a block repeated', 'Xk9-Xk9-Xk9-Xk9-Xk9-Xk9-Xk9-', 'it repeats a character or a block'],
    ['24 hexadecimal digits (96 bits)', '0f3a9c1b7e2d4a6c8b0e1f2a', 'it draws on too few different characters'],
    ['the key name, repeated', 'production-production-production', 'it holds a common word or password'],
  ])('refuses %s, saying why, never the key', (_what, key, why) => {
    const problem = apiKeyProblem('ci', key)!;
    expect(problem).toMatch(new RegExp(`^app-serving:apiKeys\\.ci is too easy to guess: ${why.replace(/[()]/g, '\\$&')} \\(about \\d+ bits; at least 112 are needed, as the gateway keeps its SHA-1 unsalted\\) — make a random key, e\\.g\\. openssl rand -base64 32$`));
    for (let i = 0; i + 4 <= key.length; i += 1) expect(problem).not.toContain(key.slice(i, i + 4));
  });

  it('counts characters as code points, and refuses invisible ones (U+0085, U+200B, U+2028, a lone surrogate)', () => {
    expect(apiKeyProblem('ci', '😀'.repeat(12))).toMatch(/is shorter than 24 characters/);
    for (const c of ['\u0085', '\u200b', '\u2028', '\u00a0', '\ud800', '\u202e']) expect(apiKeyProblem('ci', `${RANDOM_KEY.slice(0, 20)}${c}${RANDOM_KEY.slice(20)}`), JSON.stringify(c)).toMatch(/holds white space, a control, format or separator character/);
  });

  it('property: keys made as the docs say (openssl rand -base64 24 and more, -hex 16 and more) pass; weak shapes of any length fail', () => {
    fc.assert(
      fc.property(fc.integer({ min: 18, max: 64 }), fc.constantFrom('base64', 'base64url', 'hex'), (bytes, encoding) => {
        const key = randomBytes(encoding === 'hex' ? Math.max(bytes, 16) : bytes).toString(encoding as BufferEncoding);
        expect(apiKeyProblem('ci', key)).toBeNull();
      }),
      { seed: 34, numRuns: 500 },
    );
    const weak = fc.oneof(
      fc.tuple(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }), fc.integer({ min: 24, max: 300 })).map(([c, n]) => c.repeat(n)),
      fc.tuple(fc.string({ unit: 'grapheme-ascii', minLength: 2, maxLength: 6 }), fc.integer({ min: 8, max: 60 })).map(([block, n]) => block.repeat(n)),
      fc.tuple(fc.constantFrom('password', 'admin', 'secret', 'changeme', 'letmein', 'qwerty'), fc.integer({ min: 3, max: 20 })).map(([word, n]) => `${word}${'0123456789'.repeat(n)}`),
      fc.integer({ min: 24, max: 200 }).map((n) => 'abcdefghijklmnopqrstuvwxyz'.repeat(10).slice(0, n)),
    );
    fc.assert(
      fc.property(weak, (key) => {
        expect(apiKeyProblem('ci', key)).toMatch(/is too easy to guess|is shorter than|holds white space/);
      }),
      { seed: 34, numRuns: 500 },
    );
  });

  it('accepts a public JWKS only', () => {
    expect(jwksProblem(JWKS)).toBeNull();
    expect(jwksProblem('{')).toBe('is not strict JSON: an object member without a quoted name, at character 2 — give the JWKS document, {"keys": [...]}');
    expect(jwksProblem('{"keys":[]}')).toBe('must be a JWKS document: {"keys": [{"kty": …}, …]} with at least one key');
    expect(jwksProblem(JSON.stringify({ keys: [{ kty: 'RSA', n: 'x', e: 'AQAB', d: 'private' }] }))).toMatch(/^holds a private or symmetric key/);
  });

  // m12: each way the third hostile round got a private key past the check.
  const PUBLIC = '{"kty":"RSA","n":"0vx7agoebGcQSuu","e":"AQAB","kid":"k1"}';
  const PRIVATE = '{"kty":"RSA","n":"0vx7agoebGcQSuu","e":"AQAB","d":"X4cTteJY_gn4FYPs","kid":"k1"}';
  it.each([
    ['a duplicate "keys", the private one first', `{"keys":[${PRIVATE}],"keys":[${PUBLIC}]}`, 'is not strict JSON: the member "keys" twice in one object (readers disagree on which one counts), at character 92 — give the JWKS document, {"keys": [...]}'],
    ['a duplicate "d" inside a key', '{"keys":[{"kty":"RSA","n":"x","e":"AQAB","d":"a","d":"b"}]}', 'is not strict JSON: the member "d" twice in one object (readers disagree on which one counts), at character 50 — give the JWKS document, {"keys": [...]}'],
    ['a private key under another top-level member', `{"keys":[${PUBLIC}],"backup":[${PRIVATE}]}`, 'has members besides "keys" ("backup"): a JWKS holds its keys under "keys" only — remove them'],
    ['"d" inside "oth"', '{"keys":[{"kty":"RSA","n":"x","e":"AQAB","oth":[{"r":"a","d":"b","t":"c"}]}]}', 'holds a private or symmetric key (keys[0] has "oth"): give only the public keys, the gateway needs no more'],
    ['"__proto__" holding "d"', `{"keys":[{"kty":"RSA","n":"x","e":"AQAB","__proto__":{"d":"secret"}}]}`, 'is not strict JSON: a member named "__proto__" (a JavaScript reader may take it for the prototype), at character 42 — give the JWKS document, {"keys": [...]}'],
    ['"d" nested in an unknown member', '{"keys":[{"kty":"EC","crv":"P-256","x":"a","y":"b","extra":{"d":"c"}}]}', 'holds a private or symmetric key (keys[0] has "d"): give only the public keys, the gateway needs no more'],
    ['a symmetric key', '{"keys":[{"kty":"oct","k":"GawgguFyGrWKav7AX4VKUg"}]}', 'holds a private or symmetric key (keys[0] has "k"): give only the public keys, the gateway needs no more'],
    ['trailing text', `{"keys":[${PUBLIC}]} {"keys":[${PRIVATE}]}`, 'is not strict JSON: more after the JSON value, at character 70 — give the JWKS document, {"keys": [...]}'],
  ])('refuses %s', (_what, text, problem) => {
    expect(jwksProblem(text)).toBe(problem);
  });

  it('property: any JWKS holding a private member at any depth of any key is refused; the message never holds key material', () => {
    const member = fc.constantFrom('d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k');
    fc.assert(
      fc.property(member, fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 4 }), (name, depth, count) => {
        let inner: Record<string, unknown> = { [name]: 'S3CRET-MATERIAL' };
        for (let i = 0; i < depth; i += 1) inner = { [`m${i}`]: i % 2 ? [inner] : inner };
        const keys = Array.from({ length: count }, (_, i) => (i === count - 1 ? { kty: 'RSA', n: 'x', e: 'AQAB', ...inner } : { kty: 'EC', crv: 'P-256', x: 'a', y: 'b' }));
        const problem = jwksProblem(JSON.stringify({ keys }));
        expect(problem).toMatch(/^holds a private or symmetric key/);
        expect(problem).not.toContain('S3CRET');
      }),
      { seed: 34, numRuns: 300 },
    );
  });
});
