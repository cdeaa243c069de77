/**
 * The part of Go's `text/template` that KServe's well-known LLMInferenceServiceConfigs use, for tests
 * that render them as KServe's controller does (kserve v0.20.0 pkg/controller/v1alpha2/llmisvc/
 * config_merge.go, ReplaceVariables: the config marshalled to JSON, that text executed as a template
 * with `missingkey=error`, the output unmarshalled). Rendering the JSON text, not each string, is what
 * makes `{{-` trim only the spaces before it — a newline inside a JSON string is the two characters
 * `\n` there, not white space — so a shell script in a config comes out as the controller writes it.
 *
 * Covered (Go text/template semantics, go1.25 `text/template` package docs): text and actions;
 * `{{-` / `-}}` trimming; `if` / `else` / `end`; fields chained from the data (`.A.B.C`), where
 * a field of a nil pointer is an error ("nil pointer evaluating …"); the functions `and` and `or`
 * (they stop at the first argument that decides, as since Go 1.18) and any the caller gives;
 * integer, raw-string (`` `…` ``) and `nil` arguments; printing a value (a pointer printed as what it
 * points at). Anything else — `range`, `with`, pipelines with `|`, variables, comments, quoted
 * strings — throws, so that a config using it is noticed instead of rendered wrongly.
 *
 * The data is a Go struct seen through JSON: {@link GoData.field} maps each Go field name to its JSON
 * key and says whether the field is a pointer (absent in JSON: nil) or a value (absent: its zero).
 */

/** A value as the template sees it: JSON, with `undefined` for nil. */
export type GoValue = unknown;

/** How a Go field name is found in the JSON of its struct. */
export interface GoField {
  /** The JSON key. */
  readonly json: string;
  /** `pointer` (or slice/map): absent means nil, present is true; `value`: absent means the zero value; `struct`: absent means an empty struct (always true). */
  readonly kind: 'pointer' | 'value' | 'struct';
}

export interface GoData {
  /** The root value (`.`), as JSON. */
  readonly root: Record<string, unknown>;
  /** The Go field names the template may use, by name. */
  readonly field: (name: string, path: readonly string[]) => GoField;
  /** The functions besides `and` and `or`: each gets its evaluated arguments. */
  readonly funcs: Readonly<Record<string, (...args: GoValue[]) => GoValue>>;
}

type Node =
  | { readonly type: 'text'; text: string }
  | { readonly type: 'action'; readonly command: Arg[]; readonly source: string }
  | { readonly type: 'if'; readonly condition: Arg[]; readonly then: Node[]; readonly otherwise: Node[]; readonly source: string };

type Arg =
  | { readonly type: 'field'; readonly path: readonly string[] }
  | { readonly type: 'dot' }
  | { readonly type: 'ident'; readonly name: string }
  | { readonly type: 'number'; readonly value: number }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'nil' };

interface Token {
  readonly kind: 'text' | 'action';
  text: string;
  readonly trimLeft: boolean;
  readonly trimRight: boolean;
}

function lex(template: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < template.length) {
    const open = template.indexOf('{{', at);
    if (open < 0) {
      tokens.push({ kind: 'text', text: template.slice(at), trimLeft: false, trimRight: false });
      break;
    }
    if (open > at) tokens.push({ kind: 'text', text: template.slice(at, open), trimLeft: false, trimRight: false });
    const close = template.indexOf('}}', open + 2);
    if (close < 0) throw new Error(`unclosed action at ${open}: ${template.slice(open, open + 60)}`);
    let inner = template.slice(open + 2, close);
    // `{{- ` and ` -}}` need the space: `{{-3}}` is the number -3.
    const trimLeft = /^- /.test(inner);
    const trimRight = / -$/.test(inner);
    if (trimLeft) inner = inner.slice(1);
    if (trimRight) inner = inner.slice(0, -1);
    tokens.push({ kind: 'action', text: inner.trim(), trimLeft, trimRight });
    at = close + 2;
  }
  // Trimming: a `{{-` removes the white space at the end of the text before it, `-}}` at the start of the text after it.
  tokens.forEach((token, i) => {
    if (token.kind !== 'action') return;
    const before = tokens[i - 1];
    const after = tokens[i + 1];
    if (token.trimLeft && before?.kind === 'text') before.text = before.text.replace(/[ \t\r\n]+$/, '');
    if (token.trimRight && after?.kind === 'text') after.text = after.text.replace(/^[ \t\r\n]+/, '');
  });
  return tokens;
}

