import { beforeEach, describe, expect, it } from 'vitest';
import { fromBase64url, toBase64url } from '../../shared/encoding/base64url.ts';
import type { PairingCompletion, PairingOffer } from '../../shared/messages/pairing.ts';
import { parsePairingLink, pairingLink } from '../../shared/pairing/pairingLink.ts';
import { derivePairingKeys } from '../../shared/pairing/pairingKeys.ts';
import { completionMac, offerMac, shortCode } from '../../shared/pairing/pairingTranscript.ts';
import { verifyPairingCompletion } from '../../shared/pairing/verifyPairingCompletion.ts';
import { expectRefused } from '../support/expectRefused.ts';
import {
  completePairing,
  createHost,
  createOffer,
  createPhone,
  TEST_ORIGIN,
  TEST_RP_ID,
  type TestPhone,
} from '../support/phone.ts';

let phone: TestPhone;
let offer: PairingOffer;
let secret: Uint8Array<ArrayBuffer>;
let completion: PairingCompletion;
const relying = { origins: [TEST_ORIGIN], rpId: TEST_RP_ID };

beforeEach(async () => {
  phone = await createPhone();
  ({ offer, secret } = await createOffer(await createHost()));
  completion = await completePairing(phone, offer, secret);
});

/** Re-MACs a changed completion with the right secret, to reach the checks behind the MAC. */
async function remac(changed: PairingCompletion): Promise<PairingCompletion> {
  const { macKey } = await derivePairingKeys(secret);
  return { ...changed, mac: await completionMac(macKey, offer, changed) };
}

describe('pairing', () => {
  it('gives the host the phone’s keys and passkey', async () => {
    const result = await verifyPairingCompletion(completion, offer, secret, relying);
    expect(result.ok && result.value).toMatchObject({
      id: phone.id,
      deviceKey: phone.deviceKey,
      ecdhKey: phone.ecdhKey,
      credential: { id: phone.authenticator.credentialId, counter: 0, device: phone.id },
    });
  });

  it('shows both sides the same six-digit code', async () => {
    const { macKey } = await derivePairingKeys(secret);
    const onTerminal = await shortCode(macKey, offer, completion);
    const onPhone = await shortCode((await derivePairingKeys(secret)).macKey, offer, completion);
    expect(onTerminal).toMatch(/^\d{6}$/);
    expect(onPhone).toBe(onTerminal);
  });

  it('changes the code when any key in the transcript changes', async () => {
    const { macKey } = await derivePairingKeys(secret);
    const other = await completePairing(await createPhone(), offer, secret);
    expect(await shortCode(macKey, offer, other)).not.toBe(await shortCode(macKey, offer, completion));
  });

  it('lets the phone check the offer the relay hands it', async () => {
    const { macKey } = await derivePairingKeys(secret);
    expect(await offerMac(macKey, offer)).toBe(offer.offerMac);
    const swappedKey = { ...offer, hostKey: (await createHost()).hostKey };
    expect(await offerMac(macKey, swappedKey)).not.toBe(offer.offerMac);
  });

  it('derives an offer token that reveals nothing the MAC needs', async () => {
    const { offerToken } = await derivePairingKeys(secret);
    expect(offerToken).toBe(offer.offerToken);
    expect(offerToken).not.toBe(toBase64url(secret));
  });

  it('refuses a completion made with another QR secret', async () => {
    const { secret: otherSecret } = await createOffer(await createHost());
    expectRefused(await verifyPairingCompletion(completion, offer, otherSecret, relying), 'bad_mac');
  });

  it('refuses a completion whose keys the relay swapped', async () => {
    const swapped = {
      ...completion,
      device: { ...completion.device, ecdhKey: (await createPhone()).ecdhKey },
    };
    expectRefused(await verifyPairingCompletion(swapped, offer, secret, relying), 'bad_mac');
  });

  it('refuses a completion when the relay swapped the host key in the offer', async () => {
    const swappedOffer = { ...offer, hostKey: (await createHost()).hostKey };
    expectRefused(await verifyPairingCompletion(completion, swappedOffer, secret, relying), 'bad_mac');
  });

  it('refuses a completion for another offer', async () => {
    expectRefused(
      await verifyPairingCompletion({ ...completion, offerId: 'other' }, offer, secret, relying),
      'context_mismatch',
    );
  });

  it('refuses a device id that is not its key’s', async () => {
    const renamed = await remac({
      ...completion,
      device: { ...completion.device, id: (await createPhone()).id },
    });
    expectRefused(await verifyPairingCompletion(renamed, offer, secret, relying), 'device_mismatch');
  });

  it('refuses a passkey made without user verification', async () => {
    const withoutUv = await completePairing(phone, offer, secret, { userVerified: false });
    expectRefused(await verifyPairingCompletion(withoutUv, offer, secret, relying), 'registration_failed');
  });

  it('refuses a passkey made on another origin', async () => {
    const elsewhere = await completePairing(phone, offer, secret, { origin: 'https://evil.test' });
    expectRefused(await verifyPairingCompletion(elsewhere, offer, secret, relying), 'registration_failed');
  });

  it('refuses a passkey made for another RP ID', async () => {
    const elsewhere = await completePairing(phone, offer, secret, { rpId: 'evil.test' });
    expectRefused(await verifyPairingCompletion(elsewhere, offer, secret, relying), 'registration_failed');
  });

  it('refuses a passkey registered over another phone’s keys', async () => {
    const other = await createPhone();
    const otherCompletion = await completePairing(other, offer, secret);
    const borrowed = await remac({ ...completion, registration: otherCompletion.registration });
    expectRefused(await verifyPairingCompletion(borrowed, offer, secret, relying), 'registration_failed');
  });

  it('refuses a registration whose attestation object is garbage', async () => {
    const garbage = await remac({
      ...completion,
      registration: { ...completion.registration, attestationObject: toBase64url(new Uint8Array(40)) },
    });
    expectRefused(await verifyPairingCompletion(garbage, offer, secret, relying), 'registration_failed');
  });
});

