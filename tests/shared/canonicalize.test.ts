import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../shared/canonical/canonicalize.ts';
import { LatchError } from '../../shared/errors.ts';

function fromIeeeHex(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

describe('canonicalize (RFC 8785)', () => {
  it('serialises the §3.2.2 example: literals, numbers and string escapes', () => {
    const input = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],' +
        '"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
        '"literals":[null,true,false]}',
    );
    expect(canonicalize(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('sorts members by UTF-16 code units (§3.2.3)', () => {
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    // Read the order off the text: JSON.parse would move the integer-like key "1" to the front.
    const values = [...canonicalize(input).matchAll(/:"([^"]*)"/g)].map((match) => match[1]);
    expect(values).toEqual([
      'Carriage Return',
      'One',
      'Control',
      'Latin Small Letter O With Diaeresis',
      'Euro Sign',
      'Emoji: Grinning Face',
      'Hebrew Letter Dalet With Dagesh',
    ]);
  });

  // Appendix B: IEEE 754 bit patterns and their required text.
  const appendixB: [string, string][] = [
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ];
  it.each(appendixB)('prints the number with bits %s as %s', (hex, expected) => {
    expect(canonicalize(fromIeeeHex(hex))).toBe(expected);
  });

  it.each([
    ['NaN', '7fffffffffffffff'],
    ['Infinity', '7ff0000000000000'],
  ])('refuses %s, which has no JSON form', (_name, hex) => {
    expect(() => canonicalize(fromIeeeHex(hex))).toThrowError(
      expect.objectContaining({ code: 'invalid_field' }),
    );
  });

  it('refuses a lone surrogate, which has no UTF-8 form', () => {
    expect(() => canonicalize({ a: 'x\ud800' })).toThrow(LatchError);
    expect(() => canonicalize({ '\udc00': 1 })).toThrow(LatchError);
  });

  it('refuses values that are not JSON data', () => {
    for (const value of [new Uint8Array(1), new Date(0), () => 1, 1n, Symbol('s')]) {
      expect(() => canonicalize({ value })).toThrowError(expect.objectContaining({ code: 'invalid_field' }));
    }
  });

  it('refuses an array with a hole or an undefined item: `[]` and `[,]` are no JSON of it', () => {
    for (const value of [new Array(1), new Array(2), [1, , 2], [undefined]]) {
      expect(() => canonicalize({ value })).toThrowError(expect.objectContaining({ code: 'invalid_field' }));
    }
  });

  it('leaves out members whose value is undefined, as JSON.stringify does', () => {
    expect(canonicalize({ b: undefined, a: 1 })).toBe('{"a":1}');
  });

  it('nests: arrays keep their order, objects inside them are sorted', () => {
    expect(canonicalize([{ z: 1, a: { d: [], c: {} } }, 'x'])).toBe('[{"a":{"c":{},"d":[]},"z":1},"x"]');
  });
});