function parseArgs(text: string, source: string): Arg[] {
  const args: Arg[] = [];
  let rest = text.trim();
  while (rest.length > 0) {
    let match: RegExpExecArray | null;
    if ((match = /^`([^`]*)`/.exec(rest))) args.push({ type: 'string', value: match[1]! });
    else if ((match = /^(\.[A-Za-z_][A-Za-z0-9_]*)+/.exec(rest))) args.push({ type: 'field', path: match[0].slice(1).split('.') });
    else if ((match = /^\.(?=\s|$)/.exec(rest))) args.push({ type: 'dot' });
    else if ((match = /^-?\d+(?=\s|$)/.exec(rest))) args.push({ type: 'number', value: Number(match[0]) });
    else if ((match = /^nil(?=\s|$)/.exec(rest))) args.push({ type: 'nil' });
    else if ((match = /^[A-Za-z_][A-Za-z0-9_]*(?=\s|$)/.exec(rest))) args.push({ type: 'ident', name: match[0] });
    else throw new Error(`not covered by this text/template subset: {{ ${source} }} (at "${rest}")`);
    rest = rest.slice(match[0].length).trimStart();
  }
  return args;
}

function parse(tokens: readonly Token[]): Node[] {
  let at = 0;
  const block = (inIf: boolean): { nodes: Node[]; end: 'end' | 'else' | 'eof' } => {
    const nodes: Node[] = [];
    while (at < tokens.length) {
      const token = tokens[at++]!;
      if (token.kind === 'text') {
        if (token.text) nodes.push({ type: 'text', text: token.text });
        continue;
      }
      const text = token.text;
      if (text === 'end' || text === 'else') {
        if (!inIf) throw new Error(`{{ ${text} }} outside an if`);
        return { nodes, end: text };
      }
      const keyword = /^(\w+)\b/.exec(text)?.[1];
      if (keyword === 'if') {
        const condition = parseArgs(text.slice(2), text);
        const then = block(true);
        let otherwise: Node[] = [];
        if (then.end === 'else') {
          const rest = block(true);
          if (rest.end !== 'end') throw new Error(`{{ ${text} }}: a second else (else if is not covered)`);
          otherwise = rest.nodes;
        } else if (then.end !== 'end') throw new Error(`{{ ${text} }} has no end`);
        nodes.push({ type: 'if', condition, then: then.nodes, otherwise, source: text });
        continue;
      }
      if (keyword === 'range' || keyword === 'with' || keyword === 'define' || keyword === 'template' || keyword === 'block' || text.includes('|') || text.includes('$') || text.startsWith('/*') || text.includes('"') || text.includes('(')) {
        throw new Error(`not covered by this text/template subset: {{ ${text} }}`);
      }
      nodes.push({ type: 'action', command: parseArgs(text, text), source: text });
    }
    return { nodes, end: 'eof' };
  };
  const { nodes } = block(false);
  return nodes;
}

/** A value with whether Go would see it as a non-nil pointer (true whatever it points at). */
interface Evaluated {
  readonly value: GoValue;
  readonly pointer: boolean;
}

/** Go's truth of a value (text/template `isTrue`): nil, false, 0, "" and empty collections are false; a non-nil pointer or a struct is true. */
function truth({ value, pointer }: Evaluated): boolean {
  if (value === undefined || value === null) return false;
  if (pointer) return true;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  return true;
}

function print({ value }: Evaluated, source: string): string {
  if (value === undefined || value === null) throw new Error(`{{ ${source} }} prints nil: not covered (text/template would print <nil> or <no value>)`);
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new Error(`{{ ${source} }} prints a ${Array.isArray(value) ? 'slice' : 'struct'}: not covered`);
}

function evaluateField(data: GoData, path: readonly string[], source: string): Evaluated {
  let at: Evaluated = { value: data.root, pointer: false };
  const walked: string[] = [];
  for (const name of path) {
    if (at.value === undefined || at.value === null) throw new Error(`{{ ${source} }}: nil pointer evaluating ${walked.join('.') || '.'}.${name}`);
    if (typeof at.value !== 'object' || Array.isArray(at.value)) throw new Error(`{{ ${source} }}: can't evaluate field ${name} in ${walked.join('.')}`);
    const field = data.field(name, walked);
    const raw = (at.value as Record<string, unknown>)[field.json];
    walked.push(name);
    if (field.kind === 'struct') at = { value: raw ?? {}, pointer: false };
    else if (field.kind === 'pointer') at = { value: raw ?? undefined, pointer: raw !== undefined && raw !== null };
    else at = { value: raw ?? undefined, pointer: false };
  }
  return at;
}

function evaluateArg(data: GoData, arg: Arg, source: string): Evaluated {
  switch (arg.type) {
    case 'field':
      return evaluateField(data, arg.path, source);
    case 'dot':
      return { value: data.root, pointer: false };
    case 'number':
    case 'string':
      return { value: arg.value, pointer: false };
    case 'nil':
      return { value: undefined, pointer: false };
    case 'ident':
      throw new Error(`{{ ${source} }}: ${arg.name} is a function, not an argument`);
  }
}

function evaluate(data: GoData, command: readonly Arg[], source: string): Evaluated {
  const [head, ...args] = command;
  if (!head) throw new Error(`empty action {{ ${source} }}`);
  if (head.type !== 'ident') {
    if (args.length > 0) throw new Error(`{{ ${source} }}: ${JSON.stringify(head)} is not a function`);
    return evaluateArg(data, head, source);
  }
  if (head.name === 'and' || head.name === 'or') {
    if (args.length === 0) throw new Error(`{{ ${source} }}: ${head.name} needs arguments`);
    let last: Evaluated = { value: undefined, pointer: false };
    for (const arg of args) {
      last = evaluateArg(data, arg, source);
      // and: the first false argument; or: the first true one (Go 1.18+ stops there).
      if (truth(last) === (head.name === 'or')) return last;
    }
    return last;
  }
  const fn = data.funcs[head.name];
  if (!fn) throw new Error(`{{ ${source} }}: function "${head.name}" not defined`);
  return { value: fn(...args.map((a) => evaluateArg(data, a, source).value)), pointer: false };
}

function execute(data: GoData, nodes: readonly Node[]): string {
  let out = '';
  for (const node of nodes) {
    if (node.type === 'text') out += node.text;
    else if (node.type === 'action') out += print(evaluate(data, node.command, node.source), node.source);
    else out += execute(data, truth(evaluate(data, node.condition, node.source)) ? node.then : node.otherwise);
  }
  return out;
}

/** Executes `template` with `data` (throws where Go's template would fail, or where this subset ends). */
export function executeGoTemplate(template: string, data: GoData): string {
  return execute(data, parse(lex(template)));
}