describe('pairing link', () => {
  it('puts the secret in the fragment, which browsers never send', () => {
    const link = pairingLink({ origin: 'https://latch.test', fleet: 'f1', offerId: 'o1', secret });
    const url = new URL(link);
    expect(url.pathname).toBe('/pair');
    expect(url.search).toBe('');
    expect(url.hash).toContain(toBase64url(secret));
    expect(parsePairingLink(link)).toEqual({
      ok: true,
      value: { origin: 'https://latch.test', fleet: 'f1', offerId: 'o1', secret },
    });
  });

  it.each([
    ['not a URL', 'latch pair'],
    ['another version', 'https://latch.test/pair#v=2&fleet=f&offer=o&secret=' + 'A'.repeat(43)],
    ['a bad fleet id', 'https://latch.test/pair#v=1&fleet=a%20b&offer=o&secret=' + 'A'.repeat(43)],
    ['a missing offer', 'https://latch.test/pair#v=1&fleet=f&secret=' + 'A'.repeat(43)],
    ['a short secret', 'https://latch.test/pair#v=1&fleet=f&offer=o&secret=AAAA'],
    [
      'a secret that is not base64url',
      'https://latch.test/pair#v=1&fleet=f&offer=o&secret=' + '*'.repeat(43),
    ],
  ])('refuses a link with %s', (_what, link) => {
    expect(parsePairingLink(link).ok).toBe(false);
  });

  it('names the fault of a refused link', () => {
    expectRefused(parsePairingLink('https://latch.test/pair#v=2'), 'unknown_version');
    expectRefused(
      parsePairingLink('https://latch.test/pair#v=1&fleet=f&offer=o&secret=AAAA'),
      'invalid_field',
    );
    expect(fromBase64url(toBase64url(secret))).toEqual(secret);
  });
});
