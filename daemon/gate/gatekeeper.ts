import { basename } from 'node:path';
import { requestHash } from '../../shared/approvals/requestHash.ts';
import type { ApprovalBinding } from '../../shared/approvals/approvalChallenge.ts';
import { verifyCapabilityToken } from '../../shared/approvals/verifyCapabilityToken.ts';
import { sealRequestDetails } from '../../shared/e2e/requestDetailsBox.ts';
import { fromBase64url, toBase64url } from '../../shared/encoding/base64url.ts';
import { randomBytes } from '../../shared/encoding/bytes.ts';
import { verifyEnvelope } from '../../shared/envelopes/verifyEnvelope.ts';
import type { CapabilityToken, RequestDetails, SimilarCall } from '../../shared/messages/approvals.ts';
import { similarCommandText } from '../../shared/approvals/similarCallText.ts';
import { RISK_LEVELS, type RiskLevel } from '../../shared/messages/common.ts';
import type { DenyEnvelope, ReportScope } from '../../shared/messages/envelopes.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { keepStartAndEnd } from '../../shared/text/keepStartAndEnd.ts';
import { sanitizeText } from '../../shared/text/sanitizeText.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import type { AuditLog } from '../audit/auditLog.ts';
import type { LatchConfig } from '../config/config.ts';
import type { ConfigKeeper } from '../config/configKeeper.ts';
import type { ConfigChange } from '../config/configTightening.ts';
import type { KillSwitch } from '../kill-switch/killSwitch.ts';
import { evaluatePolicy } from '../policy/policy.ts';
import { protectedPlaces } from '../policy/protectedPlaces.ts';
import { selfProtection } from '../policy/selfProtection.ts';
import type { PolicyKeeper } from '../policy/policyKeeper.ts';
import type { RelayClient } from '../relay/relayClient.ts';
import type { BlockReason, FallbackOffer, GateAnswer, GateRequest } from '../socket/localApi.ts';
import type { StateStore } from '../state/stateStore.ts';
import { Grants } from '../grants/grants.ts';
import { proposeSimilar } from '../grants/proposeSimilar.ts';
import { Callers } from './callers.ts';
import { conversationId } from './conversationId.ts';
import { unifiedDiff } from '../diff/unifiedDiff.ts';
import { dedupKey } from './dedupKey.ts';
import { requestCard } from './requestCard.ts';
import { deny } from './deny.ts';
import { PushFatigue } from './pushFatigue.ts';
import { terminalFallbackOr } from './terminalFallback.ts';
import { recordWithdrawal, type WithdrawalReason } from './withdrawal.ts';

export interface GatekeeperOptions {
  /** The config in force at start; `configKeeper` says what is in force from then on. */
  config: LatchConfig;
  configKeeper: ConfigKeeper;
  store: StateStore;
  audit: AuditLog;
  relay: RelayClient;
  killSwitch: KillSwitch;
  policy: PolicyKeeper;
  relying: { origins: readonly string[]; rpId: string };
  hostId: string;
  totpPath: string;
  /** Freezes the fleet, as `latch panic` does: a phone's verified report asks for it. */
  freezeFleet(reason: string): Promise<unknown>;
}

interface Waiter {
  settle(answer: GateAnswer): void;
  timer: NodeJS.Timeout;
}

/** A change to Latch itself, which only a phone approves: see Gatekeeper.approveChange. */
export interface ChangeRequest {
  kind: 'policy' | 'config' | 'phone' | 'totp';
  /** What makes this change this one (a hash of the new text, the new phone's id). */
  key: string;
  title: string;
  detail: string;
  /** What the change changes, as a unified diff (a loosened policy). */
  diff?: string;
  risk: RiskLevel;
  /** What a person types to approve it at critical risk. */
  target: string;
}

