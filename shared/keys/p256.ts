import { toBase64url } from '../encoding/base64url.ts';
import { sha256 } from '../encoding/bytes.ts';
import { LatchError } from '../errors.ts';

const ECDSA = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const ECDH = { name: 'ECDH', namedCurve: 'P-256' } as const;

/**
 * A device key or host identity key. In the browser the private half is made non-extractable
 * (it never leaves IndexedDB as bytes); the daemon keeps it extractable to store it as a JWK.
 */
export function generateSigningKeyPair(extractable: boolean): Promise<CryptoKeyPair> {
  // The casts here and below bridge the DOM's and workerd's typings of the same Web Crypto calls.
  return crypto.subtle.generateKey(ECDSA, extractable, ['sign', 'verify']) as Promise<CryptoKeyPair>;
}

/** The phone's key for end-to-end encryption of request details. */
export function generateEcdhKeyPair(extractable: boolean): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(ECDH, extractable, ['deriveBits']) as Promise<CryptoKeyPair>;
}

/** The uncompressed point (65 bytes), the form keys take on the wire. */
export async function exportPublicKey(key: CryptoKey): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array((await crypto.subtle.exportKey('raw', key)) as ArrayBuffer);
}

async function importPublic(
  raw: Uint8Array<ArrayBuffer>,
  algorithm: typeof ECDSA | typeof ECDH,
  usages: ('verify' | 'deriveBits')[],
) {
  try {
    return await crypto.subtle.importKey('raw', raw, algorithm, true, usages);
  } catch {
    throw new LatchError('invalid_key', 'not a P-256 public key');
  }
}

export function importVerifyingKey(raw: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  return importPublic(raw, ECDSA, ['verify']);
}

export function importEcdhPublicKey(raw: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  return importPublic(raw, ECDH, []);
}

/**
 * A device's or host's id is derived from its public key (128 bits of SHA-256), so an id cannot
 * be claimed by another key: whoever verifies a signature checks the id against the key.
 */
export async function keyId(publicKeyRaw: Uint8Array<ArrayBuffer>): Promise<string> {
  return toBase64url((await sha256(publicKeyRaw)).subarray(0, 16));
}
