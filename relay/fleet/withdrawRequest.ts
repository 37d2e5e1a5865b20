import type { RequestWithdrawn } from '../../shared/messages/relayViews.ts';
import { refusal, type RelayResult, type Unversioned } from '../http/relayError.ts';
import { row, type FleetContext, type HostRow, type RequestRow } from './context.ts';
import { notifyClosed } from './notify.ts';
import { undecidable } from './requests.ts';

/**
 * A host withdraws one of its own pending requests: nobody on it waits for the answer any more
 * (the caller went away, a freeze, a restart). The phones stop listing it, those shown its
 * notification are told to close it, and a decision sent for it later is refused (`withdrawn`).
 * Withdrawing only ever closes a request, so the relay needs no more than the host's token.
 */
export function withdrawRequest(
  ctx: FleetContext,
  host: HostRow,
  requestId: string,
): RelayResult<Unversioned<RequestWithdrawn>> {
  const stored = row<RequestRow>(ctx.sql, 'SELECT * FROM requests WHERE request_id = ?', requestId);
  if (!stored) return refusal('not_found', 'no such request');
  if (stored.host !== host.id) return refusal('forbidden', 'a host can only withdraw its own requests');
  const notNow = undecidable(ctx, stored);
  if (notNow) return notNow;
  ctx.sql.exec(
    "UPDATE requests SET state = 'withdrawn', decided_at = ? WHERE request_id = ? AND state = 'pending'",
    ctx.now(),
    requestId,
  );
  notifyClosed(ctx, stored);
  return { ok: true, value: { requestId, state: 'withdrawn' } };
}
