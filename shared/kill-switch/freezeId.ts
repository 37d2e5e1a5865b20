import { canonicalHash } from '../canonical/canonicalize.ts';
import { toBase64url } from '../encoding/base64url.ts';
import type { FreezeEnvelope } from '../messages/envelopes.ts';

/**
 * The id of a freeze: SHA-256 over the canonical JSON of its signed envelope without its
 * signature, base64url. Anyone who holds the envelope (a phone, a daemon) computes it alone, so a
 * freeze is named by what was signed, never by a label the relay gives it. Each envelope has its
 * own nonce, so no two freezes share an id, and no id is known before its signer picks the nonce:
 * a vote cannot be cast ahead for a freeze to come, nor carried over to the next one. The
 * signature stays out because it is not unique: an ECDSA signature (r, s) also verifies as
 * (r, n − s), and a relay that flipped it would otherwise replay an ended freeze under a new id.
 */
export async function freezeId({ sig: _signature, ...signed }: FreezeEnvelope): Promise<string> {
  return toBase64url(await canonicalHash(signed));
}
