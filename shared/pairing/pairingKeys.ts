import { canonicalBytes } from '../canonical/canonicalize.ts';
import { toBase64url } from '../encoding/base64url.ts';
import { utf8 } from '../encoding/bytes.ts';

/**
 * The QR secret: 128 bits that reach the phone in the link's fragment, never the relay. It only
 * authenticates (the transcript it MACs holds public keys alone, so there is nothing to decrypt
 * later), for the life of one offer (ten minutes; the relay keeps none past an hour). 128 bits is
 * far beyond any search in that time, from either value the relay sees; and 16 bytes keep the
 * link short enough for a QR code that fits an 80×24 terminal (see docs/security.md).
 */
export const PAIRING_SECRET_BYTES = 16;

export interface PairingKeys {
  /** Names the offer at the relay, which finds its fleet by it. Public to the relay. */
  offerId: string;
  /** Shown to the relay to fetch and complete the offer. It reveals nothing of `macKey`. */
  offerToken: string;
  /** Authenticates both sides' keys to each other. */
  macKey: CryptoKey;
}

/**
 * Splits the QR secret with HKDF-SHA-256 (RFC 5869), one info label per use: the offer's id and
 * the relay's ticket, both public to the relay, and the MAC key, which never leaves the two ends.
 */
export async function derivePairingKeys(secret: Uint8Array<ArrayBuffer>): Promise<PairingKeys> {
  const ikm = await crypto.subtle.importKey('raw', secret, 'HKDF', false, ['deriveBits', 'deriveKey']);
  const hkdf = (info: string) => ({
    name: 'HKDF',
    hash: 'SHA-256',
    salt: new Uint8Array(0),
    info: utf8(info),
  });
  const offerId = await crypto.subtle.deriveBits(hkdf('latch/v1/offer-id'), ikm, 128);
  const offerToken = await crypto.subtle.deriveBits(hkdf('latch/v1/offer-token'), ikm, 256);
  const macKey = await crypto.subtle.deriveKey(
    hkdf('latch/v1/pairing-mac'),
    ikm,
    { name: 'HMAC', hash: 'SHA-256', length: 256 },
    false,
    ['sign', 'verify'],
  );
  return {
    offerId: toBase64url(new Uint8Array(offerId)),
    offerToken: toBase64url(new Uint8Array(offerToken)),
    macKey,
  };
}

/** HMAC-SHA-256 over a labelled canonical structure. */
export async function pairingMac(
  macKey: CryptoKey,
  purpose: string,
  value: object,
): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await crypto.subtle.sign('HMAC', macKey, canonicalBytes({ purpose, value })));
}
