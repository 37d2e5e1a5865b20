import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { verifyEnvelope } from '../../shared/envelopes/verifyEnvelope.ts';
import type { RevokeGrantEnvelope } from '../../shared/messages/envelopes.ts';
import type { AuditLog } from '../audit/auditLog.ts';
import type { RelayNoise } from '../audit/relayNoise.ts';
import type { StateStore } from '../state/stateStore.ts';
import { GrantStore } from './grantStore.ts';

/**
 * A phone revokes the rule it allowed with its approval of a request. Honoured even when it does
 * not verify, since revoking only tightens (like a deny); the audit says whether it verified.
 */
export async function revokeFromPhone(
  envelope: RevokeGrantEnvelope,
  host: { store: StateStore; audit: AuditLog; noise: RelayNoise; hostId: string },
): Promise<void> {
  const { store, audit, noise, hostId } = host;
  const device = envelope.signer.role === 'device' ? store.activeDevice(envelope.signer.id) : undefined;
  const verified =
    device !== undefined &&
    envelope.body.host === hostId &&
    (await verifyEnvelope(envelope, { kind: 'revoke-grant', publicKey: fromBase64url(device.deviceKey) })).ok;
  const revoked = new GrantStore(store.db).revoke({ requestId: envelope.body.requestId }, Date.now());
  const line = {
    event: 'grant_revoked',
    requestId: envelope.body.requestId,
    grants: revoked,
    by: 'phone',
    device: envelope.signer.id,
    verified,
  };
  // A relay can send a revoke again, or make one up, at will: one that ends nothing, once a minute.
  if (revoked.length > 0) audit.append(line);
  else noise.append(`grant revoke that ended nothing${verified ? '' : ', unverified'}`, line);
}
