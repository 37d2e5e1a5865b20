import { fromBase64url } from '../encoding/base64url.ts';
import { constantTimeEqual } from '../encoding/bytes.ts';
import { attempt, LatchError, type Result } from '../errors.ts';
import type { PairingOffer } from '../messages/pairing.ts';
import { derivePairingKeys } from './pairingKeys.ts';
import { offerMac } from './pairingTranscript.ts';

/**
 * The phone's side of the offer the relay hands it for a scanned link. The relay found it by the
 * offer id alone and says which fleet it belongs to: a claim. Only the host, which holds the QR
 * secret, can MAC an offer, and its MAC covers the fleet, the offer id, the host and its key; so
 * an offer that passes is the one the host made for this code, whatever the relay's index says.
 */
export function verifyPairingOffer(
  offer: PairingOffer,
  secret: Uint8Array<ArrayBuffer>,
): Promise<Result<PairingOffer>> {
  return attempt(async () => {
    const { offerId, macKey } = await derivePairingKeys(secret);

    // Ensure it is the offer this code names, not another one the relay's index pointed at
    if (offer.offerId !== offerId) {
      throw new LatchError('context_mismatch', 'the relay handed over another offer than this code’s');
    }

    // Ensure the host made it: its fleet, host and key are what the host sent, byte for byte
    if (!constantTimeEqual(fromBase64url(await offerMac(macKey, offer)), fromBase64url(offer.offerMac))) {
      throw new LatchError('bad_mac', 'the offer was not made with this QR secret');
    }
    return offer;
  });
}
