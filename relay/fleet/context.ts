import type { PairedDeviceRow } from '../../shared/pairing/storedDevice.ts';
import type { HostEvent } from '../../shared/messages/events.ts';

/** What the fleet's modules share: storage, the clock, and the way out to daemons. */
export interface FleetContext {
  readonly sql: SqlStorage;
  readonly env: Env;
  readonly fleet: string;
  now(): number;
  /** Appends the event to the fleet's log and sends it to the daemons it concerns (`null`: all). */
  emit(host: string | null, event: HostEvent): void;
  /** Ends the daemon connections opened with this token (by its hash): it no longer holds. */
  closeConnections(tokenHash: string): void;
  /** Keeps the object alive for work that finishes after the response, e.g. pushes. */
  background(task: Promise<unknown>): void;
}

export interface HostRow {
  id: string;
  name: string;
  host_key: string;
  token_hash: string;
  next_token_hash: string | null;
  quorum: number;
  created_at: number;
}

export interface DeviceRow extends PairedDeviceRow {
  push_endpoint: string | null;
  push_p256dh: string | null;
  push_auth: string | null;
  created_at: number;
}

export interface RequestRow {
  request_id: string;
  host: string;
  conversation: string;
  dedup_key: string;
  risk: string;
  created_at: number;
  exp: number;
  request_hash: string;
  nonce: string;
  state: string;
  decision: string | null;
  decided_by: string | null;
  decided_at: number | null;
  /** 1 when its notification was pushed (migration 2). */
  pushed: number;
}

/** Rows of one table as typed objects. SqlStorage returns untyped records. */
export function rows<T>(sql: SqlStorage, query: string, ...bindings: unknown[]): T[] {
  return sql.exec(query, ...bindings).toArray() as unknown as T[];
}

export function row<T>(sql: SqlStorage, query: string, ...bindings: unknown[]): T | undefined {
  return rows<T>(sql, query, ...bindings)[0];
}

/** The `n` a `SELECT COUNT(*) AS n …` answers. */
export function count(sql: SqlStorage, query: string, ...bindings: unknown[]): number {
  return row<{ n: number }>(sql, query, ...bindings)!.n;
}
