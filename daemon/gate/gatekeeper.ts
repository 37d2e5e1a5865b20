import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { requestHash } from '../../shared/approvals/requestHash.ts';
import type { ApprovalBinding } from '../../shared/approvals/approvalChallenge.ts';
import { verifyCapabilityToken } from '../../shared/approvals/verifyCapabilityToken.ts';
import { sealRequestDetails } from '../../shared/e2e/requestDetailsBox.ts';
import { fromBase64url, toBase64url } from '../../shared/encoding/base64url.ts';
import { randomBytes } from '../../shared/encoding/bytes.ts';
import { verifyEnvelope } from '../../shared/envelopes/verifyEnvelope.ts';
import type { CapabilityToken, RequestDetails } from '../../shared/messages/approvals.ts';
import { RISK_LEVELS, type RiskLevel } from '../../shared/messages/common.ts';
import type { DenyEnvelope } from '../../shared/messages/envelopes.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { sanitizeText } from '../../shared/text/sanitizeText.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import type { AuditLog } from '../audit/auditLog.ts';
import type { LatchConfig } from '../config/config.ts';
import { localChallenge } from '../fallback/localChallenge.ts';
import { matchTotp } from '../fallback/totp.ts';
import type { KillSwitch } from '../kill-switch/killSwitch.ts';
import { evaluatePolicy } from '../policy/policy.ts';
import type { PolicyKeeper } from '../policy/policyKeeper.ts';
import type { RelayClient } from '../relay/relayClient.ts';
import type { BlockReason, GateAnswer, GateRequest } from '../socket/localApi.ts';
import type { StateStore } from '../state/stateStore.ts';

export interface GatekeeperOptions {
  config: LatchConfig;
  store: StateStore;
  audit: AuditLog;
  relay: RelayClient;
  killSwitch: KillSwitch;
  policy: PolicyKeeper;
  relying: { origins: readonly string[]; rpId: string };
  hostId: string;
  totpPath: string;
}

interface Waiter {
  settle(answer: GateAnswer): void;
  timer: NodeJS.Timeout;
}

interface PendingFallback {
  method: 'totp' | 'challenge';
  answer?: string;
  notBefore: number;
  settle(answer: GateAnswer): GateAnswer;
}

const strictest = (a: RiskLevel, b: RiskLevel | undefined): RiskLevel =>
  b !== undefined && RISK_LEVELS.indexOf(b) > RISK_LEVELS.indexOf(a) ? b : a;

