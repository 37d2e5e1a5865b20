import { toBase64url } from '../encoding/base64url.ts';

/**
 * Verifies a WebAuthn signature with a COSE public key (RFC 9052/9053), for the two algorithms
 * pairing accepts: ES256 (EC2, P-256, DER signature) and RS256 (RSASSA-PKCS1-v1_5, SHA-256,
 * with a strong key only).
 *
 * Our own, rather than @simplewebauthn/server's `verifySignature`: its helpers module loads an
 * X.509 and CMS stack (~750 KB, ~15 MB resident) that assertions never use, into the daemon.
 * Registration, with its attestation formats, stays with @simplewebauthn/server.
 */

/** COSE algorithm identifiers pairing accepts (the PWA offers exactly these). */
export const COSE_ALGORITHMS = { ES256: -7, RS256: -257 } as const;

const COSE_KTY_EC2 = 2;
const COSE_KTY_RSA = 3;
const COSE_CRV_P256 = 1;
const P256_COORDINATE_BYTES = 32;
/**
 * RSA keys as authenticators make them (FIDO requires a 2048-bit modulus and exponent 65537).
 * Others are refused: with exponent 1 anyone forges a signature from the public key alone, and a
 * short modulus is factored. The ceiling bounds the work one signature check can cost.
 */
const RSA_MIN_MODULUS_BITS = 2048;
const RSA_MAX_MODULUS_BITS = 8192;
const RSA_EXPONENT_65537 = [1, 0, 1];

type CoseValue = number | Uint8Array;

/** Any key or signature that cannot be read verifies nothing: false, never an exception. */
export async function verifyCoseSignature(
  coseKey: Uint8Array,
  signature: Uint8Array,
  data: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  try {
    const key = decodeCoseKey(coseKey);
    const kind = acceptedKind(key);
    if (kind === 'ES256') {
      const rawSignature = ecdsaDerToRaw(signature);
      if (!rawSignature) return false;
      const publicKey = await crypto.subtle.importKey(
        'jwk',
        { kty: 'EC', crv: 'P-256', x: toBase64url(bytesAt(key, -2)), y: toBase64url(bytesAt(key, -3)) },
        { name: 'ECDSA', namedCurve: 'P-256' },
        false,
        ['verify'],
      );
      return await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, publicKey, rawSignature, data);
    }
    if (kind === 'RS256') {
      const publicKey = await crypto.subtle.importKey(
        'jwk',
        { kty: 'RSA', n: toBase64url(bytesAt(key, -1)), e: toBase64url(bytesAt(key, -2)), alg: 'RS256' },
        { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
        false,
        ['verify'],
      );
      return await crypto.subtle.verify('RSASSA-PKCS1-v1_5', publicKey, copy(signature), data);
    }
    return false;
  } catch {
    return false;
  }
}

/**
 * Whether a passkey's public key is one assertions can be verified with: ES256 on P-256, or
 * RS256 with a strong key. Pairing refuses any other, so none is ever stored.
 */
export function isAcceptedCoseKey(coseKey: Uint8Array): boolean {
  try {
    return acceptedKind(decodeCoseKey(coseKey)) !== undefined;
  } catch {
    return false;
  }
}

/** The algorithm of a key with every parameter it needs, well formed; undefined for any other. */
function acceptedKind(key: Map<number, CoseValue>): 'ES256' | 'RS256' | undefined {
  const [kty, alg] = [key.get(1), key.get(3)];
  if (kty === COSE_KTY_EC2 && alg === COSE_ALGORITHMS.ES256)
    return key.get(-1) === COSE_CRV_P256 && isCoordinate(key.get(-2)) && isCoordinate(key.get(-3))
      ? 'ES256'
      : undefined;
  if (kty === COSE_KTY_RSA && alg === COSE_ALGORITHMS.RS256)
    return isStrongRsaKey(key.get(-1), key.get(-2)) ? 'RS256' : undefined;
  return undefined;
}

/** A parameter acceptedKind found to be bytes. */
const bytesAt = (key: Map<number, CoseValue>, label: number) => key.get(label) as Uint8Array;

const isCoordinate = (value: CoseValue | undefined): value is Uint8Array =>
  value instanceof Uint8Array && value.length === P256_COORDINATE_BYTES;

