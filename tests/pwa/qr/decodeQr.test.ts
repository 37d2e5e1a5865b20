import { encodeQR } from 'qr';
import { describe, expect, it } from 'vitest';
import { randomBytes } from '../../../shared/encoding/bytes.ts';
import { PAIRING_SECRET_BYTES } from '../../../shared/pairing/pairingKeys.ts';
import { pairingLink } from '../../../shared/pairing/pairingLink.ts';
import { decodeQr } from '../../../pwa/src/qr/decodeQr.ts';

type Ecc = 'low' | 'medium' | 'quartile' | 'high';

interface Filming {
  ecc?: Ecc;
  /** Pixels per module. */
  scale?: number;
  /** The code turned by this many degrees in the frame. */
  degrees?: number;
  /** A screen filmed at an angle: the code's bottom this much wider than its top (a keystone). */
  keystone?: number;
  /** Grey levels of sensor noise, either way. */
  noise?: number;
  /** Grey levels of glare, brighter from the left edge of the frame to the right. */
  glare?: number;
  /** Modules forced light, as [column, row] from the symbol's top-left (past its quiet zone). */
  blots?: [number, number][];
}

/** A deterministic noise source, so a failure replays. */
function noiseSource(seed: number) {
  let state = seed;
  return () => ((state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff - 0.5) * 2;
}

/** A 480×480 camera frame of `text` as a QR code with a quiet zone, dark on light. */
function film(text: string, filming: Filming = {}) {
  const { ecc = 'low', scale = 5, degrees = 0, keystone = 0, noise = 0, glare = 0, blots = [] } = filming;
  const border = 4;
  const modules = encodeQR(text, 'raw', { ecc, border });
  for (const [column, row] of blots) modules[row + border]![column + border] = false;
  const count = modules.length;
  const size = 480;
  const [cos, sin] = [Math.cos((degrees * Math.PI) / 180), Math.sin((degrees * Math.PI) / 180)];
  const random = noiseSource(7);
  const data = new Uint8ClampedArray(size * size * 4);
  for (let y = 0; y < size; y++)
    for (let x = 0; x < size; x++) {
      // The frame's pixel, turned and tilted back into the code's own grid.
      const depth = 1 + (keystone * (y - size / 2)) / size;
      const [dx, dy] = [(x - size / 2) / depth, (y - size / 2) / depth];
      const u = Math.floor((cos * dx + sin * dy) / scale + count / 2);
      const v = Math.floor((-sin * dx + cos * dy) / scale + count / 2);
      const dark = u >= 0 && v >= 0 && u < count && v < count && modules[v]![u]!;
      const grey = (dark ? 40 : 200) + (glare * x) / size + noise * random();
      data.set([grey, grey, grey, 255], (y * size + x) * 4);
    }
  return { width: size, height: size, data };
}

const link = () =>
  pairingLink({ origin: 'https://relay.example.com', secret: randomBytes(PAIRING_SECRET_BYTES) });

describe("the app's QR decoder", () => {
  it('reads a pairing link at every error-correction level, upright and turned', () => {
    for (const ecc of ['low', 'medium', 'quartile', 'high'] as const)
      for (const degrees of [0, 30, 90, 160, -40]) {
        const text = link();
        expect({ ecc, degrees, read: decodeQr(film(text, { ecc, degrees, scale: 4 })) }).toEqual({
          ecc,
          degrees,
          read: text,
        });
      }
  });

  it('reads a screen filmed at an angle, by its alignment pattern', () => {
    const text = link();
    expect(decodeQr(film(text, { keystone: 0.4, degrees: 20 }))).toBe(text);
    expect(decodeQr(film(text, { keystone: -0.4, degrees: -70 }))).toBe(text);
  });

  it('reads through sensor noise and glare across the screen', () => {
    const text = link();
    expect(decodeQr(film(text, { noise: 50, glare: 50, degrees: 12 }))).toBe(text);
  });

  it('corrects modules it misreads, as far as the code allows', () => {
    const text = link();
    // A smudge of nine modules in the data area, well within level L's 13 correctable codewords.
    const smudge: [number, number][] = [];
    for (let column = 20; column < 23; column++)
      for (let row = 20; row < 23; row++) smudge.push([column, row]);
    expect(decodeQr(film(text, { blots: smudge }))).toBe(text);
  });

  it('reads nothing, rather than something wrong, when too much of the code is lost', () => {
    const text = link();
    const lost: [number, number][] = [];
    for (let column = 9; column < 28; column++) for (let row = 10; row < 28; row++) lost.push([column, row]);
    expect(decodeQr(film(text, { blots: lost }))).toBeUndefined();
  });

  it('reads no code in a mode no pairing link uses (alphanumeric)', () => {
    expect(decodeQr(film('HTTPS://RELAY.EXAMPLE.COM/PAIR'))).toBeUndefined();
  });

  it('reads nothing from a frame without a code', () => {
    const blank = new Uint8ClampedArray(320 * 240 * 4).fill(180);
    expect(decodeQr({ width: 320, height: 240, data: blank })).toBeUndefined();
  });
});
