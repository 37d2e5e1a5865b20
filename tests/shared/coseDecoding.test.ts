import { describe, expect, it } from 'vitest';
import { fromBase64url } from '../../shared/encoding/base64url.ts';
import {
  COSE_ALGORITHMS,
  decodeCoseKey,
  ecdsaDerToRaw,
  verifyCoseSignature,
} from '../../shared/webauthn/coseSignature.ts';
import { isoCBOR } from '@simplewebauthn/server/helpers';

// The readers under verifyCoseSignature, each refusal on its own: through the verifier, Web Crypto
// would refuse most malformed input anyway, which hides a reader that lets it through.

describe('decodeCoseKey', () => {
  it.each<[string, number[], [number, number | number[]][]]>([
    ['an empty map', [0xa0], []],
    [
      'small and one-byte integers',
      [0xa2, 0x01, 0x17, 0x02, 0x18, 0x64],
      [
        [1, 23],
        [2, 100],
      ],
    ],
    [
      'two- and four-byte integers',
      [0xa2, 0x01, 0x19, 0x01, 0x00, 0x02, 0x1a, 0x00, 0x01, 0x00, 0x00],
      [
        [1, 256],
        [2, 65_536],
      ],
    ],
    [
      'negative integers',
      [0xa2, 0x20, 0x38, 0x63, 0x21, 0x01],
      [
        [-1, -100],
        [-2, 1],
      ],
    ],
    ['a byte string that ends the key', [0xa1, 0x01, 0x42, 0xaa, 0xbb], [[1, [0xaa, 0xbb]]]],
  ])('reads %s', (_what, bytes, entries) => {
    const expected = new Map(
      entries.map(([label, value]) => [label, Array.isArray(value) ? Uint8Array.from(value) : value]),
    );
    expect(decodeCoseKey(Uint8Array.from(bytes))).toEqual(expected);
  });

  it.each<[string, number[], string]>([
    ['nothing', [], 'truncated'],
    ['a map without its entries', [0xa1, 0x01], 'truncated'],
    ['a byte string longer than the key', [0xa1, 0x01, 0x43, 0xaa, 0xbb], 'truncated'],
    ['an eight-byte integer', [0xa1, 0x01, 0x1b, 0, 0, 0, 0, 0, 0, 0, 1], 'unsupported length'],
    ['an indefinite length', [0xbf, 0x01, 0x02, 0xff], 'unsupported length'],
    ['a text value', [0xa1, 0x01, 0x61, 0x61], 'unsupported item'],
    ['an array', [0x82, 0x01, 0x02], 'not a map'],
    ['an integer', [0x01], 'not a map'],
    ['a byte-string label', [0xa1, 0x41, 0x00, 0x01], 'bad label'],
    ['a trailing byte', [0xa1, 0x01, 0x02, 0x00], 'trailing bytes'],
  ])('refuses %s', (_what, bytes, message) => {
    expect(() => decodeCoseKey(Uint8Array.from(bytes))).toThrow(new Error(message));
  });
});

describe('ecdsaDerToRaw', () => {
  const integer = (...bytes: number[]) => [0x02, bytes.length, ...bytes];
  const sequence = (...parts: number[][]) => {
    const body = parts.flat();
    return Uint8Array.from([0x30, body.length, ...body]);
  };
  const raw = (r: number[], s: number[]) => {
    const out = new Uint8Array(64);
    out.set(r, 32 - r.length);
    out.set(s, 64 - s.length);
    return out;
  };
  const high = [0x80, ...Array<number>(31).fill(1)];

  it.each<[string, Uint8Array, Uint8Array]>([
    ['the shortest signature, eight bytes', sequence(integer(1), integer(1)), raw([1], [1])],
    ['a zero', sequence(integer(0), integer(1, 2)), raw([0], [1, 2])],
    ['the leading zero a high bit needs', sequence(integer(0, ...high), integer(0, 0x80)), raw(high, [0x80])],
  ])('reads %s', (_what, der, expected) => {
    expect(ecdsaDerToRaw(der)).toEqual(expected);
  });

  it.each<[string, Uint8Array]>([
    ['seven bytes', Uint8Array.from([0x30, 0x05, 0x02, 0x01, 0x01, 0x02, 0x00])],
    [
      'a SET in place of the SEQUENCE',
      Uint8Array.from([0x31, ...sequence(integer(1), integer(1)).subarray(1)]),
    ],
    ['a SEQUENCE length that is not the rest', Uint8Array.from([0x30, 0x05, ...integer(1), ...integer(1)])],
    ['s that is not an INTEGER', sequence(integer(1), [0x04, 0x01, 0x01])],
    ['an INTEGER of no bytes', sequence([0x02, 0x00], integer(1, 2))],
    [
      'an INTEGER longer than the signature',
      Uint8Array.from([0x30, 0x06, 0x02, 0x05, 0x01, 0x02, 0x01, 0x01]),
    ],
    ['an INTEGER of 34 bytes', sequence(integer(0, 0, ...high), integer(1))],
    ['an INTEGER of 33 bytes without a leading zero', sequence(integer(1, ...high), integer(1))],
    ['a negative INTEGER', sequence(integer(0x80), integer(1))],
    ['a leading zero no high bit needs', sequence(integer(0, 1), integer(1))],
    ['a byte after s, inside the SEQUENCE', sequence(integer(1), integer(1), [0x00])],
  ])('refuses %s', (_what, der) => {
    expect(ecdsaDerToRaw(der)).toBeUndefined();
  });
});

describe('verifyCoseSignature', () => {
  it.each<[string, (cose: Map<number, number | Uint8Array>) => void]>([
    ['RSA key labelled ES256', (cose) => cose.set(3, COSE_ALGORITHMS.ES256)],
    ['RS256 key labelled EC2', (cose) => cose.set(1, 2)],
  ])('refuses a genuine RS256 signature for an %s', async (_what, relabel) => {
    const keys = await crypto.subtle.generateKey(
      {
        name: 'RSASSA-PKCS1-v1_5',
        modulusLength: 2048,
        publicExponent: Uint8Array.of(1, 0, 1),
        hash: 'SHA-256',
      },
      true,
      ['sign', 'verify'],
    );
    const jwk = await crypto.subtle.exportKey('jwk', keys.publicKey);
    const cose = new Map<number, number | Uint8Array>([
      [1, 3],
      [3, COSE_ALGORITHMS.RS256],
      [-1, fromBase64url(jwk.n!)],
      [-2, fromBase64url(jwk.e!)],
    ]);
    const data = new Uint8Array(64);
    const signature = new Uint8Array(await crypto.subtle.sign('RSASSA-PKCS1-v1_5', keys.privateKey, data));
    const encode = (key: typeof cose) => isoCBOR.encode(key as Parameters<typeof isoCBOR.encode>[0]);
    expect(await verifyCoseSignature(encode(cose), signature, data)).toBe(true);
    relabel(cose);
    expect(await verifyCoseSignature(encode(cose), signature, data)).toBe(false);
  });
});
