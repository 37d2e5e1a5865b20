import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { sanitizeText } from '../../shared/text/sanitizeText.ts';
import type { AuditLog } from '../audit/auditLog.ts';
import type { HostIdentity } from '../identity/hostIdentity.ts';
import type { RelayClient } from '../relay/relayClient.ts';
import type { StateStore } from '../state/stateStore.ts';
import type { KillSwitch } from './killSwitch.ts';

export interface PanicContext {
  killSwitch: KillSwitch;
  relay: RelayClient;
  store: StateStore;
  audit: AuditLog;
  host: HostIdentity;
  fleet: string;
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
  if (sent.ok) {
    store.deleteMeta(NOT_TOLD);
    return { told: true };
  }
  store.setMeta(NOT_TOLD, reason);
  audit.append({
    event: 'fleet_not_told',
    epoch: held.epoch,
    freeze: held.freeze,
    error: sent.failure.message,
  });
  return { told: false, error: sent.failure.message };
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
