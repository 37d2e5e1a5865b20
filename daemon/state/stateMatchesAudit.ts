import { edgeLines, firstKeptSeq, keptAuditFiles } from '../audit/auditFiles.ts';
import { GENESIS, lineHash } from '../audit/auditLog.ts';
import { LOG_AHEAD, misnamedEnd, misplacedStart } from '../audit/verifyAuditLog.ts';
import type { StateStore } from './stateStore.ts';

export type StateCheck = { ok: true; repaired: boolean } | { ok: false; problem: string };

function seqOf(line: string): unknown {
  try {
    return (JSON.parse(line) as { seq?: unknown }).seq;
  } catch {
    return undefined;
  }
}

/**
 * The state database and the audit log vouch for each other: the database keeps the sequence
 * number and hash of the log's last line, and the first line the log still keeps. A database
 * that was deleted and made anew, or swapped for another, no longer matches the log, and its
 * record of what the person approved (policy, config, phones) cannot be trusted. One case is
 * benign and mended: a crash after a line was written and before the database recorded it leaves
 * the log exactly one line ahead. Cheap enough for every start: it reads each kept file's first
 * line and the last line, not the whole chain (`latch audit verify` walks that).
 */
export function stateMatchesAudit(store: StateStore, auditPath: string): StateCheck {
  const anchor = { seq: Number(store.meta('audit_seq') ?? 0), hash: store.meta('audit_hash') };
  // Each kept file starts where the one before it ended: none was deleted, renamed or moved.
  let expected = firstKeptSeq(store);
  let newest: string | undefined;
  for (const file of keptAuditFiles(auditPath, expected)) {
    const first = edgeLines(file.path, 'start')[0];
    if (first === undefined) {
      if (file.lastSeq !== undefined)
        return { ok: false, problem: `${file.name} ${misnamedEnd(file, undefined)}` };
      continue;
    }
    const seq = seqOf(first);
    if (seq === undefined)
      return { ok: false, problem: `the first line of ${file.name} is not an audit line` };
    if (seq !== expected) return { ok: false, problem: `${file.name} ${misplacedStart(seq, expected)}` };
    if (file.lastSeq !== undefined) expected = file.lastSeq + 1;
    newest = file.path;
  }
  const last = newest === undefined ? undefined : edgeLines(newest, 'end').at(-1);
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
  const ahead = typeof parsed.seq === 'number' && parsed.seq > anchor.seq ? `: ${LOG_AHEAD}` : '';
  return {
    ok: false,
    problem: `the audit log ends at line ${String(parsed.seq)}, the state database last recorded line ${anchor.seq}${ahead}`,
  };
}
