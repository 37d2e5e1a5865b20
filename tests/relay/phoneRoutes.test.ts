import { describe, expect, it } from 'vitest';
import { signDeviceRequest } from '../../shared/device-auth/deviceRequest.ts';
import { utf8 } from '../../shared/encoding/bytes.ts';
import { MAX_BODY_BYTES } from '../../shared/schema/parse.ts';
import { expectRefusedReply } from '../support/expectRefused.ts';
import { createPhone } from '../../scripts/lib/softwarePhone.ts';
import { bearer, call, fleetForTheseTests, newFleet, phoneCall } from './harness.ts';

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

describe('phone routes', () => {
  // Each with the status its first signed call gets: past the signature check, whatever follows.
  const signedRoutes: [string, string, unknown, number][] = [
    ['GET', '/requests?state=pending', undefined, 200],
    ['GET', '/requests/r1', undefined, 404],
    ['GET', '/members', undefined, 200],
    ['GET', '/state', undefined, 200],
    ['PATCH', '/devices/d1', { v: 1, name: 'x' }, 404],
    ['DELETE', '/devices/d1', undefined, 404],
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
    expect(
      (await phoneCall(first.phone, 'DELETE', `/v1/fleets/${own.fleet}/devices/${second.phone.id}`)).status,
    ).toBe(200);
    expectRefusedReply(
      await phoneCall(second.phone, 'GET', `/v1/fleets/${own.fleet}/requests`),
      401,
      'unknown_credential',
    );
  });

  it('gives the state to a phone and to a host, and to nobody else', async () => {
    expect((await phoneCall(phone(), 'GET', path('/state'))).status).toBe(200);
    expect((await call('GET', path('/state'), { headers: bearer(fleet().hostToken) })).status).toBe(200);
    expectRefusedReply(await call('GET', path('/state')), 401, 'missing_field');
  });

  it('updates a phone’s push subscription', async () => {
    const subscription = {
      endpoint: 'https://push.example.net/new',
      keys: { p256dh: fleet().phones[0]!.device.ecdhKey, auth: 'A'.repeat(22) },
    };
    expect(await phoneCall(phone(), 'PUT', path('/push'), subscription)).toEqual({
      status: 200,
      body: { v: 1, updated: true },
    });
    expectRefusedReply(await call('PUT', path('/push'), { json: subscription }), 401, 'missing_field');
  });

  it('reads a body exactly at the limit, then judges its content', async () => {
    const body = utf8(`{"v":1,"pad":"${'a'.repeat(MAX_BODY_BYTES - 18)}"}`);
    expect(body.length).toBeLessThanOrEqual(MAX_BODY_BYTES);
    expectRefusedReply(await call('POST', path('/freeze'), { body }), 400, 'missing_field');
  });
});
