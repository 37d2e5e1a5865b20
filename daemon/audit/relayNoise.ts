import type { AuditEvent, AuditLog } from './auditLog.ts';

/** One line a minute for each kind: enough to see the noise and when it stopped. */
const ONE_LINE_EVERY_MS = 60_000;
const MOST_KINDS_KEPT = 1000;

/**
 * Whether a line written at `at` still stands for the kind at `now`: within the minute after it.
 * A clock set back before `at` ends it (review rt): the next line is written at once, not an
 * hour later for a clock set back an hour.
 */
const stillStands = (at: number, now: number) => now >= at && now - at < ONE_LINE_EVERY_MS;

/**
 * Audit lines a relay can cause as often as it likes: a decision for a request this host never
 * sent, a forged token, a freeze this host will not put in force. Each kind is written at most
 * once a minute, with how many like it were left out since the last: 5,000 made-up frames would
 * otherwise write 5,000 synced lines and rotate the real history out of the kept files.
 */
export class RelayNoise {
  readonly #audit: AuditLog;
  readonly #lastByKind = new Map<string, { at: number; leftOut: number }>();

  constructor(audit: AuditLog) {
    this.#audit = audit;
  }

  append(kind: string, entry: AuditEvent, now: number = Date.now()): void {
    this.appendOfKinds([kind], entry, now);
  }

  /**
   * For a line of several kinds at once (a frame refusing votes of several phones, each for its
   * own reason): written when any of them is due, so that a relay varying how it mixes them
   * gains nothing.
   */
  appendOfKinds(kinds: readonly string[], entry: AuditEvent, now: number = Date.now()): void {
    const lasts = kinds.map((kind) => this.#lastByKind.get(kind));
    if (lasts.every((last) => last && stillStands(last.at, now))) {
      for (const last of lasts) last!.leftOut++;
      return;
    }
    const leftOut = Math.max(0, ...lasts.map((last) => last?.leftOut ?? 0));
    this.#audit.append(leftOut ? { ...entry, leftOutSince: leftOut } : entry);
    for (const kind of kinds) this.#lastByKind.set(kind, { at: now, leftOut: 0 });
    // Kinds name requests too: forget those whose minute is over, once there are many.
    if (this.#lastByKind.size > MOST_KINDS_KEPT)
      for (const [each, { at }] of this.#lastByKind) if (!stillStands(at, now)) this.#lastByKind.delete(each);
  }
}
