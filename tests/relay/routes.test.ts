import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { OfferIndex } from '../../relay/offers/OfferIndex.ts';
import { signDeviceRequest } from '../../shared/device-auth/deviceRequest.ts';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { utf8 } from '../../shared/encoding/bytes.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { MAX_BODY_BYTES } from '../../shared/schema/parse.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { bindingFor, signToken } from '../../scripts/lib/approvalFixture.ts';
import { expectRefused } from '../support/expectRefused.ts';
import { completePairing, createHost, createOffer, createPhone } from '../../scripts/lib/softwarePhone.ts';
import {
  bearer,
  call,
  fleetStub,
  newFleet,
  offerIndexStub,
  pairPhone,
  phoneCall,
  pointOfferAt,
  scanOffer,
  sendCompletion,
  submitRequest,
  type Reply,
  type TestFleet,
} from './harness.ts';

let test: TestFleet;
beforeAll(async () => {
  test = await newFleet();
});

const phone = () => test.phones[0]!.phone;
const path = (rest: string) => `/v1/fleets/${test.fleet}${rest}`;

function expectError(reply: Reply, status: number, code: string): void {
  expect({
    status: reply.status,
    code: (reply.body as { error?: { code?: string } } | null)?.error?.code,
  }).toEqual({ status, code });
}

/** The same signed request sent twice: the second must be refused. */
async function signedTwice(method: string, route: string) {
  const headers = await signDeviceRequest(
    { method, path: route, body: new Uint8Array(0) },
    { id: phone().id, privateKey: phone().deviceKeys.privateKey },
  );
  return [await call(method, route, { headers }), await call(method, route, { headers })] as const;
}

