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
import { relayFailureText, type RelayClient } from '../relay/relayClient.ts';
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

/**
 * In state.db's meta while a panic's freeze has not reached the relay: its reason, and the id of
 * the freeze this host put in force for it (JSON). A bare reason is an earlier version's.
 */
const NOT_TOLD = 'panic_not_told';
/** The freeze this host made when it last told the fleet of a panic it missed, and when (meta, JSON). */
const LAST_TOLD = 'panic_last_told_at';
/** How often a relay that keeps answering wrongly is told again: each telling is a new freeze. */
const TELL_AGAIN_AFTER_MS = 60_000;

interface Untold {
  reason: string;
  freeze?: string;
}

function untoldPanic(store: StateStore): Untold | undefined {
  const stored = store.meta(NOT_TOLD);
  if (stored === undefined) return undefined;
  const read = readJson(stored) as Partial<Untold> | undefined;
  // Else an earlier version's bare reason.
  if (typeof read?.reason !== 'string') return { reason: stored };
  return { reason: read.reason, ...(typeof read.freeze === 'string' ? { freeze: read.freeze } : {}) };
}

function readJson(text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

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
  const error = sent.ok ? await notInForce(sent.value, fleet, envelope) : relayFailureText(sent.failure);
  if (error === undefined) {
    store.deleteMeta(NOT_TOLD);
    return { told: true };
  }
  store.setMeta(NOT_TOLD, JSON.stringify({ reason, ...(held.freeze ? { freeze: held.freeze } : {}) }));
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
 * Only while that untold freeze is still in force here (resumed or replaced, it is over), and at
 * most once a minute: a relay that keeps answering that it did not take it would otherwise have a
 * new freeze made, in force and audited, for each state frame it sends, each voiding the votes
 * counted for the one before.
 */
export async function tellFleetOfPanic(context: PanicContext): Promise<void> {
  const { store, killSwitch } = context;
  const untold = untoldPanic(store);
  if (untold === undefined) return;
  if (untold.freeze !== undefined && killSwitch.state.freeze !== untold.freeze) {
    store.deleteMeta(NOT_TOLD);
    return;
  }
  const now = Date.now();
  const last = readJson(store.meta(LAST_TOLD)) as { freeze?: unknown; at?: unknown } | undefined;
  if (last?.freeze === untold.freeze && now - Number(last?.at) < TELL_AGAIN_AFTER_MS) return;
  await panic(context, untold.reason, 'told late: the relay was out of reach');
  // Told again and still untold: the freeze made for this telling waits a minute to be told.
  const still = untoldPanic(store);
  if (still?.freeze !== undefined)
    store.setMeta(LAST_TOLD, JSON.stringify({ freeze: still.freeze, at: now }));
}
