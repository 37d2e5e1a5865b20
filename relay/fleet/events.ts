import type { HostEvent, HostFrame } from '../../shared/messages/events.ts';
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

/**
 * The last number given, pruned or not (AUTOINCREMENT never reuses one): once the log is pruned
 * empty, a daemon's cursor must still read as inside it, not beyond it.
 */
export function lastSeq(sql: SqlStorage): number {
  return row<{ seq: number | null }>(sql, "SELECT seq FROM sqlite_sequence WHERE name = 'events'")?.seq ?? 0;
}

/**
 * The newest freeze and the newest resume are kept whatever their age: a daemon back after weeks
 * away still gets the resume, with its votes, of the freeze it holds (the state frame it gets
 * first carries the freeze in force, but never the votes that ended one).
 */
const KEPT_WHATEVER_AGE = `seq NOT IN (
  SELECT COALESCE(MAX(seq), 0) FROM events WHERE json_extract(event, '$.type') = 'frozen'
  UNION ALL SELECT COALESCE(MAX(seq), 0) FROM events WHERE json_extract(event, '$.type') = 'resumed')`;

/** Forgets events older than the retention. The numbering goes on from the last one (lastSeq). */
export function pruneEvents(sql: SqlStorage, now: number): void {
  sql.exec(`DELETE FROM events WHERE at <= ? AND ${KEPT_WHATEVER_AGE}`, now - EVENT_RETENTION_MS);
}

/** When the oldest event that pruning may take was logged, if any. */
export function oldestPrunableEvent(sql: SqlStorage): number | undefined {
  return (
    row<{ at: number | null }>(sql, `SELECT MIN(at) AS at FROM events WHERE ${KEPT_WHATEVER_AGE}`)?.at ??
    undefined
  );
}
