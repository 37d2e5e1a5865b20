import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { verifyEnvelope } from '../../shared/envelopes/verifyEnvelope.ts';
import { verifyResumeVote } from '../../shared/kill-switch/verifyResumeVote.ts';
import type { FreezeEnvelope } from '../../shared/messages/envelopes.ts';
import type { FleetState, ResumeVote } from '../../shared/messages/killSwitch.ts';
import type { AuditLog } from '../audit/auditLog.ts';
import type { HostIdentity } from '../identity/hostIdentity.ts';
import type { StateStore, SwitchState } from '../state/stateStore.ts';

export interface KillSwitchOptions {
  store: StateStore;
  audit: AuditLog;
  host: HostIdentity;
  fleet: string;
  quorum: number;
  relying: { origins: readonly string[]; rpId: string };
}

/**
 * The host's side of the fleet's kill switch. A freeze is the safe direction: it is honoured as
 * soon as it arrives, verified or not (the audit line says which). A resume is not: it takes
 * votes this host verifies itself, from distinct phones it paired, bound to the freeze's epoch,
 * at least as many as its own quorum. The state survives restarts.
 */
export class KillSwitch {
  readonly #options: KillSwitchOptions;
  readonly #listeners = new Set<(state: SwitchState) => void>();

  constructor(options: KillSwitchOptions) {
    this.#options = options;
  }

  get state(): SwitchState {
    return this.#options.store.switchState();
  }

  onChange(listener: (state: SwitchState) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #set(state: SwitchState): void {
    this.#options.store.setSwitch(state);
    for (const listener of this.#listeners) listener(state);
  }

  freeze(reason: string, cause: NonNullable<SwitchState['cause']>, epoch = this.state.epoch): void {
    this.#set({ frozen: true, epoch: Math.max(epoch, this.state.epoch), reason, cause });
  }

  async #freezeVerified(envelope: FreezeEnvelope): Promise<boolean> {
    const { signer } = envelope;
    const key =
      signer.role === 'device'
        ? this.#options.store.activeDevice(signer.id)?.deviceKey
        : signer.id === this.#options.host.id
          ? this.#options.host.publicKey
          : undefined;
    if (!key || envelope.body.fleet !== this.#options.fleet) return false;
    return (await verifyEnvelope(envelope, { kind: 'freeze', publicKey: fromBase64url(key) })).ok;
  }

  async onFrozen(epoch: number, envelope: FreezeEnvelope): Promise<void> {
    this.freeze(envelope.body.reason, 'relay', epoch);
    const verified = await this.#freezeVerified(envelope);
    this.#options.audit.append({
      event: 'freeze',
      epoch,
      verified,
      signer: envelope.signer,
      reason: envelope.body.reason,
    });
  }

  /** Counts the votes this host can verify; resumes only at its own quorum. */
  async onResumed(epoch: number, votes: ResumeVote[]): Promise<void> {
    const current = this.state;
    if (!current.frozen) return;
    const counted = new Set<string>();
    const refused: { device: string; code: string }[] = [];
    for (const vote of votes) {
      const device = this.#options.store.activeDevice(vote.device);
      const result = await verifyResumeVote(
        vote,
        { fleet: this.#options.fleet, epoch: current.epoch, ...this.#options.relying },
        device?.credential,
      );
      if (result.ok) counted.add(result.value.device);
      else refused.push({ device: vote.device, code: result.error.code });
    }
    const enough = counted.size >= this.#options.quorum;
    this.#options.audit.append({
      event: enough ? 'resume' : 'resume_refused',
      epoch,
      votes: [...counted],
      needed: this.#options.quorum,
      ...(refused.length ? { refused } : {}),
    });
    if (enough) this.#set({ frozen: false, epoch: current.epoch, reason: null, cause: null });
  }

  /**
   * The relay's view on (re)connect. A frozen fleet freezes this host (safe direction). An
   * unfrozen fleet lifts only a freeze that this host made because the relay was unreachable.
   */
  onRelayState(state: FleetState): void {
    const current = this.state;
    if (state.frozen && (!current.frozen || current.epoch < state.epoch)) {
      this.freeze(state.reason ?? 'frozen', 'relay', state.epoch);
      this.#options.audit.append({
        event: 'freeze',
        epoch: state.epoch,
        verified: false,
        via: 'relay state',
        reason: state.reason ?? null,
      });
    } else if (!state.frozen && current.frozen && current.cause === 'unreachable') {
      this.#set({ frozen: false, epoch: current.epoch, reason: null, cause: null });
      this.#options.audit.append({
        event: 'resume',
        epoch: current.epoch,
        via: 'relay reachable again (strict mode)',
      });
    }
  }
}
