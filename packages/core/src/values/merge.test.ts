import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { atPath, deepEqual, effectiveValues, freezeValues, getPath, leaves, mergeAll, mergeValues, stripNulls, type Values } from './merge.ts';

const leafArb = fc.oneof(fc.integer(), fc.string({ maxLength: 3 }), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }));

/** Values trees of small depth with scalars, lists and nulls (the shapes of Helm values). */
const valuesArb: fc.Arbitrary<Values> = fc.letrec<{ tree: Values; node: unknown }>((tie) => ({
  tree: fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), tie('node'), { maxKeys: 4 }) as fc.Arbitrary<Values>,
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leafArb, tie('tree')),
})).tree;

/**
 * Trees whose layers agree on which keys hold maps (keys m*, n* always maps; x*, y* always leaves):
 * the case where Helm's layering is associative.
 */
const consistentArb: fc.Arbitrary<Values> = fc.letrec<{ tree: Values }>((tie) => ({
  tree: fc
    .record(
      {
        m: fc.oneof({ depthSize: 'small' }, fc.constant(undefined), tie('tree')),
        n: fc.oneof({ depthSize: 'small' }, fc.constant(undefined), tie('tree')),
        x: fc.oneof(fc.constant(undefined), leafArb),
        y: fc.oneof(fc.constant(undefined), leafArb),
      },
      { requiredKeys: [] },
    )
    .map((record) => Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as Values),
})).tree;

