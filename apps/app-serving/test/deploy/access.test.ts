import { htpasswd } from '@app-serving/core';
import { describe, expect, it } from 'vitest';
import { check, forgedToken, harnessJwks, harnessToken, parseHtpasswd, useHarnessKeys, type Rule } from './access.ts';

/** The gateway stand-in of the deploy tier refuses what the gateway would: else verify's access checks prove nothing. */
describe("the deploy tier's gateway stand-in", () => {
  const request = (authorization?: string) => ({ headers: authorization === undefined ? {} : { authorization } });
  const basic = (user: string, key: string) => `Basic ${Buffer.from(`${user}:${key}`).toString('base64')}`;

  it('API keys: the key whose SHA-1 the deployed htpasswd holds passes; another key, another name or none is refused', () => {
    const rule: Rule = { users: parseHtpasswd(htpasswd([{ name: 'ci', key: 'k'.repeat(32) }])), anonymous: 401 };
    expect(check(rule, request(basic('ci', 'k'.repeat(32))))).toBeUndefined();
    for (const refused of [basic('ci', 'x'.repeat(32)), basic('other', 'k'.repeat(32)), `Bearer ${'k'.repeat(32)}`, undefined]) {
      expect(check(rule, request(refused))?.status).toBe(401);
    }
  });

  it("JWT: the harness's token for the issuer and audience passes; another issuer, a changed payload, an expired or forged token is refused with 401, another audience with 403 (as the real Envoy answers), none with the rule's status", () => {
    const rule: Rule = { jwt: [{ issuer: 'https://issuer.example.com', audiences: ['models'], jwks: harnessJwks() }], anonymous: 403 };
    const token = harnessToken('https://issuer.example.com', ['models']);
    expect(check(rule, request(`Bearer ${token}`))).toBeUndefined();
    const [head, , signature] = token.split('.');
    const forged = `${head}.${Buffer.from(JSON.stringify({ iss: 'https://issuer.example.com', aud: 'models', exp: 9_999_999_999 })).toString('base64url')}.${signature}`;
    for (const refused of [harnessToken('https://other.example.com', ['models']), forged, harnessToken('https://issuer.example.com', ['models'], { expiresIn: -60 }), forgedToken('https://issuer.example.com', ['models'])]) {
      expect(check(rule, request(`Bearer ${refused}`))?.status).toBe(401);
    }
    expect(check(rule, request(`Bearer ${harnessToken('https://issuer.example.com', ['other'])}`))?.status).toBe(403);
    expect(check(rule, request())?.status).toBe(403);
  });

  it("a stack's JWT models get the harness's public key inline, whatever keys they named", () => {
    const config = { 'app-serving:models': { generative: [{ name: 'a', access: { jwt: { issuer: 'i', jwksUri: 'https://i/jwks' } } }, { name: 'b', access: { open: true } }] } };
    useHarnessKeys(config);
    expect(config['app-serving:models'].generative).toEqual([{ name: 'a', access: { jwt: { issuer: 'i', jwks: harnessJwks() } } }, { name: 'b', access: { open: true } }]);
  });
});
