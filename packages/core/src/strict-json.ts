/**
 * JSON read strictly (RFC 8259, with what RFC 7493 "I-JSON" adds): a member named twice in one
 * object is an error — `JSON.parse` keeps the last one silently, so a check of the first and a
 * consumer that reads the last can disagree — and so is a member named `__proto__` (a JavaScript
 * reader may take it for the prototype). Bounded in depth. For JSON that a rule must read exactly
 * as every consumer does: an inline JWKS.
 */

export type StrictJson = null | boolean | number | string | StrictJson[] | { [member: string]: StrictJson };

/** Why a text is not strict JSON: the message, and the offset in the text. */
export class StrictJsonError extends Error {
  override readonly name = 'StrictJsonError';
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

const WHITE = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

/**
 * Parses `text` as one JSON value, refusing duplicate members, `__proto__` members and nesting
 * deeper than `maxDepth`. Objects come back with a null prototype. Throws a {@link StrictJsonError}.
 */
export function parseStrictJson(text: string, maxDepth = 64): StrictJson {
  let at = 0;
  const fail = (message: string): never => {
    throw new StrictJsonError(message, at);
  };
  const skip = () => {
    while (at < text.length && WHITE.has(text[at]!)) at += 1;
  };
  const string = (): string => {
    STRING.lastIndex = at;
    const match = STRING.exec(text);
    if (!match) return fail('a string that is not valid JSON');
    at += match[0].length;
    return JSON.parse(match[0]) as string;
  };
  const value = (depth: number): StrictJson => {
    skip();
    const c = text[at];
    if (c === '{' || c === '[') {
      if (depth >= maxDepth) fail(`nested deeper than ${maxDepth} levels`);
      at += 1;
      skip();
      if (c === '[') {
        const list: StrictJson[] = [];
        if (text[at] === ']') {
          at += 1;
          return list;
        }
        for (;;) {
          list.push(value(depth + 1));
          skip();
          if (text[at] === ',') at += 1;
          else if (text[at] === ']') {
            at += 1;
            return list;
          } else fail('a list whose items are not separated by ","');
        }
      }
      const object: { [member: string]: StrictJson } = Object.create(null) as { [member: string]: StrictJson };
      const seen = new Set<string>();
      if (text[at] === '}') {
        at += 1;
        return object;
      }
      for (;;) {
        skip();
        if (text[at] !== '"') fail('an object member without a quoted name');
        const start = at;
        const name = string();
        if (seen.has(name)) {
          at = start;
          fail(`the member ${JSON.stringify(name)} twice in one object (readers disagree on which one counts)`);
        }
        if (name === '__proto__') {
          at = start;
          fail('a member named "__proto__" (a JavaScript reader may take it for the prototype)');
        }
        seen.add(name);
        skip();
        if (text[at] !== ':') fail('a member name not followed by ":"');
        at += 1;
        object[name] = value(depth + 1);
        skip();
        if (text[at] === ',') at += 1;
        else if (text[at] === '}') {
          at += 1;
          return object;
        } else fail('an object whose members are not separated by ","');
      }
    }
    if (c === '"') return string();
    if (text.startsWith('true', at)) return (at += 4), true;
    if (text.startsWith('false', at)) return (at += 5), false;
    if (text.startsWith('null', at)) return (at += 4), null;
    NUMBER.lastIndex = at;
    const number = NUMBER.exec(text);
    if (number) {
      at += number[0].length;
      return Number(number[0]);
    }
    return fail(at >= text.length ? 'an unexpected end' : 'a character that starts no JSON value');
  };
  const result = value(0);
  skip();
  if (at < text.length) fail('more after the JSON value');
  return result;
}