describe('mergeValues', () => {
  it('merges maps recursively', () => {
    expect(mergeValues({ a: { x: 1, y: 2 } }, { a: { y: 3, z: 4 } })).toEqual({ a: { x: 1, y: 3, z: 4 } });
  });

  it('replaces lists whole', () => {
    expect(mergeValues({ list: [1, 2, 3] }, { list: [9] })).toEqual({ list: [9] });
  });

  it('replaces scalars and maps by each other', () => {
    expect(mergeValues({ a: { x: 1 } }, { a: 'flat' })).toEqual({ a: 'flat' });
    expect(mergeValues({ a: 'flat' }, { a: { x: 1 } })).toEqual({ a: { x: 1 } });
  });

  it('keeps a null so that it still deletes a chart default in Helm', () => {
    expect(mergeValues({ a: { x: 1 } }, { a: null })).toEqual({ a: null });
    expect(mergeValues({}, { b: null })).toEqual({ b: null });
  });

  it('does not modify its inputs', () => {
    const base = { a: { x: [1] } };
    const overlay = { a: { y: 2 } };
    const merged = mergeValues(base, overlay);
    (merged.a as { x: number[] }).x.push(2);
    expect(base).toEqual({ a: { x: [1] } });
    expect(overlay).toEqual({ a: { y: 2 } });
  });

  it('is associative where the layers agree on which keys hold maps (property)', () => {
    fc.assert(
      fc.property(consistentArb, consistentArb, consistentArb, (a, b, c) => {
        expect(mergeValues(mergeValues(a, b), c)).toEqual(mergeValues(a, mergeValues(b, c)));
      }),
      { numRuns: 400 },
    );
  });

  it('is not associative when a layer replaces a map by a scalar: order matters, as in Helm', () => {
    const [a, b, c] = [{ d: { x: 1 } }, { d: 0 }, { d: {} }];
    expect(mergeValues(mergeValues(a, b), c)).toEqual({ d: {} });
    expect(mergeValues(a, mergeValues(b, c))).toEqual({ d: { x: 1 } });
  });

  it('has the empty map as identity (property)', () => {
    fc.assert(
      fc.property(valuesArb, (a) => {
        expect(mergeValues({}, a)).toEqual(a);
        expect(mergeValues(a, {})).toEqual(a);
      }),
    );
  });

  it('lets the overlay win at every leaf it sets (property)', () => {
    fc.assert(
      fc.property(valuesArb, valuesArb, (a, b) => {
        const merged = mergeValues(a, b);
        for (const { path, value } of leaves(b)) {
          if (value !== null && typeof value === 'object' && !Array.isArray(value)) continue;
          expect(getPath(merged, path)).toEqual(value);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('replaces a list wherever the overlay has one (property)', () => {
    fc.assert(
      fc.property(valuesArb, fc.array(fc.integer(), { maxLength: 4 }), (a, list) => {
        expect(mergeValues(a, { b: list }).b).toEqual(list);
      }),
    );
  });
});

describe('effectiveValues', () => {
  it('deletes a key a later layer sets to null, at any depth', () => {
    expect(effectiveValues({ routing: { proxy: { zapLogLevel: 'debug', image: 'x' } } }, { routing: { proxy: { zapLogLevel: null } } })).toEqual({
      routing: { proxy: { image: 'x' } },
    });
  });

  it('never contains a null key (property)', () => {
    fc.assert(
      fc.property(valuesArb, valuesArb, (a, b) => {
        const noNullKeys = (v: unknown): boolean =>
          v === null || typeof v !== 'object' || Array.isArray(v) ? true : Object.values(v as Values).every((x) => x !== null && noNullKeys(x));
        expect(noNullKeys(effectiveValues(a, b))).toBe(true);
      }),
    );
  });

  it('drops a key when the last layer nulls it (property)', () => {
    fc.assert(
      fc.property(valuesArb, fc.constantFrom('a', 'b', 'c', 'd'), (a, key) => {
        expect(Object.hasOwn(effectiveValues(a, { [key]: null }), key)).toBe(false);
      }),
    );
  });
});

describe('helpers', () => {
  it('getPath reads through maps only', () => {
    expect(getPath({ a: { b: 1 } }, ['a', 'b'])).toBe(1);
    expect(getPath({ a: [1] }, ['a', '0'])).toBeUndefined();
    expect(getPath({ a: 1 }, ['a', 'b'])).toBeUndefined();
  });

  it('atPath builds a tree', () => {
    expect(atPath(['a', 'b'], 1)).toEqual({ a: { b: 1 } });
    expect(() => atPath([], 1)).toThrow();
  });

  it('stripNulls leaves lists alone', () => {
    expect(stripNulls({ a: [null], b: null, c: { d: null } })).toEqual({ a: [null], c: {} });
  });

  it('mergeAll layers in order', () => {
    expect(mergeAll({ a: 1 }, { a: 2 }, { b: 3 })).toEqual({ a: 2, b: 3 });
  });

  it('deepEqual compares structure', () => {
    expect(deepEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toBe(true);
    expect(deepEqual({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(deepEqual([1], [1, 2])).toBe(false);
  });
});

describe('the one-pass forms core uses on every plan (same results as the layered ones, key order included)', () => {
  const pathArb = fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 3 });
  const valueArb = fc.oneof(leafArb, valuesArb);

  it('requirementValues is mergeAll of each requirement at its path (property)', async () => {
    const { requirementValues } = await import('./requirements.ts');
    fc.assert(
      fc.property(fc.array(fc.record({ path: pathArb, value: valueArb }), { maxLength: 6 }), (requirements) => {
        const layered = mergeAll(...requirements.map((r) => atPath(r.path, r.value)));
        const built = requirementValues(requirements.map((r) => ({ ...r, reason: '' })));
        expect(JSON.stringify(built)).toBe(JSON.stringify(layered));
        // No part of a requirement's value is shared with the tree (a later merge may change it).
        for (const r of requirements) if (typeof r.value === 'object' && r.value !== null) expect(getPath(built, r.path)).not.toBe(r.value);
      }),
    );
  });

  it('effectiveValues is stripNulls of the merge, and leaves its layers as they were (property)', () => {
    fc.assert(
      fc.property(valuesArb, valuesArb, (a, b) => {
        const before = JSON.stringify([a, b]);
        expect(JSON.stringify(effectiveValues(a, b))).toBe(JSON.stringify(stripNulls(mergeAll(a, b))));
        expect(JSON.stringify([a, b])).toBe(before);
      }),
    );
  });

  it('frozen layers (a values file as read) give the same merges, and stay as they were (property)', () => {
    fc.assert(
      fc.property(valuesArb, valuesArb, valuesArb, (a, b, c) => {
        const expected = [JSON.stringify(mergeAll(a, b, c)), JSON.stringify(effectiveValues(a, b, c)), JSON.stringify(mergeValues(a, b))];
        const [fa, fb, fc2] = [a, b, c].map((layer) => freezeValues(structuredClone(layer)));
        const before = JSON.stringify([fa, fb, fc2]);
        expect([JSON.stringify(mergeAll(fa!, fb!, fc2!)), JSON.stringify(effectiveValues(fa!, fb!, fc2!)), JSON.stringify(mergeValues(fa!, fb!))]).toEqual(expected);
        // A merge over frozen layers can be changed by the code that owns it (it is fresh where a layer met another).
        const merged = mergeAll(fa!, fb!);
        merged.added = 1;
        expect(JSON.stringify([fa, fb, fc2])).toBe(before);
      }),
    );
  });

  it('a frozen subtree no later layer touches is shared, not copied; one a later layer changes is copied first', () => {
    const file = freezeValues({ decode: { containers: [{ name: 'vllm', args: ['--a'] }], replicas: 1 }, untouched: { deep: { list: [1, 2] } } });
    const merged = mergeAll({}, file, { decode: { replicas: 2 } });
    expect(merged.untouched).toBe(file.untouched);
    expect((merged.decode as Values).containers).toBe((file.decode as Values).containers);
    expect(merged.decode).not.toBe(file.decode);
    expect(merged).toEqual({ decode: { containers: [{ name: 'vllm', args: ['--a'] }], replicas: 2 }, untouched: { deep: { list: [1, 2] } } });
    expect(() => ((file.decode as Values).replicas = 3)).toThrow(TypeError);
    // A null in a frozen subtree is removed from a copy.
    const withNull = freezeValues({ keep: { a: 1, gone: null } });
    expect(effectiveValues({}, withNull)).toEqual({ keep: { a: 1 } });
    expect(withNull).toEqual({ keep: { a: 1, gone: null } });
  });
});
