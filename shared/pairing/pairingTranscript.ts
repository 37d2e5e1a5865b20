import { toBase64url } from '../encoding/base64url.ts';
import type { PairingCompletion, PairingOffer } from '../messages/pairing.ts';
import { pairingMac } from './pairingKeys.ts';

type UnsignedOffer = Omit<PairingOffer, 'offerMac'>;
type UnsignedCompletion = Omit<PairingCompletion, 'mac'>;

/** The daemon's MAC over its offer, so the phone can trust the host key the relay hands it. */
export async function offerMac(macKey: CryptoKey, offer: UnsignedOffer): Promise<string> {
  const { offerMac: _ignored, ...unsigned } = offer as PairingOffer;
  return toBase64url(await pairingMac(macKey, 'offer', unsigned));
}

/** The phone's MAC over the whole transcript: the offer it answers and everything it sends. */
export async function completionMac(
  macKey: CryptoKey,
  offer: PairingOffer,
  completion: UnsignedCompletion,
): Promise<string> {
  const { mac: _ignored, ...unsigned } = completion as PairingCompletion;
  return toBase64url(await pairingMac(macKey, 'completion', { offer, completion: unsigned }));
}

/**
 * Six digits both screens show once pairing is done. Derived from the MAC key and the whole
 * transcript, so a person comparing them confirms the phone and the terminal saw the same keys.
 */
export async function shortCode(
  macKey: CryptoKey,
  offer: PairingOffer,
  completion: PairingCompletion,
): Promise<string> {
  const mac = await pairingMac(macKey, 'short-code', { offer, completion });
  const number = new DataView(mac.buffer).getUint32(0) % 1_000_000;
  return number.toString().padStart(6, '0');
}
