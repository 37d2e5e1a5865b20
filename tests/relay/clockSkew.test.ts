import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { bindingFor, signToken } from '../../scripts/lib/approvalFixture.ts';
import { DEVICE_AUTH_MAX_SKEW_MS, signDeviceRequest } from '../../shared/device-auth/deviceRequest.ts';
import { readRelayTime } from '../../shared/device-auth/relayTime.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import type { TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { expectRefusedReply } from '../support/expectRefused.ts';
import { call, newFleet, ORIGIN, phoneCall, setClock, submitRequest, type TestFleet } from './harness.ts';

/**
 * The relay's side of a clock 5 minutes off (docs/security.md#clocks). The fleet object's clock
 * is set from the test; the host's and the phone's are the times the test signs with. The
 * host's side, where the deadline is decided, is in tests/e2e/clockSkew.test.ts.
 */
const SKEW_MS = 5 * 60_000;

const decisionPath = (test: TestFleet, requestId: string) =>
  `/v1/fleets/${test.fleet}/requests/${requestId}/decision`;

describe('a relay whose clock is 5 minutes off the host’s', () => {
  it('ahead: refuses the host’s fresh 5-minute request as already expired, so nothing is asked', async () => {
    const test = await newFleet();
    const hostNow = Date.now();
    await setClock(test.fleet, hostNow + SKEW_MS);
    const { reply } = await submitRequest(test, { now: hostNow, exp: hostNow + SKEW_MS });
    expectRefusedReply(reply, 410, 'expired');
  });

  it('behind: holds the request open past the host’s deadline and takes an approval, which the host then refuses', async () => {
    const test = await newFleet();
    const { phone } = test.phones[0]!;
    const hostNow = Date.now();
    await setClock(test.fleet, hostNow - SKEW_MS);
    const { details } = await submitRequest(test, { now: hostNow, exp: hostNow + SKEW_MS });
    // The host's deadline has come; by the relay's clock it is 5 minutes away.
    const relayNow = details.exp - SKEW_MS;
    await setClock(test.fleet, relayNow);
    const token = await signToken(phone, await bindingFor(details));
    expect(await phoneCall(phone, 'POST', decisionPath(test, details.requestId), token, relayNow)).toEqual({
      status: 200,
      body: { v: 1, state: 'approved' },
    });
  });
});

describe('a phone whose clock is 5 minutes off the relay’s', () => {
  for (const [name, skew] of [
    ['ahead', SKEW_MS],
    ['behind', -SKEW_MS],
  ] as const) {
    it(`${name}: every signed call is refused, the approval too (stale_timestamp)`, async () => {
      const test = await newFleet();
      const { phone } = test.phones[0]!;
      const { details } = await submitRequest(test);
      const phoneNow = Date.now() + skew;
      expectRefusedReply(
        await phoneCall(phone, 'GET', `/v1/fleets/${test.fleet}/requests`, undefined, phoneNow),
        401,
        'stale_timestamp',
      );
      const token = await signToken(phone, await bindingFor(details));
      expectRefusedReply(
        await phoneCall(phone, 'POST', decisionPath(test, details.requestId), token, phoneNow),
        401,
        'stale_timestamp',
      );
    });
  }
});

/** A phone's signed listing, sent as the app sends it; the answer with its headers. */
async function signedListing(test: TestFleet, phone: TestPhone, now: number): Promise<Response> {
  const path = `/v1/fleets/${test.fleet}/requests`;
  const headers = await signDeviceRequest(
    { method: 'GET', path, body: new Uint8Array(0) },
    { id: phone.id, privateKey: phone.deviceKeys.privateKey },
    now,
  );
  return SELF.fetch(`${ORIGIN}${path}`, { headers });
}

const freezeAt = (test: TestFleet, phone: TestPhone, now: number) =>
  signEnvelope(
    'freeze',
    { fleet: test.fleet, reason: 'clock test' },
    { role: 'device', id: phone.id },
    phone.deviceKeys.privateKey,
    now,
  );

describe('the relay’s time on its answers, which phones sign with', () => {
  it('comes on a refusal for time, and a phone 5 minutes off is taken once it signs with it', async () => {
    const test = await newFleet();
    const { phone } = test.phones[0]!;
    const refused = await signedListing(test, phone, Date.now() + SKEW_MS);
    expect({ status: refused.status, body: await refused.json() }).toMatchObject({
      status: 401,
      body: { error: { code: 'stale_timestamp' } },
    });
    const relayTime = readRelayTime(refused.headers);
    expect(relayTime).toBeTypeOf('number');
    const taken = await signedListing(test, phone, relayTime!);
    expect(taken.status).toBe(200);
    expect(readRelayTime(taken.headers)).toBeTypeOf('number');
  });

  it('does not widen the window: a call or a freeze a second past 60 s off the relay’s clock is refused', async () => {
    const test = await newFleet();
    const { phone } = test.phones[0]!;
    const relayNow = Date.now();
    await setClock(test.fleet, relayNow);
    for (const off of [DEVICE_AUTH_MAX_SKEW_MS + 1_000, -(DEVICE_AUTH_MAX_SKEW_MS + 1_000)]) {
      expectRefusedReply(
        await phoneCall(phone, 'GET', `/v1/fleets/${test.fleet}/requests`, undefined, relayNow + off),
        401,
        'stale_timestamp',
      );
      expectRefusedReply(
        await call('POST', `/v1/fleets/${test.fleet}/freeze`, {
          json: await freezeAt(test, phone, relayNow + off),
        }),
        401,
        'stale_timestamp',
      );
    }
  });

  it('still refuses a replay inside the window: the same signed call, and the same freeze', async () => {
    const test = await newFleet();
    const { phone } = test.phones[0]!;
    const relayNow = Date.now();
    await setClock(test.fleet, relayNow);
    const path = `/v1/fleets/${test.fleet}/requests`;
    const headers = await signDeviceRequest(
      { method: 'GET', path, body: new Uint8Array(0) },
      { id: phone.id, privateKey: phone.deviceKeys.privateKey },
      relayNow + DEVICE_AUTH_MAX_SKEW_MS - 1_000,
    );
    expect((await call('GET', path, { headers })).status).toBe(200);
    expectRefusedReply(await call('GET', path, { headers }), 401, 'replayed_nonce');
    const freeze = await freezeAt(test, phone, relayNow - DEVICE_AUTH_MAX_SKEW_MS + 1_000);
    expect((await call('POST', `/v1/fleets/${test.fleet}/freeze`, { json: freeze })).status).toBe(200);
    expectRefusedReply(
      await call('POST', `/v1/fleets/${test.fleet}/freeze`, { json: freeze }),
      401,
      'replayed_nonce',
    );
  });
});
