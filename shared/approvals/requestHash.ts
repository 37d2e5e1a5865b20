import { canonicalHash } from '../canonical/canonicalize.ts';
import { toBase64url } from '../encoding/base64url.ts';
import type { RequestDetails } from '../messages/approvals.ts';

/**
 * SHA-256 over the canonical JSON of the details, base64url. The relay sees the hash, and the
 * request id and nonce beside it; the details' `salt`, which it never sees, is what keeps it from
 * confirming a guess of a short command. The other ids it sees of a call are keyed for the same
 * reason (daemon/gate/callIds).
 */
export async function requestHash(details: RequestDetails): Promise<string> {
  return toBase64url(await canonicalHash(details));
}
