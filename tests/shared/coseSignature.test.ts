import { isoCBOR, verifySignature } from '@simplewebauthn/server/helpers';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { fromBase64url } from '../../shared/encoding/base64url.ts';
import {
  COSE_ALGORITHMS,
  decodeCoseKey,
  ecdsaDerToRaw,
  isAcceptedCoseKey,
  verifyCoseSignature,
} from '../../shared/webauthn/coseSignature.ts';
import { concatBytes, sha256 } from '../../shared/encoding/bytes.ts';
import { derSignature } from '../../scripts/lib/softwareAuthenticator.ts';

type Cose = Map<number, number | Uint8Array>;
/** DER of SHA-256's DigestInfo before the digest (RFC 8017, 9.2). */
const SHA256_DIGEST_INFO_PREFIX = Uint8Array.from(
  '3031300d060960864801650304020105000420'.match(/../g)!.map((byte) => parseInt(byte, 16)),
);
const encode = (key: Cose) => isoCBOR.encode(key as Parameters<typeof isoCBOR.encode>[0]);

async function ec2Key(): Promise<{ keys: CryptoKeyPair; cose: Cose }> {
  const keys = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ]);
  const jwk = await crypto.subtle.exportKey('jwk', keys.publicKey);
  const cose: Cose = new Map<number, number | Uint8Array>([
    [1, 2],
    [3, COSE_ALGORITHMS.ES256],
    [-1, 1],
    [-2, fromBase64url(jwk.x!)],
    [-3, fromBase64url(jwk.y!)],
  ]);
  return { keys, cose };
}

const signEs256 = async (keys: CryptoKeyPair, data: Uint8Array<ArrayBuffer>) =>
  derSignature(
    new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, keys.privateKey, data)),
  );

let ec2: { keys: CryptoKeyPair; cose: Cose };
let rsa: { keys: CryptoKeyPair; cose: Cose };

beforeAll(async () => {
  ec2 = await ec2Key();
  const rsaKeys = await crypto.subtle.generateKey(
    {
      name: 'RSASSA-PKCS1-v1_5',
      modulusLength: 2048,
      publicExponent: Uint8Array.of(1, 0, 1),
      hash: 'SHA-256',
    },
    true,
    ['sign', 'verify'],
  );
  const jwk = await crypto.subtle.exportKey('jwk', rsaKeys.publicKey);
  rsa = {
    keys: rsaKeys,
    cose: new Map<number, number | Uint8Array>([
      [1, 3],
      [3, COSE_ALGORITHMS.RS256],
      [-1, fromBase64url(jwk.n!)],
      [-2, fromBase64url(jwk.e!)],
    ]),
  };
});

