import { canonicalHash } from '../canonical/canonicalize.ts';
import type { Decision, Grant } from '../messages/approvals.ts';
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
  /** What an approval grants beyond this call; absent, it approves this call once. */
  grant?: Grant;
}

/**
 * The WebAuthn challenge for a decision (design.md):
 * SHA-256(canonical({ v, fleet, host, requestId, requestHash, decision, nonce, exp })).
 * A signature over it is good for this request, this decision, this host and fleet, and nothing else.
 * A grant (docs/policy.md#grants) joins the object as `grant`; an approve-once leaves it out, so
 * its challenge is the same as before grants existed.
 */
export function approvalChallenge(binding: ApprovalBinding): Promise<Uint8Array<ArrayBuffer>> {
  const { fleet, host, requestId, requestHash, decision, nonce, exp, grant } = binding;
  return canonicalHash({
    v: PROTOCOL_VERSION,
    fleet,
    host,
    requestId,
    requestHash,
    decision,
    nonce,
    exp,
    ...(grant ? { grant } : {}),
  });
}
