import { detailsBinding } from '../../shared/approvals/approvalBinding.ts';
import { sealRequestDetails } from '../../shared/e2e/requestDetailsBox.ts';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { randomBytes } from '../../shared/encoding/bytes.ts';
import type { RequestDetails } from '../../shared/messages/approvals.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import type { AuditLog } from '../audit/auditLog.ts';
import type { LatchConfig } from '../config/config.ts';
import type { Grants } from '../grants/grants.ts';
import { relayFailureText, type RelayClient } from '../relay/relayClient.ts';
import type { BlockReason, GateAnswer, GateRequest } from '../socket/localApi.ts';
import type { StateStore } from '../state/stateStore.ts';
import type { Callers } from './callers.ts';
import type { Conversation } from './conversation.ts';
import { CallIds } from './callIds.ts';
import { conversationId } from './conversationId.ts';
import { forAudit } from './deciding.ts';
import { deny, frozenDeny, reportedDeny } from './deny.ts';
import type { PushFatigue } from './pushFatigue.ts';
import { requestDetails, type AskTerms } from './requestDetails.ts';
import { terminalFallbackOr } from './terminalFallback.ts';
import type { Waiting } from './waiting.ts';
import { NOBODY_WAITS, recordWithdrawal, type WithdrawalReason } from './withdrawal.ts';

export interface AskingOptions {
  store: StateStore;
  audit: AuditLog;
  relay: RelayClient;
  hostId: string;
  totpPath: string;
  /** The config in force now. */
  config(): LatchConfig;
  fatigue: PushFatigue;
  grants: Grants;
  waiting: Waiting;
}

/**
 * Asks the phones: the request saved here with its binding, its details sealed to each paired
 * phone, sent through the relay, whose claim about it is checked against this host's own record.
 * No phone to ask is the terminal fallback the config allows, or a deny.
 */
export class Asking {
  readonly #options: AskingOptions;

  constructor(options: AskingOptions) {
    this.#options = options;
  }

  /** Read at each call: a damaged key (StateStore.callKey) then denies the call, not the daemon's start. */
  get #ids(): CallIds {
    return CallIds.of(this.#options.store);
  }

  /** One request per call: a duplicate (same ids, same content: see CallIds.dedupKey) joins the pending one. */
  askOnce(request: GateRequest, terms: AskTerms, conversation: Conversation = {}): Promise<GateAnswer> {
    const { waiting } = this.#options;
    const key = this.#ids.dedupKey(request) ?? toBase64url(randomBytes(18));
    const requestId = toBase64url(randomBytes(12));
    return waiting.once(key, conversation, (callers) =>
      // An answer that came early, on a path that then did not wait for it, is not kept.
      this.#ask(request, terms, requestId, key, conversation, callers).finally(() => waiting.drop(requestId)),
    );
  }

