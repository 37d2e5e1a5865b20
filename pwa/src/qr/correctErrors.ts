import { _GF256 as GF256 } from 'qr';

// GF(2^8) over the QR polynomial 0x11d: the encoder's own tables, so both sides use one field.
const { exp: EXP, log: LOG } = GF256;
const multiply = (a: number, b: number) => (a && b ? EXP[LOG[a]! + LOG[b]!]! : 0);
const divide = (a: number, b: number) => (a ? EXP[(LOG[a]! + 255 - LOG[b]!) % 255]! : 0);
const power = (exponent: number) => EXP[exponent % 255]!;

/** A polynomial, lowest degree first, at x. */
const evaluate = (poly: number[], x: number) =>
  poly.reduceRight((sum, coefficient) => multiply(sum, x) ^ coefficient, 0);

/** The block at α^0 … α^(count-1): all zero when no codeword is wrong. */
const syndromesOf = (block: Uint8Array, count: number) =>
  Array.from({ length: count }, (_, j) =>
    block.reduce((sum, codeword) => multiply(sum, power(j)) ^ codeword, 0),
  );

/**
 * Corrects a Reed-Solomon block in place (data codewords, then `eccCount` error-correction
 * codewords, highest degree first; ISO/IEC 18004:2024 §7.5.2, generator roots α^0 … α^(n-1)):
 * Berlekamp-Massey for where the errors are, Forney for their values. False when the block has
 * more errors than its codewords can correct: the code is not read rather than misread.
 */
export function correctErrors(block: Uint8Array, eccCount: number): boolean {
  const syndromes = syndromesOf(block, eccCount);
  if (syndromes.every((syndrome) => syndrome === 0)) return true;

  // Berlekamp-Massey: the shortest error locator Λ(x) that generates the syndromes.
  let locator = [1];
  let previous = [1];
  let length = 0;
  let shift = 1;
  let previousDiscrepancy = 1;
  for (let n = 0; n < eccCount; n++) {
    let discrepancy = syndromes[n]!;
    for (let i = 1; i <= length; i++) discrepancy ^= multiply(locator[i] ?? 0, syndromes[n - i]!);
    if (discrepancy === 0) {
      shift++;
      continue;
    }
    const scale = divide(discrepancy, previousDiscrepancy);
    const next = locator.slice();
    previous.forEach((coefficient, i) => {
      next[i + shift] = (next[i + shift] ?? 0) ^ multiply(scale, coefficient);
    });
    if (2 * length <= n) {
      previous = locator;
      length = n + 1 - length;
      previousDiscrepancy = discrepancy;
      shift = 1;
    } else shift++;
    locator = next;
  }
  if (2 * length > eccCount) return false;

  // Ω(x) = S(x)Λ(x) mod x^eccCount, and Λ'(x), whose odd terms alone survive in GF(2^8).
  const evaluator = syndromes.map((_, k) =>
    locator
      .slice(0, k + 1)
      .reduce((sum, coefficient, i) => sum ^ multiply(coefficient, syndromes[k - i]!), 0),
  );
  const derivative = locator.slice(1).map((coefficient, i) => (i % 2 === 0 ? coefficient : 0));
  let found = 0;
  for (let position = 0; position < block.length; position++) {
    // Chien search: position i holds the coefficient of x^(n-1-i), its locator X = α^(n-1-i).
    const locatorValue = power(block.length - 1 - position);
    const inverse = divide(1, locatorValue);
    if (evaluate(locator, inverse) !== 0) continue;
    block[position]! ^= multiply(
      locatorValue,
      divide(evaluate(evaluator, inverse), evaluate(derivative, inverse)),
    );
    found++;
  }
  // A correction that leaves a syndrome standing was a wrong guess, never a fix.
  return found === length && syndromesOf(block, eccCount).every((syndrome) => syndrome === 0);
}
