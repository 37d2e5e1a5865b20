import { canonicalHash } from '../canonical/canonicalize.ts';
import { PROTOCOL_VERSION } from '../version.ts';

/**
 * The challenge of a phone's passkey creation: it binds the passkey to the phone's device and
 * encryption keys. The same registration serves every host the phone pairs with; each pairing's
 * MAC proves it came from whoever scanned that host's code.
 */
export function registrationChallenge(device: {
  deviceKey: string;
  ecdhKey: string;
}): Promise<Uint8Array<ArrayBuffer>> {
  return canonicalHash({
    v: PROTOCOL_VERSION,
    purpose: 'register',
    deviceKey: device.deviceKey,
    ecdhKey: device.ecdhKey,
  });
}
