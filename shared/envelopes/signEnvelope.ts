import { canonicalBytes } from '../canonical/canonicalize.ts';
import { toBase64url } from '../encoding/base64url.ts';
import { randomBytes } from '../encoding/bytes.ts';
import type { Signer } from '../messages/common.ts';
import type { EnvelopeBody, EnvelopeKind, EnvelopeOf, SignedEnvelope } from '../messages/envelopes.ts';
import { PROTOCOL_VERSION } from '../version.ts';

/** What the signature covers: every member but `sig`, canonically. */
export function envelopeSigningBytes(envelope: Omit<SignedEnvelope, 'sig'>): Uint8Array<ArrayBuffer> {
  const { v, kind, signer, body, ts, nonce } = envelope;
  return canonicalBytes({ v, kind, signer, body, ts, nonce });
}

export async function signEnvelope<K extends EnvelopeKind>(
  kind: K,
  body: EnvelopeBody<K>,
  signer: Signer,
  privateKey: CryptoKey,
  now: number = Date.now(),
): Promise<EnvelopeOf<K>> {
  const unsigned = { v: PROTOCOL_VERSION, kind, signer, body, ts: now, nonce: toBase64url(randomBytes(16)) };
  // TypeScript cannot narrow the union by a generic K; the members above are exactly EnvelopeOf<K>'s.
  const typed = unsigned as unknown as Omit<EnvelopeOf<K>, 'sig'>;
  const signature = await crypto.subtle.sign(
    { name: 'ECDSA', hash: 'SHA-256' },
    privateKey,
    envelopeSigningBytes(typed),
  );
  return { ...typed, sig: toBase64url(new Uint8Array(signature)) } as EnvelopeOf<K>;
}
