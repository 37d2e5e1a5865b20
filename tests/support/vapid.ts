import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { fromUtf8, utf8 } from '../../shared/encoding/bytes.ts';

export interface VapidClaims {
  aud: string;
  exp: number;
  sub: string;
}

/**
 * Verifies an RFC 8292 `Authorization: vapid t=<JWT>, k=<key>` header as a push service does:
 * an ES256 JWT signed by the key `k`. Returns its claims, or a reason it fails.
 */
export async function verifyVapidHeader(
  header: string | null,
): Promise<{ ok: true; claims: VapidClaims; key: string } | { ok: false; reason: string }> {
  const match = header?.match(/^vapid t=([A-Za-z0-9_.-]+),\s*k=([A-Za-z0-9_-]+)$/);
  if (!match) return { ok: false, reason: 'no vapid authorization' };
  const [, jwt, key] = match as unknown as [string, string, string];
  const [headerPart, claimsPart, signaturePart] = jwt.split('.');
  if (!headerPart || !claimsPart || !signaturePart) return { ok: false, reason: 'not a JWT' };
  const jwtHeader = JSON.parse(fromUtf8(fromBase64url(headerPart))) as { alg?: string };
  if (jwtHeader.alg !== 'ES256') return { ok: false, reason: 'not ES256' };
  const publicKey = await crypto.subtle.importKey(
    'raw',
    fromBase64url(key),
    { name: 'ECDSA', namedCurve: 'P-256' },
    false,
    ['verify'],
  );
  const valid = await crypto.subtle.verify(
    { name: 'ECDSA', hash: 'SHA-256' },
    publicKey,
    fromBase64url(signaturePart),
    utf8(`${headerPart}.${claimsPart}`),
  );
  if (!valid) return { ok: false, reason: 'bad JWT signature' };
  return { ok: true, claims: JSON.parse(fromUtf8(fromBase64url(claimsPart))) as VapidClaims, key };
}
