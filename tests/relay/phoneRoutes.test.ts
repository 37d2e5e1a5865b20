import { describe, expect, it } from 'vitest';
import { signDeviceRequest } from '../../shared/device-auth/deviceRequest.ts';
import { fromBase64url, toBase64url } from '../../shared/encoding/base64url.ts';
import { fromUtf8, utf8 } from '../../shared/encoding/bytes.ts';
import { MAX_BODY_BYTES } from '../../shared/schema/parse.ts';
import { MOST_PENDING_PER_HOST } from '../../relay/fleet/requests.ts';
import { expectRefusedReply } from '../support/expectRefused.ts';
import { createHost, createPhone, TEST_RP_ID, type TestPhone } from '../../scripts/lib/softwarePhone.ts';
import type { Ceremony } from '../../scripts/lib/softwareAuthenticator.ts';
import { revokeChallenge } from '../../shared/device-auth/revokeChallenge.ts';
import { MOST_LISTED, type Members, type RequestList } from '../../shared/messages/relayViews.ts';
import {
  bearer,
  call,
  DaemonSocket,
  fleetForTheseTests,
  fleetStub,
  newFleet,
  ORIGIN,
  pairPhone,
  phoneCall,
  revokeAs,
  submitRequest,
  type TestFleet,
} from './harness.ts';

const { fleet, phone, path } = fleetForTheseTests();

/** The same signed request, body and all, sent twice: the second must be refused. */
async function signedTwice(method: string, route: string, json: unknown) {
  const body = json === undefined ? new Uint8Array(0) : utf8(JSON.stringify(json));
  const headers = await signDeviceRequest(
    { method, path: route, body },
    { id: phone().id, privateKey: phone().deviceKeys.privateKey },
  );
  const send = () => call(method, route, { ...(json === undefined ? {} : { body }), headers });
  return [await send(), await send()] as const;
}

/** An assertion of the right shape that verifies against nothing: routes that take one read it first. */
const WELL_FORMED_ASSERTION = {
  credentialId: 'AAAA',
  clientDataJSON: 'AAAA',
  authenticatorData: 'A'.repeat(50),
  signature: 'AAAA',
};

