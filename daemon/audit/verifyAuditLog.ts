import type { StateStore } from '../state/stateStore.ts';
import { firstKeptSeq, keptAuditFiles, readAuditLines, type AuditFile } from './auditFiles.ts';
import { GENESIS, lineHash } from './auditLog.ts';

/** What state.db records of the log: where the kept chain starts, and its last line. */
export interface AuditAnchor {
  firstSeq: number;
  last: { seq: number; hash: string } | undefined;
}

export function auditAnchor(store: StateStore): AuditAnchor {
  const seq = store.meta('audit_seq');
  const hash = store.meta('audit_hash');
  return { firstSeq: firstKeptSeq(store), last: seq && hash ? { seq: Number(seq), hash } : undefined };
}

export type AuditVerdict =
  | { ok: true; lines: number; files: string[]; firstSeq: number }
  | { ok: false; file: string; line: number; problem: string };

/** A file's first line is not the one that follows the file before it (or starts the kept chain). */
export function misplacedStart(seq: unknown, expected: number): string {
  return `starts at line ${String(seq)} where line ${expected} belongs: an audit file was deleted, renamed or moved, and not by Latch's retention`;
}

/**
 * The log goes on past the last line the database vouches for. The chain has no key, so which
 * is wrong cannot be told: lines added to the log, or a database that lost its latest writes.
 */
export const LOG_AHEAD =
  'lines were added to the log, or the state database lost its latest writes (its -wal file removed while the daemon ran, or an older copy put back)';

/** A rotated file does not end at the line it is named for. */
export function misnamedEnd(file: AuditFile, lastSeq: number | undefined): string {
  return `is named for line ${String(file.lastSeq)} but ${lastSeq === undefined ? 'holds no line' : `ends at line ${lastSeq}`}: it was renamed, or lines were moved between files`;
}

/**
 * `latch audit verify`: walks the chain through every kept file in order (rotated files, then
 * audit.log), then compares its end with the anchor in the database. A break names its file
 * and its line in that file.
 */
export function verifyAuditLog(path: string, anchor: AuditAnchor): AuditVerdict {
  const files = keptAuditFiles(path, anchor.firstSeq);
  let prev = anchor.firstSeq === 1 ? GENESIS : undefined;
  let expected = anchor.firstSeq;
  let total = 0;
  let end = { file: files.at(-1)!.name, line: 0 };
  let hashAtAnchor: string | undefined;
  for (const file of files) {
    const lines = readAuditLines(file.path);
    const broken = (line: number, problem: string): AuditVerdict => ({
      ok: false,
      file: file.name,
      line,
      problem,
    });
    for (const [index, line] of lines.entries()) {
      let parsed: { seq?: unknown; prev?: unknown };
      try {
        parsed = JSON.parse(line) as typeof parsed;
      } catch {
        return broken(index + 1, 'not JSON');
      }
      // A whole file missing shows at the next file's first line: say so, rather than "edited".
      if (index === 0 && parsed.seq !== expected) return broken(1, misplacedStart(parsed.seq, expected));
      if (prev !== undefined && parsed.prev !== prev)
        return broken(index + 1, 'does not carry the hash of the line before it (edited, deleted or moved)');
      if (parsed.seq !== expected)
        return broken(index + 1, `sequence number ${String(parsed.seq)} where ${expected} belongs`);
      prev = lineHash(line);
      if (parsed.seq === anchor.last?.seq) hashAtAnchor = prev;
      expected++;
      total++;
    }
    if (file.lastSeq !== undefined && file.lastSeq !== expected - 1)
      return broken(lines.length, misnamedEnd(file, lines.length === 0 ? undefined : expected - 1));
    if (lines.length > 0) end = { file: file.name, line: lines.length };
  }
  const lastSeq = expected - 1;
  if (anchor.last && (anchor.last.seq !== lastSeq || anchor.last.hash !== prev)) {
    // The log goes on, whole, past the line the database vouches for.
    const ahead = anchor.last.seq < lastSeq && hashAtAnchor === anchor.last.hash;
    return {
      ok: false,
      ...end,
      problem: ahead
        ? `the log goes on to line ${lastSeq}, the state database records line ${anchor.last.seq} as the last: ${LOG_AHEAD}`
        : `the log ends at line ${lastSeq}, the daemon last wrote line ${anchor.last.seq} (lines were cut or replaced)`,
    };
  }
  return { ok: true, lines: total, files: files.map(({ name }) => name), firstSeq: anchor.firstSeq };
}
