import type { PreparedStatements } from './preparedStatements.ts';
import type { SqliteDatabase } from './sqlite.ts';

export interface SwitchState {
  frozen: boolean;
  /** This host's count of the freezes it applied. It advances here, never on the relay's word. */
  epoch: number;
  /**
   * The id (kill-switch/freezeId) of the freeze in force: the only freeze votes can end. Null
   * when not frozen, and for a freeze that has no signed envelope (strict mode, or a relay state
   * that announced one without it).
   */
  freeze: string | null;
  reason: string | null;
  /** Why it froze: 'relay' (a phone or host), 'panic' (this host), 'unreachable' (strict mode). */
  cause: 'relay' | 'panic' | 'unreachable' | null;
}

/** The kill switch: the switch, every freeze applied here, and the votes counted toward each. */
export class SwitchStore {
  readonly #db: SqliteDatabase;
  readonly #statements: PreparedStatements;

  constructor(db: SqliteDatabase, statements: PreparedStatements) {
    this.#db = db;
    this.#statements = statements;
  }

  state(): SwitchState {
    const row = this.#statements
      .get('SELECT frozen, epoch, freeze, reason, cause FROM switch WHERE id = 1')
      .get() as {
      frozen: number;
      epoch: number;
      freeze: string | null;
      reason: string | null;
      cause: SwitchState['cause'];
    };
    return {
      frozen: row.frozen === 1,
      epoch: row.epoch,
      freeze: row.freeze,
      reason: row.reason,
      cause: row.cause,
    };
  }

  /**
   * Puts a new freeze in force, in one transaction: the freeze in force before it ends (it is
   * superseded), this one is remembered by its id (when it has one), and the epoch advances.
   */
  applyFreeze(
    freeze: {
      id: string | null;
      reason: string;
      cause: NonNullable<SwitchState['cause']>;
      /** The signed envelope's ts; null for a freeze without one (strict mode). */
      signedAt: number | null;
    },
    now: number,
  ): SwitchState {
    this.#db.transaction(() => {
      this.#statements.get('UPDATE freezes SET ended_at = ? WHERE ended_at IS NULL').run(now);
      if (freeze.id !== null)
        this.#statements
          .get('INSERT INTO freezes (id, applied_at, signed_at) VALUES (?, ?, ?)')
          .run(freeze.id, now, freeze.signedAt);
      this.#statements
        .get(
          'UPDATE switch SET frozen = 1, epoch = epoch + 1, freeze = ?, reason = ?, cause = ?, frozen_at = ? WHERE id = 1',
        )
        .run(freeze.id, freeze.reason, freeze.cause, now);
    });
    return this.state();
  }

  /** Lifts the switch; the freeze in force, if it has an id, ends for good. */
  liftFreeze(now: number): SwitchState {
    this.#db.transaction(() => {
      this.#statements.get('UPDATE freezes SET ended_at = ? WHERE ended_at IS NULL').run(now);
      this.#statements
        .get(
          'UPDATE switch SET frozen = 0, freeze = NULL, reason = NULL, cause = NULL, frozen_at = NULL WHERE id = 1',
        )
        .run();
    });
    return this.state();
  }

  /**
   * Lifts the switch if the freeze with this id is still the one in force, and ends it for good.
   * Undefined when another freeze has taken its place.
   */
  endFreeze(id: string, now: number): SwitchState | undefined {
    return this.#db.transaction(() => (this.state().freeze === id ? this.liftFreeze(now) : undefined));
  }

  /** When the freeze in force was applied here; undefined when not frozen. */
  frozenAt(): number | undefined {
    const row = this.#statements.get('SELECT frozen_at FROM switch WHERE id = 1').get() as {
      frozen_at: number | null;
    };
    return row.frozen_at ?? undefined;
  }

  /** When the freeze with this id was signed, if it was applied here and its envelope said. */
  freezeSignedAt(id: string): number | undefined {
    const row = this.#statements.get('SELECT signed_at FROM freezes WHERE id = ?').get(id) as
      { signed_at: number | null } | undefined;
    return row?.signed_at ?? undefined;
  }

  /**
   * Remembers a freeze that was not applied because a newer one is in force, as ended: it never
   * takes effect later, and no vote for it counts.
   */
  refuseStaleFreeze(id: string, signedAt: number, now: number): void {
    this.#statements
      .get('INSERT OR IGNORE INTO freezes (id, applied_at, ended_at, signed_at) VALUES (?, ?, ?, ?)')
      .run(id, now, now, signedAt);
  }

  /** Whether this freeze was applied here and has ended since: anything about it now is a replay. */
  freezeEnded(id: string): boolean {
    return (
      this.#statements.get('SELECT 1 FROM freezes WHERE id = ? AND ended_at IS NOT NULL').get(id) !==
      undefined
    );
  }

  /** Notes a replay of an ended freeze; true the first time, so that it is audited once. */
  noteReplay(id: string, now: number): boolean {
    return (
      this.#statements
        .get('UPDATE freezes SET replayed_at = ? WHERE id = ? AND replayed_at IS NULL')
        .run(now, id).changes === 1
    );
  }

  /**
   * Counts a device's vote toward ending a freeze: its single-use key is (freeze, device), so a
   * device counts once per freeze, whoever replays its vote and after any restart. False if it
   * was counted already.
   */
  countResumeVote(freeze: string, device: string, now: number): boolean {
    return (
      this.#statements
        .get('INSERT OR IGNORE INTO resume_votes (freeze, device, counted_at) VALUES (?, ?, ?)')
        .run(freeze, device, now).changes === 1
    );
  }

  /**
   * Forgets votes counted before `before` toward freezes that have ended: a vote counts only
   * toward the freeze in force, and an ended freeze never comes back. The freezes themselves are
   * kept for good: forgetting one would let a relay replay it, and its old votes, as new.
   */
  pruneVotes(before: number): void {
    this.#statements
      .get(
        `DELETE FROM resume_votes WHERE counted_at < ?
           AND freeze IN (SELECT id FROM freezes WHERE ended_at IS NOT NULL)`,
      )
      .run(before);
  }

  /** The devices, still paired, whose votes to end this freeze were counted. */
  resumeVoters(freeze: string): string[] {
    return (
      this.#statements
        .get(
          `SELECT resume_votes.device FROM resume_votes JOIN devices ON devices.id = resume_votes.device
           WHERE resume_votes.freeze = ? AND devices.revoked_at IS NULL ORDER BY resume_votes.counted_at`,
        )
        .all(freeze) as { device: string }[]
    ).map(({ device }) => device);
  }
}
