import type { ApprovalBinding } from '../../shared/approvals/approvalChallenge.ts';
import type { RequestDetails } from '../../shared/messages/approvals.ts';
import type { PreparedStatements } from './preparedStatements.ts';

export interface RequestRecord {
  requestId: string;
  dedupKey: string;
  details: RequestDetails;
  binding: ApprovalBinding;
  /** `withdrawn`: nobody waited for the answer any more (gate/withdrawal); no answer counts. */
  state: 'pending' | 'approved' | 'denied' | 'expired' | 'withdrawn';
  /** The agent session's conversation id (gate/conversationId); absent when the call named none. */
  conversation?: string;
  /** The phone whose verified approval settled it (gate/relayAnswers), once one has. */
  approvedBy?: string;
}

interface RequestRow {
  request_id: string;
  dedup_key: string;
  details: string;
  binding: string;
  state: RequestRecord['state'];
  conversation: string | null;
  approved_by: string | null;
}

/**
 * How long after a request's deadline a phone's report of it still counts (gate/relayAnswers): the
 * record it needs, with its once-only mark, is kept at least as long unless a flood of others
 * pushes it out (capSettled), which an approval's never is.
 */
export const REPORTABLE_AFTER_DEADLINE_MS = 24 * 60 * 60 * 1000;

/** The daemon's own requests: what it verifies decisions against. */
export class RequestStore {
  readonly #statements: PreparedStatements;
  /** Requests this process saved since it last applied the count cap (capSettled). */
  #savedSinceCapped = 0;

  constructor(statements: PreparedStatements) {
    this.#statements = statements;
  }

  save(record: RequestRecord, now: number): void {
    this.#statements
      .get(
        'INSERT INTO requests (request_id, dedup_key, details, binding, state, created_at, conversation, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        record.requestId,
        record.dedupKey,
        JSON.stringify(record.details),
        JSON.stringify(record.binding),
        record.state,
        now,
        record.conversation ?? null,
        record.details.exp,
      );
    this.#savedSinceCapped++;
  }

  get(requestId: string): RequestRecord | undefined {
    const row = this.#statements.get('SELECT * FROM requests WHERE request_id = ?').get(requestId) as
      RequestRow | undefined;
    if (!row) return undefined;
    return {
      requestId: row.request_id,
      dedupKey: row.dedup_key,
      details: JSON.parse(row.details) as RequestDetails,
      binding: JSON.parse(row.binding) as ApprovalBinding,
      state: row.state,
      ...(row.conversation === null ? {} : { conversation: row.conversation }),
      ...(row.approved_by === null || row.approved_by === undefined ? {} : { approvedBy: row.approved_by }),
    };
  }

  /** Notes the phone whose verified approval settles the request, in the caller's transaction. */
  noteApprover(requestId: string, device: string): void {
    this.#statements.get('UPDATE requests SET approved_by = ? WHERE request_id = ?').run(device, requestId);
  }

  /** Whether a phone's report of the request was acted on. */
  reported(requestId: string): boolean {
    return (
      this.#statements
        .get('SELECT 1 FROM requests WHERE request_id = ? AND reported_at IS NOT NULL')
        .get(requestId) !== undefined
    );
  }

  noteReported(requestId: string, now: number): void {
    this.#statements.get('UPDATE requests SET reported_at = ? WHERE request_id = ?').run(now, requestId);
  }

  settle(requestId: string, state: Exclude<RequestRecord['state'], 'pending'>): boolean {
    return (
      this.#statements
        .get("UPDATE requests SET state = ? WHERE request_id = ? AND state = 'pending'")
        .run(state, requestId).changes === 1
    );
  }

  /** The requests still waiting for a phone's answer, oldest first. */
  /** Every pending request, or those of one agent session. */
  pendingIds(conversation?: string): string[] {
    const rows =
      conversation === undefined
        ? this.#statements
            .get("SELECT request_id FROM requests WHERE state = 'pending' ORDER BY created_at")
            .all()
        : this.#statements
            .get(
              "SELECT request_id FROM requests WHERE state = 'pending' AND conversation = ? ORDER BY created_at",
            )
            .all(conversation);
    return (rows as { request_id: string }[]).map(({ request_id }) => request_id);
  }

  delete(requestId: string): void {
    this.#statements.get('DELETE FROM requests WHERE request_id = ?').run(requestId);
  }

  /**
   * Forgets settled requests created before `before` (`[retention] requests_days`); a pending one
   * stays, however old. An answer that comes later finds no request: `unknown_request`.
   */
  prune(before: number): void {
    this.#statements.get("DELETE FROM requests WHERE created_at < ? AND state != 'pending'").run(before);
  }

  /**
   * Keeps at most `max` settled requests, those with the latest deadlines (`[retention]
   * max_requests`), among those a phone's report can no longer name (a day past the deadline);
   * the others stay while among the latest `2 × max`, since a flood of calls settled at once (a
   * rule's timeout can be a day) must not fill the disk. An approval stays until no report can
   * name it, however many others come: the report of it ends the rule it brought, and approvals
   * are as few as a person gives. A pending one always stays. Each check walks up to `2 × max`
   * entries of an index, so saving checks only after every hundredth of `max` saves
   * (capSettledWhenDue): up to 1% more between.
   */
  capSettled(max: number, now: number): void {
    this.#savedSinceCapped = 0;
    const reportable = now - REPORTABLE_AFTER_DEADLINE_MS;
    const latestBeyond = (kept: number) =>
      this.#statements
        .get(
          "SELECT expires_at FROM requests WHERE state != 'pending' ORDER BY expires_at DESC LIMIT 1 OFFSET ?",
        )
        .get(kept) as { expires_at: number } | undefined;
    const beyondCap = latestBeyond(max);
    if (!beyondCap) return;
    this.#statements
      .get("DELETE FROM requests WHERE state != 'pending' AND expires_at <= ? AND expires_at < ?")
      .run(beyondCap.expires_at, reportable);
    const beyondTwice = latestBeyond(2 * max);
    if (beyondTwice)
      this.#statements
        .get("DELETE FROM requests WHERE state NOT IN ('pending', 'approved') AND expires_at <= ?")
        .run(beyondTwice.expires_at);
  }

  /** capSettled, once this process has saved a hundredth of `max` requests since it last ran. */
  capSettledWhenDue(max: number, now: number): void {
    if (this.#savedSinceCapped >= max / 100) this.capSettled(max, now);
  }
}