  async #ask(
    request: GateRequest,
    terms: AskTerms,
    requestId: string,
    dedupKey: string,
    conversation: Conversation,
    callers: Callers,
  ): Promise<GateAnswer> {
    const { store, relay, audit, hostId, fatigue, waiting } = this.#options;
    const details = requestDetails(request, terms, requestId, {
      config: this.#options.config(),
      hostId,
      fatigue,
    });
    const devices = store.devices();
    // The boxes are sealed on the crypto thread pool while the request is saved and audited.
    const sealing =
      devices.length > 0 && relay.hasToken
        ? Promise.all(
            devices.map(async (device) => ({
              device: device.id,
              box: await sealRequestDetails(details, device),
            })),
          )
        : undefined;
    sealing?.catch(() => undefined); // Its failure is met where it is awaited, below.
    const binding = await detailsBinding(details);
    const askedInEpoch = store.switchState().epoch;
    waiting.listen(requestId);
    store.db.transaction(
      () => {
        store.saveRequest(
          {
            requestId,
            dedupKey,
            details,
            binding,
            state: 'pending',
            ...(request.session ? { conversation: conversationId(request.session) } : {}),
          },
          details.createdAt,
        );
        // Bounded by count as well as by age: a flood of calls cannot fill the disk (pruneState).
        store.capSettledRequestsWhenDue(this.#options.config().retention.maxRequests, details.createdAt);
        audit.append({
          event: 'asked',
          requestId,
          tool: details.tool,
          risk: details.risk,
          title: details.title,
          // What a script holds was read from disk, like a file an edit changes, whose diff is not
          // kept either: the audit, which an agent may be allowed to read, keeps its path.
          ...(terms.scripts?.length
            ? { detail: forAudit(request.command), scripts: terms.scripts.map(({ path }) => path) }
            : { detail: [details.detail, ...(details.notes ?? [])].join('\n\n') }),
          cwd: details.cwd,
        });
      },
      { immediate: true },
    );

    if (!sealing) {
      return this.#noPhone(
        request,
        details,
        conversation,
        'not_paired',
        'no phone is paired with this host; run latch pair',
      );
    }
    // Every caller gone while the relay takes the request: no phone's answer to it is taken, and
    // an approval that came early is undone, with its rule: nobody will run the call.
    let goneBeforeAsked = false;
    let relayAnswered = false;
    callers.whileAsking(() => {
      // Past the POST, the phones were asked (Callers.asked then withdraws), or the answer is
      // another's: the terminal's, or a deny.
      if (relayAnswered) return;
      goneBeforeAsked = true;
      this.#nobodyWaitsYet(requestId);
    });
    const sealed = await sealing;
    // Gone before the relay was given it: it is not.
    if (goneBeforeAsked) return deny('denied', NOBODY_WAITS, requestId);
    // Noted before the relay can answer: a phone's deny may come ahead of the POST's reply, and
    // it must still mark the same call asked again.
    fatigue.asked(requestId, request);
    const created = await relay.createRequest({
      v: PROTOCOL_VERSION,
      fleet: details.fleet,
      host: details.host,
      requestId,
      conversation: this.#ids.conversation(request.session),
      dedupKey,
      risk: details.risk,
      createdAt: details.createdAt,
      exp: details.exp,
      requestHash: binding.requestHash,
      nonce: details.nonce,
      sealed,
    });
    relayAnswered = true;
    if (goneBeforeAsked) {
      fatigue.settled(requestId);
      // Withdrawn here meanwhile: the relay hears it now that it has the request (or may have it).
      if (store.request(requestId)?.state === 'withdrawn') void relay.withdrawRequest(requestId);
      return deny('denied', NOBODY_WAITS, requestId);
    }
    if (!created.ok) {
      fatigue.settled(requestId);
      // The relay may have taken it all the same (too late to answer, or its reply lost) and show
      // it to the phones: it is withdrawn there, best effort, as it ends here.
      void relay.withdrawRequest(requestId);
      const why = relayFailureText(created.failure);
      // From here the answer is the terminal's or a deny: a phone's approval would reach nobody.
      waiting.drop(requestId);
      this.#voidEarlyApproval(requestId, `relay_unreachable: ${why}`);
      return this.#noPhone(request, details, conversation, 'relay_unreachable', `relay_unreachable: ${why}`);
    }
    // The relay's answer is a claim: it may name only this request, or a pending one of this
    // daemon's own with the same content (same dedup key). Anything else is a relay that lies.
    const claimed = created.value.requestId;
    const joined = created.value.joined ? store.request(claimed) : undefined;
    const honest = created.value.joined
      ? joined !== undefined &&
        claimed !== requestId &&
        joined.state === 'pending' &&
        joined.dedupKey === dedupKey &&
        // One that joined another was never shown to a phone: an approval of it says otherwise
        // (and so does its record gone: pruned, which an approval in its day never is).
        (store.request(requestId)?.state ?? 'approved') !== 'approved'
      : claimed === requestId;
    if (!honest) {
      fatigue.settled(requestId);
      const refused = deny(
        'relay_unreachable',
        'relay_unreachable: the relay answered for a request this host did not make; refused',
        requestId,
      );
      store.settleRequest(requestId, 'denied');
      audit.append({ event: 'relay_claim_refused', requestId, claimed, joined: created.value.joined });
      this.#voidEarlyApproval(requestId, refused.reason);
      return refused;
    }
    // A freeze, or a report of the session, that came while the relay took the request refuses
    // it now, even a freeze resumed since: each withdrew the request here (so no approval counts
    // after it), but an approval that came before it, early, waits to be given (the rule it
    // brought ended with the freeze or the report).
    const fenced = this.#fence(request, askedInEpoch, requestId);
    if (fenced) {
      fatigue.settled(requestId);
      const [why, answer] = fenced;
      if (joined) store.deleteRequest(requestId);
      else if (recordWithdrawal(store, audit, requestId, why)) void relay.withdrawRequest(requestId);
      else audit.append({ event: 'decided', requestId, decision: 'deny', reason: answer.reason });
      return answer;
    }
    const waitFor = joined ? claimed : requestId;
    if (joined) {
      // Ours never reached a phone: the one it joined stands for it.
      fatigue.settled(requestId);
      store.deleteRequest(requestId);
      audit.append({ event: 'joined', requestId, into: claimed });
    }
    const exp = joined ? joined.details.exp : details.exp;
    const answer = waiting.wait(waitFor, exp);
    callers.asked({ requestId: waitFor, exp });
    return answer;
  }

  /**
   * A phone's approval can come before the relay answers the request's POST; when that answer
   * then ends the request here (a lie, a refusal, no answer), the agent is denied, and so the
   * approval is not kept as given: the audit says so, and the rule it brought is revoked.
   */
  #voidEarlyApproval(requestId: string, reason: string): void {
    const { store, audit, grants } = this.#options;
    const state = store.request(requestId)?.state;
    // A request pruned meanwhile (past its deadline, by age or by count) may have been approved:
    // the rule it brought is looked for all the same.
    if (state !== 'approved' && state !== undefined) return;
    const revoked = grants.store.revoke({ requestId }, Date.now());
    if (revoked.length > 0) audit.append({ event: 'grant_revoked', grants: revoked, by: 'host', requestId });
    if (state === 'approved' || revoked.length > 0)
      audit.append({ event: 'decided', requestId, decision: 'deny', reason });
  }

  /**
   * Every caller of a request hung up before the relay answered its POST: withdrawn here if still
   * pending, so that no approval of it counts (the relay is told once it has answered); one a
   * phone gave early is not given (waiting.drop) and its rule is revoked.
   */
  #nobodyWaitsYet(requestId: string): void {
    const { store, audit, waiting } = this.#options;
    waiting.drop(requestId);
    if (!recordWithdrawal(store, audit, requestId, 'caller_gone'))
      this.#voidEarlyApproval(requestId, NOBODY_WAITS);
  }

  /** What refuses a request asked in `askedInEpoch` now: a freeze since, or its session reported. */
  #fence(
    request: GateRequest,
    askedInEpoch: number,
    requestId: string,
  ): [WithdrawalReason, GateAnswer] | undefined {
    const switchState = this.#options.store.switchState();
    if (switchState.frozen) return ['frozen', frozenDeny(switchState.reason, requestId)];
    if (switchState.epoch !== askedInEpoch)
      return [
        'frozen',
        deny('kill_switch', 'kill_switch: the fleet was frozen while the relay took this request', requestId),
      ];
    const reportedUntil = this.#options.fatigue.reportedUntil(request, Date.now());
    return reportedUntil === undefined ? undefined : ['reported', reportedDeny(reportedUntil, requestId)];
  }

  #noPhone(
    request: GateRequest,
    details: RequestDetails,
    conversation: Conversation,
    blockReason: BlockReason,
    reason: string,
  ): Promise<GateAnswer> {
    const { store, audit, totpPath } = this.#options;
    return terminalFallbackOr(
      { mode: this.#options.config().fallback.mode, totpPath, store, audit },
      { request, details, conversation },
      blockReason,
      reason,
    );
  }
}
