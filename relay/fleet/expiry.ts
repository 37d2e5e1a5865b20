import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { row, rows, type FleetContext, type RequestRow } from './context.ts';
import { notifyClosed } from './notify.ts';

/** Expires what is due and tells each daemon; the alarm asks nextDeadline for the next one. */
export function expireDue(ctx: FleetContext): void {
  const now = ctx.now();
  const due = rows<RequestRow>(ctx.sql, "SELECT * FROM requests WHERE state = 'pending' AND exp <= ?", now);
  for (const stored of due) {
    ctx.sql.exec(
      "UPDATE requests SET state = 'expired', decided_at = ? WHERE request_id = ?",
      now,
      stored.request_id,
    );
    ctx.emit(stored.host, { v: PROTOCOL_VERSION, type: 'expired', requestId: stored.request_id, at: now });
    notifyClosed(ctx, stored);
  }
}

export function nextDeadline(ctx: FleetContext): number | undefined {
  return (
    row<{ exp: number | null }>(ctx.sql, "SELECT MIN(exp) AS exp FROM requests WHERE state = 'pending'")
      ?.exp ?? undefined
  );
}
