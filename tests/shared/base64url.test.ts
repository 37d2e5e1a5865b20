import { describe, expect, it } from 'vitest';
import { fromBase64url, toBase64url } from '../../shared/encoding/base64url.ts';

describe('base64url', () => {
  it('round-trips every length from 0 to 40 bytes', () => {
    for (let length = 0; length <= 40; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 37 + 251) & 0xff);
      expect(fromBase64url(toBase64url(bytes))).toEqual(bytes);
    }
  });

  it('uses the URL alphabet without padding', () => {
    expect(toBase64url(Uint8Array.of(0xfb, 0xff))).toBe('-_8');
  });

  it.each([
    ['padding', 'AA=='],
    ['the standard alphabet', 'a+b/'],
    ['whitespace', 'AA AA'],
    ['an impossible length', 'AAAAA'],
    ['stray bits in the last character', 'AB'],
  ])('refuses %s', (_what, text) => {
    expect(() => fromBase64url(text)).toThrowError(expect.objectContaining({ code: 'malformed_base64url' }));
  });
});
