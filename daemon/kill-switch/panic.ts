import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import type { FreezeEnvelope } from '../../shared/messages/envelopes.ts';
import type { FleetState } from '../../shared/messages/killSwitch.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { sanitizeText } from '../../shared/text/sanitizeText.ts';
import type { RelyingParty } from '../../shared/webauthn/verifyAssertion.ts';
import type { AuditLog } from '../audit/auditLog.ts';
import type { LatchConfig } from '../config/config.ts';
import type { LatchFiles } from '../config/paths.ts';
import { loadHostIdentity, type HostIdentity } from '../identity/hostIdentity.ts';
import { relayClientFor, relyingPartyOf } from '../relay/hostRelay.ts';
import type { RelayClient } from '../relay/relayClient.ts';
import type { StateStore } from '../state/stateStore.ts';
import { KillSwitch } from './killSwitch.ts';

export interface PanicContext {
  killSwitch: KillSwitch;
  relay: RelayClient;
  store: StateStore;
  audit: AuditLog;
  host: HostIdentity;
  fleet: string;
}

/**
 * This host's kill switch and what a panic needs with it, wired the same way for the daemon and
 * for `latch panic` when no daemon runs. `quorum` is asked at each count.
 */
export async function openPanicContext(
  files: LatchFiles,
  config: LatchConfig,
  state: { store: StateStore; audit: AuditLog },
  quorum: () => number,
): Promise<PanicContext & { relying: RelyingParty }> {
  const host = await loadHostIdentity(files.hostKey);
  const fleet = config.host.fleet;
  const relying = relyingPartyOf(config);
  const killSwitch = new KillSwitch({ ...state, host, fleet, quorum, relying });
  return { ...state, killSwitch, relay: relayClientFor(files, config), host, fleet, relying };
}

export type PanicOutcome = { told: true } | { told: false; error: string };

/** In state.db's meta while a panic's freeze has not reached the relay: its reason. */
const NOT_TOLD = 'panic_not_told';

/**
 * `latch panic`, from the daemon or from the CLI when no daemon runs: signs a freeze with the
 * host key, puts it in force here by its id (so it ends any earlier freeze, and only votes for
 * it can end it), then tells the relay. A relay out of reach leaves this host frozen and the
 * fleet untold; that is remembered, and `tellFleetOfPanic` tells it once the relay answers.
 */
export async function panic(context: PanicContext, words: string, via?: string): Promise<PanicOutcome> {
  const { killSwitch, relay, store, audit, host, fleet } = context;
  // The reason is signed and shown on phones: clean text within its cap, as the wire wants it.
  const reason =
    sanitizeText(words, { maxBytes: LIMITS.reasonBytes, multiline: false }).text || 'latch panic';
  const envelope = await signEnvelope(
    'freeze',
    { fleet, reason },
    { role: 'host', id: host.id },
    host.privateKey,
  );
  await killSwitch.applyFreeze(envelope, 'panic', via);
  const held = killSwitch.state;
  const sent = await relay.freeze(envelope);
  const error = sent.ok ? await notInForce(sent.value, fleet, envelope) : sent.failure.message;
  if (error === undefined) {
    store.deleteMeta(NOT_TOLD);
    return { told: true };
  }
  store.setMeta(NOT_TOLD, reason);
  audit.append({ event: 'fleet_not_told', epoch: held.epoch, freeze: held.freeze, error });
  return { told: false, error };
}

/**
 * Why the relay's answer to a freeze does not show it in force over this fleet, or undefined. The
 * relay answers with the state its freeze made; any other answer is a claim the fleet was told
 * that this host does not take.
 */
async function notInForce(
  state: FleetState,
  fleet: string,
  envelope: FreezeEnvelope,
): Promise<string | undefined> {
  if (state.fleet !== fleet) return `the relay answered for another fleet (${state.fleet})`;
  if (!state.frozen || !state.freeze || (await freezeId(state.freeze)) !== (await freezeId(envelope)))
    return 'the relay answered without this freeze in force';
  return undefined;
}

/**
 * Tells the fleet of a panic it missed, once the relay is reachable. The freeze is signed anew
 * (the relay refuses one signed over 60 s ago) with the same reason, and put in force here in
 * place of the untold one, so that the freeze phones see and vote on is the one this host holds.
 */
export async function tellFleetOfPanic(context: PanicContext): Promise<void> {
  const reason = context.store.meta(NOT_TOLD);
  if (reason !== undefined) await panic(context, reason, 'told late: the relay was out of reach');
}
