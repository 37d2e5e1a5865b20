import type { Grant, RequestDetails } from '../messages/approvals.ts';
import type { ApprovalBinding } from './approvalChallenge.ts';
import { requestHash } from './requestHash.ts';

/** What a binding takes from its request: the fields the relay keeps in its row, too. */
export type BoundRequest = Omit<ApprovalBinding, 'decision' | 'grant'>;

/**
 * The binding an approval of `request` signs, with `grant` when it grants more than this call
 * (docs/policy.md#grants). Daemon, relay and phone all build it here, so they cannot drift
 * apart. It always approves: a refusal is a deny envelope, signed by the device key instead.
 */
export function approvalBinding(request: BoundRequest, grant?: Grant): ApprovalBinding {
  const { fleet, host, requestId, requestHash, nonce, exp } = request;
  return {
    fleet,
    host,
    requestId,
    requestHash,
    decision: 'approve',
    nonce,
    exp,
    ...(grant ? { grant } : {}),
  };
}

/** The binding of an approval of exactly these details, as the daemon and the phone hold them. */
export async function detailsBinding(details: RequestDetails, grant?: Grant): Promise<ApprovalBinding> {
  return approvalBinding({ ...details, requestHash: await requestHash(details) }, grant);
}