/** The caller's side of one gated call, as the socket carries it. */
export interface Conversation {
  /** Hears the request id and deadline once a phone is asked, for the caller's countdown. */
  onAsked?(pending: { requestId: string; exp: number }): void;
  /**
   * Offers the caller a terminal fallback, on the connection that asked and no other; resolves
   * with what it typed, or undefined (declined, gone, or no answer by `offer.exp`).
   */
  askOnTerminal?(offer: FallbackOffer): Promise<string | undefined>;
  /** Aborts when the caller hangs up before its answer (killed, cancelled, timed out). */
  gone?: AbortSignal;
}

const strictest = (a: RiskLevel, b: RiskLevel | undefined): RiskLevel =>
  b !== undefined && RISK_LEVELS.indexOf(b) > RISK_LEVELS.indexOf(a) ? b : a;

/** An agent's command as the audit keeps it: cleaned and capped, like everything shown (it may be 1 MiB). */
const forAudit = (command: string | undefined) =>
  command === undefined
    ? undefined
    : sanitizeText(command, { maxBytes: LIMITS.detailBytes, multiline: true }).text;

const describeChange = (change: ConfigChange) =>
  `${change.setting}: ${JSON.stringify(change.from)} → ${JSON.stringify(change.to)}${change.tightens ? '' : ' (looser)'}`;

/**
 * Decides each gated call: the kill switch first, then the policy, then the phones. An approval
 * counts only once this host has verified its token against its own record of the request and
 * its own copy of the phone's passkey; anything that fails, times out or cannot be reached is a
 * deny with a reason. Never an allow.
 */
export class Gatekeeper {
  readonly #options: GatekeeperOptions;
  readonly #waiting = new Map<string, Waiter>();
  readonly #byDedupKey = new Map<string, Promise<GateAnswer>>();
  /** Who waits on each ask in #byDedupKey: when all have hung up, its request is withdrawn. */
  readonly #callersByDedupKey = new Map<string, Callers>();
  readonly #askedLoosenings = new Set<string>();
  /** Latch's own files, sockets and hook settings, where this daemon's environment puts them. */
  readonly #protectedPlaces = protectedPlaces();
  readonly #fatigue: PushFatigue;
  /** Rules phones allowed with an approval: docs/policy.md#grants. */
  readonly #grants: Grants;
  #config: LatchConfig;

  constructor(options: GatekeeperOptions) {
    this.#options = options;
    this.#config = options.config;
    this.#fatigue = new PushFatigue(options.store);
    this.#grants = new Grants(options.store.db);
    // A freeze refuses at once everything still waiting for a phone.
    options.killSwitch.onChange((state) => {
      if (!state.frozen) return;
      for (const requestId of [...this.#waiting.keys()]) {
        void this.#withdraw(requestId, 'frozen');
        this.#settle(
          requestId,
          deny(
            'kill_switch',
            `kill_switch: the fleet is frozen (${state.reason ?? 'no reason given'})`,
            requestId,
          ),
        );
      }
    });
  }

  get pending(): number {
    return this.#waiting.size;
  }