const deny = (blockReason: BlockReason, reason: string, requestId?: string): GateAnswer => ({
  decision: 'deny',
  reason,
  blockReason,
  ...(requestId ? { requestId } : {}),
});

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
  readonly #fallbacks = new Map<string, PendingFallback>();
  readonly #askedPolicyHashes = new Set<string>();

  constructor(options: GatekeeperOptions) {
    this.#options = options;
    // A freeze refuses at once everything still waiting for a phone.
    options.killSwitch.onChange((state) => {
      if (!state.frozen) return;
      for (const requestId of [...this.#waiting.keys()]) {
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

  /** `onAsked` hears the request id and deadline once a phone is asked, for the caller's countdown. */
  async gate(
    request: GateRequest,
    onAsked?: (pending: { requestId: string; exp: number }) => void,
  ): Promise<GateAnswer> {
    const { killSwitch, policy, audit } = this.#options;
    const switchState = killSwitch.state;
    if (switchState.frozen) {
      audit.append({
        event: 'refused',
        blockReason: 'kill_switch',
        tool: request.tool,
        command: request.command,
      });
      return deny(
        'kill_switch',
        `kill_switch: the fleet is frozen (${switchState.reason ?? 'no reason given'})`,
      );
    }
    const current = policy.current();
    if (!current.ok) {
      audit.append({
        event: 'refused',
        blockReason: 'policy_invalid',
        tool: request.tool,
        message: current.message,
      });
      return deny('policy_invalid', current.message);
    }
    if (current.loosening) this.#askToLoosen(current.loosening);

    const verdict = evaluatePolicy(current.policy, {
      tool: request.tool,
      paths: request.paths,
      ...(request.command !== undefined ? { command: request.command } : {}),
      ...(request.cwd !== undefined ? { cwd: request.cwd } : {}),
    });
    const rule = `policy rule "${verdict.rule}"`;
    if (verdict.action === 'allow') {
      audit.append({
        event: 'allowed',
        via: 'policy',
        rule: verdict.rule,
        tool: request.tool,
        command: request.command,
      });
      return { decision: 'allow', reason: `allowed by ${rule}`, via: 'policy' };
    }
    if (verdict.action === 'deny') {
      audit.append({
        event: 'refused',
        blockReason: 'policy_violation',
        rule: verdict.rule,
        tool: request.tool,
        command: request.command,
      });
      return deny('policy_violation', `policy_violation: denied by ${rule}`);
    }
    if (verdict.action === 'defer' && request.canDefer) {
      audit.append({ event: 'deferred', rule: verdict.rule, tool: request.tool });
      return { decision: 'defer', reason: `${rule} leaves this to the agent's own prompt` };
    }
    const risk = strictest(verdict.risk, request.risk);
    // The policy sets how long a phone may take; an agent may ask for less, never for more.
    const longest = verdict.timeoutSeconds ?? this.#options.config.approvals.timeoutSeconds;
    const timeoutSeconds = Math.min(request.timeoutSeconds ?? longest, longest);
    const target =
      verdict.target ?? request.target ?? (request.paths[0] ? basename(request.paths[0]) : request.tool);
    return this.#askOnce(request, { risk, timeoutSeconds, target }, onAsked);
  }

  /** One request per (agent session, tool call): a duplicate joins the pending one. */
  #askOnce(
    request: GateRequest,
    terms: { risk: RiskLevel; timeoutSeconds: number; target: string },
    onAsked?: (pending: { requestId: string; exp: number }) => void,
  ): Promise<GateAnswer> {
    const dedupKey =
      request.session && request.toolUseId
        ? toBase64url(
            createHash('sha256').update(`${request.session}\0${request.toolUseId}`).digest().subarray(0, 18),
          )
        : toBase64url(randomBytes(18));
    const existing = this.#byDedupKey.get(dedupKey);
    if (existing) return existing;
    const answer = this.#ask(request, terms, dedupKey, onAsked).finally(() =>
      this.#byDedupKey.delete(dedupKey),
    );
    this.#byDedupKey.set(dedupKey, answer);
    return answer;
  }

  #details(
    request: GateRequest,
    terms: { risk: RiskLevel; timeoutSeconds: number; target: string },
    requestId: string,
  ): RequestDetails {
    const now = Date.now();
    let shortened = request.shortened;
    const clean = (value: string, maxBytes: number, multiline = false) => {
      const cleaned = sanitizeText(value, { maxBytes, multiline });
      shortened ||= cleaned.changed;
      return cleaned.text;
    };
    const summary = request.command ?? request.paths[0] ?? request.tool;
    const detail = request.detail ?? request.command ?? request.input ?? request.paths.join('\n');
    return {
      v: PROTOCOL_VERSION,
      fleet: this.#options.config.host.fleet,
      host: this.#options.hostId,
      hostName: clean(this.#options.config.host.name, LIMITS.nameBytes),
      requestId,
      agent: clean(request.agent, LIMITS.nameBytes),
      tool: clean(request.tool, LIMITS.nameBytes),
      title: clean(request.title ?? `${request.tool}: ${summary}`, LIMITS.titleBytes),
      detail: clean(detail, LIMITS.detailBytes, true),
      ...(request.cwd ? { cwd: clean(request.cwd, LIMITS.cwdBytes) } : {}),
      target: clean(terms.target, LIMITS.targetBytes),
      risk: terms.risk,
      createdAt: now,
      exp: now + terms.timeoutSeconds * 1000,
      nonce: toBase64url(randomBytes(16)),
      shortened,
    };
  }

  async #ask(
    request: GateRequest,
    terms: { risk: RiskLevel; timeoutSeconds: number; target: string },
    dedupKey: string,
    onAsked?: (pending: { requestId: string; exp: number }) => void,
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
      return this.#fallbackOr(
        request,
        details,
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
      conversation: request.session
        ? toBase64url(createHash('sha256').update(request.session).digest().subarray(0, 12))
        : 'none',
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
      return this.#fallbackOr(request, details, 'relay_unreachable', `relay_unreachable: ${why}`);
    }
    // A duplicate at the relay: wait on the request it joined, if it is ours.
    const waitFor =
      created.value.joined && store.request(created.value.requestId) ? created.value.requestId : requestId;
    if (waitFor !== requestId) store.settleRequest(requestId, 'denied');
    const exp = store.request(waitFor)!.details.exp;
    onAsked?.({ requestId: waitFor, exp });
    return this.#wait(waitFor, exp);
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
    const device = store.deviceByCredential(token.assertion.credentialId);
    const verified = await verifyCapabilityToken(
      token,
      { ...record.binding, ...relying },
      device?.credential,
      store,
    );
    if (!verified.ok) {
      audit.append({ event: 'token_refused', requestId, code: verified.error.code, device: token.device });
      return;
    }
    store.setCounter(verified.value.device, verified.value.counter);
    audit.append({ event: 'approved', requestId, device: verified.value.device, verified: true });
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
    if (!store.request(requestId)) return;
    const device = envelope.signer.role === 'device' ? store.activeDevice(envelope.signer.id) : undefined;
    const verified =
      device !== undefined &&
      envelope.body.requestId === requestId &&
      (await verifyEnvelope(envelope, { kind: 'deny', publicKey: fromBase64url(device.deviceKey) })).ok;
    audit.append({ event: 'denied', requestId, verified, device: envelope.signer.id });
    this.#settle(requestId, deny('denied', `denied on ${device?.name ?? 'a phone'}`, requestId));
  }

  onExpired(requestId: string): void {
    this.#settle(requestId, deny('expired', 'expired: no phone answered before the deadline', requestId));
  }

  // Loosening the policy takes a phone's approval, asked like any other request.

  #askToLoosen(loosening: { hash: string; text: string }): void {
    if (this.#askedPolicyHashes.has(loosening.hash)) return;
    this.#askedPolicyHashes.add(loosening.hash);
    const request: GateRequest = {
      agent: 'latch',
      tool: 'latch.policy',
      paths: [],
      title: 'Loosen the Latch policy',
      detail: `The policy file changed in a way that loosens it (sha256 ${loosening.hash.slice(0, 16)}…). Until you approve, the previous policy stays in force.\n\n${loosening.text}`,
      interactive: false,
      canDefer: false,
      shortened: false,
    };
    void this.#askOnce(request, {
      risk: 'high',
      timeoutSeconds: this.#options.config.approvals.timeoutSeconds,
      target: 'policy',
    }).then((answer) => {
      if (answer.decision === 'allow') this.#options.policy.approve(loosening.text, answer.reason);
      else
        this.#options.audit.append({
          event: 'policy_loosening_refused',
          hash: loosening.hash,
          reason: answer.reason,
        });
    });
  }

  // Fallbacks, when no phone can be reached: answered on the caller's terminal.

  #fallbackOr(
    request: GateRequest,
    details: RequestDetails,
    blockReason: BlockReason,
    reason: string,
  ): Promise<GateAnswer> | GateAnswer {
    const mode = this.#options.config.fallback.mode;
    const { requestId } = details;
    if (mode === 'none' || !request.interactive || (mode === 'totp' && !existsSync(this.#options.totpPath))) {
      this.#options.store.settleRequest(requestId, 'denied');
      this.#options.audit.append({ event: 'refused', requestId, blockReason, reason });
      return deny(blockReason, reason, requestId);
    }
    const now = Date.now();
    const challenge =
      mode === 'challenge' ? localChallenge(details.risk, details.target ?? details.tool, now) : undefined;
    return new Promise((resolve) => {
      const settle = (answer: GateAnswer) => {
        this.#fallbacks.delete(requestId);
        this.#options.store.settleRequest(requestId, answer.decision === 'allow' ? 'approved' : 'denied');
        this.#options.audit.append({
          event: 'decided',
          requestId,
          decision: answer.decision,
          reason: answer.reason,
        });
        return answer;
      };
      this.#fallbacks.set(requestId, {
        method: mode,
        ...(challenge ? { answer: challenge.answer } : {}),
        notBefore: challenge?.notBefore ?? now,
        settle,
      });
      setTimeout(() => {
        if (this.#fallbacks.has(requestId))
          settle(deny(blockReason, `${reason}; the terminal fallback was not answered in time`, requestId));
      }, details.exp - now);
      resolve({
        decision: 'fallback',
        requestId,
        method: mode,
        reason,
        prompt: challenge?.prompt ?? 'Enter the 6-digit code from your authenticator app:',
      });
    });
  }

  /** The caller's answer to a fallback prompt. One attempt per request. */
  answerFallback(requestId: string, answer: string): GateAnswer {
    const pending = this.#fallbacks.get(requestId);
    if (!pending)
      return deny('fallback_failed', 'no terminal fallback is waiting for this request', requestId);
    this.#fallbacks.delete(requestId);
    const now = Date.now();
    if (pending.method === 'totp') {
      const secret = fromBase64url(
        (JSON.parse(readFileSync(this.#options.totpPath, 'utf8')) as { secret: string }).secret,
      );
      const step = matchTotp(secret, answer.trim(), now);
      if (step !== undefined && this.#options.store.consumeTotpStep(step, now)) {
        return pending.settle({
          decision: 'allow',
          reason: 'approved with a TOTP code on the terminal',
          via: 'totp',
          requestId,
        });
      }
      return pending.settle(deny('fallback_failed', 'the TOTP code is wrong or was already used', requestId));
    }
    if (now < pending.notBefore)
      return pending.settle(deny('fallback_failed', 'answered before the review time was over', requestId));
    if (answer.trim() !== pending.answer)
      return pending.settle(deny('fallback_failed', 'the answer is wrong', requestId));
    return pending.settle({
      decision: 'allow',
      reason: 'approved by the local challenge on the terminal',
      via: 'challenge',
      requestId,
    });
  }
}
