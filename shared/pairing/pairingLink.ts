import { fromBase64url, toBase64url } from '../encoding/base64url.ts';
import { fail, ok, type Result } from '../errors.ts';
import { PROTOCOL_VERSION } from '../version.ts';
import { PAIRING_SECRET_BYTES } from './pairingKeys.ts';

export interface PairingLink {
  /** The relay's origin, which serves the app. */
  origin: string;
  /** Everything else the phone needs: the offer's id, token and MAC key derive from it. */
  secret: Uint8Array<ArrayBuffer>;
}

/**
 * The link in the QR code: `<origin>/pair#<version>.<secret>`. Everything after `#` stays in the
 * browser (a fragment is never sent in a request), so the relay that serves the page never learns
 * the secret. It is this short so that its QR code fits an 80×24 terminal: 78 bytes, a version-4
 * code at level L, for origins of up to 48 characters.
 */
export function pairingLink(link: PairingLink): string {
  return `${link.origin}/pair#${PROTOCOL_VERSION}.${toBase64url(link.secret)}`;
}

export function parsePairingLink(text: string): Result<PairingLink> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail('invalid_field', 'not a URL');
  }
  if (url.pathname !== '/pair' || url.search !== '') return fail('invalid_field', 'not a pairing link');
  const fragment = url.hash.slice(1);
  const dot = fragment.indexOf('.');
  if (dot < 0 || fragment.slice(0, dot) !== String(PROTOCOL_VERSION))
    return fail('unknown_version', 'a pairing link of another version');
  let secret: Uint8Array<ArrayBuffer>;
  try {
    secret = fromBase64url(fragment.slice(dot + 1));
  } catch {
    return fail('malformed_base64url', 'the secret is not base64url');
  }
  if (secret.length !== PAIRING_SECRET_BYTES) return fail('invalid_field', 'the secret has the wrong length');
  return ok({ origin: url.origin, secret });
}
