import { canonicalHash } from '../canonical/canonicalize.ts';
import type { Decision } from '../messages/approvals.ts';
import { PROTOCOL_VERSION } from '../version.ts';

/** Everything an approval commits to. */
export interface ApprovalBinding {
  fleet: string;
  host: string;
  requestId: string;
  requestHash: string;
  decision: Decision;
  nonce: string;
  /** The deadline in ms since the epoch: the token is worthless from this instant. */
  exp: number;
}

/**
 * The WebAuthn challenge for a decision (design.md):
 * SHA-256(canonical({ v, fleet, host, requestId, requestHash, decision, nonce, exp })).
 * A signature over it is good for this request, this decision, this host and fleet, and nothing else.
 */
export function approvalChallenge(binding: ApprovalBinding): Promise<Uint8Array<ArrayBuffer>> {
  const { fleet, host, requestId, requestHash, decision, nonce, exp } = binding;
  return canonicalHash({ v: PROTOCOL_VERSION, fleet, host, requestId, requestHash, decision, nonce, exp });
}
