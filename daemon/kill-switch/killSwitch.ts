import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { verifyEnvelope } from '../../shared/envelopes/verifyEnvelope.ts';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import { verifyResumeVote } from '../../shared/kill-switch/verifyResumeVote.ts';
import type { FreezeEnvelope } from '../../shared/messages/envelopes.ts';
import type { FleetState, ResumeVote } from '../../shared/messages/killSwitch.ts';
import type { RelyingParty } from '../../shared/webauthn/verifyAssertion.ts';
import type { AuditEvent, AuditLog } from '../audit/auditLog.ts';
import { RelayNoise } from '../audit/relayNoise.ts';
import { GrantStore } from '../grants/grantStore.ts';
import type { HostIdentity } from '../identity/hostIdentity.ts';
import type { StateStore, SwitchState } from '../state/stateStore.ts';

/**
 * How far ahead of this host's clock a phone's freeze may be dated and still take the place of
 * the freeze in force: the ±5 minutes of skew Latch allows between host, relay and phone, plus
 * the relay's minute for a signed envelope. Further ahead, it may have been dated so on purpose.
 */
const FREEZE_CLOCK_TOLERANCE_MS = 6 * 60_000;

/**
 * The reason kept for a freeze no phone paired here (nor this host) signed: it is shown to agents
 * in every deny, and words a relay wrote are not passed on to them as if a person had.
 */
export const UNVERIFIED_FREEZE_REASON =
  'the relay says so, not signed by a phone paired here: its reason is not shown';

export interface KillSwitchOptions {
  store: StateStore;
  audit: AuditLog;
  host: HostIdentity;
  fleet: string;
  /** Asked at each count: a quorum raised in the config applies at once. */
  quorum: () => number;
  relying: RelyingParty;
}

/**
 * The host's side of the fleet's kill switch. A freeze is the safe direction: it is honoured as
 * soon as it arrives, verified or not (the audit line says which). A resume is not: it takes
 * votes this host verifies itself, from distinct phones it paired, each bound to the id of the
 * freeze this host holds (kill-switch/freezeId, computed here from the envelope), at least as
 * many as its own quorum. Every freeze applied is remembered, so one that ended never comes back,
 * nor do its votes. The state survives restarts.
 */
export class KillSwitch {
  readonly #options: KillSwitchOptions;
  readonly #listeners = new Set<(state: SwitchState) => void>();
  readonly #noise: RelayNoise;
  readonly #grants: GrantStore;
  /** The state the listeners last heard; none until one listens. */
  #announced: SwitchState | undefined;

  constructor(options: KillSwitchOptions) {
    this.#options = options;
    this.#noise = new RelayNoise(options.audit);
    this.#grants = new GrantStore(options.store.db);
  }

  /**
   * Read from state.db, where `latch panic` also writes when this daemon does not answer it (a
   * busy or stopped daemon): a freeze made there is announced to the listeners the first time it
   * is read here (the relay's echo of it, the next call), so that it refuses the calls waiting and
   * stops what `latch exec` runs, as one made here does (review rv2).
   */
  get state(): SwitchState {
    const state = this.#options.store.switchState();
    const announced = this.#announced;
    if (announced && (state.frozen !== announced.frozen || state.epoch !== announced.epoch))
      this.#changed(state);
    return state;
  }

