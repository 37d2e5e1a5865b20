import { describe, expect, it } from 'vitest';
import { expectRefusedReply } from '../support/expectRefused.ts';
import { createHost } from '../../scripts/lib/softwarePhone.ts';
import {
  bearer,
  call,
  DaemonSocket,
  fleetForTheseTests,
  newFleet,
  pairPhone,
  phoneCall,
  submitRequest,
} from './harness.ts';

const { fleet, path } = fleetForTheseTests();

describe('host routes', () => {
  it('refuses a request without a host token, or with a wrong one', async () => {
    const { request } = await submitRequest(fleet());
    expectRefusedReply(
      await call('POST', path('/requests'), { json: { ...request, requestId: 'r-no-token' } }),
      401,
      'unauthorized',
    );
    expectRefusedReply(
      await call('POST', path('/requests'), {
        json: { ...request, requestId: 'r-bad-token' },
        headers: bearer('x'.repeat(43)),
      }),
      401,
      'unauthorized',
    );
  });

  it('refuses a request for another host, another fleet, or already expired', async () => {
    const { request } = await submitRequest(fleet());
    expectRefusedReply(
      await call('POST', path('/requests'), {
        json: { ...request, requestId: 'r-other-host', host: 'other-host' },
        headers: bearer(fleet().hostToken),
      }),
      403,
      'forbidden',
    );
    expectRefusedReply(
      await call('POST', path('/requests'), {
        json: { ...request, requestId: 'r-other-fleet', fleet: 'other-fleet' },
        headers: bearer(fleet().hostToken),
      }),
      400,
      'context_mismatch',
    );
    const past = Date.now() - 1000;
    expectRefusedReply(
      await call('POST', path('/requests'), {
        json: { ...request, requestId: 'r-expired', exp: past },
        headers: bearer(fleet().hostToken),
      }),
      410,
      'expired',
    );
  });

  it('refuses a request that seals two boxes for one device, and stores nothing of it', async () => {
    const { request } = await submitRequest(fleet());
    const twice = { ...request, requestId: 'r-two-boxes', dedupKey: 'two-boxes' };
    twice.sealed = [request.sealed[0]!, request.sealed[0]!];
    const send = () => call('POST', path('/requests'), { json: twice, headers: bearer(fleet().hostToken) });
    expectRefusedReply(await send(), 400, 'invalid_field');
    // Not half stored: the same request again is refused again, not taken as already there.
    expectRefusedReply(await send(), 400, 'invalid_field');
  });

  it('answers the same request sent again as before, and refuses another one under its id', async () => {
    const test = await newFleet({ phones: 2, push: false });
    const { request, reply } = await submitRequest(test);
    expect(reply).toMatchObject({ status: 201, body: { requestId: request.requestId, joined: false } });
    const send = (json: unknown, hostToken = test.hostToken) =>
      call('POST', `/v1/fleets/${test.fleet}/requests`, { json, headers: bearer(hostToken) });
    // Answered as the first time: the daemon retrying cannot tell the two apart.
    expect(await send(request)).toMatchObject({
      status: 201,
      body: { requestId: request.requestId, joined: false },
    });
    const [first, second] = request.sealed as [(typeof request.sealed)[0], (typeof request.sealed)[0]];
    const changed = [
      { ...request, requestHash: 'A'.repeat(43) },
      { ...request, nonce: 'A'.repeat(22) },
      { ...request, exp: request.exp - 1000 },
      { ...request, dedupKey: 'another-key' },
      { ...request, conversation: 'session-2' },
      { ...request, sealed: [first, { ...second, box: first.box }] },
      { ...request, sealed: [first] },
    ];
    for (const json of changed) expectRefusedReply(await send(json), 409, 'request_id_taken');
    // Another host of the fleet cannot take it either.
    const otherHost = await createHost();
    const { hostToken } = await pairPhone(test.fleet, otherHost, {
      phone: test.phones[0]!.phone,
      push: false,
    });
    expectRefusedReply(await send({ ...request, host: otherHost.id }, hostToken!), 409, 'request_id_taken');
  });

  it('refuses a request none of whose boxes is for a phone paired with the host, and drops boxes for others', async () => {
    const test = await newFleet({ phones: 2, push: false });
    const stranger = await newFleet({ push: false });
    const { request } = await submitRequest(test);
    const send = (json: unknown) =>
      call('POST', `/v1/fleets/${test.fleet}/requests`, { json, headers: bearer(test.hostToken) });
    const strangersBox = { device: stranger.phones[0]!.phone.id, box: request.sealed[0]!.box };
    expectRefusedReply(
      await send({ ...request, requestId: 'r-for-nobody', dedupKey: 'nobody', sealed: [strangersBox] }),
      409,
      'no_paired_phone',
    );
    expectRefusedReply(
      await send({ ...request, requestId: 'r-no-box', dedupKey: 'no-box', sealed: [] }),
      409,
      'no_paired_phone',
    );
    // Refused, it was not stored: the same id with a box for a phone of the host is a new request.
    const forOne = {
      ...request,
      requestId: 'r-for-nobody',
      dedupKey: 'for-one',
      sealed: [request.sealed[0]!, strangersBox],
    };
    expect(await send(forOne)).toMatchObject({ status: 201, body: { requestId: 'r-for-nobody' } });
    // What a phone of the host lists holds its own box; the stranger's was not kept.
    const listed = await phoneCall<{ box?: string }>(
      test.phones[0]!.phone,
      'GET',
      `/v1/fleets/${test.fleet}/requests/r-for-nobody`,
    );
    expect(listed.body.box).toBe(request.sealed[0]!.box);
    expect(await send(forOne)).toMatchObject({ status: 201, body: { requestId: 'r-for-nobody' } });
  });

  it('rotates the host token through a next token, and ends the connections the old one opened', async () => {
    const own = await newFleet({ push: false });
    const daemon = await DaemonSocket.connect(own);
    await daemon.next('state');
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
    // Once it is, the old one is dead, and so is what it opened.
    await daemon.closed;
    expectRefusedReply(
      await call('GET', `/v1/fleets/${own.fleet}/state`, { headers: bearer(own.hostToken) }),
      401,
      'unauthorized',
    );
    expectRefusedReply(await call('POST', `/v1/fleets/${own.fleet}/hosts/token`), 401, 'unauthorized');
  });

  it('refuses a WebSocket without an upgrade or with a wrong token', async () => {
    expectRefusedReply(
      await call('GET', path('/connect'), { headers: bearer(fleet().hostToken) }),
      400,
      'invalid_field',
    );
    expectRefusedReply(
      await call('GET', path('/connect'), { headers: { upgrade: 'websocket', ...bearer('y'.repeat(43)) } }),
      401,
      'unauthorized',
    );
    // The right token, but not as every other route takes it: `Bearer` and the token.
    expectRefusedReply(
      await call('GET', path('/connect'), {
        headers: { upgrade: 'websocket', authorization: fleet().hostToken },
      }),
      401,
      'unauthorized',
    );
  });

  it('refuses the fleet state to an Authorization header that holds no token, as a host refused', async () => {
    for (const authorization of ['Bearer ', `bearer ${fleet().hostToken}`, `Basic ${fleet().hostToken}`])
      expectRefusedReply(
        await call('GET', path('/state'), { headers: { authorization } }),
        401,
        'unauthorized',
      );
    expect((await call('GET', path('/state'), { headers: bearer(fleet().hostToken) })).status).toBe(200);
  });
});
