import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { GENESIS, lineHash } from '../audit/auditLog.ts';
import type { StateStore } from './stateStore.ts';

/** Enough of the log's end to hold its last line (an audit line carries at most a few KB). */
const TAIL_BYTES = 256 * 1024;

function lastLines(path: string): string[] {
  if (!existsSync(path)) return [];
  const size = statSync(path).size;
  const length = Math.min(size, TAIL_BYTES);
  const buffer = Buffer.alloc(length);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buffer, 0, length, size - length);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8').split('\n').filter(Boolean).slice(-2);
}

export type StateCheck = { ok: true; repaired: boolean } | { ok: false; problem: string };

/**
 * The state database and the audit log vouch for each other: the database keeps the sequence
 * number and hash of the log's last line. A database that was deleted and made anew, or swapped
 * for another, no longer matches the log, and its record of what the person approved (policy,
 * config, phones) cannot be trusted. One case is benign and mended: a crash after a line was
 * written and before the database recorded it leaves the log exactly one line ahead.
 */
export function stateMatchesAudit(store: StateStore, auditPath: string): StateCheck {
  const anchor = { seq: Number(store.meta('audit_seq') ?? 0), hash: store.meta('audit_hash') };
  const lines = lastLines(auditPath);
  const last = lines.at(-1);
  if (last === undefined)
    return anchor.seq === 0
      ? { ok: true, repaired: false }
      : { ok: false, problem: 'the audit log is empty or gone' };
  let parsed: { seq?: unknown; prev?: unknown };
  try {
    parsed = JSON.parse(last) as typeof parsed;
  } catch {
    return { ok: false, problem: 'the audit log’s last line is not JSON' };
  }
  if (parsed.seq === anchor.seq && lineHash(last) === anchor.hash) return { ok: true, repaired: false };
  if (parsed.seq === anchor.seq + 1 && parsed.prev === (anchor.hash ?? GENESIS)) {
    store.setMeta('audit_seq', String(parsed.seq));
    store.setMeta('audit_hash', lineHash(last));
    return { ok: true, repaired: true };
  }
  return {
    ok: false,
    problem: `the audit log ends at line ${String(parsed.seq)}, the state database last recorded line ${anchor.seq}`,
  };
}
