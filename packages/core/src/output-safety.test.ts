import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tempRepo } from '../test/helpers.ts';
import { readValuesFile } from './discovery.ts';
import { IssueList } from './errors.ts';
import { imageReferenceProblem, invalidImageReferences, mirrorTargetProblem } from './oci-reference.ts';
import { hasUrlCredentials, redactUrlCredentials } from './redact.ts';
import { shellCommand, shellQuote } from './shell.ts';
import { escapeControlChars } from './terminal.ts';

describe('image references (OCI grammar)', () => {
  it('accepts what registries accept', () => {
    for (const ok of [
      'nginx',
      'library/nginx:1.27',
      'ghcr.io/llm-d/llm-d-cuda:v0.4.0',
      'localhost:5000/a/b',
      'registry.k8s.io/gateway-api-inference-extension/epp:v1.2.0',
      'harbor.local:8443/images-llm-d/x__y.z-w:TAG_1.0-rc',
      `quay.io/org/img@sha256:${'a'.repeat(64)}`,
      `quay.io/org/img:v1@sha256:${'0'.repeat(64)}`,
      '[::1]:5000/img:v1',
    ]) {
      expect([ok, imageReferenceProblem(ok)]).toEqual([ok, null]);
    }
  });

  it('refuses shell syntax, white space, control characters and bad grammar, without echoing the value', () => {
    const bad = [
      'ghcr.io/x/y:v1;touch${IFS}pwned;echo',
      'ghcr.io/x/y:v1\nrm -rf /',
      'ghcr.io/x/y:v1 #comment',
      'ghcr.io/x/y:$(id)',
      'ghcr.io/x/Y:v1',
      'ghcr.io/x/y:',
      'ghcr.io/x/y@sha256:abc',
      '-oProxyCommand=x/y',
      'ghcr.io//y',
      'a'.repeat(256),
      `ghcr.io/x:${'t'.repeat(129)}`,
      'ghcr.io/x/y:v1\u001b[2J',
    ];
    for (const image of bad) {
      const problem = imageReferenceProblem(image);
      expect(problem, image).not.toBeNull();
      expect(problem).not.toContain(image);
    }
  });

  it('--mirror-to takes <registry>/<project>, nothing else', () => {
    expect(mirrorTargetProblem('harbor.example.com/images-llm-d')).toBeNull();
    expect(mirrorTargetProblem('harbor.local:8443/a/b')).toBeNull();
    for (const bad of ['harbor.local', 'harbor.local/p;id', 'harbor.local/p\nx', 'harbor.local/p #c', 'harbor.local/p:tag', 'harbor.local/P', 'a b/c']) {
      expect(mirrorTargetProblem(bad), bad).not.toBeNull();
    }
  });

  it('values files: every bad image is an issue with file, line and key, before anything is planned', () => {
    const dir = tempRepo({
      'v.yaml': [
        'decode:',
        '  containers:',
        '    - name: vllm',
        '      image: "ghcr.io/x/y:v1;touch${IFS}pwned;echo"',
        'routing:',
        '  proxy:',
        '    image: "ghcr.io/x/p:v1\\nid"',
        'inferenceExtension:',
        '  image:',
        '    hub: ghcr.io/llm-d',
        '    name: epp',
        '    tag: "v1 && id"',
        'ok:',
        '  image: ghcr.io/llm-d/fine:v1',
        '',
      ].join('\n'),
    });
    const list = new IssueList();
    expect(readValuesFile(join(dir, 'v.yaml'), list)).toBeUndefined();
    expect(list.items.map((i) => [i.line, i.path, i.code])).toEqual([
      [4, 'decode.containers[0].image', 'values.invalid'],
      [7, 'routing.proxy.image', 'values.invalid'],
      [9, 'inferenceExtension.image', 'values.invalid'],
    ]);
    expect(list.items.every((i) => !i.message.includes('pwned') && !i.message.includes('&&'))).toBe(true);
    expect(invalidImageReferences({ a: [{ image: 'fine/ok:v1' }] })).toEqual([]);
  });
});

describe('shellQuote', () => {
  it('leaves plain words alone and single-quotes the rest', () => {
    expect(shellQuote('docker://ghcr.io/a/b:v1')).toBe('docker://ghcr.io/a/b:v1');
    expect(shellQuote('out dir;id;')).toBe(`'out dir;id;'`);
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote('')).toBe(`''`);
    expect(shellQuote('~/x')).toBe(`'~/x'`);
    expect(shellQuote('=x')).toBe(`'=x'`);
    expect(shellCommand(['skopeo', 'copy', 'oci-archive:a b/c.tar'])).toBe(`skopeo copy 'oci-archive:a b/c.tar'`);
  });

  it('sh reads back exactly the arguments that were quoted (fuzzed, fixed seed)', () => {
    const samples = fc.sample(fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s.replace(/\u0000/g, '')), { numRuns: 300, seed: 12 });
    samples.push('a;b', '$(id)', '${IFS}', '`id`', "'", '"', '\\', '\n', '*', '~', '!', '#x', '-n', '=a', ' ');
    const script = `for a in ${samples.map(shellQuote).join(' ')}; do printf '%s\\0' "$a"; done`;
    const out = spawnSync('sh', ['-c', script], { encoding: 'utf8' });
    expect(out.status).toBe(0);
    expect(out.stdout.split('\u0000').slice(0, -1)).toEqual(samples);
  });
});

describe('redactUrlCredentials', () => {
  it('removes user information and credential query values, keeps the rest', () => {
    expect(redactUrlCredentials('see https://robot:PASS@harbor.local/x and http://user@h:80/')).toBe('see https://[redacted]@harbor.local/x and http://[redacted]@h:80/');
    expect(redactUrlCredentials('https://charts.example.com/repo?token=abc&ref=main')).toBe('https://charts.example.com/repo?token=[redacted]&ref=main');
    expect(redactUrlCredentials('oci://u:p%40ss@registry/x')).toBe('oci://[redacted]@registry/x');
    expect(redactUrlCredentials('"url": "http://a:b@c"')).toBe('"url": "http://[redacted]@c"');
    expect(redactUrlCredentials('ghcr.io/x/y:v1@sha256:abc')).toBe('ghcr.io/x/y:v1@sha256:abc');
    expect(hasUrlCredentials('https://charts.example.com')).toBe(false);
    expect(hasUrlCredentials('https://x:y@charts.example.com')).toBe(true);
  });
});

describe('escapeControlChars', () => {
  it('shows control characters as escapes, keeps newlines, tabs and text', () => {
    expect(escapeControlChars('a\u001b[2Jb\rc\u0007d\n\te\u009bf\u2028')).toBe('a\\x1b[2Jb\\rc\\x07d\n\te\\x9bf\\u2028');
    expect(escapeControlChars('héllo ✓')).toBe('héllo ✓');
    // Bidirectional and zero-width characters: what a line appears to say is what it says.
    expect(escapeControlChars('exe.\u202etxt \u2066x\u2069 a\u200bb\ufeff\u061c')).toBe('exe.\\u202etxt \\u2066x\\u2069 a\\u200bb\\ufeff\\u061c');
  });
});
