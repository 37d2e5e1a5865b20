import { row, type FleetContext, type RequestRow } from './context.ts';
import { EVENT_RETENTION_MS, oldestPrunableEvent, pruneEvents } from './events.ts';
import { nextDeadline } from './expiry.ts';
import { RECENT_MS } from './requests.ts';

/**
 * Settled rows are pruned in one batch on a whole UTC day: a fleet that keeps anything settled
 * wakes for it at most once a day, and a fleet that keeps nothing never does.
 */
export const PRUNE_EVERY_MS = 24 * 3600_000;

/**
 * Forgets what nobody may ask for any more: a settled request (and its boxes) a day after its
 * deadline, when phones stop listing it; an event after the log's retention (events.ts).
 */
export function pruneSettled(ctx: FleetContext): void {
  const cutoff = ctx.now() - RECENT_MS;
  ctx.sql.exec(
    "DELETE FROM sealed_boxes WHERE request_id IN (SELECT request_id FROM requests WHERE state != 'pending' AND exp <= ?)",
    cutoff,
  );
  ctx.sql.exec("DELETE FROM requests WHERE state != 'pending' AND exp <= ?", cutoff);
  pruneEvents(ctx.sql, ctx.now());
}

/** When the first settled row may go, if any. */
function firstPrunable(ctx: FleetContext): number | undefined {
  const request = row<{ exp: number | null }>(
    ctx.sql,
    "SELECT MIN(exp) AS exp FROM requests WHERE state != 'pending'",
  )?.exp;
  const event = oldestPrunableEvent(ctx.sql);
  const times = [
    ...(request == null ? [] : [request + RECENT_MS]),
    ...(event === undefined ? [] : [event + EVENT_RETENTION_MS]),
  ];
  return times.length ? Math.min(...times) : undefined;
}

/**
 * When the fleet's one alarm should fire: the earliest pending deadline, or the day's prune if
 * that comes first; none when nothing waits and nothing settled is kept (an idle fleet costs
 * nothing).
 */
function nextAlarm(ctx: FleetContext): number | undefined {
  const prunable = firstPrunable(ctx);
  const times = [
    ...(prunable === undefined ? [] : [Math.ceil(prunable / PRUNE_EVERY_MS) * PRUNE_EVERY_MS]),
    ...[nextDeadline(ctx)].filter((deadline) => deadline !== undefined),
  ];
  return times.length ? Math.min(...times) : undefined;
}

/**
 * Moves the fleet's one alarm to what is due next, or clears it: a request settled before its
 * deadline leaves no alarm behind to pay for.
 */
export async function scheduleAlarm(storage: DurableObjectStorage, ctx: FleetContext): Promise<void> {
  const next = nextAlarm(ctx);
  const current = await storage.getAlarm();
  if (next === undefined) {
    if (current !== null) await storage.deleteAlarm();
  } else if (current !== next) await storage.setAlarm(Math.max(next, ctx.now()));
}

/**
 * The same, after one request was created or settled, reading only what that change can move
 * (a full reschedule, three reads and the alarm, took 0.13-0.19 ms of each call). The alarm stands
 * at the earliest of what it is for, so a new deadline can only bring it forward; a settled
 * request moves it only when it stood at that request's deadline, where it would fire, billed,
 * for nothing. Settling adds only prune times, which are later than the request's deadline.
 */
export async function scheduleAlarmAfter(
  storage: DurableObjectStorage,
  ctx: FleetContext,
  requestId: string,
): Promise<void> {
  const changed = row<Pick<RequestRow, 'state' | 'exp'>>(
    ctx.sql,
    'SELECT state, exp FROM requests WHERE request_id = ?',
    requestId,
  );
  const current = await storage.getAlarm();
  if (changed?.state === 'pending') {
    if (current === null || current > changed.exp) await storage.setAlarm(Math.max(changed.exp, ctx.now()));
  } else if (!changed || current === null || current >= changed.exp) {
    await scheduleAlarm(storage, ctx);
  }
}
