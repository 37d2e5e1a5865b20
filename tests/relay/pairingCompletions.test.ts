import { describe, expect, it } from 'vitest';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { randomBytes } from '../../shared/encoding/bytes.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import type { PairingOffer } from '../../shared/messages/pairing.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { expectRefusedReply } from '../support/expectRefused.ts';
import {
  completePairing,
  createHost,
  createOffer,
  createPhone,
  type TestPhone,
} from '../../scripts/lib/softwarePhone.ts';
import type { OfferStatus } from '../../shared/messages/relayViews.ts';
import {
  call,
  fileOffer,
  fleetForTheseTests,
  newFleet,
  pairPhone,
  revokeAs,
  sendCompletion,
} from './harness.ts';

const { fleet, phone, path } = fleetForTheseTests();

/** `newcomer` answers the offer as the PWA does: a passkey made for it, signed with its device key. */
async function answerOffer(newcomer: TestPhone, offer: PairingOffer, secret: Uint8Array<ArrayBuffer>) {
  const completion = await completePairing(newcomer, offer, secret);
  return sendCompletion(newcomer, fleet().fleet, offer.offerId, offer.offerToken, completion);
}

describe('pairing routes', () => {
  it('refuses a completion that is not signed by the device key it brings', async () => {
    const { offer, secret } = await fileOffer(fleet());
    const newcomer = await createPhone();
    const completion = await completePairing(newcomer, offer, secret);
    expectRefusedReply(
      await call('POST', path(`/pairing/${offer.offerId}/complete`), {
        json: completion,
        headers: { 'latch-offer-token': offer.offerToken },
      }),
      401,
      'missing_field',
    );
    const impostor = await createPhone();
    const reply = await sendCompletion(
      { ...newcomer, deviceKeys: impostor.deviceKeys },
      fleet().fleet,
      offer.offerId,
      offer.offerToken,
      completion,
    );
    expectRefusedReply(reply, 401, 'bad_signature');
  });

  it('refuses a second answer to the same offer', async () => {
    const { offer, secret } = await fileOffer(fleet());
    const first = await createPhone();
    expect((await answerOffer(first, offer, secret)).status).toBe(202);
    const second = await createPhone();
    expectRefusedReply(await answerOffer(second, offer, secret), 409, 'offer_closed');
  });

  it('refuses a passkey registered on another origin', async () => {
    const { offer, secret } = await fileOffer(fleet());
    const newcomer = await createPhone();
    const completion = await completePairing(newcomer, offer, secret, { origin: 'https://evil.test' });
    expectRefusedReply(
      await sendCompletion(newcomer, fleet().fleet, offer.offerId, offer.offerToken, completion),
      403,
      'registration_failed',
    );
  });

  it(`admits at most ${LIMITS.devicesPerFleet} phones to a fleet, the most a request is sealed for`, async () => {
    const own = await newFleet({ push: false });
    for (let i = 1; i < LIMITS.devicesPerFleet; i++)
      await pairPhone(own.fleet, own.host, { hostToken: own.hostToken, push: false });
    await expect(pairPhone(own.fleet, own.host, { hostToken: own.hostToken, push: false })).rejects.toThrow(
      /confirmation refused: .*"code":"too_many_devices"/,
    );
  });

  it('refuses a completion whose push subscription is no browser’s push service', async () => {
    const { offer, secret } = await fileOffer(fleet());
    const newcomer = await createPhone();
    const push = {
      endpoint: 'https://10.0.0.1/admin',
      keys: { p256dh: newcomer.ecdhKey, auth: 'A'.repeat(22) },
    };
    const completion = await completePairing(newcomer, offer, secret, { push });
    expectRefusedReply(
      await sendCompletion(newcomer, fleet().fleet, offer.offerId, offer.offerToken, completion),
      400,
      'push_service_refused',
    );
  });

  it('lets a new host into a fleet that has phones only through a phone already in it', async () => {
    const stranger = await createHost();
    const { offer, secret } = await createOffer(stranger, { fleet: fleet().fleet });
    expect((await call('POST', path('/pairing'), { json: offer })).status).toBe(201);
    const outsider = await createPhone();
    expectRefusedReply(await answerOffer(outsider, offer, secret), 403, 'forbidden');
  });

  it('refuses a stranger’s offer filed while the fleet was empty, once the fleet has an owner', async () => {
    const empty = `fleet-${toBase64url(randomBytes(9))}`;
    const stranger = await createHost();
    const { offer, secret } = await createOffer(stranger, { fleet: empty, ttlMs: 59 * 60_000 });
    expect((await call('POST', `/v1/fleets/${empty}/pairing`, { json: offer })).status).toBe(201);
    await pairPhone(empty, await createHost(), { push: false });

    const strangersPhone = await createPhone();
    const completion = await completePairing(strangersPhone, offer, secret);
    expectRefusedReply(
      await sendCompletion(strangersPhone, empty, offer.offerId, offer.offerToken, completion),
      403,
      'forbidden',
    );
  });

  it('refuses a stranger’s host and phone into a fleet whose phones were all revoked: its hosts are still its members', async () => {
    const own = await newFleet({ push: false });
    const only = own.phones[0]!.phone;
    expect((await revokeAs(own, only, only.id)).status).toBe(200);
    const stranger = await createHost();
    const { offer, secret } = await createOffer(stranger, { fleet: own.fleet });
    expect((await call('POST', `/v1/fleets/${own.fleet}/pairing`, { json: offer })).status).toBe(201);
    const strangersPhone = await createPhone();
    const completion = await completePairing(strangersPhone, offer, secret);
    expectRefusedReply(
      await sendCompletion(strangersPhone, own.fleet, offer.offerId, offer.offerToken, completion),
      403,
      'forbidden',
    );
  });

  it('refuses to confirm a stranger’s pairing answered while the fleet was empty, once it has an owner', async () => {
    const empty = `fleet-${toBase64url(randomBytes(9))}`;
    const stranger = await createHost();
    const { offer, secret } = await createOffer(stranger, { fleet: empty });
    expect((await call('POST', `/v1/fleets/${empty}/pairing`, { json: offer })).status).toBe(201);
    const strangersPhone = await createPhone();
    const completion = await completePairing(strangersPhone, offer, secret);
    expect(
      (await sendCompletion(strangersPhone, empty, offer.offerId, offer.offerToken, completion)).status,
    ).toBe(202);
    await pairPhone(empty, await createHost(), { push: false });

    const envelope = await signEnvelope(
      'pair-confirm',
      { fleet: empty, offerId: offer.offerId, device: strangersPhone.id },
      { role: 'host', id: stranger.id },
      stranger.hostKeys.privateKey,
    );
    const confirmed = await call('POST', `/v1/fleets/${empty}/pairing/${offer.offerId}/confirm`, {
      json: { v: PROTOCOL_VERSION, envelope, quorum: 16 },
    });
    expectRefusedReply(confirmed, 403, 'forbidden');
  });

  it('refuses an answer signed by another phone of the fleet than the one it pairs', async () => {
    const { offer, secret } = await fileOffer(fleet());
    const newcomer = await createPhone();
    const completion = await completePairing(newcomer, offer, secret);
    // Phone A signs the newcomer's answer with its own key, naming itself.
    const reply = await sendCompletion(phone(), fleet().fleet, offer.offerId, offer.offerToken, completion);
    expectRefusedReply(reply, 403, 'device_mismatch');
  });

  it('adds a second host to the fleet when a phone of the fleet scans its code', async () => {
    const secondHost = await createHost();
    const { hostToken } = await pairPhone(fleet().fleet, secondHost, { phone: phone(), push: false });
    expect(hostToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('refuses a new device that brings a passkey the fleet already has (another device’s)', async () => {
    const { offer, secret } = await fileOffer(fleet());
    const borrower = { ...(await createPhone()), authenticator: phone().authenticator };
    expectRefusedReply(await answerOffer(borrower, offer, secret), 403, 'registration_failed');
  });

  it('refuses to confirm a phone revoked after it answered the offer, and adds nothing', async () => {
    const own = await newFleet({ phones: 2, push: false });
    const [first, second] = own.phones.map((paired) => paired.phone) as [TestPhone, TestPhone];
    const newHost = await createHost();
    const { offer, secret } = await createOffer(newHost, { fleet: own.fleet });
    expect((await call('POST', `/v1/fleets/${own.fleet}/pairing`, { json: offer })).status).toBe(201);
    const completion = await completePairing(second, offer, secret);
    expect(
      (await sendCompletion(second, own.fleet, offer.offerId, offer.offerToken, completion)).status,
    ).toBe(202);
    expect((await revokeAs(own, first, second.id)).status).toBe(200);

    const envelope = await signEnvelope(
      'pair-confirm',
      { fleet: own.fleet, offerId: offer.offerId, device: second.id },
      { role: 'host', id: newHost.id },
      newHost.hostKeys.privateKey,
    );
    const confirm = () =>
      call('POST', `/v1/fleets/${own.fleet}/pairing/${offer.offerId}/confirm`, {
        json: { v: PROTOCOL_VERSION, envelope, quorum: 1 },
      });
    expectRefusedReply(await confirm(), 403, 'forbidden');
    // Nothing was half done: the offer is still open, and the new host holds no token.
    const status = await call<OfferStatus>('GET', `/v1/fleets/${own.fleet}/pairing/${offer.offerId}`, {
      headers: { 'latch-offer-token': offer.offerToken },
    });
    expect(status.body).toMatchObject({ confirmed: false });
  });

  it('refuses a confirmation signed by another host key', async () => {
    const { offer, secret } = await fileOffer(fleet());
    const newcomer = await createPhone();
    await answerOffer(newcomer, offer, secret);
    const intruder = await createHost();
    const forged = await signEnvelope(
      'pair-confirm',
      { fleet: fleet().fleet, offerId: offer.offerId, device: newcomer.id },
      { role: 'host', id: fleet().host.id },
      intruder.hostKeys.privateKey,
    );
    expectRefusedReply(
      await call('POST', path(`/pairing/${offer.offerId}/confirm`), {
        json: { v: PROTOCOL_VERSION, envelope: forged, quorum: 1 },
      }),
      403,
      'bad_signature',
    );
    const stale = await signEnvelope(
      'pair-confirm',
      { fleet: fleet().fleet, offerId: offer.offerId, device: newcomer.id },
      { role: 'host', id: fleet().host.id },
      fleet().host.hostKeys.privateKey,
      Date.now() - 120_000,
    );
    expectRefusedReply(
      await call('POST', path(`/pairing/${offer.offerId}/confirm`), {
        json: { v: PROTOCOL_VERSION, envelope: stale, quorum: 1 },
      }),
      401,
      'stale_timestamp',
    );
  });
});
