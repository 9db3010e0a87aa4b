import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, merklePath, merkleRoot, rootFromPath, sha256Hex } from './hash';

describe('evidence hashing', () => {
  it('canonicalises as RFC 8785 does (key order, number form)', () => {
    expect(canonicalJson({ b: 1, a: [1e21, 0.1, 'é'] })).toBe('{"a":[1e+21,0.1,"é"],"b":1}');
  });

  it('is the canonicalize package (RFC 8785) on any JSON value, lone surrogates and non-finite numbers refused alike', () => {
    const outcome = (run: () => string | undefined) => {
      try {
        return { text: run() };
      } catch (error) {
        return { refused: error instanceof Error ? error.message : String(error) };
      }
    };
    const text = fc.string({ unit: 'binary', maxLength: 12 });
    const value = fc.letrec((tie) => ({
      any: fc.oneof(
        { depthSize: 'small' },
        text,
        fc.double(),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('any'), { maxLength: 5 }),
        fc.dictionary(text, tie('any'), { maxKeys: 5 }),
      ),
    })).any;
    fc.assert(
      fc.property(fc.oneof(value, fc.jsonValue()), (input) => {
        expect(outcome(() => canonicalJson(input))).toEqual(outcome(() => canonicalize(input)));
      }),
      { numRuns: 2_000 },
    );
    // The cases JSON.stringify alone would get wrong, each against the package: index-like keys (JavaScript orders them
    // numerically), a lone surrogate inside a key or a value (JSON.stringify escapes it), the text `\ud800` itself, `__proto__`.
    for (const input of [
      { '10': 1, '9': 2, a: { '2': null, '1': true } },
      { z: 'x', ['\uDC00']: 1 },
      { a: ['ok', '\uDC00'] },
      { a: '\\ud800 is text', b: '\\\uD800' },
      JSON.parse('{"__proto__": {"b": 1, "a": 2}, "c": [1e21, -0, 5e-7]}') as unknown,
      { n: Number.NaN },
      { n: [Number.POSITIVE_INFINITY] },
    ])
      expect(
        outcome(() => canonicalJson(input)),
        JSON.stringify(input),
      ).toEqual(outcome(() => canonicalize(input)));
    expect(() => canonicalJson('\uD83D')).toThrow('Lone surrogate');
    expect(canonicalJson('\uD83D\uDE00')).toBe('"😀"');
    expect(canonicalJson({ d: new Date('2026-01-02T03:04:05Z'), u: undefined, l: [undefined] })).toBe('{"d":"2026-01-02T03:04:05.000Z","l":[null]}');
  });

  it('every leaf of every tree size has a path to the root, and a changed leaf or path does not', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.nat(), (size, pick) => {
        const leaves = Array.from({ length: size }, (_, i) => sha256Hex(String(i)));
        const index = pick % size;
        const root = merkleRoot(leaves);
        const path = merklePath(leaves, index);
        expect(rootFromPath({ leaf: leaves[index] ?? '', index, size, path })).toBe(root);
        expect(rootFromPath({ leaf: sha256Hex('other'), index, size, path })).not.toBe(root);
        if (path.length > 0) expect(rootFromPath({ leaf: leaves[index] ?? '', index, size, path: path.slice(1) })).not.toBe(root);
        if (size > 1) expect(rootFromPath({ leaf: leaves[index] ?? '', index: (index + 1) % size, size, path })).not.toBe(root);
      }),
    );
  });
});
