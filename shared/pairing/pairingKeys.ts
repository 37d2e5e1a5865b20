import { canonicalBytes } from '../canonical/canonicalize.ts';
import { toBase64url } from '../encoding/base64url.ts';
import { utf8 } from '../encoding/bytes.ts';

/** The QR secret: 256 bits that reach the phone in the link's fragment, never the relay. */
export const PAIRING_SECRET_BYTES = 32;

export interface PairingKeys {
  /** Shown to the relay to fetch and complete the offer. It reveals nothing of `macKey`. */
  offerToken: string;
  /** Authenticates both sides' keys to each other. */
  macKey: CryptoKey;
}

/** Splits the QR secret with HKDF-SHA-256 into the relay's ticket and the MAC key. */
export async function derivePairingKeys(secret: Uint8Array<ArrayBuffer>): Promise<PairingKeys> {
  const ikm = await crypto.subtle.importKey('raw', secret, 'HKDF', false, ['deriveBits', 'deriveKey']);
  const hkdf = (info: string) => ({
    name: 'HKDF',
    hash: 'SHA-256',
    salt: new Uint8Array(0),
    info: utf8(info),
  });
  const offerToken = await crypto.subtle.deriveBits(hkdf('latch/v1/offer-token'), ikm, 256);
  const macKey = await crypto.subtle.deriveKey(
    hkdf('latch/v1/pairing-mac'),
    ikm,
    { name: 'HMAC', hash: 'SHA-256', length: 256 },
    false,
    ['sign', 'verify'],
  );
  return { offerToken: toBase64url(new Uint8Array(offerToken)), macKey };
}

/** HMAC-SHA-256 over a labelled canonical structure. */
export async function pairingMac(
  macKey: CryptoKey,
  purpose: string,
  value: object,
): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await crypto.subtle.sign('HMAC', macKey, canonicalBytes({ purpose, value })));
}
