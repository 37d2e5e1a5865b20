import type { HostEvent } from '../../shared/messages/events.ts';
import type { HostFrame } from '../../shared/messages/relayViews.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { row, rows } from './context.ts';

/** How long the log keeps an event for a daemon that was away. */
export const EVENT_RETENTION_MS = 7 * 24 * 3600_000;

/** Appends an event for one host (or, with `null`, for every host) and returns its frame. */
export function appendEvent(sql: SqlStorage, host: string | null, event: HostEvent, at: number): HostFrame {
  sql.exec('INSERT INTO events (host, event, at) VALUES (?, ?, ?)', host, JSON.stringify(event), at);
  const { seq } = row<{ seq: number }>(sql, 'SELECT last_insert_rowid() AS seq')!;
  return { v: PROTOCOL_VERSION, seq, event };
}

/** Every event a host has not seen: what a reconnecting daemon missed. */
export function eventsSince(sql: SqlStorage, host: string, after: number): HostFrame[] {
  return rows<{ seq: number; event: string }>(
    sql,
    'SELECT seq, event FROM events WHERE seq > ? AND (host = ? OR host IS NULL) ORDER BY seq',
    after,
    host,
  ).map(({ seq, event }) => ({ v: PROTOCOL_VERSION, seq, event: JSON.parse(event) as HostEvent }));
}

export function lastSeq(sql: SqlStorage): number {
  return row<{ seq: number | null }>(sql, 'SELECT MAX(seq) AS seq FROM events')?.seq ?? 0;
}

export function pruneEvents(sql: SqlStorage, now: number): void {
  sql.exec('DELETE FROM events WHERE at < ?', now - EVENT_RETENTION_MS);
}
