import { canonicalHash } from '../canonical/canonicalize.ts';
import { PROTOCOL_VERSION } from '../version.ts';

/**
 * The WebAuthn challenge of revoking a phone at the relay: bound to the fleet and the phone
 * revoked, so the assertion revokes that one phone and nothing else. A revoked id never pairs
 * again, at the relay (relay/fleet/pairing.ts) nor on a host (daemon/pairing/pairedBefore.ts), so
 * the assertion is never worth anything twice. `purpose` keeps it apart from an approval or a
 * vote, whose members differ.
 */
export function revokeChallenge(binding: {
  fleet: string;
  device: string;
}): Promise<Uint8Array<ArrayBuffer>> {
  return canonicalHash({
    v: PROTOCOL_VERSION,
    purpose: 'revoke-device',
    fleet: binding.fleet,
    device: binding.device,
  });
}
