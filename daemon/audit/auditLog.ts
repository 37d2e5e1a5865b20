import { createHash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { StateStore } from '../state/stateStore.ts';

/** What an audit line records. Fields named in CONTENT_FIELDS are text an agent wrote. */
export type AuditEvent = { event: string } & Record<string, unknown>;

/** Removed when content is redacted (LATCH_AUDIT_CONTENT=none): the text, never the ids. */
const CONTENT_FIELDS = new Set(['title', 'detail', 'command', 'cwd', 'target', 'input', 'paths']);
export const GENESIS = '0'.repeat(64);

export function lineHash(line: string): string {
  return createHash('sha256').update(line).digest('hex');
}

/**
 * The audit trail: JSON lines, mode 0600, each carrying the SHA-256 of the line before it and a
 * sequence number, so an edited, deleted or reordered line breaks the chain. The last sequence
 * number and hash are also kept in the state database, so a cut tail is caught as well.
 * Appends from the daemon and the CLI are serialised by a SQLite write transaction.
 */
export class AuditLog {
  readonly #path: string;
  readonly #store: StateStore;
  readonly #redact: () => boolean;

  /** `redactContent` is asked at each line: a config that tightens it applies at once. */
  constructor(path: string, store: StateStore, options: { redactContent: boolean | (() => boolean) }) {
    this.#path = path;
    this.#store = store;
    const { redactContent } = options;
    this.#redact = typeof redactContent === 'function' ? redactContent : () => redactContent;
  }

  append(entry: AuditEvent, now: Date = new Date()): void {
    const fields = this.#redact()
      ? Object.fromEntries(Object.entries(entry).filter(([key]) => !CONTENT_FIELDS.has(key)))
      : entry;
    this.#store.db.transaction(
      () => {
        const seq = Number(this.#store.meta('audit_seq') ?? 0) + 1;
        const prev = this.#store.meta('audit_hash') ?? GENESIS;
        const line = JSON.stringify({ seq, at: now.toISOString(), ...fields, prev });
        const fd = openSync(this.#path, 'a', 0o600);
        try {
          writeSync(fd, `${line}\n`);
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
        this.#store.setMeta('audit_seq', String(seq));
        this.#store.setMeta('audit_hash', lineHash(line));
      },
      { immediate: true },
    );
  }
}

export type AuditVerdict = { ok: true; lines: number } | { ok: false; line: number; problem: string };

/** `latch audit verify`: walks the chain, then compares its end with the anchor in the database. */
export function verifyAuditLog(
  path: string,
  anchor: { seq: number; hash: string } | undefined,
): AuditVerdict {
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const lines = text.split('\n').filter((line, index, all) => line !== '' || index < all.length - 1);
  let prev = GENESIS;
  for (const [index, line] of lines.entries()) {
    let parsed: { seq?: unknown; prev?: unknown };
    try {
      parsed = JSON.parse(line) as typeof parsed;
    } catch {
      return { ok: false, line: index + 1, problem: 'not JSON' };
    }
    if (parsed.prev !== prev)
      return {
        ok: false,
        line: index + 1,
        problem: 'does not carry the hash of the line before it (edited, deleted or moved)',
      };
    if (parsed.seq !== index + 1)
      return {
        ok: false,
        line: index + 1,
        problem: `sequence number ${String(parsed.seq)} where ${index + 1} belongs`,
      };
    prev = lineHash(line);
  }
  if (anchor && (anchor.seq !== lines.length || anchor.hash !== prev)) {
    return {
      ok: false,
      line: lines.length,
      problem: `the log ends at line ${lines.length}, the daemon last wrote line ${anchor.seq} (lines were cut or replaced)`,
    };
  }
  return { ok: true, lines: lines.length };
}
