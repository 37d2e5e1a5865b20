import { concatBytes, utf8 } from '../encoding/bytes.ts';
import { LatchError } from '../errors.ts';
import { exportPublicKey, generateEcdhKeyPair, importEcdhPublicKey } from '../keys/p256.ts';

/**
 * An ECIES box for one phone: ephemeral ECDH P-256, HKDF-SHA-256, AES-256-GCM.
 *
 *   box = 0x01 ‖ ephemeral public key (65) ‖ iv (12) ‖ ciphertext ‖ tag (16)
 *
 * HKDF's salt binds both public keys; the associated data binds the box to its context (fleet,
 * host, request, device), so a relay cannot move a box onto another request.
 */
const BOX_VERSION = 0x01;
const POINT_BYTES = 65;
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const SEALED_BOX_OVERHEAD = 1 + POINT_BYTES + IV_BYTES + TAG_BYTES;
const INFO = utf8('latch/v1/sealed-box');

async function boxKey(
  privateKey: CryptoKey,
  publicKey: CryptoKey,
  ephemeralRaw: Uint8Array,
  recipientRaw: Uint8Array,
  usage: 'encrypt' | 'decrypt',
): Promise<CryptoKey> {
  // A variable, not a literal: workerd's typings spell the member `$public`, the DOM's `public`.
  const ecdh = { name: 'ECDH', public: publicKey };
  const shared = await crypto.subtle.deriveBits(ecdh, privateKey, 256);
  const ikm = await crypto.subtle.importKey('raw', shared, 'HKDF', false, ['deriveKey']);
  return crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: concatBytes(ephemeralRaw, recipientRaw), info: INFO },
    ikm,
    { name: 'AES-GCM', length: 256 },
    false,
    [usage],
  );
}

export async function seal(
  plaintext: Uint8Array<ArrayBuffer>,
  recipientPublicKeyRaw: Uint8Array<ArrayBuffer>,
  associatedData: Uint8Array<ArrayBuffer>,
): Promise<Uint8Array<ArrayBuffer>> {
  const recipient = await importEcdhPublicKey(recipientPublicKeyRaw);
  const ephemeral = await generateEcdhKeyPair(false);
  const ephemeralRaw = await exportPublicKey(ephemeral.publicKey);
  const key = await boxKey(ephemeral.privateKey, recipient, ephemeralRaw, recipientPublicKeyRaw, 'encrypt');
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const ciphertext = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: associatedData },
    key,
    plaintext,
  );
  return concatBytes(Uint8Array.of(BOX_VERSION), ephemeralRaw, iv, new Uint8Array(ciphertext));
}

/** Opens a box; any fault (wrong key, tampering, other associated data) is `decrypt_failed`. */
export async function open(
  box: Uint8Array<ArrayBuffer>,
  recipientPrivateKey: CryptoKey,
  recipientPublicKeyRaw: Uint8Array<ArrayBuffer>,
  associatedData: Uint8Array<ArrayBuffer>,
): Promise<Uint8Array<ArrayBuffer>> {
  if (box.length < SEALED_BOX_OVERHEAD || box[0] !== BOX_VERSION) {
    throw new LatchError('decrypt_failed', 'not a sealed box of this version');
  }
  const ephemeralRaw = box.slice(1, 1 + POINT_BYTES);
  const iv = box.slice(1 + POINT_BYTES, 1 + POINT_BYTES + IV_BYTES);
  const ciphertext = box.slice(1 + POINT_BYTES + IV_BYTES);
  try {
    const ephemeral = await importEcdhPublicKey(ephemeralRaw);
    const key = await boxKey(recipientPrivateKey, ephemeral, ephemeralRaw, recipientPublicKeyRaw, 'decrypt');
    return new Uint8Array(
      await crypto.subtle.decrypt({ name: 'AES-GCM', iv, additionalData: associatedData }, key, ciphertext),
    );
  } catch {
    throw new LatchError('decrypt_failed', 'the box does not open with this key and context');
  }
}
