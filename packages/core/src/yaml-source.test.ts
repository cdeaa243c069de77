import { describe, expect, it } from 'vitest';
import { parseYaml, sourceWithoutLines } from './yaml-source.ts';

describe('parseYaml', () => {
  const text = 'config:\n  a: 1\n  list:\n    - name: x\n    - name: y\n';

  it('parses to plain data', () => {
    const { source, issues } = parseYaml('f.yaml', text);
    expect(issues).toEqual([]);
    expect(source.value).toEqual({ config: { a: 1, list: [{ name: 'x' }, { name: 'y' }] } });
  });

  it('finds the line of a key path, or of its nearest parent', () => {
    const { source } = parseYaml('f.yaml', text);
    expect(source.lineOf(['config', 'a'])).toBe(2);
    expect(source.lineOf(['config', 'list', 1, 'name'])).toBe(5);
    expect(source.lineOf(['config', 'list', 1, 'missing'])).toBe(5);
    expect(source.lineOf(['config', 'nope'])).toBe(1);
  });

  it('builds located issues', () => {
    const { source } = parseYaml('f.yaml', text);
    expect(source.issue('config.invalid', ['config', 'list', 0, 'name'], 'bad')).toEqual({
      code: 'config.invalid',
      path: 'config.list[0].name',
      message: 'bad',
      file: 'f.yaml',
      line: 4,
    });
  });

  it('reports syntax errors with lines instead of throwing', () => {
    const { issues } = parseYaml('f.yaml', 'a: 1\nb: [1, 2\nc: 3\n');
    expect(issues.length).toBeGreaterThan(0);
    expect(issues[0]).toMatchObject({ code: 'yaml.syntax', file: 'f.yaml' });
    expect(issues[0]!.line).toBeGreaterThanOrEqual(2);
  });

  it('rejects duplicate keys', () => {
    const { issues } = parseYaml('f.yaml', 'a: 1\na: 2\n');
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ code: 'yaml.syntax', line: 2 });
  });
});

describe('sourceWithoutLines', () => {
  it('locates by path only', () => {
    const source = sourceWithoutLines('Pulumi.dev.yaml', {});
    expect(source.lineOf(['x'])).toBeUndefined();
    expect(source.issue('config.invalid', ['models', 'generative', 0], 'm')).toEqual({ code: 'config.invalid', path: 'models.generative[0]', message: 'm', file: 'Pulumi.dev.yaml' });
  });
});

describe('hostile YAML: aliases', () => {
  it('a self-referencing alias is an issue with its line, not a stack overflow', () => {
    const { issues } = parseYaml('v.yaml', 'a: 1\nextraLoop: &l\n  again: *l\n');
    expect(issues).toEqual([{ code: 'yaml.syntax', path: '', file: 'v.yaml', line: 3, message: 'YAML alias *l refers to its own anchor &l (a cycle): values cannot contain themselves' }]);
  });

  it('an alias bomb is an issue with a line, not a crash', () => {
    const rows = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i += 1) rows.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
    const { issues } = parseYaml('bomb.yaml', `${rows.join('\n')}\n`);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ code: 'yaml.syntax', file: 'bomb.yaml', line: 2 });
    expect(issues[0]!.message).toMatch(/^YAML aliases expand to too many nodes \(more than 100 per anchor\)/);
  });

  it('plain aliases still work', () => {
    const { source, issues } = parseYaml('v.yaml', 'base: &b\n  x: 1\ncopy: *b\n');
    expect(issues).toEqual([]);
    expect(source.value).toEqual({ base: { x: 1 }, copy: { x: 1 } });
  });
});

describe('hostile YAML: __proto__', () => {
  it('a __proto__ key is an issue with its line, not silently dropped', () => {
    const { issues } = parseYaml('v.yaml', 'a: 1\nb:\n  __proto__:\n    polluted: true\n');
    expect(issues).toEqual([{ code: 'yaml.syntax', path: '', file: 'v.yaml', line: 3, message: 'a key "__proto__" cannot be used: no chart or stack key has this name, and it would be dropped silently' }]);
  });
});

describe('hostile YAML: one problem kind at a time', () => {
  // The tree is walked once for all three kinds; each is reported only when the ones before found nothing.
  it('duplicate keys hide alias cycles and __proto__ keys; a cycle hides __proto__ keys', () => {
    const all = 'a: 1\na: 2\nloop: &l\n  again: *l\n__proto__: 1\n';
    expect(parseYaml('v.yaml', all).issues.map((i) => [i.line, i.message.slice(0, 30)])).toEqual([[2, 'YAML syntax error: Map keys mu']]);
    expect(parseYaml('v.yaml', all.replace('a: 2\n', '')).issues.map((i) => [i.line, i.message.slice(0, 30)])).toEqual([[3, 'YAML alias *l refers to its ow']]);
    expect(parseYaml('v.yaml', 'a: 1\nb: &b\n  x: 1\nc: *b\n__proto__: 1\nd:\n  __proto__: 2\n').issues.map((i) => i.line)).toEqual([5, 7]);
  });
});