  onChange(listener: (state: SwitchState) => void): () => void {
    // The state as this process starts is the listeners' first: changes are told from then on.
    this.#announced ??= this.#options.store.switchState();
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(state: SwitchState): SwitchState {
    this.#announced = state;
    for (const listener of this.#listeners) listener(state);
    return state;
  }

  /**
   * Puts a freeze in force and, in the same transaction, revokes every rule phones allowed with
   * their approvals ("allow calls like this"): a resume brings none of them back, so what the
   * person halted asks again (docs/kill-switch.md#freeze).
   */
  #freeze(freeze: Parameters<StateStore['applyFreeze']>[0]): SwitchState {
    const { store, audit } = this.#options;
    const now = Date.now();
    const { state, revoked } = store.db.transaction(() => ({
      state: store.applyFreeze(freeze, now),
      revoked: this.#grants.revoke('all', now),
    }));
    if (revoked.length > 0)
      audit.append({ event: 'grant_revoked', grants: revoked, by: 'freeze', epoch: state.epoch });
    return this.#changed(state);
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
    // A check that fails to run (a key that does not decode, too) has verified nothing: the
    // relay's freeze, checked before it applies, is then applied all the same.
    try {
      return (await verifyEnvelope(envelope, { kind: 'freeze', publicKey: fromBase64url(key) })).ok;
    } catch {
      return false;
    }
  }

  /**
   * Puts a signed freeze in force by its id, from a phone or host through the relay, or from
   * `latch panic` here. It ends the freeze in force before it. The same freeze again is nothing
   * new; a freeze that already ended here is a replay, ignored: an honest relay never sends one,
   * and ignoring it is no weaker than a relay withholding a freeze, which any relay can do.
   *
   * From the relay, a freeze takes the place of one in force only if this host can tell it came
   * after (verified here, signed later, not dated far ahead): else votes given to it, made up by
   * the relay or withheld and dated ahead, would lift the freeze in force. The host stays frozen
   * either way.
   */
  async applyFreeze(envelope: FreezeEnvelope, cause: 'relay' | 'panic', via?: string): Promise<void> {
    const { store, audit } = this.#options;
    const id = await freezeId(envelope);
    if (this.state.freeze === id) return;
    if (store.freezeEnded(id)) {
      if (store.noteReplay(id, Date.now()))
        audit.append({
          event: 'freeze_replay_ignored',
          freeze: id,
          signer: envelope.signer,
          why: 'this freeze ended here already',
          ...(via ? { via } : {}),
        });
      return;
    }
    const ignored = (event: string, why: string) => ({
      event,
      freeze: id,
      signer: envelope.signer,
      why,
      ...(via ? { via } : {}),
    });
    // Checked once: before a freeze may replace another, and for the audit line after it applies.
    let verified: boolean | undefined;
    if (cause === 'relay' && this.state.frozen) {
      verified = await this.#freezeVerified(envelope);
      if (!verified) {
        // The relay can send these at will: audited once a minute, and not kept.
        this.#noise.append(
          'unverified freeze',
          ignored(
            'freeze_ignored',
            'not signed by a phone paired here or by this host: it cannot take the place of the freeze in force, which stays',
          ),
        );
        return;
      }
      const inForceSince = this.#inForceSince();
      // A freeze in force with no time to order it by (applied before this host kept signing
      // times): nothing can be shown to come after it (an older one would bring its old votes
      // back), so it stays. The other is not ended here: once the one in force ends, the relay's
      // state may bring it.
      if (this.state.cause !== 'unreachable' && inForceSince === undefined) {
        this.#noise.append(
          'freeze of unknown order',
          ignored(
            'freeze_ignored',
            'the freeze in force has no signing time recorded here: none can be shown to come after it',
          ),
        );
        return;
      }
      if (inForceSince !== undefined && envelope.ts < inForceSince) {
        store.refuseStaleFreeze(id, envelope.ts, Date.now());
        audit.append(ignored('freeze_stale_ignored', 'signed before the freeze in force, which stays'));
        return;
      }
      if (envelope.ts > Date.now() + FREEZE_CLOCK_TOLERANCE_MS) {
        // Kept nowhere, so a relay can send it again at will: once a minute.
        this.#noise.append(
          'freeze dated ahead',
          ignored(
            'freeze_ignored',
            `dated more than ${FREEZE_CLOCK_TOLERANCE_MS / 60_000} minutes ahead of this host’s clock: it cannot take the place of the freeze in force, which stays`,
          ),
        );
        return;
      }
    }
    // An unverifiable freeze is honoured all the same (safe direction), but its words are the
    // relay's: agents are told them only from a signer paired here. This host's own panic is in
    // force before anything is awaited, and verified after, for the audit line.
    if (cause === 'relay' && verified === undefined) {
      verified = await this.#freezeVerified(envelope);
      if (this.state.freeze === id || store.freezeEnded(id)) return;
      // A freeze came while this one was checked (a panic here): judged again, as one that
      // would take its place.
      if (this.state.frozen) return this.applyFreeze(envelope, cause, via);
    }
    // Its date orders the freezes after it, so only a signer paired here gives one, and never
    // further ahead than a clock may be off: a relay's own freeze dated a year ahead would make
    // every freeze a person sends before then stale, and the votes on them void. Another's is
    // ordered from when it was applied here, as a freeze with no envelope is (#inForceSince).
    const trusted = cause === 'panic' || verified;
    const now = Date.now();
    const state = this.#freeze({
      id,
      reason: trusted ? envelope.body.reason : UNVERIFIED_FREEZE_REASON,
      cause,
      signedAt: trusted
        ? Math.min(envelope.ts, now + FREEZE_CLOCK_TOLERANCE_MS)
        : now - FREEZE_CLOCK_TOLERANCE_MS,
    });
    verified ??= await this.#freezeVerified(envelope);
    audit.append({
      event: 'freeze',
      cause,
      epoch: state.epoch,
      freeze: id,
      verified,
      signer: envelope.signer,
      reason: envelope.body.reason,
      ...(via ? { via } : {}),
    });
  }

  /**
   * From when the freeze in force holds, for a freeze from the relay that would take its place:
   * when it was signed (for a freeze not signed by a signer paired here, when it was applied here,
   * less the skew allowed a phone's clock); for one with no signed envelope (a relay's word, or a
   * freeze kept from before ids), likewise when it was applied here. Else an old freeze this host
   * never applied, and the votes that ended it long ago, would lift it. A strict mode freeze has
   * none: any freeze takes its place, as the relay's word that all is well ends it.
   */
  #inForceSince(): number | undefined {
    const { store } = this.#options;
    const { freeze, cause } = this.state;
    if (freeze !== null) return store.freezeSignedAt(freeze);
    if (cause === 'unreachable') return undefined;
    const frozenAt = store.frozenAt();
    return frozenAt === undefined ? undefined : frozenAt - FREEZE_CLOCK_TOLERANCE_MS;
  }

  /** Strict mode: the relay has been out of reach past the grace period. No vote can end it. */
  freezeUnreachable(reason: string): void {
    if (this.state.frozen) return;
    const state = this.#freeze({ id: null, reason, cause: 'unreachable', signedAt: null });
    this.#options.audit.append({ event: 'freeze', cause: 'unreachable', epoch: state.epoch, verified: true });
  }

  /**
   * Votes to end a freeze, as the relay forwards them. A vote counts only for the freeze in force
   * here, from a phone paired here whose assertion verifies with a rising counter, once per
   * phone and freeze, across frames and restarts. This host resumes at its own quorum.
   */
  async onResumed(freeze: string, votes: ResumeVote[]): Promise<void> {
    const { store, audit } = this.#options;
    const current = this.state;
    if (!current.frozen) return;
    // A relay can send resumes at will: what counts no new vote is audited once a minute.
    if (store.freezeEnded(freeze)) {
      // Votes on a freeze that ended here (resumed, or refused as older than the one in force)
      // end nothing: the audit says why the host stays frozen.
      this.#noise.append('votes on an ended freeze', {
        event: 'resume_refused',
        epoch: current.epoch,
        freeze,
        why: 'this freeze ended here already: votes on it end nothing, and the freeze in force is another',
      });
      return;
    }
    if (current.freeze === null) {
      this.#noise.append('resume refused', {
        event: 'resume_refused',
        epoch: current.epoch,
        freeze,
        why: 'this host is frozen under no freeze id (strict mode, or a relay state without its envelope): no vote can end it',
      });
      return;
    }
    const refused: { device: string; code: string }[] = [];
    let countedNow = 0;
    for (const vote of votes) {
      const device = store.activeDevice(vote.device);
      const result = await verifyResumeVote(
        vote,
        { fleet: this.#options.fleet, freeze: current.freeze, ...this.#options.relying },
        device?.credential,
      );
      if (!result.ok) {
        refused.push({ device: vote.device, code: result.error.code });
        continue;
      }
      if (store.resumeVoters(current.freeze).includes(result.value.device)) {
        refused.push({ device: vote.device, code: 'already_used' });
        continue;
      }
      // As for approvals: the next assertion of this passkey must count higher, so a copy of
      // this one, or of an older one, fails. Checked again as it is stored, since another of its
      // assertions may have been checked meanwhile.
      if (!store.advanceCounter(result.value.device, result.value.counter)) {
        refused.push({ device: vote.device, code: 'counter_not_increased' });
        continue;
      }
      store.countResumeVote(current.freeze, result.value.device, Date.now());
      countedNow++;
    }
    const counted = store.resumeVoters(current.freeze);
    const needed = this.#options.quorum();
    const enough = counted.length >= needed;
    // Only this freeze ends: a panic that came while the votes were checked stays in force.
    const resumed = enough ? store.endFreeze(current.freeze, Date.now()) : undefined;
    // Audited once a minute for each freeze, phone and refusal, however a relay mixes them in
    // its frames: the phones paired here and the codes bound the kinds, its lists would not.
    const kinds = refused.map(
      ({ device, code }) =>
        `resume refused ${current.freeze} ${store.activeDevice(device) ? device : 'unpaired'}:${code}`,
    );
    const append = (line: AuditEvent) =>
      resumed || countedNow > 0
        ? audit.append(line)
        : this.#noise.appendOfKinds(kinds.length > 0 ? kinds : [`resume refused ${current.freeze}`], line);
    append({
      event: resumed ? 'resume' : 'resume_refused',
      epoch: current.epoch,
      freeze: current.freeze,
      votes: counted,
      needed,
      ...(refused.length ? { refused } : {}),
      ...(enough && !resumed ? { why: 'a new freeze took its place while the votes were checked' } : {}),
    });
    if (resumed) this.#changed(resumed);
  }

  /**
   * The relay's view on (re)connect. A frozen fleet freezes this host (safe direction), by the
   * envelope it carries. An unfrozen fleet lifts only a freeze that this host made because the
   * relay was unreachable.
   */
  async onRelayState(state: FleetState): Promise<void> {
    const { store, audit } = this.#options;
    const current = this.state;
    if (state.frozen && state.freeze) {
      await this.applyFreeze(state.freeze, 'relay', 'relay state');
    } else if (state.frozen) {
      if (current.frozen && current.cause !== 'unreachable') return;
      const frozen = this.#freeze({
        id: null,
        reason: UNVERIFIED_FREEZE_REASON,
        cause: 'relay',
        signedAt: null,
      });
      audit.append({
        event: 'freeze',
        cause: 'relay',
        epoch: frozen.epoch,
        freeze: null,
        verified: false,
        via: 'relay state',
        reason: state.reason ?? null,
        why: 'the relay says frozen without the signed freeze: no vote can end this until a signed freeze arrives',
      });
    } else if (current.frozen && current.cause === 'unreachable') {
      this.#changed(store.liftFreeze(Date.now()));
      audit.append({
        event: 'resume',
        epoch: current.epoch,
        via: 'relay reachable again (strict mode)',
      });
    }
  }
}
