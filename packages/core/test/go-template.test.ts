/**
 * The text/template subset KServe's configs are rendered with (./go-template.ts): each rule as Go's
 * text/template applies it (go1.25 package docs), on the kinds of action the v0.20 configs hold.
 */
import { describe, expect, it } from 'vitest';
import { executeGoTemplate, type GoData } from './go-template.ts';

const data = (root: Record<string, unknown>, funcs: GoData['funcs'] = {}): GoData => ({
  root,
  funcs,
  field: (name) => {
    const fields: Record<string, { json: string; kind: 'pointer' | 'value' | 'struct' }> = {
      Spec: { json: 'spec', kind: 'struct' },
      Parallelism: { json: 'parallelism', kind: 'pointer' },
      Tensor: { json: 'tensor', kind: 'pointer' },
      Expert: { json: 'expert', kind: 'value' },
      Name: { json: 'name', kind: 'value' },
    };
    const field = fields[name];
    if (!field) throw new Error(`no field ${name}`);
    return field;
  },
});

describe('executeGoTemplate', () => {
  it('prints fields, a pointer as what it points at', () => {
    expect(executeGoTemplate('{{ .Spec.Name }}/{{ .Spec.Parallelism.Tensor }}', data({ spec: { name: 'm', parallelism: { tensor: 2 } } }))).toBe('m/2');
  });

  it('`{{-` trims only white space: in JSON text a newline is the two characters \\n, so it stays', () => {
    const json = JSON.stringify({ script: 'a \\\n  {{- if .Spec.Parallelism }} -p{{- end }} \\\n  b' });
    expect(JSON.parse(executeGoTemplate(json, data({ spec: {} }))).script).toBe('a \\\n \\\n  b');
  });

  it('a field of a nil pointer is an error; `and` stops at the first empty argument, so it guards one', () => {
    expect(() => executeGoTemplate('{{ .Spec.Parallelism.Tensor }}', data({ spec: {} }))).toThrow(/nil pointer evaluating Spec.Parallelism.Tensor/);
    expect(executeGoTemplate('{{ if and .Spec.Parallelism .Spec.Parallelism.Tensor }}x{{ else }}y{{ end }}', data({ spec: {} }))).toBe('y');
    expect(executeGoTemplate('{{ if and .Spec.Parallelism .Spec.Parallelism.Tensor }}x{{ else }}y{{ end }}', data({ spec: { parallelism: { tensor: 0 } } }))).toBe('x');
  });

  it('truth: a non-nil pointer is true whatever it points at; a value field by its value', () => {
    expect(executeGoTemplate('{{ if .Spec.Parallelism.Expert }}e{{ end }}{{ if .Spec.Parallelism }}p{{ end }}', data({ spec: { parallelism: {} } }))).toBe('p');
    expect(executeGoTemplate('{{ or .Spec.Parallelism.Tensor 1 }}', data({ spec: { parallelism: {} } }))).toBe('1');
  });

  it('calls the functions it is given with raw strings, numbers and nil', () => {
    const funcs = { f: (...args: unknown[]) => JSON.stringify(args) };
    expect(executeGoTemplate('{{ f .Spec.Name `-x` 15 nil }}', data({ spec: { name: 'n' } }, funcs))).toBe('["n","-x",15,null]');
  });

  it('throws on what it does not cover, rather than render it wrongly', () => {
    for (const template of ['{{ range .Spec }}{{ end }}', '{{ .Spec.Name | printf "%s" }}', '{{ $x := 1 }}', '{{ if .Spec }}a{{ else if .Spec }}b{{ end }}']) {
      expect(() => executeGoTemplate(template, data({ spec: {} }))).toThrow();
    }
  });
});
