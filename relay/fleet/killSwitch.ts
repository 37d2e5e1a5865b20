import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { verifyEnvelope } from '../../shared/envelopes/verifyEnvelope.ts';
import { verifyResumeVote } from '../../shared/kill-switch/verifyResumeVote.ts';
import type { FreezeEnvelope } from '../../shared/messages/envelopes.ts';
import type { FleetState, ResumeVote } from '../../shared/messages/killSwitch.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { refusal, refuseWith, type RelayResult } from '../http/relayError.ts';
import { row, rows, type FleetContext } from './context.ts';
import { activeDevice, consumeNonce } from './deviceAuth.ts';
import type { RelyingParty } from './pairing.ts';

interface SwitchRow {
  frozen: number;
  epoch: number;
  reason: string | null;
  frozen_at: number | null;
  frozen_by_role: 'device' | 'host' | null;
  frozen_by_id: string | null;
}

/** Votes needed to resume: the largest quorum any host asked for (each daemon enforces its own). */
function votesNeeded(ctx: FleetContext): number {
  return row<{ needed: number | null }>(ctx.sql, 'SELECT MAX(quorum) AS needed FROM hosts')?.needed ?? 1;
}

export function fleetState(ctx: FleetContext): FleetState {
  const current = row<SwitchRow>(ctx.sql, 'SELECT * FROM switch WHERE id = 1')!;
  const votes = current.frozen
    ? rows<{ device: string }>(
        ctx.sql,
        'SELECT device FROM votes WHERE epoch = ? ORDER BY device',
        current.epoch,
      ).map(({ device }) => device)
    : [];
  return {
    v: PROTOCOL_VERSION,
    fleet: ctx.fleet,
    frozen: current.frozen === 1,
    epoch: current.epoch,
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
 * The panic button (or `latch panic`). Every freeze starts a new epoch, so votes cast before it
 * count for nothing, and reaches every connected daemon at once.
 */
export async function freeze(ctx: FleetContext, envelope: FreezeEnvelope): Promise<RelayResult<FleetState>> {
  if (envelope.body.fleet !== ctx.fleet)
    return refusal(400, 'context_mismatch', 'the freeze is for another fleet');
  const key = signerKey(ctx, envelope);
  if (!key) return refusal(401, 'unknown_credential', 'the signer is not a member of this fleet');
  const verified = await verifyEnvelope(envelope, {
    kind: 'freeze',
    publicKey: fromBase64url(key),
    maxSkewMs: 60_000,
    now: ctx.now(),
  });
  if (!verified.ok) return refuseWith(verified.error);
  if (!consumeNonce(ctx, envelope.nonce))
    return refusal(401, 'replayed_nonce', 'this freeze was already received');

  const now = ctx.now();
  ctx.sql.exec(
    'UPDATE switch SET frozen = 1, epoch = epoch + 1, reason = ?, frozen_at = ?, frozen_by_role = ?, frozen_by_id = ? WHERE id = 1',
    envelope.body.reason,
    now,
    envelope.signer.role,
    envelope.signer.id,
  );
  ctx.sql.exec('DELETE FROM votes WHERE epoch < (SELECT epoch FROM switch WHERE id = 1)');
  const state = fleetState(ctx);
  ctx.emit(null, { v: PROTOCOL_VERSION, type: 'frozen', epoch: state.epoch, envelope, at: now });
  return { ok: true, value: state };
}

/**
 * One phone's vote to resume: a WebAuthn assertion over this freeze's epoch. Each device counts
 * once; when the quorum is reached the fleet resumes and every daemon gets all the votes, to
 * verify against its own keys and quorum.
 */
export async function vote(
  ctx: FleetContext,
  ballot: ResumeVote,
  relying: RelyingParty,
): Promise<RelayResult<FleetState>> {
  const before = fleetState(ctx);
  if (!before.frozen) return refusal(409, 'not_frozen', 'the fleet is not frozen');
  if (ballot.fleet !== ctx.fleet) return refusal(400, 'context_mismatch', 'the vote is for another fleet');
  const device = activeDevice(ctx, ballot.device);
  if (!device) return refusal(401, 'unknown_credential', 'no paired device has this id');
  const verified = await verifyResumeVote(
    ballot,
    { fleet: ctx.fleet, epoch: before.epoch, origins: relying.origins, rpId: relying.rpId },
    {
      id: device.credential_id,
      publicKey: device.credential_key,
      counter: device.counter,
      device: device.id,
    },
  );
  if (!verified.ok) return refuseWith(verified.error);

  // No await from here: the count and the resume are one step.
  const now = fleetState(ctx);
  if (!now.frozen || now.epoch !== ballot.epoch)
    return refusal(409, 'stale_epoch', 'the freeze this vote was for is over');
  if (now.votes.includes(device.id))
    return refusal(409, 'already_used', 'this phone has already voted in this freeze');
  ctx.sql.exec(
    'INSERT INTO votes (epoch, device, vote) VALUES (?, ?, ?)',
    ballot.epoch,
    device.id,
    JSON.stringify(ballot),
  );
  ctx.sql.exec('UPDATE devices SET counter = ? WHERE id = ?', verified.value.counter, device.id);
  const after = fleetState(ctx);
  if (after.votes.length < after.needed) return { ok: true, value: after };

  const votes = rows<{ vote: string }>(ctx.sql, 'SELECT vote FROM votes WHERE epoch = ?', ballot.epoch).map(
    ({ vote: json }) => JSON.parse(json) as ResumeVote,
  );
  ctx.sql.exec('UPDATE switch SET frozen = 0 WHERE id = 1');
  ctx.emit(null, { v: PROTOCOL_VERSION, type: 'resumed', epoch: ballot.epoch, votes, at: ctx.now() });
  return { ok: true, value: fleetState(ctx) };
}
