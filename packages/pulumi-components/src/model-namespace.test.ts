import * as pulumi from '@pulumi/pulumi';
import { dockerConfigJson, namespaceManifest, pullSecretManifest } from '@app-serving/core';
import { describe, expect, it } from 'vitest';
import { allStrings, record, valueOf } from '../test/harness.ts';
import { kubernetesProblems } from '../test/k8s-schemas.ts';
import { isSecretValue, redactSecrets, secretPaths } from './mock-runtime.ts';
import { ModelNamespace } from './model-namespace.ts';

const TOKEN = 'robot-token-s3cr3t';

describe('ModelNamespace', () => {
  it('creates only the namespace without a Harbor token', async () => {
    let ns!: ModelNamespace;
    const rec = await record(() => {
      ns = new ModelNamespace('m', { name: 'llm-d-sim', slug: 'sim' });
    });
    expect(rec.summary()).toEqual(['app-serving:model:ModelNamespace m', 'kubernetes:core/v1:Namespace m-namespace']);
    expect(rec.parentOf('m-namespace')).toBe('m');
    expect(rec.dependencies('m-namespace')).toEqual([]);
    expect(rec.revealed('m-namespace')).toEqual({ ...namespaceManifest('llm-d-sim', 'sim') });
    expect(rec.revealed('m-namespace')).toMatchObject({
      metadata: { name: 'llm-d-sim', labels: { 'app.kubernetes.io/managed-by': 'app-serving', 'app.kubernetes.io/part-of': 'app-serving', 'app-serving.io/model': 'sim' } },
    });
    expect(kubernetesProblems(rec.revealed('m-namespace'))).toEqual([]);
    expect(await valueOf(ns.name)).toBe('llm-d-sim');
    expect(await valueOf(ns.pullSecretName)).toBeUndefined();
    expect(ns.pullSecret).toBeUndefined();
  });

  it('adds the dockerconfigjson pull Secret after the namespace, the token secret end to end', async () => {
    let ns!: ModelNamespace;
    const rec = await record(() => {
      ns = new ModelNamespace('m', { name: 'llm-d-q', slug: 'q', harborHostname: 'harbor.example.com', harborUser: 'robot$k8s', harborToken: TOKEN });
    });
    expect(rec.children('m')).toEqual(['kubernetes:core/v1:Namespace m-namespace', 'kubernetes:core/v1:Secret m-pull-secret']);
    expect(rec.dependencies('m-pull-secret')).toEqual(['m-namespace']);
    const secret = rec.get('m-pull-secret');
    // Only the data is secret: name, namespace, labels and type stay readable.
    expect(secretPaths(secret.inputs)).toEqual(['stringData']);
    expect(isSecretValue(secret.inputs.stringData)).toBe(true);
    const expected = pullSecretManifest({ name: 'harbor-creds', namespace: 'llm-d-q', slug: 'q', dockerConfigJson: dockerConfigJson('harbor.example.com', 'robot$k8s', TOKEN) });
    expect(rec.revealed('m-pull-secret')).toEqual({ ...expected });
    expect(JSON.parse((rec.revealed('m-pull-secret').stringData as Record<string, string>)['.dockerconfigjson']!)).toEqual({
      auths: { 'harbor.example.com': { username: 'robot$k8s', password: TOKEN, auth: Buffer.from(`robot$k8s:${TOKEN}`).toString('base64') } },
    });
    // Neither the token nor its base64 form is readable anywhere once secrets are redacted.
    const visible = allStrings(rec.resources.map((r) => redactSecrets(r.inputs)));
    expect(visible.filter((s) => s.includes(TOKEN) || s.includes(Buffer.from(`robot$k8s:${TOKEN}`).toString('base64')))).toEqual([]);
    expect(kubernetesProblems(rec.revealed('m-pull-secret'))).toEqual([]);
    expect(await valueOf(ns.pullSecretName)).toBe('harbor-creds');
    expect(await pulumi.isSecret(ns.name)).toBe(false);
  });

  it('keeps a secret Output token secret and honours pullSecretName', async () => {
    const rec = await record(() => {
      new ModelNamespace('m', { name: 'ns', slug: 's', harborHostname: 'h.example.com', harborUser: 'u', harborToken: pulumi.secret(TOKEN), pullSecretName: 'regcred' });
    });
    expect(secretPaths(rec.get('m-pull-secret').inputs)).toEqual(['stringData']);
    expect(rec.revealed('m-pull-secret')).toMatchObject({ metadata: { name: 'regcred', namespace: 'ns' }, type: 'kubernetes.io/dockerconfigjson' });
  });

  it.each(['harborHostname', 'harborUser'] as const)('rejects a token without %s', async (missing) => {
    const args = { name: 'ns', slug: 's', harborHostname: 'h', harborUser: 'u', harborToken: TOKEN, [missing]: undefined };
    await expect(record(() => new ModelNamespace('m', args))).rejects.toMatchObject({ propertyPath: missing, reason: expect.stringContaining('harborToken') });
  });
});
