import { approvalBinding } from '../../shared/approvals/approvalBinding.ts';
import { verifyCapabilityToken } from '../../shared/approvals/verifyCapabilityToken.ts';
import { similarCommandText } from '../../shared/approvals/similarCallText.ts';
import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { verifyEnvelope } from '../../shared/envelopes/verifyEnvelope.ts';
import type { CapabilityToken } from '../../shared/messages/approvals.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import type { DenyEnvelope, ReportScope } from '../../shared/messages/envelopes.ts';
import type { PairedDevice } from '../../shared/pairing/verifyPairingCompletion.ts';
import { keepLineStartAndEnd } from '../../shared/text/keepStartAndEnd.ts';
import type { RelyingParty } from '../../shared/webauthn/verifyAssertion.ts';
import type { AuditLog } from '../audit/auditLog.ts';
import { RelayNoise } from '../audit/relayNoise.ts';
import type { Grants } from '../grants/grants.ts';
import { REPORTABLE_AFTER_DEADLINE_MS, type RequestRecord } from '../state/requestStore.ts';
import type { StateStore } from '../state/stateStore.ts';
import { deny, frozenDeny, reportedDeny } from './deny.ts';
import type { PushFatigue } from './pushFatigue.ts';
import type { Waiting } from './waiting.ts';

/** A reported request's title in the freeze's reason: room left for the words around it. */
const REPORTED_TITLE_BYTES = LIMITS.reasonBytes - 64;

export interface RelayAnswersOptions {
  store: StateStore;
  audit: AuditLog;
  relying: RelyingParty;
  /** Freezes the fleet, as `latch panic` does: a phone's verified report asks for it. */
  freezeFleet(reason: string): Promise<unknown>;
  fatigue: PushFatigue;
  grants: Grants;
  waiting: Waiting;
  /** Refuses the requests of a reported agent session still pending, but `reported` itself. */
  sessionReported(conversation: string, until: number, reported: string): void;
}

/**
 * What the relay says of a request: an approval (a token, verified here end to end), a deny, an
 * expiry. Each is checked against this host's own record of the request before anyone hears it.
 */
export class RelayAnswers {
  readonly #options: RelayAnswersOptions;
  /** Refusals the relay alone can cause, each kind audited once a minute with a count (noiseKind). */
  readonly #noise: RelayNoise;

  constructor(options: RelayAnswersOptions) {
    this.#options = options;
    this.#noise = new RelayNoise(options.audit);
  }