  async gate(request: GateRequest, conversation: Conversation = {}): Promise<GateAnswer> {
    const { killSwitch, policy, audit } = this.#options;
    const switchState = killSwitch.state;
    if (switchState.frozen) {
      audit.append({
        event: 'refused',
        blockReason: 'kill_switch',
        tool: request.tool,
        command: forAudit(request.command),
      });
      return deny(
        'kill_switch',
        `kill_switch: the fleet is frozen (${switchState.reason ?? 'no reason given'})`,
      );
    }
    // A person said "I didn't expect this" of this agent session: nothing more from it, not even
    // what the policy allows, until the report lapses.
    const reportedUntil = this.#fatigue.reportedUntil(request, Date.now());
    if (reportedUntil !== undefined) {
      audit.append({
        event: 'refused',
        blockReason: 'reported',
        tool: request.tool,
        command: forAudit(request.command),
      });
      return deny(
        'reported',
        `reported: a phone reported this agent session as unexpected; it is refused until ${new Date(reportedUntil).toISOString()}`,
      );
    }
    const configView = this.#options.configKeeper.current();
    if (!configView.ok) {
      audit.append({
        event: 'refused',
        blockReason: 'config_invalid',
        tool: request.tool,
        message: configView.message,
      });
      return deny('config_invalid', `config_invalid: ${configView.message}`);
    }
    this.#config = configView.config;
    if (configView.loosening)
      this.#askToLoosen(
        'config',
        configView.loosening,
        configView.loosening.changes.map(describeChange).join('\n'),
      );
    const current = policy.current();
    if (!current.ok) {
      audit.append({
        event: 'refused',
        blockReason: 'policy_invalid',
        tool: request.tool,
        message: current.message,
      });
      return deny('policy_invalid', `policy_invalid: ${current.message}`);
    }
    // The phone sees only what changed from the policy it approved last, not the whole new file.
    if (current.loosening)
      this.#askToLoosen(
        'policy',
        current.loosening,
        '',
        unifiedDiff(current.loosening.approvedText, current.loosening.text, {
          from: 'a/policy.toml',
          to: 'b/policy.toml',
        }),
      );

    const policyVerdict = evaluatePolicy(current.policy, {
      tool: request.tool,
      paths: request.paths,
      ...(request.command !== undefined ? { command: request.command } : {}),
      ...(request.cwd !== undefined ? { cwd: request.cwd } : {}),
    });
    // Latch guarding itself (docs/policy.md) outranks any policy answer but a deny, and never defers.
    const guarded = selfProtection(request, this.#protectedPlaces);
    const verdict = guarded && policyVerdict.action !== 'deny' ? guarded : policyVerdict;
    const rule = verdict === guarded ? `Latch's own rule "${verdict.rule}"` : `policy rule "${verdict.rule}"`;
    if (verdict.action === 'allow') {
      audit.append({
        event: 'allowed',
        via: 'policy',
        rule: verdict.rule,
        tool: request.tool,
        command: forAudit(request.command),
      });
      return { decision: 'allow', reason: `allowed by ${rule}`, via: 'policy' };
    }
    if (verdict.action === 'deny') {
      audit.append({
        event: 'refused',
        blockReason: 'policy_violation',
        rule: verdict.rule,
        tool: request.tool,
        command: forAudit(request.command),
      });
      return deny('policy_violation', `policy_violation: denied by ${rule}`);
    }
    if (verdict.action === 'defer' && request.canDefer) {
      audit.append({ event: 'deferred', rule: verdict.rule, tool: request.tool });
      return { decision: 'defer', reason: `${rule} leaves this to the agent's own prompt` };
    }
    const risk = strictest(verdict.risk, request.risk);
    // A rule a phone allowed covers only what the same policy rule asks, never what Latch guards.
    const asked = { policyRule: verdict.rule, risk, guarded: verdict === guarded };
    const granted = asked.guarded ? undefined : this.#grants.covering(request, asked);
    if (granted) {
      audit.append({
        event: 'allowed',
        via: 'grant',
        grant: granted.id,
        rule: verdict.rule,
        tool: request.tool,
        command: forAudit(request.command),
      });
      return {
        decision: 'allow',
        reason: `allowed by a rule approved on a phone (${similarCommandText(granted.similar)})`,
        via: 'grant',
      };
    }
    const similar = proposeSimilar(request, asked);
    // The policy sets how long a phone may take; an agent may ask for less, never for more.
    const longest = verdict.timeoutSeconds ?? this.#config.approvals.timeoutSeconds;
    const timeoutSeconds = Math.min(request.timeoutSeconds ?? longest, longest);
    const target =
      verdict.target ?? request.target ?? (request.paths[0] ? basename(request.paths[0]) : request.tool);
    return this.#askOnce(
      request,
      { risk, timeoutSeconds, target, ...(similar ? { similar } : {}) },
      conversation,
    );
  }

  /** One request per call: a duplicate (same ids, same content: see dedupKey) joins the pending one. */
  #askOnce(
    request: GateRequest,
    terms: { risk: RiskLevel; timeoutSeconds: number; target: string; similar?: SimilarCall },
    conversation: Conversation = {},
  ): Promise<GateAnswer> {
    const key = dedupKey(request) ?? toBase64url(randomBytes(18));
    const existing = this.#byDedupKey.get(key);
    if (existing) {
      this.#callersByDedupKey.get(key)?.join(conversation);
      return existing;
    }
    const callers = new Callers((requestId) => this.#nobodyWaits(requestId));
    callers.join(conversation);
    this.#callersByDedupKey.set(key, callers);
    const answer = this.#ask(request, terms, key, conversation, callers).finally(() => {
      this.#byDedupKey.delete(key);
      this.#callersByDedupKey.delete(key);
    });
    this.#byDedupKey.set(key, answer);
    return answer;
  }

  #details(
    request: GateRequest,
    terms: { risk: RiskLevel; timeoutSeconds: number; target: string; similar?: SimilarCall },
    requestId: string,
  ): RequestDetails {
    const now = Date.now();
    let shortened = request.shortened;
    const clean = (value: string, maxBytes: number, multiline = false) => {
      const cleaned = sanitizeText(value, { maxBytes, multiline });
      shortened ||= cleaned.changed;
      return cleaned.text;
    };
    // Long texts keep their start and their end, so what hides at the end of a command shows.
    const shown = (value: string, maxBytes: number) => {
      const kept = keepStartAndEnd(value, maxBytes);
      shortened ||= kept.changed;
      return kept.text;
    };
    const card = requestCard(request);
    return {
      v: PROTOCOL_VERSION,
      fleet: this.#config.host.fleet,
      host: this.#options.hostId,
      hostName: clean(this.#config.host.name, LIMITS.nameBytes),
      requestId,
      agent: clean(request.agent, LIMITS.nameBytes),
      tool: clean(request.tool, LIMITS.nameBytes),
      title: clean(card.title, LIMITS.titleBytes),
      ...(card.description ? { description: clean(card.description, LIMITS.titleBytes) } : {}),
      detail: shown(card.detail, LIMITS.detailBytes),
      ...(request.cwd ? { cwd: clean(request.cwd, LIMITS.cwdBytes) } : {}),
      ...(card.project ? { project: clean(card.project, LIMITS.nameBytes) } : {}),
      ...(card.session ? { session: clean(card.session, LIMITS.nameBytes) } : {}),
      ...(card.diff ? { diff: shown(card.diff, LIMITS.diffBytes) } : {}),
      target: clean(terms.target, LIMITS.targetBytes),
      risk: terms.risk,
      createdAt: now,
      exp: now + terms.timeoutSeconds * 1000,
      nonce: toBase64url(randomBytes(16)),
      shortened,
      ...(terms.similar ? { similar: terms.similar } : {}),
      ...this.#fatigue.terms(request, this.#config.approvals, now),
    };
  }

  async #ask(
    request: GateRequest,
    terms: { risk: RiskLevel; timeoutSeconds: number; target: string; similar?: SimilarCall },
    dedupKey: string,
    conversation: Conversation,
    callers: Callers,
  ): Promise<GateAnswer> {
    const { store, relay, audit } = this.#options;
    const requestId = toBase64url(randomBytes(12));
    const details = this.#details(request, terms, requestId);
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
    const binding: ApprovalBinding = {
      fleet: details.fleet,
      host: details.host,
      requestId,
      requestHash: await requestHash(details),
      decision: 'approve',
      nonce: details.nonce,
      exp: details.exp,
    };
    store.saveRequest({ requestId, dedupKey, details, binding, state: 'pending' }, details.createdAt);
    audit.append({
      event: 'asked',
      requestId,
      tool: details.tool,
      risk: details.risk,
      title: details.title,
      detail: details.detail,
      cwd: details.cwd,
    });

    if (!sealing) {
      return this.#noPhone(
        request,
        details,
        conversation,
        'not_paired',
        'no phone is paired with this host; run latch pair',
      );
    }
    const sealed = await sealing;
    const created = await relay.createRequest({
      v: PROTOCOL_VERSION,
      fleet: details.fleet,
      host: details.host,
      requestId,
      conversation: conversationId(request.session),
      dedupKey,
      risk: details.risk,
      createdAt: details.createdAt,
      exp: details.exp,
      requestHash: binding.requestHash,
      nonce: details.nonce,
      sealed,
    });
    if (!created.ok) {
      const why =
        created.failure.kind === 'unreachable'
          ? `the relay cannot be reached (${created.failure.message})`
          : `the relay refused the request (${created.failure.code})`;
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
        joined.dedupKey === dedupKey
      : claimed === requestId;
    if (!honest) {
      store.settleRequest(requestId, 'denied');
      audit.append({ event: 'relay_claim_refused', requestId, claimed, joined: created.value.joined });
      return deny(
        'relay_unreachable',
        'relay_unreachable: the relay answered for a request this host did not make; refused',
        requestId,
      );
    }
    const waitFor = joined ? claimed : requestId;
    if (!joined) this.#fatigue.asked(requestId, request);
    if (joined) {
      // Ours never reached a phone: the one it joined stands for it.
      store.deleteRequest(requestId);
      audit.append({ event: 'joined', requestId, into: claimed });
    }
    const exp = joined ? joined.details.exp : details.exp;
    const answer = this.#wait(waitFor, exp);
    callers.asked({ requestId: waitFor, exp });
    return answer;
  }

  /** Every caller of a request hung up: the phones are no longer asked, and nothing runs. */
  #nobodyWaits(requestId: string): void {
    if (!this.#waiting.has(requestId)) return;
    void this.#withdraw(requestId, 'caller_gone');
    this.#settle(requestId, deny('denied', 'withdrawn: every caller stopped waiting', requestId));
  }

  /** Withdraws a request here, then at the relay in the background (gate/withdrawal). */
  #withdraw(requestId: string, why: WithdrawalReason): Promise<unknown> {
    const { store, audit, relay } = this.#options;
    return recordWithdrawal(store, audit, requestId, why)
      ? relay.withdrawRequest(requestId)
      : Promise.resolve();
  }

  /**
   * The daemon stops: every request still waiting is withdrawn, its callers refused. Resolves
   * once the relay heard of each, or after `withinMs`, whichever is first.
   */
  async withdrawAll(withinMs: number): Promise<void> {
    const told = [...this.#waiting.keys()].map((requestId) => {
      const telling = this.#withdraw(requestId, 'daemon_stopped');
      // Unavailable, not a person's no: the same answer as a daemon that cannot be reached.
      this.#settle(
        requestId,
        deny('daemon_unreachable', 'daemon_unreachable: the Latch daemon is stopping', requestId),
      );
      return telling;
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(told),
      new Promise((resolve) => (timer = setTimeout(resolve, withinMs))),
    ]).finally(() => clearTimeout(timer));
  }

  #wait(requestId: string, exp: number): Promise<GateAnswer> {
    const already = this.#waiting.get(requestId);
    if (already) {
      return new Promise((resolve) => {
        const previous = already.settle;
        already.settle = (answer) => {
          previous(answer);
          resolve(answer);
        };
      });
    }
    return new Promise((resolve) => {
      const timer = setTimeout(
        () =>
          this.#settle(
            requestId,
            deny('expired', 'expired: no phone answered before the deadline', requestId),
          ),
        Math.max(0, exp - Date.now()),
      );
      this.#waiting.set(requestId, { settle: resolve, timer });
    });
  }

  #settle(requestId: string, answer: GateAnswer): void {
    const state =
      answer.decision === 'allow'
        ? 'approved'
        : answer.decision === 'deny' && answer.blockReason === 'expired'
          ? 'expired'
          : 'denied';
    this.#options.store.settleRequest(requestId, state);
    this.#fatigue.settled(requestId);
    const waiter = this.#waiting.get(requestId);
    if (!waiter) return;
    clearTimeout(waiter.timer);
    this.#waiting.delete(requestId);
    this.#options.audit.append({
      event: 'decided',
      requestId,
      decision: answer.decision,
      reason: answer.reason,
    });
    waiter.settle(answer);
  }

  /** A token from the relay: worth nothing until this host has verified it end to end. */
  async onApproved(requestId: string, token: CapabilityToken): Promise<void> {
    const { store, audit, relying } = this.#options;
    const record = store.request(requestId);
    if (!record || token.requestId !== requestId) {
      audit.append({
        event: 'token_refused',
        requestId,
        code: 'unknown_request',
        message: 'a decision for a request this host never sent',
      });
      return;
    }
    // A grant is honoured only where this host offered one; the signature then commits to it.
    const notGrantable = this.#grants.refusal(record, token);
    if (notGrantable) {
      audit.append({ event: 'token_refused', requestId, code: 'grant_not_offered', message: notGrantable });
      return;
    }
    const device = store.deviceByCredential(token.assertion.credentialId);
    const verified = await verifyCapabilityToken(
      token,
      { ...record.binding, ...relying, ...(token.grant ? { grant: token.grant } : {}) },
      device?.credential,
      store,
    );
    if (!verified.ok) {
      audit.append({ event: 'token_refused', requestId, code: verified.error.code, device: token.device });
      return;
    }
    store.setCounter(verified.value.device, verified.value.counter);
    // Verified, and used up: but the relay's word that it is still open is checked against ours.
    if (record.state !== 'pending') {
      const code = record.state === 'withdrawn' ? 'withdrawn' : 'already_decided';
      audit.append({ event: 'token_refused', requestId, code, device: token.device });
      return;
    }
    // The review hold, timed on this host's clock: a phone app that skips it is refused, and the
    // request denied, since the person did not take the moment it asked for.
    if (this.#fatigue.tooSoon(record.details, Date.now())) {
      audit.append({ event: 'token_refused', requestId, code: 'too_soon', device: token.device });
      this.#settle(requestId, deny('too_soon', 'too_soon: approved before the review hold ended', requestId));
      return;
    }
    this.#fatigue.approved(Date.now());
    audit.append({ event: 'approved', requestId, device: verified.value.device, verified: true });
    if (token.grant) {
      const grant = this.#grants.add(record, { ...token, grant: token.grant }, Date.now());
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
    this.#settle(requestId, {
      decision: 'allow',
      reason: `approved on ${device!.name}`,
      via: 'phone',
      requestId,
    });
  }

  /** A deny is honoured even unverified (refusing is safe); the audit line says whether it verified. */
  async onDenied(requestId: string, envelope: DenyEnvelope): Promise<void> {
    const { store, audit } = this.#options;
    const state = store.request(requestId)?.state;
    if (state === 'withdrawn')
      audit.append({ event: 'deny_refused', requestId, code: 'withdrawn', device: envelope.signer.id });
    if (state !== 'pending') return;
    const device = envelope.signer.role === 'device' ? store.activeDevice(envelope.signer.id) : undefined;
    const verified =
      device !== undefined &&
      envelope.body.requestId === requestId &&
      (await verifyEnvelope(envelope, { kind: 'deny', publicKey: fromBase64url(device.deviceKey) })).ok;
    audit.append({ event: 'denied', requestId, verified, device: envelope.signer.id });
    const report = envelope.body.report;
    // The session is refused before the agent hears the deny, so its next call already is.
    if (report?.scope === 'session')
      await this.#onReported(requestId, report.scope, verified, envelope.signer.id);
    this.#fatigue.settled(requestId, Date.now());
    this.#settle(requestId, deny('denied', `denied on ${device?.name ?? 'a phone'}`, requestId));
    // The freeze after: this agent hears "denied", every other waiting call "kill_switch".
    if (report?.scope === 'fleet')
      await this.#onReported(requestId, report.scope, verified, envelope.signer.id);
  }

  /**
   * "I didn't expect this": acted on only when the deny carrying it verified against the phone's
   * device key; otherwise it stays a plain deny (which it already is), and the audit says so.
   */
  async #onReported(requestId: string, scope: ReportScope, verified: boolean, device: string): Promise<void> {
    const { audit } = this.#options;
    if (!verified) {
      audit.append({ event: 'reported', requestId, device, scope, verified, acted: false });
      return;
    }
    if (scope === 'session') {
      const conversation = this.#fatigue.reportSession(requestId, Date.now());
      audit.append({
        event: 'reported',
        requestId,
        device,
        scope,
        verified,
        acted: conversation !== undefined,
        conversation,
      });
      return;
    }
    audit.append({ event: 'reported', requestId, device, scope, verified, acted: true });
    await this.#options.freezeFleet(`reported on a phone: request ${requestId} was not expected`);
  }

  /**
   * The relay says a request expired. Refusing is safe, so it is honoured even early; the audit
   * says when the relay's word was all there was (this host's clock had not reached the deadline).
   */
  onExpired(requestId: string): void {
    const record = this.#options.store.request(requestId);
    if (record?.state !== 'pending') return;
    if (Date.now() < record.details.exp)
      this.#options.audit.append({ event: 'expired', requestId, early: true, verified: false });
    this.#settle(requestId, deny('expired', 'expired: no phone answered before the deadline', requestId));
  }

  /**
   * Asks the phones to approve a change to Latch itself: a looser policy or config, a new phone,
   * a TOTP. Never decided by the policy or a terminal fallback, and never joined to anything but
   * the same change: only a paired phone's verified approval of this very request is an allow.
   */
  async approveChange(change: ChangeRequest): Promise<GateAnswer> {
    const { store, audit } = this.#options;
    const request: GateRequest = {
      agent: 'latch',
      tool: `latch.${change.kind}`,
      paths: [],
      title: change.title,
      detail: change.detail,
      ...(change.diff !== undefined ? { diff: change.diff } : {}),
      session: 'latch',
      toolUseId: `${change.kind}:${change.key}`,
      interactive: false,
      canDefer: false,
      shortened: false,
    };
    const answer = await this.#askOnce(request, {
      risk: change.risk,
      timeoutSeconds: this.#config.approvals.timeoutSeconds,
      target: change.target,
    });
    if (answer.decision !== 'allow') return answer;
    const record = answer.requestId ? store.request(answer.requestId) : undefined;
    if (answer.via === 'phone' && record?.state === 'approved' && record.dedupKey === dedupKey(request))
      return answer;
    audit.append({
      event: 'change_refused',
      kind: change.kind,
      requestId: answer.requestId,
      via: answer.via,
    });
    return deny('denied', 'only a phone’s approval of this very change counts', answer.requestId);
  }

  /** A looser policy or config waits, the approved one in force, until a phone approves this text. */
  #askToLoosen(
    kind: 'policy' | 'config',
    loosening: { hash: string; text: string },
    shown: string,
    diff?: string,
  ): void {
    if (this.#askedLoosenings.has(`${kind}:${loosening.hash}`)) return;
    this.#askedLoosenings.add(`${kind}:${loosening.hash}`);
    const keeper = kind === 'policy' ? this.#options.policy : this.#options.configKeeper;
    void this.approveChange({
      kind,
      key: loosening.hash,
      title: `Loosen the Latch ${kind}`,
      detail: `The ${kind} file changed in a way that loosens it (sha256 ${loosening.hash.slice(0, 16)}…). Until you approve, the previous ${kind} stays in force.${shown ? `\n\n${shown}` : ''}`,
      ...(diff !== undefined ? { diff } : {}),
      risk: 'high',
      target: kind,
    }).then((answer) => {
      if (answer.decision === 'allow') keeper.approve(loosening.text, answer.reason);
      else
        this.#options.audit.append({
          event: `${kind}_loosening_refused`,
          hash: loosening.hash,
          reason: answer.reason,
        });
    });
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
      { mode: this.#config.fallback.mode, totpPath, store, audit },
      { request, details, conversation },
      blockReason,
      reason,
    );
  }
}
