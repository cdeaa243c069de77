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

  it('a key that shares its line with another (after "- ") or a flow mapping: written out by the Document API, comments kept, values exact', () => {
    const { text, rewritten } = editStackText(STACK, [{ kind: 'delete-model', category: 'generative', index: 1, key: 'upstream' }]);
    expect(rewritten).toBe(true);
    expect(text).toContain('# a comment kept');
    expect((parse(text) as { config: Record<string, { generative: Record<string, unknown>[] }> }).config['app-serving:models']!.generative[1]).toEqual({ name: 'B', enabled: true });
    const flow = editStackText('config: {app-serving:cloudProvider: cloud}\n', [{ kind: 'set-stack', key: 'upstream', value: '2026-08' }]);
    expect(flow.rewritten).toBe(true);
    expect(parse(flow.text)).toEqual({ config: { 'app-serving:cloudProvider': 'cloud', 'app-serving:upstream': '2026-08' } });
  });

  it('refuses text that is not YAML', () => {
    expect(() => editStackText('config: [', [{ kind: 'set-stack', key: 'upstream', value: '2026-08' }])).toThrow(/not valid YAML/);
  });
});
