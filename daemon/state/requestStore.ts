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
   * max_requests`). One whose deadline has not passed stays while it is among the latest `2 × max`:
   * its call may still be in flight (a phone's report on it, the phone that approved a pairing,
   * each read when its answer comes), but a flood of calls settled at once under a rule's long
   * timeout (up to a day) must not fill the disk either. A pending one always stays. Each check
   * walks up to `2 × max` entries of an index, so saving checks only after every hundredth of
   * `max` saves (capSettledWhenDue): up to 1% more between.
   */
  capSettled(max: number, now: number): void {
    this.#savedSinceCapped = 0;
    const latestBeyond = (kept: number) =>
      this.#statements
        .get(
          "SELECT expires_at FROM requests WHERE state != 'pending' ORDER BY expires_at DESC LIMIT 1 OFFSET ?",
        )
        .get(kept) as { expires_at: number } | undefined;
    const pastDeadline = latestBeyond(max);
    if (!pastDeadline) return;
    this.#statements
      .get("DELETE FROM requests WHERE state != 'pending' AND expires_at <= ? AND expires_at < ?")
      .run(pastDeadline.expires_at, now);
    const anyDeadline = latestBeyond(2 * max);
    if (anyDeadline)
      this.#statements
        .get("DELETE FROM requests WHERE state != 'pending' AND expires_at <= ?")
        .run(anyDeadline.expires_at);
  }

  /** capSettled, once this process has saved a hundredth of `max` requests since it last ran. */
  capSettledWhenDue(max: number, now: number): void {
    if (this.#savedSinceCapped >= max / 100) this.capSettled(max, now);
  }
}
