import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { verifyEnvelope } from '../../shared/envelopes/verifyEnvelope.ts';
import type { RevokeGrantEnvelope } from '../../shared/messages/envelopes.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { refusal, refuseWith, type RelayResult } from '../http/relayError.ts';
import type { FleetContext } from './context.ts';
import { activeDevice, consumeNonce } from './deviceAuth.ts';
import { isPairedWith } from './requests.ts';

/**
 * Carries a phone's revoke of a rule it allowed (docs/policy.md#grants) to the host. The relay
 * never learns the rule, only the request it came from; it checks the phone's signature, as for
 * a deny, and the host checks it again.
 */
export async function revokeGrant(
  ctx: FleetContext,
  envelope: RevokeGrantEnvelope,
): Promise<RelayResult<{ requestId: string }>> {
  const { body, signer } = envelope;
  if (body.fleet !== ctx.fleet || signer.role !== 'device')
    return refusal('context_mismatch', 'the revoke is for another fleet, or not from a phone');
  const device = activeDevice(ctx, signer.id);
  if (!device) return refusal('unknown_credential', 'no paired device has this id');
  if (!isPairedWith(ctx, body.host, device.id))
    return refusal('not_found', 'this phone is not paired with that host');
  const verified = await verifyEnvelope(envelope, {
    kind: 'revoke-grant',
    publicKey: fromBase64url(device.device_key),
    maxSkewMs: 60_000,
    now: ctx.now(),
  });
  if (!verified.ok) return refuseWith(verified.error);
  if (!consumeNonce(ctx, envelope.nonce))
    return refusal('replayed_nonce', 'this revoke was already received');
  ctx.emit(body.host, { v: PROTOCOL_VERSION, type: 'grant_revoked', envelope, at: ctx.now() });
  return { ok: true, value: { requestId: body.requestId } };
}
