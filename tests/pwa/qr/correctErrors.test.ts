import { describe, expect, it } from 'vitest';
import { correctErrors } from '../../../pwa/src/qr/correctErrors.ts';

// 26 codewords with 10 for error correction (version 1 at level L): up to 5 wrong ones are
// corrected. All zeros is a valid block (the zero polynomial is a multiple of the generator).
const LENGTH = 26;
const ECC_COUNT = 10;

function damaged(positions: number[]): Uint8Array {
  const block = new Uint8Array(LENGTH);
  positions.forEach((position, i) => (block[position] = 17 + 37 * i));
  return block;
}

describe('Reed-Solomon correction of a QR block', () => {
  it('accepts a block with no errors as it is', () => {
    const block = damaged([]);
    expect(correctErrors(block, ECC_COUNT)).toBe(true);
    expect([...block]).toEqual(new Array(LENGTH).fill(0));
  });

  it('corrects as many wrong codewords as half its error-correction codewords, in data or parity', () => {
    const block = damaged([0, 3, 11, 20, 25]);
    expect(correctErrors(block, ECC_COUNT)).toBe(true);
    expect([...block]).toEqual(new Array(LENGTH).fill(0));
  });

  it('refuses a block with one wrong codeword more than it can correct', () => {
    expect(correctErrors(damaged([0, 3, 8, 11, 20, 25]), ECC_COUNT)).toBe(false);
  });
});
