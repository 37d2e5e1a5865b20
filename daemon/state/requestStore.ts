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

  constructor(statements: PreparedStatements) {
    this.#statements = statements;
  }

  save(record: RequestRecord, now: number): void {
    this.#statements
      .get(
        'INSERT INTO requests (request_id, dedup_key, details, binding, state, created_at, conversation) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        record.requestId,
        record.dedupKey,
        JSON.stringify(record.details),
        JSON.stringify(record.binding),
        record.state,
        now,
        record.conversation ?? null,
      );
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
}
