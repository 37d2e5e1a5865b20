import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utf8Length } from '../../shared/encoding/bytes.ts';

describe('utf8Length', () => {
  it('counts what TextEncoder would encode, for any string, lone surrogates included', () => {
    const encoder = new TextEncoder();
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (text) => {
        expect(utf8Length(text)).toBe(encoder.encode(text).length);
      }),
      { numRuns: 2000 },
    );
  });

  it('counts 1, 2, 3 and 4 bytes per character at each boundary', () => {
    expect(
      ['\u007f', '\u0080', '\u07ff', '\u0800', '\uffff', '\u{10000}', '\ud800', '\udc00'].map(utf8Length),
    ).toEqual([1, 2, 2, 3, 3, 4, 3, 3]);
  });
});