describe('verifyCoseSignature', () => {
  it('agrees with @simplewebauthn/server on ES256 signatures, genuine and tampered', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 37, maxLength: 300 }), fc.nat(), async (bytes, flip) => {
        const data = new Uint8Array(bytes);
        const signature = await signEs256(ec2.keys, data);
        const key = encode(ec2.cose);
        expect(await verifyCoseSignature(key, signature, data)).toBe(true);
        const tampered = new Uint8Array(data);
        tampered[flip % tampered.length]! ^= 0x01;
        const ours = await verifyCoseSignature(key, signature, tampered);
        const reference = await verifySignature({ signature, data: tampered, credentialPublicKey: key });
        expect(ours).toBe(false);
        expect(ours).toBe(reference);
      }),
      { numRuns: 40 },
    );
  });

  it('verifies RS256 (Windows Hello), and refuses a tampered message', async () => {
    const data = new Uint8Array(fc.sample(fc.uint8Array({ minLength: 64, maxLength: 64 }), 1)[0]!);
    const signature = new Uint8Array(
      await crypto.subtle.sign('RSASSA-PKCS1-v1_5', rsa.keys.privateKey, data),
    );
    const key = encode(rsa.cose);
    expect(await verifyCoseSignature(key, signature, data)).toBe(true);
    expect(await verifySignature({ signature, data, credentialPublicKey: key })).toBe(true);
    data[0]! ^= 1;
    expect(await verifyCoseSignature(key, signature, data)).toBe(false);
  });

  it('refuses RSA keys anyone can sign with or factor, even under a genuine signature', async () => {
    const data = new Uint8Array(64);
    // Exponent 1: the signature of anything is its padded digest, made from the public key alone.
    const digestInfo = concatBytes(SHA256_DIGEST_INFO_PREFIX, await sha256(data));
    const padded = concatBytes(
      Uint8Array.of(0, 1),
      new Uint8Array(256 - 3 - digestInfo.length).fill(0xff),
      Uint8Array.of(0),
      digestInfo,
    );
    const modulus = new Uint8Array(256).fill(0xff);
    const exponentOne = new Map([...rsa.cose, [-1, modulus], [-2, Uint8Array.of(1)]]);
    expect(await verifyCoseSignature(encode(exponentOne), padded, data)).toBe(false);
    for (const exponent of [Uint8Array.of(3), Uint8Array.of(1, 0, 1)]) {
      const weak = await crypto.subtle.generateKey(
        { name: 'RSASSA-PKCS1-v1_5', modulusLength: 1024, publicExponent: exponent, hash: 'SHA-256' },
        true,
        ['sign', 'verify'],
      );
      const jwk = await crypto.subtle.exportKey('jwk', weak.publicKey);
      const cose = new Map([...rsa.cose, [-1, fromBase64url(jwk.n!)], [-2, fromBase64url(jwk.e!)]]);
      const signature = new Uint8Array(await crypto.subtle.sign('RSASSA-PKCS1-v1_5', weak.privateKey, data));
      expect(await verifyCoseSignature(encode(cose), signature, data), `1024 bits, e = ${jwk.e}`).toBe(false);
    }
    // A strong key (2048 bits, 65537) is taken: the RS256 test above.
    expect(isAcceptedCoseKey(encode(rsa.cose))).toBe(true);
    expect(isAcceptedCoseKey(encode(exponentOne))).toBe(false);
  });

  it('refuses a signature made by another key', async () => {
    const other = await ec2Key();
    const data = new Uint8Array(64);
    expect(await verifyCoseSignature(encode(ec2.cose), await signEs256(other.keys, data), data)).toBe(false);
  });

  it('refuses algorithms and curves pairing does not accept', async () => {
    const data = new Uint8Array(64);
    const signature = await signEs256(ec2.keys, data);
    const variants: [string, Cose][] = [
      ['EdDSA', new Map([...ec2.cose, [3, -8]])],
      ['ES384', new Map([...ec2.cose, [3, -35]])],
      ['P-384 curve', new Map([...ec2.cose, [-1, 2]])],
      ['OKP key type', new Map([...ec2.cose, [1, 1]])],
      ['short x', new Map([...ec2.cose, [-2, new Uint8Array(31)]])],
      ['no y', new Map([...ec2.cose].filter(([label]) => label !== -3))],
    ];
    for (const [, cose] of variants)
      expect(await verifyCoseSignature(encode(cose), signature, data)).toBe(false);
  });

  it('refuses signatures that are not strict DER', async () => {
    const data = new Uint8Array(64);
    const der = await signEs256(ec2.keys, data);
    const key = encode(ec2.cose);
    const raw = ecdsaDerToRaw(der)!;
    const integer = (bytes: Uint8Array) => Uint8Array.of(0x02, bytes.length, ...bytes);
    const sequence = (...parts: Uint8Array[]) => {
      const body = parts.flatMap((part) => [...part]);
      return Uint8Array.of(0x30, body.length, ...body);
    };
    const r = raw.subarray(0, 32);
    const s = raw.subarray(32);
    const malformed = [
      Uint8Array.of(...der, 0), // trailing byte
      sequence(integer(Uint8Array.of(0, 0, ...r.subarray(0))), integer(s)), // non-minimal
      Uint8Array.of(0x31, ...der.subarray(1)), // a SET, not a SEQUENCE
      raw, // raw r ‖ s, as Web Crypto would give it
      new Uint8Array(0),
    ];
    for (const signature of malformed) expect(await verifyCoseSignature(key, signature, data)).toBe(false);
  });

  it('refuses COSE keys that are not a flat map of integers and byte strings', async () => {
    const data = new Uint8Array(64);
    const signature = await signEs256(ec2.keys, data);
    const key = encode(ec2.cose);
    const keys = [
      Uint8Array.of(...key, 0), // trailing byte
      key.subarray(0, key.length - 1), // truncated
      isoCBOR.encode(new Map<string, number>([['kty', 2]]) as Parameters<typeof isoCBOR.encode>[0]),
      isoCBOR.encode([1, 2, 3] as Parameters<typeof isoCBOR.encode>[0]),
    ];
    for (const bad of keys) expect(await verifyCoseSignature(bad, signature, data)).toBe(false);
    // A label twice is ambiguous: refused, whichever value a reader would take.
    expect(() => decodeCoseKey(Uint8Array.of(0xa2, 0x01, 0x02, 0x01, 0x02))).toThrow('bad label');
  });
});

describe('ecdsaDerToRaw', () => {
  it('inverts the DER encoding of every r ‖ s', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 64, maxLength: 64 }), (raw) => {
        // DER of a zero integer is one 0x00 byte; r and s are never zero in a real signature.
        fc.pre(raw.subarray(0, 32).some((b) => b !== 0) && raw.subarray(32).some((b) => b !== 0));
        expect(ecdsaDerToRaw(derSignature(raw))).toEqual(new Uint8Array(raw));
      }),
    );
  });
});