describe('every body', () => {
  const bodyRoutes = [
    '/pairing',
    '/pairing/o1/complete',
    '/pairing/o1/confirm',
    '/requests',
    '/requests/r1/decision',
    '/requests/r1/deny',
    '/freeze',
    '/resume',
  ];

  it.each(bodyRoutes)('refuses an oversized body on %s with 413', async (route) => {
    expectError(
      await call('POST', path(route), { body: `{"v":1,"x":"${'a'.repeat(MAX_BODY_BYTES)}"}` }),
      413,
      'body_too_large',
    );
  });

  it.each(bodyRoutes)('refuses malformed JSON on %s with 400', async (route) => {
    expectError(await call('POST', path(route), { body: '{"v":1,' }), 400, 'malformed_json');
  });

  it.each(bodyRoutes)('refuses an unknown version on %s with 400', async (route) => {
    expectError(await call('POST', path(route), { json: { v: 2 } }), 400, 'unknown_version');
  });

  it.each(bodyRoutes)('refuses a body that is not JSON on %s with 415', async (route) => {
    expectError(
      await call('POST', path(route), {
        body: 'v=1',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
      'unsupported_media_type',
    );
  });

  it('answers any garbage on any route with a 4xx, never a 5xx', async () => {
    const routes = [
      ...bodyRoutes.map((route) => ['POST', route] as const),
      ['GET', '/requests'] as const,
      ['GET', '/state'] as const,
      ['PATCH', '/devices/d1'] as const,
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.oneof(
          fc.jsonValue().map((value) => JSON.stringify(value)),
          fc.string(),
        ),
        async ([method, route], body) => {
          const reply = await call(
            method,
            path(route),
            method === 'GET'
              ? { headers: { 'latch-device': encodeURIComponent(body).slice(0, 200) || 'x' } }
              : { body },
          );
          expect(reply.status).toBeGreaterThanOrEqual(400);
          expect(reply.status).toBeLessThan(500);
          expect(reply.body).toMatchObject({ error: { code: expect.any(String) } });
        },
      ),
      { numRuns: 60 },
    );
  });

  it('refuses a fleet id that is not an id', async () => {
    expectError(await call('GET', '/v1/fleets/a%20b/state'), 400, 'invalid_id');
  });

  it('answers an unknown route with a JSON 404', async () => {
    expectError(await call('GET', '/v1/nothing-here'), 404, 'not_found');
  });
});

describe('pairing routes', () => {
  it('refuses an offer for a paired host without its token', async () => {
    const { offer } = await createOffer(test.host, { fleet: test.fleet });
    expectError(await call('POST', path('/pairing'), { json: offer }), 401, 'host_token_required');
  });

  it('refuses an offer with a wrong host token', async () => {
    const { offer } = await createOffer(test.host, { fleet: test.fleet });
    expectError(
      await call('POST', path('/pairing'), { json: offer, headers: bearer('A'.repeat(43)) }),
      401,
      'unauthorized',
    );
  });

  it('refuses an offer whose host id is not its key’s', async () => {
    const other = await createHost();
    const { offer } = await createOffer({ ...other, id: test.host.id }, { fleet: test.fleet });
    expectError(
      await call('POST', path('/pairing'), { json: offer, headers: bearer(test.hostToken) }),
      401,
      'wrong_signer',
    );
  });

  it('refuses an offer that already expired', async () => {
    const { offer } = await createOffer(test.host, {
      fleet: test.fleet,
      now: Date.now() - 3600_000,
      ttlMs: 60_000,
    });
    expectError(
      await call('POST', path('/pairing'), { json: offer, headers: bearer(test.hostToken) }),
      400,
      'invalid_field',
    );
  });

  it('hides an offer from whoever lacks its token', async () => {
    const { offer } = await createOffer(test.host, { fleet: test.fleet });
    await call('POST', path('/pairing'), { json: offer, headers: bearer(test.hostToken) });
    expectError(
      await call('GET', path(`/pairing/${offer.offerId}`), {
        headers: { 'latch-offer-token': 'A'.repeat(43) },
      }),
      404,
      'not_found',
    );
    expectError(await call('GET', path(`/pairing/${offer.offerId}`)), 404, 'not_found');
    expect(
      (
        await call('GET', path(`/pairing/${offer.offerId}`), {
          headers: { 'latch-offer-token': offer.offerToken },
        })
      ).status,
    ).toBe(200);
  });

  it('finds an offer by its id alone for whoever holds its token, with the fleet it belongs to', async () => {
    const { offer, secret } = await createOffer(test.host, { fleet: test.fleet });
    await call('POST', path('/pairing'), { json: offer, headers: bearer(test.hostToken) });
    const scanned = await scanOffer(secret);
    expect(scanned.reply.status).toBe(200);
    expect(scanned.offer).toEqual({ ok: true, value: offer });
    expect(scanned.reply.body.offer.fleet).toBe(test.fleet);
    const route = `/v1/pairing/${offer.offerId}`;
    expectError(await call('GET', route), 404, 'not_found');
    expectError(
      await call('GET', route, { headers: { 'latch-offer-token': 'A'.repeat(43) } }),
      404,
      'not_found',
    );
    const { secret: unknown } = await createOffer(test.host, { fleet: test.fleet });
    expectError((await scanOffer(unknown)).reply, 404, 'not_found');
    expectError(await call('GET', '/v1/pairing/a%20b'), 400, 'invalid_id');
  });

  it('keeps an offer id for the fleet that offered it first', async () => {
    const { offer, secret } = await createOffer(test.host, { fleet: test.fleet });
    await call('POST', path('/pairing'), { json: offer, headers: bearer(test.hostToken) });
    const stranger = await createHost();
    const other = `fleet-${crypto.randomUUID()}`;
    const { offer: theirs } = await createOffer(stranger, { fleet: other });
    const squatting = { ...theirs, offerId: offer.offerId };
    expectError(await call('POST', `/v1/fleets/${other}/pairing`, { json: squatting }), 409, 'offer_closed');
    expect((await scanOffer(secret)).offer).toEqual({ ok: true, value: offer });
  });

  it('forgets which fleet holds an offer an hour after the offer expires', async () => {
    const { offer, secret } = await createOffer(test.host, { fleet: test.fleet });
    await call('POST', path('/pairing'), { json: offer, headers: bearer(test.hostToken) });
    const index = offerIndexStub(offer.offerId);
    expect(await runInDurableObject(index, (_instance: OfferIndex, state) => state.storage.getAlarm())).toBe(
      offer.exp + 3600_000,
    );
    expect(await runDurableObjectAlarm(index)).toBe(true);
    expectError((await scanOffer(secret)).reply, 404, 'not_found');
  });

  describe('when the offer index lies', () => {
    it('sends the phone to a fleet that has no such offer: not found', async () => {
      const { offer, secret } = await createOffer(test.host, { fleet: test.fleet });
      await call('POST', path('/pairing'), { json: offer, headers: bearer(test.hostToken) });
      const elsewhere = await newFleet({ push: false });
      await pointOfferAt(offer.offerId, elsewhere.fleet);
      expectError((await scanOffer(secret)).reply, 404, 'not_found');
    });

    it('sends the phone to another fleet’s offer filed under this code’s id and token: the phone refuses it', async () => {
      const { offer, secret } = await createOffer(test.host, { fleet: test.fleet });
      await call('POST', path('/pairing'), { json: offer, headers: bearer(test.hostToken) });
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

  it('refuses a completion that is not signed by the device key it brings', async () => {
    const { offer, secret } = await createOffer(test.host, { fleet: test.fleet });
    await call('POST', path('/pairing'), { json: offer, headers: bearer(test.hostToken) });
    const newcomer = await createPhone();
    const completion = await completePairing(newcomer, offer, secret);
    expectError(
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
      test.fleet,
      offer.offerId,
      offer.offerToken,
      completion,
    );
    expectError(reply, 401, 'bad_signature');
  });

  it('refuses a second answer to the same offer', async () => {
    const { offer, secret } = await createOffer(test.host, { fleet: test.fleet });
    await call('POST', path('/pairing'), { json: offer, headers: bearer(test.hostToken) });
    const first = await createPhone();
    expect(
      (
        await sendCompletion(
          first,
          test.fleet,
          offer.offerId,
          offer.offerToken,
          await completePairing(first, offer, secret),
        )
      ).status,
    ).toBe(202);
    const second = await createPhone();
    expectError(
      await sendCompletion(
        second,
        test.fleet,
        offer.offerId,
        offer.offerToken,
        await completePairing(second, offer, secret),
      ),
      409,
      'offer_closed',
    );
  });

  it('refuses a passkey registered on another origin', async () => {
    const { offer, secret } = await createOffer(test.host, { fleet: test.fleet });
    await call('POST', path('/pairing'), { json: offer, headers: bearer(test.hostToken) });
    const newcomer = await createPhone();
    const completion = await completePairing(newcomer, offer, secret, { origin: 'https://evil.test' });
    expectError(
      await sendCompletion(newcomer, test.fleet, offer.offerId, offer.offerToken, completion),
      403,
      'registration_failed',
    );
  });

  it('lets a new host into a fleet that has phones only through a phone already in it', async () => {
    const stranger = await createHost();
    const { offer, secret } = await createOffer(stranger, { fleet: test.fleet });
    expect((await call('POST', path('/pairing'), { json: offer })).status).toBe(201);
    const outsider = await createPhone();
    expectError(
      await sendCompletion(
        outsider,
        test.fleet,
        offer.offerId,
        offer.offerToken,
        await completePairing(outsider, offer, secret),
      ),
      403,
      'forbidden',
    );
  });

  it('adds a second host to the fleet when a phone of the fleet scans its code', async () => {
    const secondHost = await createHost();
    const { hostToken } = await pairPhone(test.fleet, secondHost, { phone: phone(), push: false });
    expect(hostToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('refuses a confirmation signed by another host key', async () => {
    const { offer, secret } = await createOffer(test.host, { fleet: test.fleet });
    await call('POST', path('/pairing'), { json: offer, headers: bearer(test.hostToken) });
    const newcomer = await createPhone();
    await sendCompletion(
      newcomer,
      test.fleet,
      offer.offerId,
      offer.offerToken,
      await completePairing(newcomer, offer, secret),
    );
    const intruder = await createHost();
    const forged = await signEnvelope(
      'pair-confirm',
      { fleet: test.fleet, offerId: offer.offerId, device: newcomer.id },
      { role: 'host', id: test.host.id },
      intruder.hostKeys.privateKey,
    );
    expectError(
      await call('POST', path(`/pairing/${offer.offerId}/confirm`), {
        json: { v: PROTOCOL_VERSION, envelope: forged, quorum: 1 },
      }),
      403,
      'bad_signature',
    );
    const stale = await signEnvelope(
      'pair-confirm',
      { fleet: test.fleet, offerId: offer.offerId, device: newcomer.id },
      { role: 'host', id: test.host.id },
      test.host.hostKeys.privateKey,
      Date.now() - 120_000,
    );
    expectError(
      await call('POST', path(`/pairing/${offer.offerId}/confirm`), {
        json: { v: PROTOCOL_VERSION, envelope: stale, quorum: 1 },
      }),
      401,
      'stale_timestamp',
    );
  });
});

describe('host routes', () => {
  it('refuses a request without a host token, or with a wrong one', async () => {
    const { request } = await submitRequest(test);
    expectError(
      await call('POST', path('/requests'), { json: { ...request, requestId: 'r-no-token' } }),
      401,
      'unauthorized',
    );
    expectError(
      await call('POST', path('/requests'), {
        json: { ...request, requestId: 'r-bad-token' },
        headers: bearer('x'.repeat(43)),
      }),
      401,
      'unauthorized',
    );
  });

  it('refuses a request for another host, another fleet, or already expired', async () => {
    const { request } = await submitRequest(test);
    expectError(
      await call('POST', path('/requests'), {
        json: { ...request, requestId: 'r-other-host', host: 'other-host' },
        headers: bearer(test.hostToken),
      }),
      403,
      'forbidden',
    );
    expectError(
      await call('POST', path('/requests'), {
        json: { ...request, requestId: 'r-other-fleet', fleet: 'other-fleet' },
        headers: bearer(test.hostToken),
      }),
      400,
      'context_mismatch',
    );
    const past = Date.now() - 1000;
    expectError(
      await call('POST', path('/requests'), {
        json: { ...request, requestId: 'r-expired', exp: past },
        headers: bearer(test.hostToken),
      }),
      410,
      'expired',
    );
  });

  it('rotates the host token through a next token', async () => {
    const own = await newFleet({ push: false });
    const rotated = await call<{ hostToken: string }>('POST', `/v1/fleets/${own.fleet}/hosts/token`, {
      headers: bearer(own.hostToken),
    });
    expect(rotated.status).toBe(200);
    // Until the next token is used, the old one still works.
    expect(
      (await call('GET', `/v1/fleets/${own.fleet}/state`, { headers: bearer(own.hostToken) })).status,
    ).toBe(200);
    expect(
      (await call('GET', `/v1/fleets/${own.fleet}/state`, { headers: bearer(rotated.body.hostToken) }))
        .status,
    ).toBe(200);
    // Once it is, the old one is dead.
    expectError(
      await call('GET', `/v1/fleets/${own.fleet}/state`, { headers: bearer(own.hostToken) }),
      401,
      'unauthorized',
    );
    expectError(await call('POST', `/v1/fleets/${own.fleet}/hosts/token`), 401, 'unauthorized');
  });

  it('refuses a WebSocket without an upgrade or with a wrong token', async () => {
    expectError(
      await call('GET', path('/connect'), { headers: bearer(test.hostToken) }),
      400,
      'invalid_field',
    );
    expectError(
      await call('GET', path('/connect'), { headers: { upgrade: 'websocket', ...bearer('y'.repeat(43)) } }),
      401,
      'unauthorized',
    );
  });
});

describe('phone routes', () => {
  const signedRoutes: [string, string, unknown?][] = [
    ['GET', '/requests?state=pending'],
    ['GET', '/requests/r1'],
    ['GET', '/members'],
    ['GET', '/state'],
    ['PATCH', '/devices/d1', { v: 1, name: 'x' }],
    ['DELETE', '/devices/d1'],
  ];

  it.each(signedRoutes)('refuses an unsigned %s %s', async (method, route, json) => {
    expectError(await call(method, path(route), json === undefined ? {} : { json }), 401, 'missing_field');
  });

  it.each(signedRoutes)('refuses a replayed %s %s', async (method, route) => {
    if (method !== 'GET') return; // bodies are covered by the GETs: the nonce check is shared
    const [first, second] = await signedTwice(method, path(route));
    expect(first.status).not.toBe(401);
    expectError(second, 401, 'replayed_nonce');
  });

  it('refuses a timestamp more than 60 s off', async () => {
    expectError(
      await phoneCall(phone(), 'GET', path('/requests'), undefined, Date.now() - 61_000),
      401,
      'stale_timestamp',
    );
    expectError(
      await phoneCall(phone(), 'GET', path('/requests'), undefined, Date.now() + 61_000),
      401,
      'stale_timestamp',
    );
  });

  it('refuses a device the fleet does not know', async () => {
    expectError(await phoneCall(await createPhone(), 'GET', path('/requests')), 401, 'unknown_credential');
  });

  it('refuses a signature over another path', async () => {
    const headers = await signDeviceRequest(
      { method: 'GET', path: path('/members'), body: new Uint8Array(0) },
      { id: phone().id, privateKey: phone().deviceKeys.privateKey },
    );
    expectError(await call('GET', path('/requests'), { headers }), 401, 'bad_signature');
  });

  it('refuses an unknown list', async () => {
    expectError(await phoneCall(phone(), 'GET', path('/requests?state=all')), 400, 'invalid_field');
  });

  it('answers an unknown request with 404', async () => {
    expectError(await phoneCall(phone(), 'GET', path('/requests/nope')), 404, 'not_found');
  });

  it('refuses a decision without the device signature', async () => {
    const { details } = await submitRequest(test);
    const token = await signToken(phone(), await bindingFor(details));
    expectError(
      await call('POST', path(`/requests/${details.requestId}/decision`), { json: token }),
      401,
      'missing_field',
    );
  });

  it('refuses a token for another request on this request’s route', async () => {
    const { details } = await submitRequest(test);
    const other = await submitRequest(test);
    const token = await signToken(phone(), await bindingFor(other.details));
    expectError(
      await phoneCall(phone(), 'POST', path(`/requests/${details.requestId}/decision`), token),
      400,
      'context_mismatch',
    );
  });

  it('refuses a token whose challenge is not this request’s', async () => {
    const { details } = await submitRequest(test);
    const token = await signToken(phone(), { ...(await bindingFor(details)), nonce: 'A'.repeat(22) });
    expectError(
      await phoneCall(phone(), 'POST', path(`/requests/${details.requestId}/decision`), token),
      403,
      'challenge_mismatch',
    );
  });

  it('refuses a token without user verification', async () => {
    const { details } = await submitRequest(test);
    const token = await signToken(phone(), await bindingFor(details), { userVerified: false });
    expectError(
      await phoneCall(phone(), 'POST', path(`/requests/${details.requestId}/decision`), token),
      403,
      'user_not_verified',
    );
  });

  it('refuses a deny token on the decision route', async () => {
    const { details } = await submitRequest(test);
    const token = await signToken(phone(), await bindingFor(details, 'deny'));
    expectError(
      await phoneCall(phone(), 'POST', path(`/requests/${details.requestId}/decision`), token),
      400,
      'invalid_field',
    );
  });

  it('answers a second decision with 409 already_decided', async () => {
    const { details } = await submitRequest(test);
    const binding = await bindingFor(details);
    expect(
      (
        await phoneCall(
          phone(),
          'POST',
          path(`/requests/${details.requestId}/decision`),
          await signToken(phone(), binding),
        )
      ).status,
    ).toBe(200);
    expectError(
      await phoneCall(
        phone(),
        'POST',
        path(`/requests/${details.requestId}/decision`),
        await signToken(phone(), binding),
      ),
      409,
      'already_decided',
    );
    const deny = await signEnvelope(
      'deny',
      { fleet: test.fleet, host: test.host.id, requestId: details.requestId },
      { role: 'device', id: phone().id },
      phone().deviceKeys.privateKey,
    );
    expectError(
      await call('POST', path(`/requests/${details.requestId}/deny`), { json: deny }),
      409,
      'already_decided',
    );
  });

  it('refuses a deny with a bad signature, a stale time, or a replayed nonce', async () => {
    const { details } = await submitRequest(test);
    const body = { fleet: test.fleet, host: test.host.id, requestId: details.requestId };
    const forged = await signEnvelope(
      'deny',
      body,
      { role: 'device', id: phone().id },
      (await createPhone()).deviceKeys.privateKey,
    );
    expectError(
      await call('POST', path(`/requests/${details.requestId}/deny`), { json: forged }),
      403,
      'bad_signature',
    );
    const stale = await signEnvelope(
      'deny',
      body,
      { role: 'device', id: phone().id },
      phone().deviceKeys.privateKey,
      Date.now() - 61_000,
    );
    expectError(
      await call('POST', path(`/requests/${details.requestId}/deny`), { json: stale }),
      401,
      'stale_timestamp',
    );
    const fresh = await signEnvelope(
      'deny',
      body,
      { role: 'device', id: phone().id },
      phone().deviceKeys.privateKey,
    );
    const other = await submitRequest(test);
    const forOther = await signEnvelope(
      'deny',
      { ...body, requestId: other.details.requestId },
      { role: 'device', id: phone().id },
      phone().deviceKeys.privateKey,
    );
    expectError(
      await call('POST', path(`/requests/${details.requestId}/deny`), { json: forOther }),
      400,
      'context_mismatch',
    );
    expect((await call('POST', path(`/requests/${details.requestId}/deny`), { json: fresh })).status).toBe(
      200,
    );
  });

  it('refuses a freeze replayed with the same nonce', async () => {
    const own = await newFleet({ push: false });
    const ownPhone = own.phones[0]!.phone;
    const envelope = await signEnvelope(
      'freeze',
      { fleet: own.fleet, reason: 'test' },
      { role: 'device', id: ownPhone.id },
      ownPhone.deviceKeys.privateKey,
    );
    expect((await call('POST', `/v1/fleets/${own.fleet}/freeze`, { json: envelope })).status).toBe(200);
    expectError(
      await call('POST', `/v1/fleets/${own.fleet}/freeze`, { json: envelope }),
      401,
      'replayed_nonce',
    );
  });

  it('refuses a freeze from a key outside the fleet', async () => {
    const stranger = await createPhone();
    const envelope = await signEnvelope(
      'freeze',
      { fleet: test.fleet, reason: 'prank' },
      { role: 'device', id: stranger.id },
      stranger.deviceKeys.privateKey,
    );
    expectError(await call('POST', path('/freeze'), { json: envelope }), 401, 'unknown_credential');
  });

  it('refuses a vote when nothing is frozen', async () => {
    const own = await newFleet({ push: false });
    const ownPhone = own.phones[0]!.phone;
    const assertion = await ownPhone.authenticator.assert({
      rpId: 'latch.test',
      origin: 'https://latch.test',
      challenge: new Uint8Array(32),
    });
    expectError(
      await call('POST', `/v1/fleets/${own.fleet}/resume`, {
        json: {
          v: 1,
          fleet: own.fleet,
          freeze: toBase64url(new Uint8Array(32)),
          device: ownPhone.id,
          assertion,
        },
      }),
      409,
      'not_frozen',
    );
  });

  it('renames and revokes devices for a signed phone only, and a revoked phone is locked out', async () => {
    const own = await newFleet({ phones: 2, push: false });
    const [first, second] = own.phones as [(typeof own.phones)[0], (typeof own.phones)[0]];
    const renamed = await phoneCall<{ devices: { id: string; name: string }[] }>(
      first.phone,
      'PATCH',
      `/v1/fleets/${own.fleet}/devices/${second.phone.id}`,
      { v: 1, name: 'Old phone' },
    );
    expect(renamed.body.devices.find((device) => device.id === second.phone.id)?.name).toBe('Old phone');
    expectError(
      await phoneCall(first.phone, 'PATCH', `/v1/fleets/${own.fleet}/devices/${second.phone.id}`, {
        v: 1,
        name: 'bad\u202ename',
      }),
      400,
      'unclean_text',
    );
    expect(
      (await phoneCall(first.phone, 'DELETE', `/v1/fleets/${own.fleet}/devices/${second.phone.id}`)).status,
    ).toBe(200);
    expectError(
      await phoneCall(second.phone, 'GET', `/v1/fleets/${own.fleet}/requests`),
      401,
      'unknown_credential',
    );
  });

  it('gives the state to a phone and to a host, and to nobody else', async () => {
    expect((await phoneCall(phone(), 'GET', path('/state'))).status).toBe(200);
    expect((await call('GET', path('/state'), { headers: bearer(test.hostToken) })).status).toBe(200);
    expectError(await call('GET', path('/state')), 401, 'missing_field');
  });

  it('updates a phone’s push subscription', async () => {
    const subscription = {
      endpoint: 'https://push.example.net/new',
      keys: { p256dh: test.phones[0]!.device.ecdhKey, auth: 'A'.repeat(22) },
    };
    expect(await phoneCall(phone(), 'PUT', path('/push'), subscription)).toEqual({
      status: 200,
      body: { v: 1, updated: true },
    });
    expectError(await call('PUT', path('/push'), { json: subscription }), 401, 'missing_field');
  });

  it('reads a body exactly at the limit, then judges its content', async () => {
    const body = utf8(`{"v":1,"pad":"${'a'.repeat(MAX_BODY_BYTES - 18)}"}`);
    expect(body.length).toBeLessThanOrEqual(MAX_BODY_BYTES);
    expectError(await call('POST', path('/freeze'), { body }), 400, 'missing_field');
  });
});