describe('phone routes', () => {
  // Each with the status its first signed call gets: past the signature check, whatever follows.
  const signedRoutes: [string, string, unknown, number][] = [
    ['GET', '/requests?state=pending', undefined, 200],
    ['GET', '/requests/r1', undefined, 404],
    ['GET', '/members', undefined, 200],
    ['GET', '/state', undefined, 200],
    ['PATCH', '/devices/d1', { v: 1, name: 'x' }, 404],
    ['DELETE', '/devices/d1', { v: 1, assertion: WELL_FORMED_ASSERTION }, 404],
  ];

  it.each(signedRoutes)('refuses an unsigned %s %s', async (method, route, json) => {
    expectRefusedReply(
      await call(method, path(route), json === undefined ? {} : { json }),
      401,
      'missing_field',
    );
  });

  it.each(signedRoutes)('refuses a replayed %s %s', async (method, route, json, firstStatus) => {
    const [first, second] = await signedTwice(method, path(route), json);
    expect(first.status).toBe(firstStatus);
    expectRefusedReply(second, 401, 'replayed_nonce');
  });

  it('refuses a timestamp more than 60 s off', async () => {
    expectRefusedReply(
      await phoneCall(phone(), 'GET', path('/requests'), undefined, Date.now() - 61_000),
      401,
      'stale_timestamp',
    );
    expectRefusedReply(
      await phoneCall(phone(), 'GET', path('/requests'), undefined, Date.now() + 61_000),
      401,
      'stale_timestamp',
    );
  });

  it('refuses a device the fleet does not know', async () => {
    expectRefusedReply(
      await phoneCall(await createPhone(), 'GET', path('/requests')),
      401,
      'unknown_credential',
    );
  });

  it('refuses a signature over another path', async () => {
    const headers = await signDeviceRequest(
      { method: 'GET', path: path('/members'), body: new Uint8Array(0) },
      { id: phone().id, privateKey: phone().deviceKeys.privateKey },
    );
    expectRefusedReply(await call('GET', path('/requests'), { headers }), 401, 'bad_signature');
  });

  it('refuses an unknown list', async () => {
    expectRefusedReply(await phoneCall(phone(), 'GET', path('/requests?state=all')), 400, 'invalid_field');
  });

  it('lists what waits oldest first: a new request goes below, never under a finger about to tap', async () => {
    const test = await newFleet({ push: false });
    const { phone: listing } = test.phones[0]!;
    const now = Date.now();
    // Two made in the same millisecond keep the order they came in.
    const made = [];
    for (const createdAt of [now, now, now + 1]) made.push(await submitRequest(test, { now: createdAt }));
    const listed = await phoneCall<RequestList>(
      listing,
      'GET',
      `/v1/fleets/${test.fleet}/requests?state=pending`,
    );
    expect(listed.body.requests.map((request) => request.requestId)).toEqual(
      made.map(({ details }) => details.requestId),
    );
  });

  it('shares a full pending list among the hosts: one host’s 1000 pending push out none of another’s newest', async () => {
    // Review rh: a compromised host B filled the list with its oldest 1000, and host A's new
    // request, on the same phone, was not listed.
    const a = await newFleet({ push: false });
    const { phone: listing } = a.phones[0]!;
    const hostB = await createHost();
    const pairedB = await pairPhone(a.fleet, hostB, { phone: listing, push: false });
    const b: TestFleet = {
      fleet: a.fleet,
      host: hostB,
      hostToken: pairedB.hostToken!,
      phones: [{ phone: listing, device: pairedB.paired.device }],
    };
    const older = await submitRequest(a);
    const { request } = await submitRequest(b);
    const flood = [request.requestId];
    for (let i = 1; i < MOST_PENDING_PER_HOST; i++) {
      const requestId = `flood-${i}`;
      const created = await fleetStub(a.fleet).createRequest(a.fleet, b.hostToken, {
        ...request,
        requestId,
        dedupKey: requestId,
      });
      expect(created.ok).toBe(true);
      flood.push(requestId);
    }
    const newer = await submitRequest(a);
    const listed = await phoneCall<RequestList>(
      listing,
      'GET',
      `/v1/fleets/${a.fleet}/requests?state=pending`,
    );
    // B's two oldest make room for A's two; still oldest first.
    expect(listed.body.requests.map(({ requestId }) => requestId)).toEqual([
      older.details.requestId,
      ...flood.slice(2),
      newer.details.requestId,
    ]);
    expect(listed.body.requests).toHaveLength(MOST_LISTED);
  }, 120_000);

  it('answers an unknown request with 404', async () => {
    expectRefusedReply(await phoneCall(phone(), 'GET', path('/requests/nope')), 404, 'not_found');
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
    expectRefusedReply(
      await phoneCall(first.phone, 'PATCH', `/v1/fleets/${own.fleet}/devices/${second.phone.id}`, {
        v: 1,
        name: 'bad\u202ename',
      }),
      400,
      'unclean_text',
    );
    // A blank name would leave the phone nameless in every list.
    for (const blank of ['', '   '])
      expectRefusedReply(
        await phoneCall(first.phone, 'PATCH', `/v1/fleets/${own.fleet}/devices/${second.phone.id}`, {
          v: 1,
          name: blank,
        }),
        400,
        'invalid_field',
      );
    expect((await revokeAs(own, first.phone, second.phone.id)).status).toBe(200);
    expectRefusedReply(
      await phoneCall(second.phone, 'GET', `/v1/fleets/${own.fleet}/requests`),
      401,
      'unknown_credential',
    );
  });

  it('revokes a phone only with Face ID: the asking phone’s passkey, over that phone, verified', async () => {
    const own = await newFleet({ phones: 3, push: false });
    const [first, second, third] = own.phones.map((paired) => paired.phone) as [
      TestPhone,
      TestPhone,
      TestPhone,
    ];
    const revoke = async (target: string, by: TestPhone, ceremony: Partial<Ceremony> = {}) => {
      const challenge = await revokeChallenge({ fleet: own.fleet, device: target });
      const assertion = await by.authenticator.assert({
        rpId: TEST_RP_ID,
        origin: ORIGIN,
        challenge,
        ...ceremony,
      });
      return phoneCall(first, 'DELETE', `/v1/fleets/${own.fleet}/devices/${target}`, { v: 1, assertion });
    };
    const route = `/v1/fleets/${own.fleet}/devices/${second.id}`;
    expectRefusedReply(await phoneCall(first, 'DELETE', route, { v: 1 }), 400, 'missing_field');
    expectRefusedReply(await revokeAs(own, first, second.id, third.id), 403, 'challenge_mismatch');
    expectRefusedReply(await revoke(second.id, third), 401, 'unknown_credential');
    expectRefusedReply(await revoke(second.id, first, { userVerified: false }), 403, 'user_not_verified');
    // The passkey's counter is stored as for approvals: an assertion that did not move it is refused.
    expect((await revoke(third.id, first, { counter: 100 })).status).toBe(200);
    expectRefusedReply(await revoke(second.id, first, { counter: 100 }), 403, 'counter_not_increased');
    const members = await phoneCall<Members>(first, 'GET', `/v1/fleets/${own.fleet}/members`);
    expect(members.body.devices.filter((device) => device.revoked).map((device) => device.id)).toEqual([
      third.id,
    ]);

    expect((await revoke(second.id, first, { counter: 101 })).body).toMatchObject({
      devices: expect.arrayContaining([expect.objectContaining({ id: second.id, revoked: true })]),
    });
  });

  it('sends every host the revoke with the revoking phone’s assertion, for the host to check itself', async () => {
    const own = await newFleet({ phones: 2, push: false });
    const [first, second] = own.phones.map((paired) => paired.phone) as [TestPhone, TestPhone];
    const host = await DaemonSocket.connect(own);
    try {
      expect((await revokeAs(own, first, second.id)).status).toBe(200);
      const { event } = await host.next('device_revoked');
      expect(event).toMatchObject({ type: 'device_revoked', device: second.id, by: first.id });
      // The very assertion the relay verified: what the host checks against its own record.
      const assertion = (event as Extract<typeof event, { type: 'device_revoked' }>).assertion;
      const clientData = JSON.parse(fromUtf8(fromBase64url(assertion.clientDataJSON))) as {
        challenge: string;
      };
      expect(clientData.challenge).toBe(
        toBase64url(await revokeChallenge({ fleet: own.fleet, device: second.id })),
      );
    } finally {
      host.close();
    }
  });

  it('gives the state to a phone and to a host, and to nobody else', async () => {
    expect((await phoneCall(phone(), 'GET', path('/state'))).status).toBe(200);
    expect((await call('GET', path('/state'), { headers: bearer(fleet().hostToken) })).status).toBe(200);
    expectRefusedReply(await call('GET', path('/state')), 401, 'missing_field');
  });

  const subscriptionTo = (endpoint: string) => ({
    endpoint,
    keys: { p256dh: fleet().phones[0]!.device.ecdhKey, auth: 'A'.repeat(22) },
  });

  it.each([
    'https://fcm.googleapis.com/fcm/send/dQw4w9WgXcQ:APA91b',
    'https://updates.push.services.mozilla.com/wpush/v2/gAAAAA',
    'https://web.push.apple.com/QGuQyavXutnMH',
    'https://wns2-par02p.notify.windows.com/w/?token=BQYAAA',
  ])('updates a phone’s push subscription to a browser’s push service: %s', async (endpoint) => {
    const subscription = subscriptionTo(endpoint);
    expect(await phoneCall(phone(), 'PUT', path('/push'), subscription)).toEqual({
      status: 200,
      body: { v: 1, updated: true },
    });
    expectRefusedReply(await call('PUT', path('/push'), { json: subscription }), 401, 'missing_field');
  });

  it.each([
    'https://push.example.net/new',
    'https://10.0.0.1/admin',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::1]/x',
    'https://fcm.googleapis.com.evil.example/x',
    'https://evilfcm.googleapis.com/x',
    'https://fcm.googleapis.com:8443/fcm/send/x',
    'http://localhost:9229/json',
  ])(
    'refuses a push endpoint that is no browser’s push service: the relay would POST there: %s',
    async (endpoint) => {
      expectRefusedReply(
        await phoneCall(phone(), 'PUT', path('/push'), subscriptionTo(endpoint)),
        400,
        'push_service_refused',
      );
    },
  );

  it('reads a body exactly at the limit, then judges its content', async () => {
    const body = utf8(`{"v":1,"pad":"${'a'.repeat(MAX_BODY_BYTES - 18)}"}`);
    expect(body.length).toBeLessThanOrEqual(MAX_BODY_BYTES);
    expectRefusedReply(await call('POST', path('/freeze'), { body }), 400, 'missing_field');
  });
});
