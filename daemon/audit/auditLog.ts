import { createHash } from 'node:crypto';
import { closeSync, constants, fsyncSync, lstatSync, openSync, truncateSync, writeSync } from 'node:fs';
import type { StateStore } from '../state/stateStore.ts';
import {
  AUDIT_ROTATION_DEFAULTS,
  deleteBeyondRetention,
  rotateIfFull,
  type AuditRotation,
} from './auditRotation.ts';

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
 * number and hash are also kept in the state database, so a cut tail is caught as well. The
 * live file rotates by size (auditRotation.ts); the chain runs on across the files.
 * Appends from the daemon and the CLI are serialised by a SQLite write transaction.
 */
export class AuditLog {
  readonly #path: string;
  readonly #store: StateStore;
  readonly #redact: () => boolean;
  readonly #rotation: () => AuditRotation;

  /** `redactContent` and `rotation` are asked at each line: a config that changes applies at once. */
  constructor(
    path: string,
    store: StateStore,
    options: { redactContent: boolean | (() => boolean); rotation?: () => AuditRotation },
  ) {
    this.#path = path;
    this.#store = store;
    const { redactContent } = options;
    this.#redact = typeof redactContent === 'function' ? redactContent : () => redactContent;
    this.#rotation = options.rotation ?? (() => AUDIT_ROTATION_DEFAULTS);
  }

  append(entry: AuditEvent, now: Date = new Date()): void {
    const fields = this.#redact()
      ? Object.fromEntries(Object.entries(entry).filter(([key]) => !CONTENT_FIELDS.has(key)))
      : entry;
    let endBefore: number | undefined;
    const rotated = this.#store.db.transaction(
      () => {
        const seq = Number(this.#store.meta('audit_seq') ?? 0) + 1;
        const prev = this.#store.meta('audit_hash') ?? GENESIS;
        const line = `${JSON.stringify({ seq, at: now.toISOString(), ...fields, prev })}\n`;
        const rotatedNow = rotateIfFull(
          this.#path,
          this.#store,
          Buffer.byteLength(line),
          this.#rotation(),
          now.getTime(),
        );
        endBefore = lstatSync(this.#path, { throwIfNoEntry: false })?.size ?? 0;
        appendWholeLine(this.#path, line);
        this.#store.setMeta('audit_seq', String(seq));
        this.#store.setMeta('audit_hash', lineHash(line.slice(0, -1)));
        return rotatedNow;
      },
      {
        immediate: true,
        // A full disk fails the line half-written, or the commit after it: the line is cut back
        // while the lock is held, or the next line would follow one the database does not vouch
        // for (or another writer's line, written meanwhile, would be cut).
        undo: () => {
          // Stryker disable next-line ObjectLiteral,BooleanLiteral: a throw for a missing file ends the undo as no file does
          if (endBefore !== undefined && lstatSync(this.#path, { throwIfNoEntry: false })?.isFile())
            truncateSync(this.#path, endBefore);
        },
      },
    );
    // Stryker disable next-line ConditionalExpression: with no rotation audit_first_seq is unchanged, so it finds only a file a failed deletion left, deleted sooner
    if (rotated) deleteBeyondRetention(this.#path, this.#store);
  }
}

/**
 * The log itself, never a link in its place (ELOOP, and the call is denied as not recorded): a
 * link would carry the agent's commands to whatever file it names.
 */
const APPEND_TO_THE_FILE_ITSELF =
  constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

/** Appends all of `line`: on a full disk, write(2) can write part of it and fail at the next call. */
function appendWholeLine(path: string, line: string): void {
  const bytes = Buffer.from(line);
  const fd = openSync(path, APPEND_TO_THE_FILE_ITSELF, 0o600);
  try {
    for (let written = 0; written < bytes.length;)
      // Stryker disable next-line ArithmeticOperator: written is 0 but after a short write (a full disk, not made here), where the mutant throws ERR_OUT_OF_RANGE and the append is cut back
      written += writeSync(fd, bytes, written, bytes.length - written);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
