import { randomBytes } from 'node:crypto';
import { GRANT_LIFETIME_MS } from '../../shared/approvals/grantLifetime.ts';
import type { CapabilityToken, SimilarCall } from '../../shared/messages/approvals.ts';
import type { RiskLevel } from '../../shared/messages/common.ts';
import { conversationId } from '../gate/conversationId.ts';
import { plainCommandWords } from '../policy/plainCommandWords.ts';
import type { GateRequest } from '../socket/localApi.ts';
import type { RequestRecord } from '../state/stateStore.ts';
import type { SqliteDatabase } from '../state/sqlite.ts';
import { GrantStore, type StoredGrant } from './grantStore.ts';

/**
 * "Allow calls like this" (docs/policy.md#grants), as the gatekeeper uses it: which grant covers
 * a call, and whether a verified token may add one.
 */
export class Grants {
  readonly store: GrantStore;

  constructor(db: SqliteDatabase) {
    this.store = new GrantStore(db);
  }

  /** The grant in force that lets this call run without a phone: never for a call Latch guards. */
  covering(request: GateRequest, asked: { policyRule: string; risk: RiskLevel }): StoredGrant | undefined {
    if (request.command === undefined || !request.cwd) return undefined;
    const words = plainCommandWords(request.command);
    if (!words) return undefined;
    return this.store.covering(
      {
        tool: request.tool,
        words,
        cwd: request.cwd,
        conversation: conversationId(request.session),
        ...asked,
      },
      Date.now(),
    );
  }

  /**
   * Why a token's grant cannot be honoured, before its signature is checked: the daemon offered
   * no rule with this request, or a session grant for a call with no session.
   */
  refusal(record: RequestRecord, token: CapabilityToken): string | undefined {
    if (token.grant === undefined) return undefined;
    const similar = record.details.similar;
    if (!similar) return 'this request offered no rule to allow';
    if (token.grant === 'session' && similar.conversation === undefined)
      return 'this request belongs to no agent session';
    return undefined;
  }

  /**
   * Adds the rule that a verified token granted; the rule is this host's own, from its record.
   * None when it was revoked before it came (GrantStore.revokedBeforeItCame).
   */
  add(
    record: RequestRecord,
    token: CapabilityToken & { grant: NonNullable<CapabilityToken['grant']> },
    now: number,
  ): StoredGrant | undefined {
    if (this.store.revokedBeforeItCame(record.requestId)) return undefined;
    const similar: SimilarCall = record.details.similar!;
    const grant: StoredGrant = {
      // Hex, not base64url: a person types it after `latch policy revoke`, where an id starting
      // with '-' would be read as an option.
      id: randomBytes(8).toString('hex'),
      kind: token.grant,
      similar,
      risk: record.details.risk,
      session: token.grant === 'session' ? similar.conversation! : null,
      device: token.device,
      requestId: record.requestId,
      createdAt: now,
      // From when the request was asked, not when the relay delivered its approval (which it may
      // hold until the deadline): never later than the end the phone showed.
      expiresAt: record.details.createdAt + GRANT_LIFETIME_MS[token.grant],
    };
    this.store.add(grant);
    return grant;
  }
}
