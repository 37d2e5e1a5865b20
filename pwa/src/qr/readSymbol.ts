import {
  _alignmentPatterns as alignmentPatterns,
  _BYTES as CODEWORDS,
  _ECC_BLOCKS as ECC_BLOCKS,
  _ECC_LEVELS as ECC_LEVELS,
  _formatBits as formatBits,
  _maskBits as maskBits,
  _WORDS_PER_BLOCK as WORDS_PER_BLOCK,
} from 'qr';
import { correctErrors } from './correctErrors.ts';
import type { Modules } from './sampleSymbol.ts';

type EccLevel = (typeof ECC_LEVELS)[number];

/** Most differing bits a read format word may have from a valid one (its BCH code corrects 3). */
const FORMAT_TOLERANCE = 3;

const bitCount = (word: number) => word.toString(2).replace(/0/g, '').length;

/**
 * The error-correction level and mask, from the better of the format word's two copies
 * (ISO/IEC 18004:2024 §7.9), matched against every valid word: the encoder's own placement.
 */
function readFormat({ size, dark }: Modules): { ecc: EccLevel; mask: number } | undefined {
  const at = (x: number, y: number) => dark[y * size + x]!;
  let first = 0;
  let second = 0;
  for (let i = 0; i < 15; i++) {
    first |= (i < 6 ? at(8, i) : i < 8 ? at(8, i + 1) : i === 8 ? at(7, 8) : at(14 - i, 8)) << i;
    second |= (i < 8 ? at(size - 1 - i, 8) : at(8, size - 15 + i)) << i;
  }
  let best: { ecc: EccLevel; mask: number; misses: number } | undefined;
  for (const ecc of ECC_LEVELS)
    for (let mask = 0; mask < 8; mask++) {
      const valid = formatBits(ecc, mask);
      const misses = Math.min(bitCount(valid ^ first), bitCount(valid ^ second));
      if (!best || misses < best.misses) best = { ecc, mask, misses };
    }
  return best && best.misses <= FORMAT_TOLERANCE ? best : undefined;
}

/** Modules that carry no data: finders and format words, timing, alignment and version blocks. */
function functionModules(size: number, version: number): (x: number, y: number) => boolean {
  const inCorner = (x: number, y: number) =>
    (x < 9 && y < 9) || (x >= size - 8 && y < 9) || (x < 9 && y >= size - 8);
  const centres = alignmentPatterns(version);
  const alignments = centres
    .flatMap((cx) => centres.map((cy) => ({ cx, cy })))
    .filter(({ cx, cy }) => !inCorner(cx, cy));
  return (x, y) =>
    inCorner(x, y) ||
    x === 6 ||
    y === 6 ||
    (version >= 7 &&
      ((x >= size - 11 && x < size - 8 && y < 6) || (y >= size - 11 && y < size - 8 && x < 6))) ||
    alignments.some(({ cx, cy }) => Math.abs(x - cx) <= 2 && Math.abs(y - cy) <= 2);
}

/**
 * The codewords in placement order (§7.7.3): two columns at a time from the bottom-right,
 * upwards then downwards, skipping the vertical timing column, each bit unmasked.
 */
function readCodewords(modules: Modules, version: number, mask: number): Uint8Array {
  const { size, dark } = modules;
  const isFunctionModule = functionModules(size, version);
  const codewords = new Uint8Array(CODEWORDS[version - 1]!);
  let bit = 0;
  for (let right = size - 1, upwards = true; right > 0; right -= 2, upwards = !upwards) {
    if (right === 6) right = 5;
    for (let i = 0; i < size; i++) {
      const y = upwards ? size - 1 - i : i;
      for (const x of [right, right - 1]) {
        if (isFunctionModule(x, y) || bit >= codewords.length * 8) continue;
        const value = dark[y * size + x]! ^ ((maskBits(x, y) >> mask) & 1);
        codewords[bit >> 3]! |= value << (7 - (bit & 7));
        bit++;
      }
    }
  }
  return codewords;
}

/**
 * The data codewords: de-interleaved into their blocks (§7.6: the shorter blocks first, data
 * then error correction, a codeword of each block in turn), each block corrected.
 */
function correctedData(codewords: Uint8Array, version: number, ecc: EccLevel): Uint8Array | undefined {
  const blockCount = ECC_BLOCKS[ecc][version - 1]!;
  const eccCount = WORDS_PER_BLOCK[ecc][version - 1]!;
  const shortLength = Math.floor(codewords.length / blockCount);
  const longBlocks = codewords.length % blockCount;
  const blocks = Array.from(
    { length: blockCount },
    (_, b) => new Uint8Array(shortLength + (b >= blockCount - longBlocks ? 1 : 0)),
  );
  let next = 0;
  for (let i = 0; i < shortLength + 1 - eccCount; i++)
    for (const block of blocks) if (i < block.length - eccCount) block[i] = codewords[next++]!;
  for (let i = 0; i < eccCount; i++)
    for (const block of blocks) block[block.length - eccCount + i] = codewords[next++]!;
  if (!blocks.every((block) => correctErrors(block, eccCount))) return undefined;
  const data = blocks.map((block) => Array.from(block.subarray(0, block.length - eccCount)));
  return Uint8Array.from(data.flat());
}

/**
 * The text of byte-mode segments (§7.4.5). A pairing link always has lowercase letters, which
 * only byte mode holds: a code in another mode is not one of Latch's, and is not read.
 */
function bytesText(data: Uint8Array, version: number): string | undefined {
  let position = 0;
  const read = (bits: number) => {
    let value = 0;
    for (let i = 0; i < bits; i++, position++) {
      if (position >= data.length * 8) throw new RangeError('past the end');
      value = (value << 1) | ((data[position >> 3]! >> (7 - (position & 7))) & 1);
    }
    return value;
  };
  const bytes: number[] = [];
  try {
    while (position + 4 <= data.length * 8) {
      const mode = read(4);
      if (mode === 0) break;
      if (mode !== 4) return undefined;
      const length = read(version < 10 ? 8 : 16);
      for (let i = 0; i < length; i++) bytes.push(read(8));
    }
  } catch {
    return undefined;
  }
  return new TextDecoder().decode(Uint8Array.from(bytes));
}

/** The text a code's modules hold, or undefined where they cannot be read without doubt. */
export function readSymbol(modules: Modules): string | undefined {
  const version = (modules.size - 17) / 4;
  const format = readFormat(modules);
  if (!format) return undefined;
  const data = correctedData(readCodewords(modules, version, format.mask), version, format.ecc);
  return data && bytesText(data, version);
}
