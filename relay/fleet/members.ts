import { revokeChallenge } from '../../shared/device-auth/revokeChallenge.ts';
import { attempt } from '../../shared/errors.ts';
import type { Assertion, PushSubscriptionJson } from '../../shared/messages/common.ts';
import type { Members } from '../../shared/messages/relayViews.ts';
import { credentialOfRow } from '../../shared/pairing/storedDevice.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { verifyAssertion, type RelyingParty } from '../../shared/webauthn/verifyAssertion.ts';
import { refusal, refuseWith, type RelayResult, type Unversioned } from '../http/relayError.ts';
import { row, rows, type DeviceRow, type FleetContext } from './context.ts';

interface MemberRow {
  id: string;
  name: string;
  created_at: number;
  revoked_at?: number | null;
}

const asView = (member: MemberRow) => ({
  id: member.id,
  name: member.name,
  createdAt: member.created_at,
  revoked: member.revoked_at !== undefined && member.revoked_at !== null,
});

/** The fleet's phones and hosts, for the devices screen. */
export function listMembers(ctx: FleetContext): Unversioned<Members> {
  return {
    devices: rows<MemberRow>(
      ctx.sql,
      'SELECT id, name, created_at, revoked_at FROM devices ORDER BY created_at',
    ).map(asView),
    hosts: rows<MemberRow>(ctx.sql, 'SELECT id, name, created_at FROM hosts ORDER BY created_at').map(asView),
  };
}

export function renameDevice(ctx: FleetContext, id: string, name: string): RelayResult<Unversioned<Members>> {
  if (name.trim() === '') return refusal('invalid_field', 'a name needs a visible character');
  if (!row(ctx.sql, 'SELECT 1 FROM devices WHERE id = ? AND revoked_at IS NULL', id)) {
    return refusal('not_found', 'no such device');
  }
  ctx.sql.exec('UPDATE devices SET name = ? WHERE id = ?', name, id);
  return { ok: true, value: listMembers(ctx) };
}

/**
 * Revokes a phone at the relay: it can no longer sign in, decide, vote or receive pushes, and a
 * vote it cast in the freeze in force no longer counts toward resuming. The phone that asks
 * proves a person is there (Face ID): a passkey assertion over revokeChallenge, since a revoke
 * can take a fleet's phones below its quorum, and an unlocked phone in other hands must not.
 * Each daemon keeps its own list of trusted phones (`latch devices`): every host is sent the
 * assertion, which it checks itself before it stops trusting the phone.
 */
export async function revokeDevice(
  ctx: FleetContext,
  by: DeviceRow,
  id: string,
  assertion: Assertion,
  relying: RelyingParty,
): Promise<RelayResult<Unversioned<Members>>> {
  if (!row(ctx.sql, 'SELECT 1 FROM devices WHERE id = ? AND revoked_at IS NULL', id)) {
    return refusal('not_found', 'no such device');
  }
  const verified = await attempt(async () =>
    verifyAssertion(
      assertion,
      { challenge: await revokeChallenge({ fleet: ctx.fleet, device: id }), ...relying },
      credentialOfRow(by),
    ),
  );
  if (!verified.ok) return refuseWith(verified.error);
  ctx.sql.exec('UPDATE devices SET counter = ? WHERE id = ?', verified.value.counter, by.id);
  ctx.sql.exec(
    'UPDATE devices SET revoked_at = ?, push_endpoint = NULL, push_p256dh = NULL, push_auth = NULL WHERE id = ?',
    ctx.now(),
    id,
  );
  ctx.sql.exec('DELETE FROM votes WHERE device = ?', id);
  ctx.emit(null, {
    v: PROTOCOL_VERSION,
    type: 'device_revoked',
    device: id,
    by: by.id,
    assertion,
    at: ctx.now(),
  });
  return { ok: true, value: listMembers(ctx) };
}

/** A phone's new push subscription (browsers rotate them). */
export function updatePushSubscription(ctx: FleetContext, device: string, push: PushSubscriptionJson): void {
  ctx.sql.exec(
    'UPDATE devices SET push_endpoint = ?, push_p256dh = ?, push_auth = ? WHERE id = ?',
    push.endpoint,
    push.keys.p256dh,
    push.keys.auth,
    device,
  );
}
