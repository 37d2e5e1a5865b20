import type { RequestDetails } from '../../../shared/messages/approvals.ts';

/** Why the daemon asks for a moment before this approval: a burst of approvals, or asked again after a deny. */
export function FatigueNotes({ details }: { details: RequestDetails }) {
  return (
    <>
      {details.askedAgainAfterDeny && (
        <p class="asked-again" role="note">
          Asked again after you denied. If you did not expect this, deny and report it.
        </p>
      )}
      {details.reviewReason && (
        <p class="review-reason" role="note">
          {details.reviewReason}
        </p>
      )}
    </>
  );
}
