import { isoCBOR } from '@simplewebauthn/server/helpers';
import { beforeEach, describe, expect, it } from 'vitest';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { utf8Length } from '../../shared/encoding/bytes.ts';
import type { LatchErrorCode } from '../../shared/errors.ts';
import type { PairingCompletion, PairingOffer } from '../../shared/messages/pairing.ts';
import { parsePairingLink, pairingLink } from '../../shared/pairing/pairingLink.ts';
import { derivePairingKeys } from '../../shared/pairing/pairingKeys.ts';
import { completionMac, offerMac, shortCode } from '../../shared/pairing/pairingTranscript.ts';
import { verifyPairingCompletion } from '../../shared/pairing/verifyPairingCompletion.ts';
import { verifyPairingOffer } from '../../shared/pairing/verifyPairingOffer.ts';
import { registrationChallenge } from '../../shared/pairing/registrationChallenge.ts';
import { expectRefused } from '../support/expectRefused.ts';
import { SoftwareAuthenticator } from '../../scripts/lib/softwareAuthenticator.ts';
import {
  completePairing,
  createHost,
  createOffer,
  createPhone,
  TEST_ORIGIN,
  TEST_RP_ID,
  type TestPhone,
} from '../../scripts/lib/softwarePhone.ts';

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

  it('pads a code below 100,000 to six digits, as the other side shows it', async () => {
    const { macKey } = await derivePairingKeys(secret);
    // One transcript in ten has such a code: try offers a second apart until one does.
    for (let later = 0; later < 200; later++) {
      const code = await shortCode(macKey, { ...offer, exp: offer.exp + later * 1000 }, completion);
      if (code.startsWith('0')) return expect(code).toMatch(/^0\d{5}$/);
    }
    expect.unreachable('no code below 100,000 in 200 transcripts');
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

  it('derives the offer id from the secret, apart from the token, so the link needs neither', async () => {
    const { offerId, offerToken } = await derivePairingKeys(secret);
    expect(offerId).toBe(offer.offerId);
    expect(offerId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(offerToken.startsWith(offerId)).toBe(false);
    expect((await derivePairingKeys(secret)).offerId).toBe(offerId);
    expect((await createOffer(await createHost())).offer.offerId).not.toBe(offerId);
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

  it('refuses a completion for another fleet', async () => {
    expectRefused(
      await verifyPairingCompletion(
        await remac({ ...completion, fleet: 'fleet-other' }),
        offer,
        secret,
        relying,
      ),
      'context_mismatch',
    );
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

  it('refuses a registration that names another credential than the passkey it carries', async () => {
    // The library checks id against rawId, not against the credential inside the attestation:
    // a phone (or relay) naming another passkey would have it stored under the wrong id.
    const renamed = await remac({
      ...completion,
      registration: { ...completion.registration, credentialId: toBase64url(new Uint8Array(16).fill(7)) },
    });
    const result = await verifyPairingCompletion(renamed, offer, secret, relying);
    expectRefused(result, 'registration_failed');
    expect(result.ok || result.error.message).toBe('the passkey registration does not verify');
  });

  it('refuses a passkey whose RSA key anyone can sign with (exponent 1), or factor (1024 bits)', async () => {
    // Only the public key is needed: with e = 1 the "signature" is the padded message itself.
    const weakKeys: [string, Uint8Array, Uint8Array][] = [
      ['exponent 1', randomModulus(2048), Uint8Array.of(1)],
      ['1024 bits', randomModulus(1024), Uint8Array.of(1, 0, 1)],
    ];
    for (const [, n, e] of weakKeys) {
      const cose = isoCBOR.encode(
        new Map<number, number | Uint8Array>([
          [1, 3],
          [3, -257],
          [-1, n],
          [-2, e],
        ]),
      );
      const weak = await remac({ ...completion, registration: await registrationWithKey(completion, cose) });
      const result = await verifyPairingCompletion(weak, offer, secret, relying);
      expectRefused(result, 'registration_failed');
      expect(result.ok || result.error.message).toContain('too weak');
    }
  });

  it('refuses a registration whose attestation object is garbage', async () => {
    const garbage = await remac({
      ...completion,
      registration: { ...completion.registration, attestationObject: toBase64url(new Uint8Array(40)) },
    });
    expectRefused(await verifyPairingCompletion(garbage, offer, secret, relying), 'registration_failed');
  });
});

describe('the offer the relay hands the phone', () => {
  it('is taken when the host made it for this code', async () => {
    expect(await verifyPairingOffer(offer, secret)).toEqual({ ok: true, value: offer });
  });

  it('is refused when the relay’s index points the phone at another fleet’s offer', async () => {
    const { offer: elsewhere } = await createOffer(await createHost(), { fleet: 'fleet-other' });
    expectRefused(await verifyPairingOffer(elsewhere, secret), 'context_mismatch');
  });

  it('is refused when the relay files this offer under another fleet', async () => {
    expectRefused(await verifyPairingOffer({ ...offer, fleet: 'fleet-other' }, secret), 'bad_mac');
  });

  it('is refused when the relay made it under this code’s id and token, without the secret', async () => {
    // A relay sees the id and the token, so it can forge everything but the MAC.
    const { offer: forged } = await createOffer(await createHost(), { fleet: 'fleet-other' });
    const counterfeit = { ...forged, offerId: offer.offerId, offerToken: offer.offerToken };
    expectRefused(await verifyPairingOffer(counterfeit, secret), 'bad_mac');
  });

  it('is refused when the relay swapped the host key', async () => {
    expectRefused(
      await verifyPairingOffer({ ...offer, hostKey: (await createHost()).hostKey }, secret),
      'bad_mac',
    );
  });
});

describe('a phone the relay points at another fleet’s offer', () => {
  it('cannot pair with that fleet’s host, nor with ours: its answer fits neither transcript', async () => {
    // A phone that followed the relay (an app the relay served could) answers the other offer
    // under our code's secret: that host holds another secret, and ours another offer.
    const theirs = await createOffer(await createHost(), { fleet: 'fleet-other' });
    const misled = await completePairing(phone, theirs.offer, secret);
    expectRefused(await verifyPairingCompletion(misled, theirs.offer, theirs.secret, relying), 'bad_mac');
    expectRefused(await verifyPairingCompletion(misled, offer, secret, relying), 'context_mismatch');
    const relabelled = { ...misled, fleet: offer.fleet, offerId: offer.offerId };
    expectRefused(await verifyPairingCompletion(relabelled, offer, secret, relying), 'bad_mac');
  });
});

describe('pairing link', () => {
  it('puts only the version and the secret in the fragment, which browsers never send', () => {
    const link = pairingLink({ origin: 'https://latch.test', secret });
    const url = new URL(link);
    expect(url.pathname).toBe('/pair');
    expect(url.search).toBe('');
    expect(url.hash).toBe(`#1.${toBase64url(secret)}`);
    expect(parsePairingLink(link)).toEqual({ ok: true, value: { origin: 'https://latch.test', secret } });
  });

  it('is at most 78 bytes for a 48-character origin: a version-4 QR code at level L', () => {
    const origin = 'https://latch-relay.lovelace-ada-421.workers.dev';
    expect(origin).toHaveLength(48);
    expect(utf8Length(pairingLink({ origin, secret }))).toBeLessThanOrEqual(78);
  });

  it.each([
    ['not a URL', 'latch pair', 'invalid_field'],
    ['another path', `https://latch.test/scan#1.${'A'.repeat(22)}`, 'invalid_field'],
    ['a query', `https://latch.test/pair?x=1#1.${'A'.repeat(22)}`, 'invalid_field'],
    ['another version', `https://latch.test/pair#2.${'A'.repeat(22)}`, 'unknown_version'],
    ['no version', `https://latch.test/pair#${'A'.repeat(22)}`, 'unknown_version'],
    ['no fragment', 'https://latch.test/pair', 'unknown_version'],
    ['a version and no dot', 'https://latch.test/pair#1A', 'unknown_version'],
    [
      'the old fields',
      `https://latch.test/pair#v=1&fleet=f&offer=o&secret=${'A'.repeat(43)}`,
      'unknown_version',
    ],
    ['a secret that is not base64url', `https://latch.test/pair#1.${'*'.repeat(22)}`, 'malformed_base64url'],
    ['a padded secret', `https://latch.test/pair#1.${'A'.repeat(22)}==`, 'malformed_base64url'],
    ['a short secret', 'https://latch.test/pair#1.AAAA', 'invalid_field'],
    ['a 32-byte secret', `https://latch.test/pair#1.${'A'.repeat(43)}`, 'invalid_field'],
    ['an empty secret', 'https://latch.test/pair#1.', 'invalid_field'],
  ])('refuses a link with %s, naming the fault', (_what, link, code) => {
    expectRefused(parsePairingLink(link), code as LatchErrorCode);
  });
});

/** A modulus of `bits` bits (its top bit set): the key need not work, only be read. */
function randomModulus(bits: number): Uint8Array {
  const modulus = crypto.getRandomValues(new Uint8Array(bits / 8));
  modulus[0]! |= 0x80;
  return modulus;
}

/** A registration, as an authenticator without attestation makes it, of a passkey with `coseKey`. */
async function registrationWithKey(completion: PairingCompletion, coseKey: Uint8Array) {
  const authenticator = await SoftwareAuthenticator.create();
  return authenticator.register({
    rpId: TEST_RP_ID,
    origin: TEST_ORIGIN,
    challenge: await registrationChallenge(completion.device),
    publicKey: coseKey,
  });
}
