import type { CapabilityToken } from '../../shared/messages/approvals.ts';
import type { DenyEnvelope } from '../../shared/messages/envelopes.ts';
import type { RelyingParty } from '../../shared/webauthn/verifyAssertion.ts';
import type { AuditLog } from '../audit/auditLog.ts';
import type { LatchConfig } from '../config/config.ts';
import type { ConfigKeeper } from '../config/configKeeper.ts';
import { Grants } from '../grants/grants.ts';
import { daemonLog as log } from '../output/daemonLog.ts';
import type { KillSwitch } from '../kill-switch/killSwitch.ts';
import type { PolicyKeeper } from '../policy/policyKeeper.ts';
import type { RelayClient } from '../relay/relayClient.ts';
import type { GateAnswer, GateRequest } from '../socket/localApi.ts';
import type { StateStore } from '../state/stateStore.ts';
import { Asking } from './asking.ts';
import type { Conversation } from './conversation.ts';
import { Deciding } from './deciding.ts';
import { Loosening, type ChangeRequest } from './loosening.ts';
import { PushFatigue } from './pushFatigue.ts';
import { RelayAnswers } from './relayAnswers.ts';
import { Waiting } from './waiting.ts';
import { Withdrawing } from './withdrawing.ts';

export type { ChangeRequest } from './loosening.ts';
export type { Conversation } from './conversation.ts';

export interface GatekeeperOptions {
  /** The config in force at start; `configKeeper` says what is in force from then on. */
  config: LatchConfig;
  configKeeper: ConfigKeeper;
  store: StateStore;
  audit: AuditLog;
  relay: RelayClient;
  killSwitch: KillSwitch;
  policy: PolicyKeeper;
  relying: RelyingParty;
  hostId: string;
  totpPath: string;
  /** Freezes the fleet, as `latch panic` does: a phone's verified report asks for it. */
  freezeFleet(reason: string): Promise<unknown>;
}

/**
 * Decides each gated call: the kill switch first, then the policy, then the phones. An approval
 * counts only once this host has verified its token against its own record of the request and
 * its own copy of the phone's passkey; anything that fails, times out or cannot be reached is a
 * deny with a reason. Never an allow. Each behaviour is a room of its own; this only joins them.
 */
export class Gatekeeper {
  readonly #deciding: Deciding;
  readonly #asking: Asking;
  readonly #waiting: Waiting;
  readonly #answers: RelayAnswers;
  readonly #withdrawing: Withdrawing;
  readonly #loosening: Loosening;

  constructor(options: GatekeeperOptions) {
    const fatigue = new PushFatigue(options.store);
    const grants = new Grants(options.store.db);
    const config = () => this.#deciding.config;
    this.#waiting = new Waiting({
      ...options,
      fatigue,
      onAllGone: (requestId) => this.#withdrawing.nobodyWaits(requestId),
    });
    this.#asking = new Asking({ ...options, config, fatigue, grants, waiting: this.#waiting });
    this.#loosening = new Loosening({ ...options, config, asking: this.#asking });
    this.#deciding = new Deciding({ ...options, fatigue, grants, loosening: this.#loosening });
    this.#answers = new RelayAnswers({
      ...options,
      fatigue,
      grants,
      waiting: this.#waiting,
      sessionReported: (conversation, until, reported) =>
        this.#withdrawing.sessionReported(conversation, until, reported),
    });
    this.#withdrawing = new Withdrawing({ ...options, waiting: this.#waiting });
  }

  get pending(): number {
    return this.#waiting.pending;
  }

  async gate(request: GateRequest, conversation: Conversation = {}): Promise<GateAnswer> {
    try {
      const decision = this.#deciding.decide(request);
      return decision.kind === 'answered'
        ? decision.answer
        : await this.#asking.askOnce(request, decision.terms, conversation);
    } catch (error) {
      // State or audit that cannot be written (a full disk): deny with the cause, and keep serving.
      const reason = `not_recorded: the daemon could not record this call: ${(error as Error).message}`;
      log(reason);
      return { decision: 'deny', reason, blockReason: 'not_recorded' };
    }
  }

  onApproved(requestId: string, token: CapabilityToken): Promise<void> {
    return this.#answers.onApproved(requestId, token);
  }

  onDenied(requestId: string, envelope: DenyEnvelope): Promise<void> {
    return this.#answers.onDenied(requestId, envelope);
  }

  onExpired(requestId: string): void {
    this.#answers.onExpired(requestId);
  }

  approveChange(change: ChangeRequest): Promise<GateAnswer> {
    return this.#loosening.approveChange(change);
  }

  withdrawAll(withinMs: number): Promise<void> {
    return this.#withdrawing.withdrawAll(withinMs);
  }
}
