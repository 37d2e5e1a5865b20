import { fromBase64url, toBase64url } from '../encoding/base64url.ts';
import { fail, ok, type Result } from '../errors.ts';
import { validateId } from '../text/validateId.ts';
import { PROTOCOL_VERSION } from '../version.ts';
import { PAIRING_SECRET_BYTES } from './pairingKeys.ts';

export interface PairingLink {
  /** The relay's origin, which serves the app. */
  origin: string;
  fleet: string;
  offerId: string;
  secret: Uint8Array<ArrayBuffer>;
}

/**
 * The link in the QR code. Everything after `#` stays in the browser (a fragment is never sent
 * in a request), so the relay that serves the page never learns the secret.
 */
export function pairingLink(link: PairingLink): string {
  const fragment = new URLSearchParams({
    v: String(PROTOCOL_VERSION),
    fleet: link.fleet,
    offer: link.offerId,
    secret: toBase64url(link.secret),
  });
  return `${link.origin}/pair#${fragment}`;
}

export function parsePairingLink(text: string): Result<PairingLink> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail('invalid_field', 'not a URL');
  }
  const fields = new URLSearchParams(url.hash.slice(1));
  if (fields.get('v') !== String(PROTOCOL_VERSION))
    return fail('unknown_version', 'a pairing link of another version');
  const fleet = validateId(fields.get('fleet') ?? '');
  const offerId = validateId(fields.get('offer') ?? '');
  if (!fleet.ok) return fleet;
  if (!offerId.ok) return offerId;
  let secret: Uint8Array<ArrayBuffer>;
  try {
    secret = fromBase64url(fields.get('secret') ?? '');
  } catch {
    return fail('malformed_base64url', 'the secret is not base64url');
  }
  if (secret.length !== PAIRING_SECRET_BYTES) return fail('invalid_field', 'the secret has the wrong length');
  return ok({ origin: url.origin, fleet: fleet.value, offerId: offerId.value, secret });
}
