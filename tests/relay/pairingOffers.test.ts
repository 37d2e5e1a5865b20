import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { OfferIndex } from '../../relay/offers/OfferIndex.ts';
import type { OfferStatus } from '../../shared/messages/relayViews.ts';
import { expectRefused, expectRefusedReply } from '../support/expectRefused.ts';
import { createHost, createOffer } from '../../scripts/lib/softwarePhone.ts';
import {
  bearer,
  call,
  fileOffer,
  fleetForTheseTests,
  fleetStub,
  newFleet,
  offerIndexStub,
  pairPhone,
  pointOfferAt,
  scanOffer,
} from './harness.ts';

const { fleet, path } = fleetForTheseTests();

describe('pairing routes', () => {
  it('refuses an offer for a paired host without its token', async () => {
    const { offer } = await createOffer(fleet().host, { fleet: fleet().fleet });
    expectRefusedReply(await call('POST', path('/pairing'), { json: offer }), 401, 'host_token_required');
  });

  it('refuses an offer with a wrong host token', async () => {
    const { offer } = await createOffer(fleet().host, { fleet: fleet().fleet });
    expectRefusedReply(
      await call('POST', path('/pairing'), { json: offer, headers: bearer('A'.repeat(43)) }),
      401,
      'unauthorized',
    );
  });

  it('keeps 20 open offers from strangers who know the fleet id apart from a paired host’s, which they cannot use up', async () => {
    const own = await newFleet({ push: false });
    const offerFrom = async (host: Awaited<ReturnType<typeof createHost>>, token?: string) => {
      const { offer } = await createOffer(host, { fleet: own.fleet });
      return call('POST', `/v1/fleets/${own.fleet}/pairing`, {
        json: offer,
        ...(token ? { headers: bearer(token) } : {}),
      });
    };
    for (let stranger = 0; stranger < 20; stranger++)
      expect((await offerFrom(await createHost())).status).toBe(201);
    expectRefusedReply(await offerFrom(await createHost()), 429, 'too_many_offers');
    expect((await offerFrom(own.host, own.hostToken)).status).toBe(201);
  });

  it('refuses an offer whose host id is not its key’s', async () => {
    const other = await createHost();
    const { offer } = await createOffer({ ...other, id: fleet().host.id }, { fleet: fleet().fleet });
    expectRefusedReply(
      await call('POST', path('/pairing'), { json: offer, headers: bearer(fleet().hostToken) }),
      401,
      'wrong_signer',
    );
  });

  it('refuses an offer that already expired', async () => {
    const { offer } = await createOffer(fleet().host, {
      fleet: fleet().fleet,
      now: Date.now() - 3600_000,
      ttlMs: 60_000,
    });
    expectRefusedReply(
      await call('POST', path('/pairing'), { json: offer, headers: bearer(fleet().hostToken) }),
      400,
      'invalid_field',
    );
  });

  it('hides an offer from whoever lacks its token', async () => {
    const { offer } = await fileOffer(fleet());
    expectRefusedReply(
      await call('GET', path(`/pairing/${offer.offerId}`), {
        headers: { 'latch-offer-token': 'A'.repeat(43) },
      }),
      404,
      'not_found',
    );
    expectRefusedReply(await call('GET', path(`/pairing/${offer.offerId}`)), 404, 'not_found');
    expect(
      (
        await call('GET', path(`/pairing/${offer.offerId}`), {
          headers: { 'latch-offer-token': offer.offerToken },
        })
      ).status,
    ).toBe(200);
  });

  it('finds an offer by its id alone for whoever holds its token, with the fleet it belongs to', async () => {
    const { offer, secret } = await fileOffer(fleet());
    const scanned = await scanOffer(secret);
    expect(scanned.reply.status).toBe(200);
    expect(scanned.offer).toEqual({ ok: true, value: offer });
    expect(scanned.reply.body.offer.fleet).toBe(fleet().fleet);
    const route = `/v1/pairing/${offer.offerId}`;
    expectRefusedReply(await call('GET', route), 404, 'not_found');
    expectRefusedReply(
      await call('GET', route, { headers: { 'latch-offer-token': 'A'.repeat(43) } }),
      404,
      'not_found',
    );
    const { secret: unknown } = await createOffer(fleet().host, { fleet: fleet().fleet });
    expectRefusedReply((await scanOffer(unknown)).reply, 404, 'not_found');
    expectRefusedReply(await call('GET', '/v1/pairing/a%20b'), 400, 'invalid_id');
  });

  it('takes an offer back for whoever holds its token, after which the phone waiting on it finds none', async () => {
    const { offer } = await fileOffer(fleet());
    const withdraw = (token: string) =>
      call('POST', path(`/pairing/${offer.offerId}/withdraw`), { headers: { 'latch-offer-token': token } });
    expectRefusedReply(await withdraw('A'.repeat(43)), 404, 'not_found');
    const withdrawn = await withdraw(offer.offerToken);
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.body).toEqual({ v: 1, offerId: offer.offerId, state: 'withdrawn' });
    expectRefusedReply(
      await call('GET', path(`/pairing/${offer.offerId}`), {
        headers: { 'latch-offer-token': offer.offerToken },
      }),
      404,
      'not_found',
    );
    expectRefusedReply(await withdraw(offer.offerToken), 404, 'not_found');
  });

  it('refuses to take back an offer already confirmed: the pairing stands', async () => {
    const own = await newFleet({ push: false });
    const { offer } = await pairPhone(own.fleet, own.host, { hostToken: own.hostToken, push: false });
    expectRefusedReply(
      await call('POST', `/v1/fleets/${own.fleet}/pairing/${offer.offerId}/withdraw`, {
        headers: { 'latch-offer-token': offer.offerToken },
      }),
      409,
      'offer_closed',
    );
    expect(
      (
        await call<OfferStatus>('GET', `/v1/fleets/${own.fleet}/pairing/${offer.offerId}`, {
          headers: { 'latch-offer-token': offer.offerToken },
        })
      ).body.confirmed,
    ).toBe(true);
  });

  it('keeps no phone’s answer in a confirmed offer: the QR code’s link, seen later, learns no push secret (review sa)', async () => {
    const own = await newFleet({ push: true });
    const { offer } = await pairPhone(own.fleet, own.host, { hostToken: own.hostToken, push: true });
    const status = await call<OfferStatus>('GET', `/v1/fleets/${own.fleet}/pairing/${offer.offerId}`, {
      headers: { 'latch-offer-token': offer.offerToken },
    });
    expect(status.status).toBe(200);
    expect(status.body.confirmed).toBe(true);
    expect(status.body.completion).toBeUndefined();
    expect(JSON.stringify(status.body)).not.toContain('p256dh');
  });

  it('keeps an offer id for the fleet that offered it first', async () => {
    const { offer, secret } = await fileOffer(fleet());
    const stranger = await createHost();
    const other = `fleet-${crypto.randomUUID()}`;
    const { offer: theirs } = await createOffer(stranger, { fleet: other });
    const squatting = { ...theirs, offerId: offer.offerId };
    expectRefusedReply(
      await call('POST', `/v1/fleets/${other}/pairing`, { json: squatting }),
      409,
      'offer_closed',
    );
    expect((await scanOffer(secret)).offer).toEqual({ ok: true, value: offer });
  });

  it('forgets which fleet holds an offer an hour after the offer expires', async () => {
    const { offer, secret } = await fileOffer(fleet());
    const index = offerIndexStub(offer.offerId);
    expect(await runInDurableObject(index, (_instance: OfferIndex, state) => state.storage.getAlarm())).toBe(
      offer.exp + 3600_000,
    );
    expect(await runDurableObjectAlarm(index)).toBe(true);
    expectRefusedReply((await scanOffer(secret)).reply, 404, 'not_found');
  });

  describe('when the offer index lies', () => {
    it('sends the phone to a fleet that has no such offer: not found', async () => {
      const { offer, secret } = await fileOffer(fleet());
      const elsewhere = await newFleet({ push: false });
      await pointOfferAt(offer.offerId, elsewhere.fleet);
      expectRefusedReply((await scanOffer(secret)).reply, 404, 'not_found');
    });

    it('sends the phone to another fleet’s offer filed under this code’s id and token: the phone refuses it', async () => {
      const { offer, secret } = await fileOffer(fleet());
      // The relay saw this offer's id and token, so it can file an offer of its own making
      // under them, in a fleet of its choosing: all but the MAC, which needs the QR secret.
      const decoy = `fleet-${crypto.randomUUID()}`;
      const { offer: made } = await createOffer(await createHost(), { fleet: decoy });
      const forged = { ...made, offerId: offer.offerId, offerToken: offer.offerToken };
      expect((await fleetStub(decoy).createOffer(decoy, forged, undefined)).ok).toBe(true);
      await pointOfferAt(offer.offerId, decoy);

      const scanned = await scanOffer(secret);
      expect(scanned.reply.status).toBe(200);
      expect(scanned.reply.body.offer.fleet).toBe(decoy);
      expectRefused(scanned.offer!, 'bad_mac');
    });
  });
});
