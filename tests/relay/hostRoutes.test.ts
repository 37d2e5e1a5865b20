import { describe, expect, it } from 'vitest';
import { expectRefusedReply } from '../support/expectRefused.ts';
import { bearer, call, DaemonSocket, fleetForTheseTests, newFleet, submitRequest } from './harness.ts';

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
  });
});
