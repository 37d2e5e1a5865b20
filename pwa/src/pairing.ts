import { offerStatusSchema } from '../../shared/messages/relayViews.ts';
import { derivePairingKeys } from '../../shared/pairing/pairingKeys.ts';
import type { PairingLink } from '../../shared/pairing/pairingLink.ts';
import { completionMac, shortCode } from '../../shared/pairing/pairingTranscript.ts';
import { verifyPairingOffer } from '../../shared/pairing/verifyPairingOffer.ts';
import { f } from '../../shared/schema/index.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { addMembership, ensureIdentity, loadPasskey, savePasskey } from './keystore.ts';
import { ensurePushSubscription, forgetPushRegistration } from './push/ensurePushSubscription.ts';
import { fleetPath, relayCall } from './relayApi.ts';
import { createPasskey } from './webauthn.ts';

export type PairingProgress =
  | { step: 'checking' }
  | { step: 'passkey' }
  | { step: 'sending' }
  | { step: 'compare'; code: string; hostName: string; device: string }
  | { step: 'done'; code: string; hostName: string; device: string }
  /** `final`: the code cannot work again (used, expired, tampered with): no "Try again". */
  | { step: 'failed'; message: string; final?: boolean };

const accepted = /* @__PURE__ */ f.object({ v: f.version(), accepted: f.boolean() });

/**
 * The phone's side of pairing: fetch the offer by the id and token the QR secret yields, check
 * the host's MAC over it (which also vouches for the fleet the relay filed it under), make keys
 * and a passkey (once per phone), send them under a MAC, show the short code, and wait for the
 * host to confirm.
 */
export async function pairWith(
  link: PairingLink,
  deviceName: string,
  report: (progress: PairingProgress) => void,
): Promise<void> {
  const { offerId, offerToken, macKey } = await derivePairingKeys(link.secret);
  const status = await relayCall('GET', `/v1/pairing/${encodeURIComponent(offerId)}`, offerStatusSchema, {
    headers: { 'latch-offer-token': offerToken },
  });
  if (!status.ok)
    return report(
      // The relay's no (used, expired, unknown) is final; no answer may not be.
      status.status >= 400 && status.status < 500
        ? { step: 'failed', message: 'This code was used or expired. Run latch pair again.', final: true }
        : { step: 'failed', message: 'The relay could not be reached.' },
    );
  // The relay handed us the host's key and the fleet; only the host, which holds the secret,
  // could MAC them.
  const verified = await verifyPairingOffer(status.value.offer, link.secret);
  if (!verified.ok) {
    return report({
      step: 'failed',
      message: `This code was tampered with on the way (${verified.error.code}). Do not pair.`,
      final: true,
    });
  }
  const offer = verified.value;
  const path = fleetPath(offer.fleet, `/pairing/${encodeURIComponent(offerId)}`);

  const identity = await ensureIdentity(deviceName);
  let passkey = await loadPasskey();
  if (!passkey) {
    report({ step: 'passkey' });
    passkey = await createPasskey(identity);
    await savePasskey(passkey);
  }
  report({ step: 'sending' });
  const unsigned = {
    v: PROTOCOL_VERSION,
    fleet: offer.fleet,
    offerId,
    device: {
      id: identity.id,
      name: identity.name,
      deviceKey: identity.deviceKey,
      ecdhKey: identity.ecdhKey,
    },
    registration: passkey.registration,
    // No push subscription here: a push service can take seconds, or never answer. It is sent
    // once the pairing is done (ensurePushSubscription), which never holds pairing up.
  };
  const completion = { ...unsigned, mac: await completionMac(macKey, offer, unsigned) };
  const sent = await relayCall('POST', `${path}/complete`, accepted, {
    identity,
    body: completion,
    headers: { 'latch-offer-token': offerToken },
  });
  // Final where trying again cannot work: this phone's keys were revoked from the fleet, which
  // never takes them again (403), or another answer took the code first (409).
  if (!sent.ok)
    return report({
      step: 'failed',
      message: `The relay refused: ${sent.message}`,
      final: sent.status === 403 || sent.status === 409,
    });

  const code = await shortCode(macKey, offer, completion);
  report({ step: 'compare', code, hostName: offer.hostName, device: identity.id });
  for (;;) {
    const current = await relayCall('GET', path, offerStatusSchema, {
      headers: { 'latch-offer-token': offerToken },
    });
    if (current.ok && current.value.confirmed) break;
    // Gone: the computer took its offer back (its code mistyped, the phone refused, stopped).
    if (Date.now() > offer.exp || (!current.ok && current.status === 404))
      return report({ step: 'failed', message: 'The computer did not add this phone.', final: true });
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  await addMembership(offer.fleet, { id: offer.host, name: offer.hostName });
  forgetPushRegistration(offer.fleet);
  void ensurePushSubscription();
  report({ step: 'done', code, hostName: offer.hostName, device: identity.id });
}
