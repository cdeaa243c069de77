import { describe, expect, it } from 'vitest';
import { IssueList, StackError, formatIssue, formatPath, isStackError } from './errors.ts';

describe('formatPath', () => {
  it('joins keys with dots and indices with brackets', () => {
    expect(formatPath(['models', 'generative', 0, 'modelSource', 'storageSize'])).toBe('models.generative[0].modelSource.storageSize');
  });
  it('quotes keys that are not identifiers', () => {
    expect(formatPath(['modelArtifacts', 'labels', 'llm-d.ai/model'])).toBe('modelArtifacts.labels["llm-d.ai/model"]');
  });
  it('returns an empty string for the root', () => {
    expect(formatPath([])).toBe('');
  });
});

describe('formatIssue', () => {
  it('prints file, line, path and message', () => {
    expect(formatIssue({ code: 'config.invalid', path: 'cloudProvider', message: 'bad', file: 'Pulumi.a.yaml', line: 3 })).toBe('Pulumi.a.yaml:3: cloudProvider: bad');
  });
  it('omits what is unknown', () => {
    expect(formatIssue({ code: 'config.invalid', path: '', message: 'bad' })).toBe('bad');
    expect(formatIssue({ code: 'config.invalid', path: 'x', message: 'bad', file: 'f' })).toBe('f: x: bad');
  });
});

describe('StackError', () => {
  it('sorts issues by file, line and path, and lists them in the message', () => {
    const error = new StackError([
      { code: 'config.invalid', path: 'b', message: 'second', file: 'a.yaml', line: 9 },
      { code: 'config.invalid', path: 'a', message: 'first', file: 'a.yaml', line: 2 },
    ]);
    expect(error.code).toBe('STACK_INVALID');
    expect(error.issues.map((i) => i.message)).toEqual(['first', 'second']);
    expect(error.message).toBe('The stack has 2 problems:\n  a.yaml:2: a: first\n  a.yaml:9: b: second');
  });

  it('is recognised by isStackError, also as a plain object from another copy of core', () => {
    expect(isStackError(new StackError([]))).toBe(true);
    expect(isStackError({ code: 'STACK_INVALID', issues: [] })).toBe(true);
    expect(isStackError(new Error('x'))).toBe(false);
  });
});

describe('IssueList', () => {
  it('throws only when it holds issues', () => {
    const list = new IssueList();
    expect(() => list.throwIfAny()).not.toThrow();
    list.add({ code: 'config.invalid', path: 'x', message: 'm' });
    expect(list.size).toBe(1);
    expect(() => list.throwIfAny()).toThrow(StackError);
  });
});
