import { fromBase64url } from '../encoding/base64url.ts';
import { attempt, LatchError, type Result } from '../errors.ts';
import { importVerifyingKey, keyId } from '../keys/p256.ts';
import type { EnvelopeKind, EnvelopeOf, SignedEnvelope } from '../messages/envelopes.ts';
import { envelopeSigningBytes } from './signEnvelope.ts';

export interface EnvelopeExpectation<K extends EnvelopeKind> {
  kind: K;
  /** The signer's public key, as stored at pairing (raw P-256). */
  publicKey: Uint8Array<ArrayBuffer>;
  /** When set, `ts` must be within this many milliseconds of `now`. */
  maxSkewMs?: number;
  now?: number;
}

/** Checks an already-parsed envelope: kind, that the signer id is its key's, freshness, signature. */
export function verifyEnvelope<K extends EnvelopeKind>(
  envelope: SignedEnvelope,
  expected: EnvelopeExpectation<K>,
): Promise<Result<EnvelopeOf<K>>> {
  return attempt(async () => {
    // A deny must not be replayed as a freeze, nor the reverse.
    if (envelope.kind !== expected.kind) {
      throw new LatchError('wrong_kind', `expected a ${expected.kind} envelope`);
    }
    // Ids are derived from keys, so a signer cannot borrow another's id.
    if (envelope.signer.id !== (await keyId(expected.publicKey))) {
      throw new LatchError('wrong_signer', 'the signer id is not the id of this key');
    }
    if (expected.maxSkewMs !== undefined) {
      const now = expected.now ?? Date.now();
      if (Math.abs(now - envelope.ts) > expected.maxSkewMs) {
        throw new LatchError('stale_timestamp', 'the envelope is too old or from the future');
      }
    }
    const key = await importVerifyingKey(expected.publicKey);
    const valid = await crypto.subtle.verify(
      { name: 'ECDSA', hash: 'SHA-256' },
      key,
      fromBase64url(envelope.sig),
      envelopeSigningBytes(envelope),
    );
    if (!valid) throw new LatchError('bad_signature', 'the envelope signature does not verify');
    return envelope as EnvelopeOf<K>;
  });
}
