import { concatBytes, utf8 } from '../../shared/encoding/bytes.ts';

/** A push subscription's private side: what a browser keeps and a push service never sees. */
export interface UserAgentKeys {
  privateKey: CryptoKey;
  publicKeyRaw: Uint8Array<ArrayBuffer>;
  authSecret: Uint8Array<ArrayBuffer>;
}

async function hkdf(
  salt: Uint8Array<ArrayBuffer>,
  ikm: Uint8Array<ArrayBuffer>,
  info: Uint8Array<ArrayBuffer>,
  bytes: number,
) {
  const key = await crypto.subtle.importKey('raw', ikm, 'HKDF', false, ['deriveBits']);
  return new Uint8Array(
    await crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt, info }, key, bytes * 8),
  );
}

/**
 * Decrypts a Web Push message as a browser does: RFC 8188 aes128gcm framing, with the RFC 8291
 * key derivation from the user agent's ECDH key and auth secret. Single-record messages only,
 * which is all Web Push sends (4096 bytes at most).
 */
export async function decryptWebPush(
  body: Uint8Array<ArrayBuffer>,
  keys: UserAgentKeys,
): Promise<Uint8Array<ArrayBuffer>> {
  const salt = body.slice(0, 16);
  const idLength = body[20]!;
  const senderPublicRaw = body.slice(21, 21 + idLength);
  const ciphertext = body.slice(21 + idLength);

  const senderPublic = await crypto.subtle.importKey(
    'raw',
    senderPublicRaw,
    { name: 'ECDH', namedCurve: 'P-256' },
    false,
    [],
  );
  const algorithm = { name: 'ECDH', public: senderPublic };
  const ecdhSecret = new Uint8Array(await crypto.subtle.deriveBits(algorithm, keys.privateKey, 256));
  // RFC 8291 §3.3: key_info = "WebPush: info" ‖ 0x00 ‖ ua_public ‖ as_public
  const keyInfo = concatBytes(utf8('WebPush: info\0'), keys.publicKeyRaw, senderPublicRaw);
  const ikm = await hkdf(keys.authSecret, ecdhSecret, keyInfo, 32);
  // RFC 8188 §2.2–2.3
  const contentKey = await hkdf(salt, ikm, utf8('Content-Encoding: aes128gcm\0'), 16);
  const nonce = await hkdf(salt, ikm, utf8('Content-Encoding: nonce\0'), 12);

  const key = await crypto.subtle.importKey('raw', contentKey, 'AES-GCM', false, ['decrypt']);
  const padded = new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv: nonce }, key, ciphertext));
  // The last record ends with the delimiter 0x02, then zero padding.
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  if (padded[end] !== 2) throw new Error('no last-record padding delimiter');
  return padded.slice(0, end);
}