  /** A token from the relay: worth nothing until this host has verified it end to end. */
  async onApproved(requestId: string, token: CapabilityToken): Promise<void> {
    const { store, relying, grants } = this.#options;
    const record = store.request(requestId);
    if (!record || token.requestId !== requestId) {
      this.#noise.append('unknown_request', {
        event: 'token_refused',
        requestId,
        code: 'unknown_request',
        message: 'a decision for a request this host never sent',
      });
      return;
    }
    // A grant is honoured only where this host offered one; the signature then commits to it.
    const notGrantable = grants.refusal(record, token);
    if (notGrantable) {
      this.#noise.append(noiseKind('token refused: grant_not_offered', record), {
        event: 'token_refused',
        requestId,
        code: 'grant_not_offered',
        message: notGrantable,
      });
      return;
    }
    const device = store.deviceByCredential(token.assertion.credentialId);
    const verified = await verifyCapabilityToken(
      token,
      { ...approvalBinding(record.binding, token.grant), ...relying },
      device?.credential,
      store,
    );
    if (!verified.ok) {
      this.#noise.append(noiseKind(`token refused: ${verified.error.code}`, record), {
        event: 'token_refused',
        requestId,
        code: verified.error.code,
        // The relay's word for whose token it is: nothing here verified it.
        claimedDevice: token.device,
      });
      return;
    }
    // What follows is one commit: the counter, the audit lines and the request's state, and only
    // then the agent's answer.
    store.db.transaction(() => this.#accept(record, token, verified.value, device!), { immediate: true });
  }

  /** A verified token for a request of ours: honoured if the request still waits and its hold ended. */
  #accept(
    record: RequestRecord,
    token: CapabilityToken,
    verified: { device: string; counter: number },
    device: PairedDevice,
  ): void {
    const { store, audit, fatigue, grants, waiting } = this.#options;
    const requestId = record.requestId;
    // Revoked here while its token was checked: `latch devices --revoke` ended its rules, and it
    // adds none now.
    if (!store.activeDevice(verified.device)) {
      audit.append({
        event: 'token_refused',
        requestId,
        code: 'unknown_credential',
        device: verified.device,
      });
      return;
    }
    // Checked again here, in the commit: two of its assertions checked at once both passed.
    if (!store.advanceCounter(verified.device, verified.counter)) {
      audit.append({
        event: 'token_refused',
        requestId,
        code: 'counter_not_increased',
        device: verified.device,
      });
      return;
    }
    // Verified, and used up: but the relay's word that it is still open is checked against ours,
    // as it stands now that the checks are done (a withdrawal or a freeze may have come meanwhile),
    // and its asker must still take the phones' answer (not one gone to the terminal fallback).
    const state = store.request(requestId)?.state;
    if (state !== 'pending' || !waiting.takesPhoneAnswer(requestId)) {
      const code = state === 'pending' || state === 'withdrawn' ? 'withdrawn' : 'already_decided';
      audit.append({ event: 'token_refused', requestId, code, device: verified.device });
      return;
    }
    const switchState = store.switchState();
    if (switchState.frozen) {
      audit.append({ event: 'token_refused', requestId, code: 'kill_switch', device: verified.device });
      waiting.settle(requestId, frozenDeny(switchState.reason, requestId));
      return;
    }
    // Its session reported on a phone: refused, even if the report's sweep of the session's
    // waiting requests did not run (it failed, and is tried again).
    const reportedUntil =
      record.conversation && fatigue.conversationReportedUntil(record.conversation, Date.now());
    if (reportedUntil) {
      audit.append({ event: 'token_refused', requestId, code: 'reported', device: verified.device });
      waiting.settle(requestId, reportedDeny(reportedUntil, requestId));
      return;
    }
    // The review hold, timed on this host's clock: a phone app that skips it is refused, and the
    // request denied, since the person did not take the moment it asked for.
    if (fatigue.tooSoon(requestId, record.details, Date.now())) {
      audit.append({ event: 'token_refused', requestId, code: 'too_soon', device: verified.device });
      waiting.settle(
        requestId,
        deny('too_soon', 'too_soon: approved before the review hold ended', requestId),
      );
      return;
    }
    fatigue.approved(Date.now());
    audit.append({ event: 'approved', requestId, device: verified.device, verified: true });
    const grant = token.grant && grants.add(record, { ...token, grant: token.grant }, Date.now());
    if (token.grant && !grant)
      audit.append({
        event: 'grant_refused',
        requestId,
        why: 'the rule was revoked before its approval came',
      });
    if (grant) {
      audit.append({
        event: 'grant_added',
        grant: grant.id,
        kind: grant.kind,
        requestId,
        device: grant.device,
        command: similarCommandText(grant.similar),
        expiresAt: grant.expiresAt,
      });
    }
    // Who approved it: a phone added with this approval is trusted only while that phone is.
    store.noteRequestApprover(requestId, verified.device);
    waiting.settle(requestId, {
      decision: 'allow',
      reason: `approved on ${device.name}`,
      via: 'phone',
      requestId,
    });
  }

  /**
   * A deny is honoured even unverified (refusing is safe); the audit line says whether it verified.
   * A report it carries ("I didn't expect this") counts even when the request ended before the
   * deny came, withdrawn by an agent that stopped waiting or decided on another phone: what the
   * person did not expect is still running, and a report only tightens.
   */
  async onDenied(requestId: string, envelope: DenyEnvelope): Promise<void> {
    const { store, audit, fatigue, waiting } = this.#options;
    const record = store.request(requestId);
    const report = envelope.body.report;
    if (!record) {
      // A deny of a request this host does not keep needs nothing; a report of it is said not to
      // have acted (pruned past its retention, or never ours), as often as a relay sends it.
      if (report)
        this.#noise.append('report not acted: unknown request', {
          event: 'reported',
          requestId,
          device: envelope.signer.id,
          scope: report.scope,
          verified: false,
          acted: false,
          why: 'no such request is kept on this host',
        });
      return;
    }
    const device = envelope.signer.role === 'device' ? store.activeDevice(envelope.signer.id) : undefined;
    // Signed by a phone paired here, about this very request of this host.
    const verified = async () =>
      device !== undefined &&
      envelope.body.requestId === requestId &&
      envelope.body.host === record.details.host &&
      envelope.body.fleet === record.details.fleet &&
      (await verifyEnvelope(envelope, { kind: 'deny', publicKey: fromBase64url(device.deviceKey) })).ok;
    if (record.state !== 'pending') {
      if (record.state === 'withdrawn')
        // A relay can send these again at will: one line a minute.
        this.#noise.append('deny refused', {
          event: 'deny_refused',
          requestId,
          code: 'withdrawn',
          device: envelope.signer.id,
        });
      if (report) await this.#onReported(record, report.scope, await verified(), envelope.signer.id);
      return;
    }
    const denyVerified = await verified();
    audit.append({ event: 'denied', requestId, verified: denyVerified, device: envelope.signer.id });
    // The session is refused before the agent hears the deny, so its next call already is.
    if (report?.scope === 'session')
      await this.#onReported(record, report.scope, denyVerified, envelope.signer.id);
    // Only a deny a phone signed is the person's: it names the phone, and counts as their no.
    fatigue.settled(requestId, denyVerified ? Date.now() : undefined);
    waiting.settle(
      requestId,
      deny(
        'denied',
        denyVerified ? `denied on ${device!.name}` : 'denied (the relay says so: not verified)',
        requestId,
      ),
    );
    // The freeze after: this agent hears "denied", every other waiting call "kill_switch".
    if (report?.scope === 'fleet')
      await this.#onReported(record, report.scope, denyVerified, envelope.signer.id);
  }

  /**
   * "I didn't expect this": acted on only when the deny carrying it verified against the phone's
   * device key; otherwise it stays a plain deny (which it already is), and the audit says so.
   * Once per request: a relay that sends the same report again cannot freeze the fleet again
   * after a resume.
   */
  async #onReported(
    record: RequestRecord,
    scope: ReportScope,
    verified: boolean,
    device: string,
  ): Promise<void> {
    const { store, audit, fatigue, grants } = this.#options;
    const { requestId } = record;
    // A relay can send a report again, or forge one, at will: one line a minute for each reason.
    const notActed = (why: string) =>
      this.#noise.append(noiseKind(`report not acted: ${why}`, record), {
        event: 'reported',
        requestId,
        device,
        scope,
        verified,
        acted: false,
        why,
      });
    if (!verified) return notActed('not signed by a phone paired here, for this request of this host');
    const reportableUntil = record.details.exp + REPORTABLE_AFTER_DEADLINE_MS;
    if (Date.now() > reportableUntil) return notActed('more than a day after the request ended');
    // Marked on the request once acted on, not before: a report whose handling fails (the audit
    // cannot be written) is tried again by the event log, and must then act, not say "already
    // reported". The mark lasts as long as the record a report needs, whatever the clock does.
    if (store.requestReported(requestId)) return notActed('already reported');
    // What the person did not expect runs no more by a rule approved with it, or in its session.
    const now = Date.now();
    const revoked = [
      ...grants.store.revoke({ requestId }, now),
      ...(record.conversation ? grants.store.revoke({ conversation: record.conversation }, now) : []),
    ];
    if (revoked.length > 0)
      audit.append({ event: 'grant_revoked', grants: revoked, by: 'report', requestId });
    if (scope === 'session') {
      const reported = fatigue.reportSession(record, Date.now());
      audit.append({
        event: 'reported',
        requestId,
        device,
        scope,
        verified,
        acted: reported !== undefined,
        conversation: reported?.conversation,
      });
      // The session's other requests still pending end now; this one, its own deny ends.
      if (reported) this.#options.sessionReported(reported.conversation, reported.until, requestId);
      store.noteRequestReported(requestId, Date.now());
      return;
    }
    // A freeze in force stays: a new one would void the resume votes already counted for it.
    if (store.switchState().freeze !== null) {
      store.noteRequestReported(requestId, Date.now());
      return notActed('the fleet is frozen already');
    }
    audit.append({ event: 'reported', requestId, device, scope, verified, acted: true });
    // Named as the phone showed it: a person reading the freeze knows a title, not an id.
    const title = keepLineStartAndEnd(record.details.title, REPORTED_TITLE_BYTES).text;
    await this.#options.freezeFleet(`reported on a phone: “${title}” was not expected`);
    store.noteRequestReported(requestId, Date.now());
  }

  /**
   * The relay says a request expired. Refusing is safe, so it is honoured even early; the audit
   * says when the relay's word was all there was (this host's clock had not reached the deadline).
   */
  onExpired(requestId: string): void {
    const { store, audit, waiting } = this.#options;
    const record = store.request(requestId);
    if (record?.state !== 'pending') return;
    if (Date.now() < record.details.exp)
      audit.append({ event: 'expired', requestId, early: true, verified: false });
    waiting.settle(requestId, deny('expired', 'expired: no phone answered before the deadline', requestId));
  }
}

/**
 * The kind of a refusal a relay can cause at will: its code, and the request's id while the
 * request waits, so that a refusal of each waiting one is seen. Not the id of one that ended: a
 * relay may name any request this host keeps, and every one would be a kind of its own.
 */
const noiseKind = (code: string, record: RequestRecord) =>
  record.state === 'pending' ? `${code} ${record.requestId}` : code;
