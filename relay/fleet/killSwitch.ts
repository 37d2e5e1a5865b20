import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { verifyEnvelope } from '../../shared/envelopes/verifyEnvelope.ts';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import { verifyResumeVote } from '../../shared/kill-switch/verifyResumeVote.ts';
import type { FreezeEnvelope } from '../../shared/messages/envelopes.ts';
import type { FleetState, ResumeVote } from '../../shared/messages/killSwitch.ts';
import { credentialOfRow } from '../../shared/pairing/storedDevice.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { refusal, refuseWith, type RelayResult } from '../http/relayError.ts';
import { row, rows, type FleetContext } from './context.ts';
import { activeDevice, consumeNonce } from './deviceAuth.ts';
import type { RelyingParty } from '../../shared/webauthn/verifyAssertion.ts';

interface SwitchRow {
  frozen: number;
  epoch: number;
  reason: string | null;
  frozen_at: number | null;
  frozen_by_role: 'device' | 'host' | null;
  frozen_by_id: string | null;
  /** The freeze in force (its signed envelope, JSON) and its id: what votes bind to. */
  envelope: string | null;
  freeze_id: string | null;
}

const switchRow = (ctx: FleetContext) => row<SwitchRow>(ctx.sql, 'SELECT * FROM switch WHERE id = 1')!;

/** Votes needed to resume: the largest quorum any host asked for (each daemon enforces its own). */
function votesNeeded(ctx: FleetContext): number {
  return row<{ needed: number | null }>(ctx.sql, 'SELECT MAX(quorum) AS needed FROM hosts')?.needed ?? 1;
}

export function fleetState(ctx: FleetContext): FleetState {
  const current = switchRow(ctx);
  const votes = current.frozen
    ? rows<{ device: string }>(
        ctx.sql,
        'SELECT device FROM votes WHERE freeze = ? ORDER BY device',
        current.freeze_id,
      ).map(({ device }) => device)
    : [];
  return {
    v: PROTOCOL_VERSION,
    fleet: ctx.fleet,
    frozen: current.frozen === 1,
    epoch: current.epoch,
    ...(current.frozen && current.envelope !== null
      ? { freeze: JSON.parse(current.envelope) as FreezeEnvelope }
      : {}),
    ...(current.frozen && current.reason !== null ? { reason: current.reason } : {}),
    ...(current.frozen && current.frozen_at !== null ? { frozenAt: current.frozen_at } : {}),
    ...(current.frozen && current.frozen_by_role && current.frozen_by_id
      ? { frozenBy: { role: current.frozen_by_role, id: current.frozen_by_id } }
      : {}),
    votes,
    needed: votesNeeded(ctx),
  };
}

/** The signer's public key: a device of the fleet or one of its hosts. */
function signerKey(ctx: FleetContext, envelope: FreezeEnvelope): string | undefined {
  if (envelope.signer.role === 'device') return activeDevice(ctx, envelope.signer.id)?.device_key;
  return row<{ host_key: string }>(ctx.sql, 'SELECT host_key FROM hosts WHERE id = ?', envelope.signer.id)
    ?.host_key;
}

/**
 * The panic button (or `latch panic`). Every freeze replaces the one in force: votes bind to its
 * envelope's id, so votes cast before it count for nothing. It reaches every connected daemon at
 * once; the epoch only counts freezes, for people to read.
 */
export async function freeze(ctx: FleetContext, envelope: FreezeEnvelope): Promise<RelayResult<FleetState>> {
  if (envelope.body.fleet !== ctx.fleet)
    return refusal('context_mismatch', 'the freeze is for another fleet');
  const key = signerKey(ctx, envelope);
  if (!key) return refusal('unknown_credential', 'the signer is not a member of this fleet');
  const verified = await verifyEnvelope(envelope, {
    kind: 'freeze',
    publicKey: fromBase64url(key),
    maxSkewMs: 60_000,
    now: ctx.now(),
  });
  if (!verified.ok) return refuseWith(verified.error);
  const id = await freezeId(envelope);

  // No await from here: the nonce, the switch and the event are one step.
  if (!consumeNonce(ctx, envelope.nonce))
    return refusal('replayed_nonce', 'this freeze was already received');
  const now = ctx.now();
  ctx.sql.exec(
    `UPDATE switch SET frozen = 1, epoch = epoch + 1, reason = ?, frozen_at = ?, frozen_by_role = ?,
       frozen_by_id = ?, envelope = ?, freeze_id = ? WHERE id = 1`,
    envelope.body.reason,
    now,
    envelope.signer.role,
    envelope.signer.id,
    JSON.stringify(envelope),
    id,
  );
  ctx.sql.exec('DELETE FROM votes WHERE freeze != ?', id);
  const state = fleetState(ctx);
  ctx.emit(null, { v: PROTOCOL_VERSION, type: 'frozen', epoch: state.epoch, envelope, at: now });
  return { ok: true, value: state };
}

/**
 * One phone's vote to resume: a WebAuthn assertion over the id of the freeze in force. Each
 * device counts once; when the quorum is reached the fleet resumes and every daemon gets all the
 * votes, to verify against the freeze it holds, its own keys and its own quorum.
 */
export async function vote(
  ctx: FleetContext,
  ballot: ResumeVote,
  relying: RelyingParty,
): Promise<RelayResult<FleetState>> {
  const before = switchRow(ctx);
  if (!before.frozen) return refusal('not_frozen', 'the fleet is not frozen');
  if (ballot.fleet !== ctx.fleet) return refusal('context_mismatch', 'the vote is for another fleet');
  // Frozen before freezes had ids (an object migrated mid-freeze): there is nothing to vote on.
  if (before.freeze_id === null)
    return refusal('stale_freeze', 'this freeze has no signed envelope to vote on: freeze again');
  const device = activeDevice(ctx, ballot.device);
  if (!device) return refusal('unknown_credential', 'no paired device has this id');
  const verified = await verifyResumeVote(
    ballot,
    { fleet: ctx.fleet, freeze: before.freeze_id, origins: relying.origins, rpId: relying.rpId },
    credentialOfRow(device),
  );
  if (!verified.ok) return refuseWith(verified.error);

  // No await from here: the count and the resume are one step.
  const now = switchRow(ctx);
  if (!now.frozen || now.freeze_id !== ballot.freeze)
    return refusal('stale_freeze', 'the freeze this vote was for is over');
  if (fleetState(ctx).votes.includes(device.id))
    return refusal('already_used', 'this phone has already voted in this freeze');
  ctx.sql.exec(
    'INSERT INTO votes (freeze, device, vote) VALUES (?, ?, ?)',
    ballot.freeze,
    device.id,
    JSON.stringify(ballot),
  );
  ctx.sql.exec('UPDATE devices SET counter = ? WHERE id = ?', verified.value.counter, device.id);
  const after = fleetState(ctx);
  if (after.votes.length < after.needed) return { ok: true, value: after };

  const votes = rows<{ vote: string }>(ctx.sql, 'SELECT vote FROM votes WHERE freeze = ?', ballot.freeze).map(
    ({ vote: json }) => JSON.parse(json) as ResumeVote,
  );
  ctx.sql.exec('UPDATE switch SET frozen = 0 WHERE id = 1');
  ctx.emit(null, { v: PROTOCOL_VERSION, type: 'resumed', freeze: ballot.freeze, votes, at: ctx.now() });
  return { ok: true, value: fleetState(ctx) };
}
