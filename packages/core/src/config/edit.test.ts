import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { editStackText } from './edit.ts';

const STACK = `# my stack
config:
  # where it runs
  app-serving:cloudProvider: cloud   # a comment kept
  app-serving:models:
    generative:
      - name: A
        enabled: true
        upstream: 2026-02
      - upstream: 2026-02
        name: B
        enabled: true
`;

describe('editStackText', () => {
  it('adds a stack key with its comment below config:, sets and removes model keys, and leaves every other byte as it was', () => {
    const { text, rewritten } = editStackText(STACK, [
      { kind: 'set-stack', key: 'upstream', value: '2026-08', comment: 'the set' },
      { kind: 'delete-model', category: 'generative', index: 0, key: 'upstream' },
    ]);
    expect(rewritten).toBe(false);
    expect(text).toBe(STACK.replace('config:\n', 'config:\n  # the set\n  app-serving:upstream: 2026-08\n').replace('        enabled: true\n        upstream: 2026-02\n', '        enabled: true\n'));
  });

  it('sets a key in place, and adds a model key below the entry’s name', () => {
    const first = editStackText(STACK, [{ kind: 'set-model', category: 'generative', index: 0, key: 'upstream', value: '2026-08' }]);
    expect(first.text).toBe(STACK.replace('        upstream: 2026-02\n      - upstream', '        upstream: 2026-08\n      - upstream'));
    const added = editStackText('config:\n  app-serving:models:\n    embedder:\n      - name: E   # e\n        enabled: true\n', [{ kind: 'set-model', category: 'embedder', index: 0, key: 'upstream', value: '2026-08' }]);
    expect(added.text).toBe('config:\n  app-serving:models:\n    embedder:\n      - name: E   # e\n        upstream: 2026-08\n        enabled: true\n');
  });

  it('a key that shares its line with another (in a flow mapping) or a flow config: written out by the Document API, comments kept, values exact', () => {
    const { text, rewritten } = editStackText(STACK.replace('      - upstream: 2026-02\n        name: B\n', '      - {upstream: 2026-02, name: B,\n         enabled: true}\n').replace(/\n        enabled: true\n$/, '\n'), [
      { kind: 'delete-model', category: 'generative', index: 1, key: 'upstream' },
    ]);
    expect(rewritten).toBe(true);
    expect(text).toContain('# a comment kept');
    expect((parse(text) as { config: Record<string, { generative: Record<string, unknown>[] }> }).config['app-serving:models']!.generative[1]).toEqual({ name: 'B', enabled: true });
    const flow = editStackText('config: {app-serving:cloudProvider: cloud}\n', [{ kind: 'set-stack', key: 'upstream', value: '2026-08' }]);
    expect(flow.rewritten).toBe(true);
    expect(parse(flow.text)).toEqual({ config: { 'app-serving:cloudProvider': 'cloud', 'app-serving:upstream': '2026-08' } });
  });

  it('keeps the quotes of a value it sets ("2026-02" → "2026-08"), and a block scalar becomes a plain value on its key’s line', () => {
    const set = (text: string) => editStackText(text, [{ kind: 'set-stack', key: 'upstream', value: '2026-08' }]);
    expect(set('config:\n  app-serving:upstream: "2026-02" # pinned\n')).toEqual({ text: 'config:\n  app-serving:upstream: "2026-08" # pinned\n', rewritten: false });
    expect(set("config:\n  app-serving:upstream: '2026-02'\r\n")).toEqual({ text: "config:\n  app-serving:upstream: '2026-08'\r\n", rewritten: false });
    expect(set('config:\n  app-serving:upstream: !!str 2026-02\n')).toEqual({ text: 'config:\n  app-serving:upstream: !!str 2026-08\n', rewritten: false });
    expect(set('config:\n  app-serving:upstream: |\r\n    2026-02\r\n  app-serving:cloudProvider: cloud\r\n')).toEqual({
      text: 'config:\n  app-serving:upstream: 2026-08\r\n  app-serving:cloudProvider: cloud\r\n',
      rewritten: false,
    });
    // Written out by the Document API (a flow mapping elsewhere in config): the quotes still kept.
    const flow = set('config:\n  app-serving:upstream: "2026-02"\n  app-serving:models: {generative: [{name: A}]}\n  other: {a: 1, b: 2}\n');
    expect(flow.text).toContain('app-serving:upstream: "2026-08"');
  });

  it('a line it adds takes the line ending of the line above it (a file mixing LF and CR LF keeps each line’s)', () => {
    const mixed = 'config:\n  app-serving:cloudProvider: cloud\r\n  app-serving:models:\r\n    generative:\r\n      - name: A\n        enabled: true\r\n';
    const stack = editStackText(mixed, [{ kind: 'set-stack', key: 'upstream', value: '2026-08', comment: 'the set' }]);
    expect(stack.text).toBe(mixed.replace('config:\n', 'config:\n  # the set\n  app-serving:upstream: 2026-08\n'));
    const model = editStackText(mixed, [{ kind: 'set-model', category: 'generative', index: 0, key: 'upstream', value: '2026-08' }]);
    expect(model.text).toBe(mixed.replace('- name: A\n', '- name: A\n        upstream: 2026-08\n'));
    const crlf = 'config:\r\n  app-serving:cloudProvider: cloud\n';
    expect(editStackText(crlf, [{ kind: 'set-stack', key: 'upstream', value: '2026-08' }]).text).toBe('config:\r\n  app-serving:upstream: 2026-08\r\n  app-serving:cloudProvider: cloud\n');
  });

  it('removes a model’s first key (after "- ") in place: the next key moves up to its line', () => {
    const { text, rewritten } = editStackText(STACK, [
      { kind: 'set-stack', key: 'upstream', value: '2026-08', comment: 'the set' },
      { kind: 'delete-model', category: 'generative', index: 1, key: 'upstream' },
    ]);
    expect(rewritten).toBe(false);
    expect(text).toBe(STACK.replace('config:\n', 'config:\n  # the set\n  app-serving:upstream: 2026-08\n').replace('      - upstream: 2026-02\n        name: B\n', '      - name: B\n'));
    // A comment line between the two keys would be lost: written out by the Document API instead, comment kept.
    const commented = editStackText('config:\n  app-serving:models:\n    generative:\n      - upstream: 2026-02\n        # B is big\n        name: B\n', [{ kind: 'delete-model', category: 'generative', index: 0, key: 'upstream' }]);
    expect(commented.rewritten).toBe(true);
    expect(commented.text).toContain('# B is big');
  });

  it('written out by the Document API (a flow config, a "? key"): a new stack key goes first in config:, with its comment, as documented', () => {
    const flow = editStackText('config: {app-serving:cloudProvider: cloud, x: 1}\n', [{ kind: 'set-stack', key: 'upstream', value: '2026-08', comment: 'the set' }]);
    expect(flow.rewritten).toBe(true);
    expect(flow.text).toMatch(/^config:\n  \{\n    # the set\n    app-serving:upstream: 2026-08,\n    app-serving:cloudProvider: cloud,/);
    const explicit = editStackText('config:\n  ? app-serving:cloudProvider\n  : cloud\n  x: 1 # kept\n', [{ kind: 'set-stack', key: 'upstream', value: '2026-08', comment: 'the set' }]);
    expect(explicit.text).toBe('config:\n  # the set\n  app-serving:upstream: 2026-08\n  app-serving:cloudProvider: cloud\n  x: 1 # kept\n');
    const model = editStackText('config:\n  app-serving:models: {generative: [{enabled: true, name: A}]}\n', [{ kind: 'set-model', category: 'generative', index: 0, key: 'upstream', value: '2026-08' }]);
    expect(parse(model.text)).toEqual({ config: { 'app-serving:models': { generative: [{ enabled: true, name: 'A', upstream: '2026-08' }] } } });
    expect(Object.keys((parse(model.text) as { config: Record<string, { generative: Record<string, unknown>[] }> }).config['app-serving:models']!.generative[0]!)).toEqual(['enabled', 'name', 'upstream']);
  });

  it('refuses text that is not YAML', () => {
    expect(() => editStackText('config: [', [{ kind: 'set-stack', key: 'upstream', value: '2026-08' }])).toThrow(/not valid YAML/);
  });
});