/** A modulus of 2048 to 8192 bits and the exponent 65537, both unsigned big-endian. */
function isStrongRsaKey(n: CoseValue | undefined, e: CoseValue | undefined): boolean {
  if (!(n instanceof Uint8Array) || !(e instanceof Uint8Array)) return false;
  const modulus = withoutLeadingZeros(n);
  const bits = modulus.length === 0 ? 0 : (modulus.length - 1) * 8 + (32 - Math.clz32(modulus[0]!));
  const exponent = withoutLeadingZeros(e);
  return (
    bits >= RSA_MIN_MODULUS_BITS &&
    bits <= RSA_MAX_MODULUS_BITS &&
    exponent.length === RSA_EXPONENT_65537.length &&
    RSA_EXPONENT_65537.every((byte, at) => exponent[at] === byte)
  );
}

const withoutLeadingZeros = (bytes: Uint8Array): Uint8Array => {
  let start = 0;
  while (start < bytes.length && bytes[start] === 0) start++;
  return bytes.subarray(start);
};

const copy = (bytes: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(bytes);

/**
 * A COSE_Key is a CBOR map from integers to integers or byte strings. This reads exactly that,
 * in definite lengths, and refuses anything else (nested items, text, floats, trailing bytes).
 */
export function decodeCoseKey(bytes: Uint8Array): Map<number, CoseValue> {
  let offset = 0;
  const byte = () => {
    if (offset >= bytes.length) throw new Error('truncated');
    return bytes[offset++]!;
  };
  const head = (): { major: number; value: number } => {
    const initial = byte();
    const major = initial >> 5;
    const info = initial & 0x1f;
    if (info < 24) return { major, value: info };
    const length = info === 24 ? 1 : info === 25 ? 2 : info === 26 ? 4 : 0;
    if (length === 0) throw new Error('unsupported length');
    let value = 0;
    for (let i = 0; i < length; i++) value = value * 256 + byte();
    return { major, value };
  };
  const item = (): CoseValue => {
    const { major, value } = head();
    if (major === 0) return value;
    if (major === 1) return -1 - value;
    if (major === 2) {
      if (offset + value > bytes.length) throw new Error('truncated');
      offset += value;
      return bytes.subarray(offset - value, offset);
    }
    throw new Error('unsupported item');
  };

  const map = head();
  if (map.major !== 5) throw new Error('not a map');
  const key = new Map<number, CoseValue>();
  for (let i = 0; i < map.value; i++) {
    const label = item();
    if (typeof label !== 'number' || key.has(label)) throw new Error('bad label');
    key.set(label, item());
  }
  if (offset !== bytes.length) throw new Error('trailing bytes');
  return key;
}

/**
 * WebAuthn carries ECDSA signatures as DER, SEQUENCE { INTEGER r, INTEGER s }; Web Crypto wants
 * r ‖ s, each 32 bytes. Strict DER: short lengths, minimal integers, no trailing bytes.
 */
export function ecdsaDerToRaw(der: Uint8Array): Uint8Array<ArrayBuffer> | undefined {
  if (der.length < 8 || der[0] !== 0x30 || der[1] !== der.length - 2) return undefined;
  const raw = new Uint8Array(2 * P256_COORDINATE_BYTES);
  let offset = 2;
  for (const half of [0, 1]) {
    if (der[offset] !== 0x02) return undefined;
    const length = der[offset + 1]!;
    const start = offset + 2;
    if (length === 0 || length > P256_COORDINATE_BYTES + 1 || start + length > der.length) return undefined;
    let integer = der.subarray(start, start + length);
    // Minimal encoding: a leading zero only to keep a high bit from reading as negative.
    if (integer[0]! & 0x80) return undefined;
    if (integer.length > 1 && integer[0] === 0) {
      if ((integer[1]! & 0x80) === 0) return undefined;
      integer = integer.subarray(1);
    }
    if (integer.length > P256_COORDINATE_BYTES) return undefined;
    raw.set(integer, (half + 1) * P256_COORDINATE_BYTES - integer.length);
    offset = start + length;
  }
  return offset === der.length ? raw : undefined;
}
