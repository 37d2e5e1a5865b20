import { fromBase64url } from '../encoding/base64url.ts';
import { constantTimeEqual } from '../encoding/bytes.ts';
import { attempt, LatchError, type Result } from '../errors.ts';
import { keyId } from '../keys/p256.ts';
import type { PairingCompletion, PairingOffer } from '../messages/pairing.ts';
import type { PairedCredential } from '../webauthn/pairedCredential.ts';
import type { RelyingParty } from '../webauthn/verifyAssertion.ts';
import { derivePairingKeys } from './pairingKeys.ts';
import { completionMac } from './pairingTranscript.ts';
import { verifyPasskeyRegistration } from './verifyPasskeyRegistration.ts';

/** A phone as a host keeps it after pairing: everything it needs to verify that phone alone. */
export interface PairedDevice {
  id: string;
  name: string;
  deviceKey: string;
  ecdhKey: string;
  credential: PairedCredential;
}

/**
 * The host's side of pairing: the completion answers our offer, carries a MAC under our QR
 * secret (so the relay cannot have changed a byte of it), names the device by its own key, and
 * holds a passkey created on our origin with user verification.
 */
export function verifyPairingCompletion(
  completion: PairingCompletion,
  offer: PairingOffer,
  secret: Uint8Array<ArrayBuffer>,
  relying: RelyingParty,
): Promise<Result<PairedDevice>> {
  return attempt(async () => {
    // Ensure it answers our offer, in our fleet: the relay finds offers by id and tells the
    // phone their fleet, and an answer to any other offer must not land here
    if (completion.fleet !== offer.fleet || completion.offerId !== offer.offerId) {
      throw new LatchError('context_mismatch', 'the completion answers another offer');
    }

    // Ensure the phone holds our QR secret and saw our offer: the MAC covers the offer we made
    // (our fleet, offer id and host key), so a relay that swapped either side is caught
    const { macKey } = await derivePairingKeys(secret);
    const expectedMac = fromBase64url(await completionMac(macKey, offer, completion));
    if (!constantTimeEqual(fromBase64url(completion.mac), expectedMac)) {
      throw new LatchError('bad_mac', 'the completion was not made with this QR secret');
    }

    // Ensure the device is named by its own key
    const { device, registration } = completion;
    if (device.id !== (await keyId(fromBase64url(device.deviceKey)))) {
      throw new LatchError('device_mismatch', 'the device id is not the id of its key');
    }

    // Ensure the passkey was made on our origin, over these keys, with user verification
    const credential = await verifyPasskeyRegistration(device, registration, relying);
    return {
      id: device.id,
      name: device.name,
      deviceKey: device.deviceKey,
      ecdhKey: device.ecdhKey,
      credential,
    };
  });
}
