import type { Grant, SimilarCall } from '../../shared/messages/approvals.ts';
import { RISK_LEVELS, type RiskLevel } from '../../shared/messages/common.ts';
import { PreparedStatements } from '../state/preparedStatements.ts';
import type { SqliteDatabase, SqliteStatement } from '../state/sqlite.ts';
import { isAnyName } from './proposeSimilar.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS grants (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  rule TEXT NOT NULL,
  risk TEXT NOT NULL,
  session TEXT,
  device TEXT NOT NULL,
  request_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  revoked_at INTEGER
);
`;

/** A rule a phone allowed with an approval, in force until it expires or is revoked. */
export interface StoredGrant {
  id: string;
  kind: Grant;
  similar: SimilarCall;
  /** The risk of the call it came from: it covers none riskier. */
  risk: RiskLevel;
  /** The conversation id (conversationId) a session grant is for; null for half_hour. */
  session: string | null;
  device: string;
  requestId: string;
  createdAt: number;
  expiresAt: number;
}

interface GrantRow {
  id: string;
  kind: Grant;
  rule: string;
  risk: RiskLevel;
  session: string | null;
  device: string;
  request_id: string;
  created_at: number;
  expires_at: number;
}

const toGrant = (row: GrantRow): StoredGrant => ({
  id: row.id,
  kind: row.kind,
  similar: JSON.parse(row.rule) as SimilarCall,
  risk: row.risk,
  session: row.session,
  device: row.device,
  requestId: row.request_id,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

/** A call as a grant compares it: its command already split into plain words (plainCommandWords). */
export interface GrantedCall {
  tool: string;
  words: string[];
  cwd: string;
  conversation: string;
  policyRule: string;
  risk: RiskLevel;
}

/** Whether `grant` covers `call`: every part the phone showed, and nothing looser than what asked. */
export function grantCovers(grant: StoredGrant, call: GrantedCall): boolean {
  const { similar } = grant;
  return (
    call.tool === similar.tool &&
    call.cwd === similar.folder &&
    (grant.session === null || grant.session === call.conversation) &&
    call.policyRule === similar.policyRule &&
    RISK_LEVELS.indexOf(call.risk) <= RISK_LEVELS.indexOf(grant.risk) &&
    call.words.length === similar.words.length + (similar.thenAnyName ? 1 : 0) &&
    similar.words.every((word, index) => call.words[index] === word) &&
    (!similar.thenAnyName || isAnyName(call.words.at(-1)!))
  );
}

/**
 * The temporary rules phones granted on this host, in the state database the CLI shares: a
 * revoke from `latch policy revoke` takes effect at the daemon's next call.
 */
export class GrantStore {
  readonly #db: SqliteDatabase;
  readonly #statements: PreparedStatements;

  constructor(db: SqliteDatabase) {
    db.exec(SCHEMA);
    this.#db = db;
    this.#statements = new PreparedStatements(db);
    this.#endedByAnEarlierVersion();
  }

  /**
   * A revoke of every rule by a version before 2026-12-08 recorded its time (`grants_ended_at`),
   * which that version's `live()` compared each rule with: what it stood for is written as
   * revokes and marks, once (review rv2: a rule a revoke missed would otherwise come back).
   */
  #endedByAnEarlierVersion(): void {
    const ended = this.#statement("SELECT value FROM meta WHERE key = 'grants_ended_at'").get() as
      { value: string } | undefined;
    if (!ended) return;
    const at = Number(ended.value);
    this.#db.transaction(
      () => {
        this.#statement('UPDATE grants SET revoked_at = ? WHERE revoked_at IS NULL AND created_at <= ?').run(
          at,
          at,
        );
        this.#statement(
          `UPDATE requests SET rule_revoked_at = ?
             WHERE state = 'pending' AND rule_revoked_at IS NULL AND created_at <= ?`,
        ).run(at, at);
        this.#statement("DELETE FROM meta WHERE key = 'grants_ended_at'").run();
      },
      { immediate: true },
    );
  }

  #statement(sql: string): SqliteStatement {
    return this.#statements.get(sql);
  }

  add(grant: StoredGrant): void {
    this.#statement(
      `INSERT INTO grants (id, kind, rule, risk, session, device, request_id, created_at, expires_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      grant.id,
      grant.kind,
      JSON.stringify(grant.similar),
      grant.risk,
      grant.session,
      grant.device,
      grant.requestId,
      grant.createdAt,
      grant.expiresAt,
    );
  }

  /**
   * The grants in force at `now`, oldest first: not revoked, not expired, and allowed by a phone
   * this host still trusts (which holds even when a revoke of the phone missed a grant).
   */
  live(now: number): StoredGrant[] {
    return (
      this.#statement(
        `SELECT * FROM grants
           WHERE revoked_at IS NULL AND expires_at > ?
             AND EXISTS (SELECT 1 FROM devices WHERE devices.id = grants.device AND devices.revoked_at IS NULL)
           ORDER BY created_at`,
      ).all(now) as GrantRow[]
    ).map(toGrant);
  }

  /** The first grant in force that covers `call`. */
  covering(call: GrantedCall, now: number): StoredGrant | undefined {
    return this.live(now).find((grant) => grantCovers(grant, call));
  }

  /** Forgets the grants that expired or were revoked before `before`: neither ever covers a call again. */
  pruneEnded(before: number): void {
    this.#statement('DELETE FROM grants WHERE expires_at < ? OR revoked_at < ?').run(before, before);
  }

  /**
   * Revokes the grants with this id, from this request, allowed by this phone, approved in this
   * agent session (`conversation`), or all; returns the ids revoked. Every one not yet revoked,
   * whatever its expiry: one that looks expired by a clock run ahead is still in its real life,
   * and would cover calls again once the clock is set back.
   */
  revoke(
    which: { id: string } | { requestId: string } | { device: string } | { conversation: string } | 'all',
    now: number,
  ): string[] {
    const chosen = (grant: StoredGrant) =>
      which === 'all' ||
      ('id' in which && grant.id === which.id) ||
      ('requestId' in which && grant.requestId === which.requestId) ||
      ('device' in which && grant.device === which.device) ||
      ('conversation' in which && grant.similar.conversation === which.conversation);
    // One write transaction: a grant added meanwhile (the daemon's, beside the CLI's revoke) is
    // either chosen here or added after the marks below, which then refuse it.
    return this.#db.transaction(
      () => {
        const ids = (
          this.#statement(
            'SELECT * FROM grants WHERE revoked_at IS NULL ORDER BY created_at',
          ).all() as GrantRow[]
        )
          .map(toGrant)
          .filter(chosen)
          .map(({ id }) => id);
        const revoke = this.#statement('UPDATE grants SET revoked_at = ? WHERE id = ?');
        for (const id of ids) revoke.run(now, id);
        // A rule revoked before it came (the relay holds the approval that brings it, or delivers
        // the revoke first) must not come after: the records of the waiting requests it could
        // come with are marked. By the order of the writes, not by a clock (one set ahead at
        // `--all` would refuse rules approved after it is set back), and kept with the record,
        // so no clock jump forgets them; whatever a relay sends, only waiting requests are marked.
        if (which === 'all' || 'requestId' in which) {
          const onlyRequest = which === 'all' ? null : which.requestId;
          this.#statement(
            `UPDATE requests SET rule_revoked_at = ?
               WHERE state = 'pending' AND (? IS NULL OR request_id = ?)`,
          ).run(now, onlyRequest, onlyRequest);
        }
        return ids;
      },
      { immediate: true },
    );
  }

  /** Whether the rule a request brings was revoked while the request waited. */
  revokedBeforeItCame(requestId: string): boolean {
    return (
      this.#statement('SELECT 1 FROM requests WHERE request_id = ? AND rule_revoked_at IS NOT NULL').get(
        requestId,
      ) !== undefined
    );
  }
}
