import { canonicalHash } from '../canonical/canonicalize.ts';
import { toBase64url } from '../encoding/base64url.ts';
import type { RequestDetails } from '../messages/approvals.ts';

/**
 * SHA-256 over the canonical JSON of the details, base64url. The details carry a random request
 * id and nonce, so the hash, which the relay sees, tells nothing of a short command.
 */
export async function requestHash(details: RequestDetails): Promise<string> {
  return toBase64url(await canonicalHash(details));
}
